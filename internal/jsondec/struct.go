package jsondec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"unsafe"
)

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
