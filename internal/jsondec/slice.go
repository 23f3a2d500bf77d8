package jsondec

import (
	"encoding/base64"
	"reflect"
	"unsafe"
)

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
		i, err := d.elements(c, func(i int) error {
			if i >= sh.cap {
				reflect.ValueOf(withData(proto, p)).Elem().Grow(1)
			}
			if i >= sh.len {
				sh.len = i + 1
			}
			return elem.dec(d, unsafe.Add(sh.data, uintptr(i)*size))
		})
		if err != nil {
			return err
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
		i, err := d.elements(c, func(i int) error {
			if i < n {
				return elem.dec(d, unsafe.Add(p, uintptr(i)*size))
			}
			return d.skip()
		})
		if err != nil {
			return err
		}
		for ; i < n; i++ {
			reflect.NewAt(et, unsafe.Add(p, uintptr(i)*size)).Elem().SetZero()
		}
		return nil
	}
}
