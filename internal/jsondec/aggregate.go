package jsondec

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"unsafe"
)

func parseFloat(item []byte, bits int) (float64, bool) {
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(item), len(item)), bits)
	return f, err == nil
}

// open consumes the '{' or '[' at d.off and the whitespace after it, and returns the next
// byte.
func (d *decodeState) open() (byte, error) {
	if d.depth >= maxDepth {
		return 0, d.syntaxErr(d.off, "exceeded max depth")
	}
	d.depth++
	d.off++
	return d.ws()
}

// more consumes what follows a member or element: ',' (then whitespace; more is true) or
// the closing byte (more is false).
func (d *decodeState) more(close byte) (bool, error) {
	c, err := d.ws()
	if err != nil {
		return false, err
	}
	d.off++
	if c == ',' {
		_, err := d.ws()
		return true, err
	}
	if c == close {
		d.depth--
		return false, nil
	}
	d.off--
	if close == '}' {
		return false, d.badByte(d.off, "after object key:value pair")
	}
	return false, d.badByte(d.off, "after array element")
}

// key reads the object key at d.off and the ':' after it; the text is the input itself or
// d.buf.
func (d *decodeState) key() ([]byte, error) {
	if d.data[d.off] != '"' {
		return nil, d.badByte(d.off, "looking for beginning of object key string")
	}
	start, end, flags, err := d.scanString()
	if err != nil {
		return nil, err
	}
	k := d.stringContent(start, end, flags)
	return k, d.colon()
}

// omitValue handles the value of a member on the Omit path at the current depth: the last
// name of the path is skipped, an earlier one is decoded by decode with the next depth on
// the path.
func (d *decodeState) omitValue(decode func() error) error {
	if d.depth == len(d.omit) {
		return d.skip()
	}
	saved := d.omitted
	d.omitted = d.depth
	err := decode()
	d.omitted = saved
	return err
}

// fallback decodes the value at d.off with encoding/json into v (a pointer), for the rare
// shapes whose semantics are its own: an interface that already holds a pointer.
func (d *decodeState) fallback(v any) error {
	raw, err := d.raw()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		d.saveError(err)
	}
	return nil
}

// decodeInterface: an interface holding a non-nil pointer is decoded through that pointer
// (as encoding/json does); otherwise null clears it, an empty interface gets the generic
// value (map[string]any, []any, float64, string, bool), and any other interface is a type
// error.
func decodeInterface(t reflect.Type) decFunc {
	empty := t.NumMethod() == 0
	return func(d *decodeState, p unsafe.Pointer) error {
		c := d.data[d.off]
		var cur reflect.Value
		if empty {
			if e := *(*any)(p); e != nil {
				cur = reflect.ValueOf(e)
			}
		} else if v := reflect.NewAt(t, p).Elem(); !v.IsNil() {
			cur = v.Elem()
		}
		if cur.IsValid() && cur.Kind() == reflect.Pointer && !cur.IsNil() && (c != 'n' || cur.Elem().Kind() == reflect.Pointer) {
			return d.fallback(cur.Interface())
		}
		if c == 'n' {
			if err := d.literal("null"); err != nil {
				return err
			}
			reflect.NewAt(t, p).Elem().SetZero()
			return nil
		}
		if !empty {
			return d.mismatch(t)
		}
		v, err := d.anyValue()
		if err != nil {
			return err
		}
		*(*any)(p) = v
		return nil
	}
}

// anyValue decodes the value at d.off into the generic Go value encoding/json would.
func (d *decodeState) anyValue() (any, error) {
	switch c := d.data[d.off]; c {
	case '{':
		c, err := d.open()
		if err != nil {
			return nil, err
		}
		m := make(map[string]any)
		if c == '}' {
			d.off++
			d.depth--
			return m, nil
		}
		onPath := d.omit != nil && d.omitted == d.depth-1 && d.depth <= len(d.omit)
		for {
			k, err := d.key()
			if err != nil {
				return nil, err
			}
			ks := d.makeString(k)
			var v any
			if onPath && ks == d.omit[d.depth-1] {
				omitted := false
				err = d.omitValue(func() error {
					var err error
					v, err = d.anyValue()
					return err
				})
				if d.depth == len(d.omit) {
					omitted = true
				}
				if err != nil {
					return nil, err
				}
				if omitted {
					if more, err := d.more('}'); err != nil || !more {
						return m, err
					}
					continue
				}
			} else if v, err = d.anyValue(); err != nil {
				return nil, err
			}
			m[ks] = v
			if more, err := d.more('}'); err != nil || !more {
				return m, err
			}
		}
	case '[':
		c, err := d.open()
		if err != nil {
			return nil, err
		}
		a := make([]any, 0)
		saved := d.omitted
		if d.omit != nil && d.omitted == d.depth-1 && d.depth < len(d.omit) && d.omit[d.depth-1] == "[]" {
			d.omitted = d.depth
		}
		defer func() { d.omitted = saved }()
		if c == ']' {
			d.off++
			d.depth--
			return a, nil
		}
		for {
			v, err := d.anyValue()
			if err != nil {
				return nil, err
			}
			a = append(a, v)
			if more, err := d.more(']'); err != nil || !more {
				return a, err
			}
		}
	case '"':
		start, end, flags, err := d.scanString()
		if err != nil {
			return nil, err
		}
		return d.makeString(d.stringContent(start, end, flags)), nil
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return nil, d.literal("null")
	default:
		if c != '-' && !isDigit(c) {
			return nil, d.badByte(d.off, "looking for beginning of value")
		}
		item, start, err := d.number()
		if err != nil {
			return nil, err
		}
		f, ok := parseFloat(item, 64)
		if !ok {
			d.typeError("number "+string(item), reflect.TypeFor[float64](), start)
			return nil, nil
		}
		return f, nil
	}
}

// struct decoding

// hop is an embedded pointer on the way to a promoted field.
type hop struct {
	off      uintptr
	elem     reflect.Type
	settable bool // false for an unexported embedded pointer, which cannot be allocated
}

type field struct {
	name   string
	index  int // position in structDec.fields
	hops   []hop
	off    uintptr // from the struct (or the last hop's target)
	codec  *codec
	quoted reflect.Type // for ",string": a struct type holding just this field with that option
	typ    reflect.Type
}

type structDec struct {
	t      reflect.Type
	fields []field
	byName map[string]*field
	byFold map[string]*field
}

func (b *builder) structDecoder(t reflect.Type) decFunc {
	infos := typeFields(t)
	s := &structDec{t: t, fields: make([]field, len(infos)), byName: map[string]*field{}, byFold: map[string]*field{}}
	for i, fi := range infos {
		f := &s.fields[i]
		f.name, f.index = fi.name, i
		cur := t
		var off uintptr
		for j, x := range fi.index {
			sf := cur.Field(x)
			off += sf.Offset
			if j == len(fi.index)-1 {
				f.typ = sf.Type
				break
			}
			if sf.Type.Kind() == reflect.Pointer {
				f.hops = append(f.hops, hop{off: off, elem: sf.Type.Elem(), settable: sf.IsExported()})
				cur, off = sf.Type.Elem(), 0
			} else {
				cur = sf.Type
			}
		}
		f.off = off
		f.codec = b.location(f.typ)
		if fi.quoted {
			f.quoted = reflect.StructOf([]reflect.StructField{{Name: "X", Type: f.typ, Tag: `json:"x,string"`}})
		}
		s.byName[f.name] = f
		if fk := string(foldName(nil, []byte(f.name))); s.byFold[fk] == nil {
			s.byFold[fk] = f
		}
	}
	return s.decode
}

func (s *structDec) lookup(key []byte) *field {
	if f := s.byName[string(key)]; f != nil {
		return f
	}
	var buf [64]byte
	return s.byFold[string(foldName(buf[:0], key))]
}

func (s *structDec) decode(d *decodeState, p unsafe.Pointer) error {
	switch d.data[d.off] {
	case '{':
	case 'n':
		return d.literal("null")
	default:
		return d.mismatch(s.t)
	}
	c, err := d.open()
	if err != nil {
		return err
	}
	if c == '}' {
		d.off++
		d.depth--
		return nil
	}
	next := 0 // the field expected next: servers write members in declaration order
	onPath := d.omit != nil && d.omitted == d.depth-1 && d.depth <= len(d.omit)
	for {
		k, err := d.key()
		if err != nil {
			return err
		}
		if onPath && string(k) == d.omit[d.depth-1] {
			if err := d.omitValue(func() error {
				if f := s.lookup(k); f != nil {
					return s.decodeField(d, p, f)
				}
				return d.skip()
			}); err != nil {
				return err
			}
			if more, err := d.more('}'); err != nil || !more {
				return err
			}
			continue
		}
		var f *field
		if next < len(s.fields) && s.fields[next].name == string(k) {
			f = &s.fields[next]
		} else {
			f = s.lookup(k)
		}
		if f == nil {
			if err := d.skip(); err != nil {
				return err
			}
		} else {
			next = f.index + 1
			if err := s.decodeField(d, p, f); err != nil {
				return err
			}
		}
		if more, err := d.more('}'); err != nil || !more {
			return err
		}
	}
}

func (s *structDec) decodeField(d *decodeState, p unsafe.Pointer, f *field) error {
	for _, h := range f.hops {
		pp := (*unsafe.Pointer)(unsafe.Add(p, h.off))
		if *pp == nil {
			if !h.settable {
				d.saveError(fmt.Errorf("json: cannot set embedded pointer to unexported struct: %v", h.elem))
				return d.skip()
			}
			*pp = reflect.New(h.elem).UnsafePointer()
		}
		p = *pp
	}
	p = unsafe.Add(p, f.off)
	if f.quoted != nil {
		return d.quoted(f, p)
	}
	return f.codec.dec(d, p)
}

// quoted decodes a ",string" field with encoding/json, through a struct holding the field's
// current value under the same option, so that every rule of that option is its.
func (d *decodeState) quoted(f *field, p unsafe.Pointer) error {
	raw, err := d.raw()
	if err != nil {
		return err
	}
	tmp := reflect.New(f.quoted)
	dst := reflect.NewAt(f.typ, p).Elem()
	tmp.Elem().Field(0).Set(dst)
	doc := make([]byte, 0, len(raw)+6)
	doc = append(append(append(doc, `{"x":`...), raw...), '}')
	err = json.Unmarshal(doc, tmp.Interface())
	dst.Set(tmp.Elem().Field(0))
	if err != nil {
		d.saveError(err)
	}
	return nil
}

// maps

func (b *builder) mapDecoder(t reflect.Type) decFunc {
	kt, et := t.Key(), t.Elem()
	textKey := reflect.PointerTo(kt).Implements(textUnmarshalerType)
	switch kt.Kind() {
	case reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
	default:
		if !textKey {
			return func(d *decodeState, p unsafe.Pointer) error {
				if d.data[d.off] == 'n' {
					if err := d.literal("null"); err != nil {
						return err
					}
					reflect.NewAt(t, p).Elem().SetZero()
					return nil
				}
				return d.mismatch(t)
			}
		}
	}
	if !textKey && kt.Kind() == reflect.String && et.Kind() == reflect.String && et != numberType && !hasPointerMethods(et) {
		return stringMapDecoder(t)
	}
	elem := b.location(et)
	return func(d *decodeState, p unsafe.Pointer) error {
		switch d.data[d.off] {
		case '{':
		case 'n':
			if err := d.literal("null"); err != nil {
				return err
			}
			*(*unsafe.Pointer)(p) = nil
			return nil
		default:
			return d.mismatch(t)
		}
		m := reflect.NewAt(t, p).Elem()
		if m.IsNil() {
			m.Set(reflect.MakeMap(t))
		}
		c, err := d.open()
		if err != nil {
			return err
		}
		if c == '}' {
			d.off++
			d.depth--
			return nil
		}
		ev := reflect.New(et)
		ep := ev.UnsafePointer()
		ev = ev.Elem()
		var kv reflect.Value
		if !textKey {
			kv = reflect.New(kt).Elem()
		}
		onPath := d.omit != nil && d.omitted == d.depth-1 && d.depth <= len(d.omit) && !textKey && kt.Kind() == reflect.String
		for {
			keyOff := d.off
			k, err := d.key()
			if err != nil {
				return err
			}
			if onPath && string(k) == d.omit[d.depth-1] {
				ks := d.makeString(k)
				last := d.depth == len(d.omit)
				ev.SetZero()
				if err := d.omitValue(func() error { return elem.dec(d, ep) }); err != nil {
					return err
				}
				if !last {
					kv.SetString(ks)
					m.SetMapIndex(kv, ev)
				}
				if more, err := d.more('}'); err != nil || !more {
					return err
				}
				continue
			}
			// The key's text must be taken before the value reuses d.buf.
			store := true
			switch {
			case textKey:
				kp := reflect.New(kt)
				if err := kp.Interface().(encoding.TextUnmarshaler).UnmarshalText(k); err != nil {
					return err
				}
				kv = kp.Elem()
			case kt.Kind() == reflect.String:
				kv.SetString(d.makeString(k))
			case kt.Kind() >= reflect.Int && kt.Kind() <= reflect.Int64:
				n, err := strconv.ParseInt(string(k), 10, 64)
				if err != nil || kv.OverflowInt(n) {
					d.typeError("number "+string(k), kt, keyOff+1)
					store = false
					break
				}
				kv.SetInt(n)
			default:
				n, err := strconv.ParseUint(string(k), 10, 64)
				if err != nil || kv.OverflowUint(n) {
					d.typeError("number "+string(k), kt, keyOff+1)
					store = false
					break
				}
				kv.SetUint(n)
			}
			ev.SetZero()
			if err := elem.dec(d, ep); err != nil {
				return err
			}
			if store {
				m.SetMapIndex(kv, ev)
			}
			if more, err := d.more('}'); err != nil || !more {
				return err
			}
		}
	}
}

// stringMapDecoder decodes maps whose keys and values are both of kind string (labels,
// annotations, data) without reflection per entry: such maps have the layout and hashing
// of map[string]string whatever the names of their types.
func stringMapDecoder(t reflect.Type) decFunc {
	return func(d *decodeState, p unsafe.Pointer) error {
		switch d.data[d.off] {
		case '{':
		case 'n':
			if err := d.literal("null"); err != nil {
				return err
			}
			*(*unsafe.Pointer)(p) = nil
			return nil
		default:
			return d.mismatch(t)
		}
		if *(*unsafe.Pointer)(p) == nil {
			*(*unsafe.Pointer)(p) = reflect.MakeMap(t).UnsafePointer()
		}
		m := *(*map[string]string)(p)
		c, err := d.open()
		if err != nil {
			return err
		}
		if c == '}' {
			d.off++
			d.depth--
			return nil
		}
		for {
			k, err := d.key()
			if err != nil {
				return err
			}
			ks := d.makeString(k)
			var v string
			switch d.data[d.off] {
			case '"':
				start, end, flags, err := d.scanString()
				if err != nil {
					return err
				}
				v = d.makeString(d.stringContent(start, end, flags))
			case 'n':
				if err := d.literal("null"); err != nil {
					return err
				}
			default:
				if err := d.mismatch(t.Elem()); err != nil {
					return err
				}
			}
			m[ks] = v
			if more, err := d.more('}'); err != nil || !more {
				return err
			}
		}
	}
}

// slices and arrays

type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// zeroBase is where empty non-nil slices point, as reflect.MakeSlice(t, 0, 0) makes them.
var zeroBase = reflect.MakeSlice(reflect.TypeFor[[]byte](), 0, 0).UnsafePointer()

func (b *builder) sliceDecoder(t reflect.Type) decFunc {
	et := t.Elem()
	elem := b.location(et)
	size := et.Size()
	bytes := et.Kind() == reflect.Uint8
	// A *[]T in an interface, whose pointer is replaced to grow the slice at p through
	// reflect without looking up the pointer type each time.
	proto := reflect.New(t).Interface()
	return func(d *decodeState, p unsafe.Pointer) error {
		sh := (*sliceHeader)(p)
		switch d.data[d.off] {
		case '[':
		case 'n':
			if err := d.literal("null"); err != nil {
				return err
			}
			*sh = sliceHeader{}
			return nil
		case '"':
			if bytes {
				return d.base64(t, sh)
			}
			return d.mismatch(t)
		default:
			return d.mismatch(t)
		}
		c, err := d.open()
		if err != nil {
			return err
		}
		saved := d.omitted
		if d.omit != nil && d.omitted == d.depth-1 && d.depth < len(d.omit) && d.omit[d.depth-1] == "[]" {
			d.omitted = d.depth // the elements are on the Omit path
		}
		defer func() { d.omitted = saved }()
		i := 0
		if c != ']' {
			for {
				if i >= sh.cap {
					reflect.ValueOf(withData(proto, p)).Elem().Grow(1)
				}
				if i >= sh.len {
					sh.len = i + 1
				}
				if err := elem.dec(d, unsafe.Add(sh.data, uintptr(i)*size)); err != nil {
					return err
				}
				i++
				more, err := d.more(']')
				if err != nil {
					return err
				}
				if !more {
					break
				}
			}
		} else {
			d.off++
			d.depth--
		}
		if i < sh.len {
			sh.len = i
		}
		if i == 0 {
			*sh = sliceHeader{data: zeroBase}
		}
		return nil
	}
}

// base64 decodes a JSON string into a byte slice as encoding/json does.
func (d *decodeState) base64(t reflect.Type, sh *sliceHeader) error {
	start, end, flags, err := d.scanString()
	if err != nil {
		return err
	}
	s := d.stringContent(start, end, flags)
	b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
	n, err := base64.StdEncoding.Decode(b, s)
	if err != nil {
		d.saveError(err)
		return nil
	}
	reflect.NewAt(t, unsafe.Pointer(sh)).Elem().SetBytes(b[:n])
	return nil
}

func (b *builder) arrayDecoder(t reflect.Type) decFunc {
	et := t.Elem()
	elem := b.location(et)
	size := et.Size()
	n := t.Len()
	return func(d *decodeState, p unsafe.Pointer) error {
		switch d.data[d.off] {
		case '[':
		case 'n':
			return d.literal("null")
		default:
			return d.mismatch(t)
		}
		c, err := d.open()
		if err != nil {
			return err
		}
		i := 0
		if c != ']' {
			for {
				if i < n {
					if err := elem.dec(d, unsafe.Add(p, uintptr(i)*size)); err != nil {
						return err
					}
				} else if err := d.skip(); err != nil {
					return err
				}
				i++
				more, err := d.more(']')
				if err != nil {
					return err
				}
				if !more {
					break
				}
			}
		} else {
			d.off++
			d.depth--
		}
		for ; i < n; i++ {
			reflect.NewAt(et, unsafe.Add(p, uintptr(i)*size)).Elem().SetZero()
		}
		return nil
	}
}
