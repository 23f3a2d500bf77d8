package jsondec

import (
	"encoding"
	"reflect"
	"strconv"
	"unsafe"
)

func (b *builder) mapDecoder(t reflect.Type) decFunc {
	kt, et := t.Key(), t.Elem()
	textKey := reflect.PointerTo(kt).Implements(textUnmarshalerType)
	switch kt.Kind() {
	case reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
	default:
		if !textKey {
			return nullOnlyDecoder(t)
		}
	}
	if !textKey && kt.Kind() == reflect.String && et.Kind() == reflect.String && et != numberType && !hasPointerMethods(et) {
		return stringMapDecoder(t)
	}
	m := &mapDec{t: t, kt: kt, et: et, textKey: textKey, elem: b.location(et)}
	return m.decode
}

// nullOnlyDecoder decodes into a map whose key type JSON cannot express: only null (which
// zeroes it) is accepted; anything else is a type error.
func nullOnlyDecoder(t reflect.Type) decFunc {
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

// mapDec decodes a JSON object into a map whose keys are strings, integers or
// encoding.TextUnmarshalers, through reflection.
type mapDec struct {
	t, kt, et reflect.Type
	textKey   bool
	elem      *codec
}

func (md *mapDec) decode(d *decodeState, p unsafe.Pointer) error {
	t, kt, et, textKey, elem := md.t, md.kt, md.et, md.textKey, md.elem
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
		store, err := md.setKey(d, &kv, k, keyOff)
		if err != nil {
			return err
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

// setKey sets *kv to the map key whose text k starts at keyOff. A number that does not fit
// the key type is recorded as a type error, and store is false: the member is decoded but
// not stored, as encoding/json does.
func (md *mapDec) setKey(d *decodeState, kv *reflect.Value, k []byte, keyOff int) (store bool, err error) {
	kt := md.kt
	switch {
	case md.textKey:
		kp := reflect.New(kt)
		if err := kp.Interface().(encoding.TextUnmarshaler).UnmarshalText(k); err != nil {
			return false, err
		}
		*kv = kp.Elem()
	case kt.Kind() == reflect.String:
		kv.SetString(d.makeString(k))
	case kt.Kind() >= reflect.Int && kt.Kind() <= reflect.Int64:
		n, err := strconv.ParseInt(string(k), 10, 64)
		if err != nil || kv.OverflowInt(n) {
			d.typeError("number "+string(k), kt, keyOff+1)
			return false, nil
		}
		kv.SetInt(n)
	default:
		n, err := strconv.ParseUint(string(k), 10, 64)
		if err != nil || kv.OverflowUint(n) {
			d.typeError("number "+string(k), kt, keyOff+1)
			return false, nil
		}
		kv.SetUint(n)
	}
	return true, nil
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
