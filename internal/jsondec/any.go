package jsondec

import (
	"reflect"
	"unsafe"
)

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
		return d.anyObject()
	case '[':
		return d.anyArray()
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

// anyObject decodes the object at d.off into a map[string]any, leaving out the member on
// the Omit path.
func (d *decodeState) anyObject() (any, error) {
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
}

// anyArray decodes the array at d.off into a []any; on the Omit path, "[]" steps into its
// elements.
func (d *decodeState) anyArray() (any, error) {
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
	if _, err := d.elements(c, func(int) error {
		v, err := d.anyValue()
		a = append(a, v)
		return err
	}); err != nil {
		return nil, err
	}
	return a, nil
}
