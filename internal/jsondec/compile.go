package jsondec

import (
	"encoding"
	"encoding/json"
	"reflect"
	"sync"
	"unsafe"
)

// decFunc decodes the value starting at d.off (its first byte, never whitespace) into the
// Go value at p and leaves d.off just past it. A syntax error (or an error of an
// Unmarshaler) is returned and ends decoding; a type error is saved and decoding goes on.
type decFunc func(d *decodeState, p unsafe.Pointer) error

// codec is the compiled decoder of one Go type in one mode. Codecs refer to each other
// through *codec so that recursive types compile.
type codec struct {
	dec decFunc
}

// Modes of a codec. encoding/json looks for Unmarshaler methods through pointers: a value
// reached through an unnamed pointer, or a named value (whose address it takes), is
// decoded by the methods of the pointer type when it has them (modeViaPointer); a value
// reached otherwise is decoded by its kind alone (modeKind).
type mode uint8

const (
	modeKind mode = iota
	modeViaPointer
)

type codecKey struct {
	t reflect.Type
	m mode
}

var (
	codecs    sync.Map // codecKey -> *codec, complete ones only
	compileMu sync.Mutex

	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	numberType          = reflect.TypeFor[json.Number]()
	anyType             = reflect.TypeFor[any]()
)

// topCodecFor returns the codec that decodes into the value a pointer of type pt points to,
// as encoding/json.Unmarshal treats its argument.
func topCodecFor(pt reflect.Type) *codec {
	k := codecKey{pt.Elem(), modeViaPointer}
	if c, ok := codecs.Load(k); ok {
		return c.(*codec)
	}
	compileMu.Lock()
	defer compileMu.Unlock()
	b := &builder{local: map[codecKey]*codec{}}
	c := b.get(pt.Elem(), modeViaPointer)
	for k, v := range b.local {
		codecs.Store(k, v)
	}
	codecs.Store(k, c)
	return c
}

// builder compiles the codecs a type needs; they are published once all are complete.
type builder struct {
	local map[codecKey]*codec
}

func hasPointerMethods(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return pt.Implements(unmarshalerType) || pt.Implements(textUnmarshalerType)
}

// location returns the codec of a value of type t stored in a struct field, a slice, array
// or map element, or a pointer's target reached by dereferencing a named pointer type.
func (b *builder) location(t reflect.Type) *codec {
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && t.Name() != "" {
		return b.get(t, modeViaPointer)
	}
	return b.get(t, modeKind)
}

func (b *builder) get(t reflect.Type, m mode) *codec {
	if m == modeViaPointer && !hasPointerMethods(t) {
		m = modeKind
	}
	k := codecKey{t, m}
	if c, ok := codecs.Load(k); ok {
		return c.(*codec)
	}
	if c, ok := b.local[k]; ok {
		return c
	}
	c := &codec{}
	b.local[k] = c
	if m == modeViaPointer {
		c.dec = b.methods(t)
	} else {
		c.dec = b.kind(t)
	}
	return c
}

// methods builds the decoder of a t whose pointer type has UnmarshalJSON or UnmarshalText.
func (b *builder) methods(t reflect.Type) decFunc {
	pt := reflect.PointerTo(t)
	if pt.Implements(unmarshalerType) {
		if t == rawMessageType {
			return decodeRawMessage
		}
		proto := reflect.New(t).Interface().(json.Unmarshaler)
		return func(d *decodeState, p unsafe.Pointer) error {
			raw, err := d.raw()
			if err != nil {
				return err
			}
			return withData(proto, p).UnmarshalJSON(raw)
		}
	}
	byKind := b.get(t, modeKind)
	proto := reflect.New(t).Interface().(encoding.TextUnmarshaler)
	return func(d *decodeState, p unsafe.Pointer) error {
		switch d.data[d.off] {
		case '"':
			start, end, flags, err := d.scanString()
			if err != nil {
				return err
			}
			return withData(proto, p).UnmarshalText(d.stringContent(start, end, flags))
		case 'n':
			// encoding/json does not call UnmarshalText for null: the kind decides.
			return byKind.dec(d, p)
		}
		return d.mismatch(t)
	}
}

// withData returns the interface value i (which holds a pointer) with p as its pointer:
// the method of a *T called on the value at p without reflection. An interface value is a
// (type or itab, data) pair; for a pointer the data word is the pointer itself.
func withData[I any](i I, p unsafe.Pointer) I {
	(*[2]unsafe.Pointer)(unsafe.Pointer(&i))[1] = p
	return i
}

// raw consumes the value at d.off and returns its bytes (without surrounding whitespace).
func (d *decodeState) raw() ([]byte, error) {
	start := d.off
	if err := d.skip(); err != nil {
		return nil, err
	}
	return d.data[start:d.off], nil
}

func decodeRawMessage(d *decodeState, p unsafe.Pointer) error {
	raw, err := d.raw()
	if err != nil {
		return err
	}
	m := (*json.RawMessage)(p)
	*m = append((*m)[:0], raw...)
	return nil
}

// kind builds the decoder of a t by its kind.
func (b *builder) kind(t reflect.Type) decFunc {
	switch t.Kind() {
	case reflect.Bool:
		return decodeBool(t)
	case reflect.String:
		if t == numberType {
			return decodeNumber
		}
		return decodeString(t)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return decodeInt(t)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return decodeUint(t)
	case reflect.Float32, reflect.Float64:
		return decodeFloat(t)
	case reflect.Pointer:
		return b.pointer(t)
	case reflect.Interface:
		return decodeInterface(t)
	case reflect.Struct:
		return b.structDecoder(t)
	case reflect.Map:
		return b.mapDecoder(t)
	case reflect.Slice:
		return b.sliceDecoder(t)
	case reflect.Array:
		return b.arrayDecoder(t)
	}
	// Complex numbers, channels, functions, unsafe pointers: null is ignored, anything else
	// is a type error.
	return func(d *decodeState, p unsafe.Pointer) error {
		if d.data[d.off] == 'n' {
			return d.literal("null")
		}
		return d.mismatch(t)
	}
}

// pointer: null sets the pointer to nil; anything else decodes into its target, allocated
// if the pointer is nil, through the pointer type's methods when it is unnamed (a named
// pointer type has no methods).
func (b *builder) pointer(t reflect.Type) decFunc {
	et := t.Elem()
	var target *codec
	if t.Name() == "" {
		target = b.get(et, modeViaPointer)
	} else {
		target = b.get(et, modeKind)
	}
	return func(d *decodeState, p unsafe.Pointer) error {
		pp := (*unsafe.Pointer)(p)
		if d.data[d.off] == 'n' {
			if err := d.literal("null"); err != nil {
				return err
			}
			*pp = nil
			return nil
		}
		q := *pp
		if q == nil {
			q = reflect.New(et).UnsafePointer()
			*pp = q
		}
		return target.dec(d, q)
	}
}

func decodeBool(t reflect.Type) decFunc {
	return func(d *decodeState, p unsafe.Pointer) error {
		switch d.data[d.off] {
		case 't':
			if err := d.literal("true"); err != nil {
				return err
			}
			*(*bool)(p) = true
			return nil
		case 'f':
			if err := d.literal("false"); err != nil {
				return err
			}
			*(*bool)(p) = false
			return nil
		case 'n':
			return d.literal("null")
		}
		return d.mismatch(t)
	}
}

// makeString returns b as a new string, or the caller's copy of it.
func (d *decodeState) makeString(b []byte) string {
	if d.strings != nil {
		return d.strings(b)
	}
	return string(b)
}

func decodeString(t reflect.Type) decFunc {
	return func(d *decodeState, p unsafe.Pointer) error {
		switch d.data[d.off] {
		case '"':
			start, end, flags, err := d.scanString()
			if err != nil {
				return err
			}
			*(*string)(p) = d.makeString(d.stringContent(start, end, flags))
			return nil
		case 'n':
			return d.literal("null")
		}
		return d.mismatch(t)
	}
}

func decodeNumber(d *decodeState, p unsafe.Pointer) error {
	c := d.data[d.off]
	switch {
	case c == '"':
		start, end, flags, err := d.scanString()
		if err != nil {
			return err
		}
		s := d.stringContent(start, end, flags)
		if !validNumber(s) {
			return &json.UnmarshalTypeError{Value: "string " + string(d.data[start-1:end+1]), Type: numberType, Offset: int64(start - 1)}
		}
		*(*json.Number)(p) = json.Number(s)
		return nil
	case c == '-' || isDigit(c):
		start := d.off
		end, err := d.scanNumber()
		if err != nil {
			return err
		}
		*(*json.Number)(p) = json.Number(d.data[start:end])
		return nil
	case c == 'n':
		return d.literal("null")
	}
	return d.mismatch(numberType)
}

// validNumber reports whether s is a whole JSON number.
func validNumber(s []byte) bool {
	if len(s) == 0 || s[0] != '-' && !isDigit(s[0]) {
		return false
	}
	var d decodeState
	d.data = s
	end, err := d.scanNumber()
	return err == nil && end == len(s)
}

// number scans a number for a numeric destination of type t; ok is false (and d.off is
// unchanged) when the value is something else, which the caller handles.
func (d *decodeState) number() (item []byte, start int, err error) {
	start = d.off
	end, err := d.scanNumber()
	if err != nil {
		return nil, start, err
	}
	return d.data[start:end], start, nil
}

func notNumber(d *decodeState, t reflect.Type) error {
	if d.data[d.off] == 'n' {
		return d.literal("null")
	}
	return d.mismatch(t)
}

func decodeInt(t reflect.Type) decFunc {
	bits := t.Bits()
	size := t.Size()
	return func(d *decodeState, p unsafe.Pointer) error {
		if c := d.data[d.off]; c != '-' && !isDigit(c) {
			return notNumber(d, t)
		}
		item, start, err := d.number()
		if err != nil {
			return err
		}
		n, ok := parseInt(item)
		if !ok || bits < 64 && (n < -1<<(bits-1) || n > 1<<(bits-1)-1) {
			d.typeError("number "+string(item), t, start)
			return nil
		}
		switch size {
		case 1:
			*(*int8)(p) = int8(n)
		case 2:
			*(*int16)(p) = int16(n)
		case 4:
			*(*int32)(p) = int32(n)
		default:
			*(*int64)(p) = n
		}
		return nil
	}
}

// parseInt is strconv.ParseInt(s, 10, 64) for a valid JSON number s.
func parseInt(s []byte) (int64, bool) {
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	var u uint64
	for _, c := range s {
		if !isDigit(c) || u > (1<<63)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// parseUint is strconv.ParseUint(s, 10, 64) for a valid JSON number s.
func parseUint(s []byte) (uint64, bool) {
	var u uint64
	for _, c := range s {
		if !isDigit(c) || u > (1<<64-1)/10 {
			return 0, false
		}
		v := u*10 + uint64(c-'0')
		if v < u {
			return 0, false
		}
		u = v
	}
	return u, true
}

func decodeUint(t reflect.Type) decFunc {
	bits := t.Bits()
	size := t.Size()
	return func(d *decodeState, p unsafe.Pointer) error {
		if c := d.data[d.off]; c != '-' && !isDigit(c) {
			return notNumber(d, t)
		}
		item, start, err := d.number()
		if err != nil {
			return err
		}
		n, ok := parseUint(item)
		if !ok || bits < 64 && n > 1<<bits-1 {
			d.typeError("number "+string(item), t, start)
			return nil
		}
		switch size {
		case 1:
			*(*uint8)(p) = uint8(n)
		case 2:
			*(*uint16)(p) = uint16(n)
		case 4:
			*(*uint32)(p) = uint32(n)
		default:
			*(*uint64)(p) = n
		}
		return nil
	}
}

func decodeFloat(t reflect.Type) decFunc {
	bits := t.Bits()
	return func(d *decodeState, p unsafe.Pointer) error {
		if c := d.data[d.off]; c != '-' && !isDigit(c) {
			return notNumber(d, t)
		}
		item, start, err := d.number()
		if err != nil {
			return err
		}
		f, ok := parseFloat(item, bits)
		if !ok {
			d.typeError("number "+string(item), t, start)
			return nil
		}
		if bits == 32 {
			*(*float32)(p) = float32(f)
		} else {
			*(*float64)(p) = f
		}
		return nil
	}
}
