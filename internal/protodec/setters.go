package protodec

import (
	"reflect"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/informerkit/informerkit/internal/jsondec"
	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/meta"
)

// The setters: what one occurrence of a field does to its Go value, by kind and Go type.

// compileSet returns the setter of one occurrence of schema field f into a Go value of
// type t; ok is false for a list or map whose Go type is not a slice or a map with string
// keys (the field is then decoded through its JSON text).
func compileSet(t reflect.Type, f *kubeschema.Field, omitManaged bool) (setFunc, bool) {
	if f.MapKey != "" {
		if t.Kind() != reflect.Map || t.Key().Kind() != reflect.String || t.Name() != "" && hasMethods(reflect.PointerTo(t)) ||
			hasMethods(reflect.PointerTo(t.Key())) {
			return nil, false
		}
		return compileMap(t, f, omitManaged), true
	}
	if f.Repeated {
		if t.Kind() != reflect.Slice || t.Name() != "" && hasMethods(reflect.PointerTo(t)) ||
			t.Elem().Kind() == reflect.Uint8 && f.Kind != kubeschema.Bytes {
			return nil, false
		}
		return compileSlice(t, f, omitManaged), true
	}
	return compileValue(t, f, omitManaged), true
}

// compileValue is the setter of a single value.
func compileValue(t reflect.Type, f *kubeschema.Field, omitManaged bool) setFunc {
	if f.Kind == kubeschema.Message && f.Type().JSON != "" {
		return compileForm(t, f)
	}
	named := t.Name() != "" && t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface
	if named && hasMethods(reflect.PointerTo(t)) {
		return jsonValue(t, f)
	}
	switch f.Kind {
	case kubeschema.String:
		if t.Kind() == reflect.String && t != numberType {
			return func(d *Decoder, p unsafe.Pointer, _ uint64, b []byte, _ int) error {
				*(*string)(p) = d.str(b)
				return nil
			}
		}
	case kubeschema.Bool:
		if t.Kind() == reflect.Bool {
			return func(d *Decoder, p unsafe.Pointer, v uint64, _ []byte, _ int) error {
				*(*bool)(p) = v != 0
				return nil
			}
		}
	case kubeschema.Int32, kubeschema.Int64:
		if set := compileInt(t, f); set != nil {
			return set
		}
	case kubeschema.Float64:
		if t.Kind() == reflect.Float64 {
			return func(d *Decoder, p unsafe.Pointer, v uint64, _ []byte, _ int) error {
				x, err := float(v)
				*(*float64)(p) = x
				return err
			}
		}
	case kubeschema.Bytes:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return func(d *Decoder, p unsafe.Pointer, _ uint64, b []byte, _ int) error {
				// Any slice of bytes has []byte's layout.
				*(*[]byte)(p) = append([]byte{}, b...)
				return nil
			}
		}
	case kubeschema.Message:
		if set := compileMessage(t, f, omitManaged); set != nil {
			return set
		}
	}
	if t.Kind() == reflect.Pointer && t.Name() == "" && !hasMethods(t) {
		return pointerTo(t, compileValue(t.Elem(), f, omitManaged))
	}
	return jsonValue(t, f)
}

// pointerTo wraps the setter of a pointer's target: the target is allocated if needed.
func pointerTo(t reflect.Type, elem setFunc) setFunc {
	et := t.Elem()
	return func(d *Decoder, p unsafe.Pointer, v uint64, b []byte, depth int) error {
		pp := (*unsafe.Pointer)(p)
		if *pp == nil {
			*pp = reflect.New(et).UnsafePointer()
		}
		return elem(d, *pp, v, b, depth)
	}
}

func compileInt(t reflect.Type, f *kubeschema.Field) setFunc {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
	default:
		return nil
	}
	is32, bits, size, in := f.Kind == kubeschema.Int32, t.Bits(), t.Size(), jsondec.IntoFor(t)
	return func(d *Decoder, p unsafe.Pointer, v uint64, _ []byte, _ int) error {
		n := int64(v)
		if is32 {
			n = int64(int32(v))
		}
		if bits < 64 && (n < -1<<(bits-1) || n > 1<<(bits-1)-1) {
			return d.intoJSON(appendInt(d.buf[:0], n), in, p) // the JSON path's type error
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

// compileMessage is the setter of an object message into a struct or a pointer to one.
func compileMessage(t reflect.Type, f *kubeschema.Field, omitManaged bool) setFunc {
	st := f.Type()
	switch {
	case t.Kind() == reflect.Struct && !hasMethods(reflect.PointerTo(t)):
		c := compile(t, st, omitManaged)
		return func(d *Decoder, p unsafe.Pointer, _ uint64, b []byte, depth int) error {
			return c.decode(d, b, p, depth)
		}
	case t.Kind() == reflect.Pointer && t.Name() == "" && t.Elem().Kind() == reflect.Struct && !hasMethods(t):
		et := t.Elem()
		c := compile(et, st, omitManaged)
		return func(d *Decoder, p unsafe.Pointer, _ uint64, b []byte, depth int) error {
			pp := (*unsafe.Pointer)(p)
			if *pp == nil {
				*pp = reflect.New(et).UnsafePointer()
			}
			return c.decode(d, b, *pp, depth)
		}
	}
	return nil
}

// compileForm is the setter of a message whose JSON form is not an object (Type.JSON).
func compileForm(t reflect.Type, f *kubeschema.Field) setFunc {
	st := f.Type()
	switch {
	case st.JSON == "time" && t == metaTimeType:
		return func(d *Decoder, p unsafe.Pointer, _ uint64, b []byte, _ int) error {
			fm, err := parseForm(st, b)
			if err != nil {
				return err
			}
			if !fm.any {
				*(*meta.Time)(p) = meta.Time{}
				return nil
			}
			tm := time.Unix(int64(fm.u[1]), 0)
			if y := tm.UTC().Year(); y < 0 || y > 9999 {
				return schemaErr("time %d s is outside years 0-9999", tm.Unix())
			}
			*(*meta.Time)(p) = meta.Time{Time: tm}
			return nil
		}
	case st.JSON == "quantity" && t.Kind() == reflect.String && t != numberType && !hasMethods(reflect.PointerTo(t)):
		return func(d *Decoder, p unsafe.Pointer, _ uint64, b []byte, _ int) error {
			fm, err := parseForm(st, b)
			if err != nil {
				return err
			}
			if len(fm.s[1]) == 0 {
				*(*string)(p) = "0"
				return nil
			}
			*(*string)(p) = d.str(fm.s[1])
			return nil
		}
	case t.Kind() == reflect.Struct && reflect.PointerTo(t).Implements(protoMessageType) &&
		(st.JSON == "time" || st.JSON == "quantity" || st.JSON == "int-or-string"):
		return protoMethodForm(t, f)
	case t.Kind() == reflect.Pointer && t.Name() == "":
		elem := pointerTo(t, compileForm(t.Elem(), f))
		if st.JSON != "time" && st.JSON != "microtime" && st.JSON != "raw" && st.JSON != "array" {
			return elem
		}
		// Forms whose JSON may be null: null leaves the pointer nil.
		return func(d *Decoder, p unsafe.Pointer, v uint64, b []byte, depth int) error {
			fm, err := parseForm(st, b)
			if err != nil {
				return err
			}
			if isNullForm(st, fm) {
				*(*unsafe.Pointer)(p) = nil
				return nil
			}
			return elem(d, p, v, b, depth)
		}
	}
	return jsonValue(t, f)
}

// protoMessage is a Go type with protobuf methods of its own (k8s.io/apimachinery's Time,
// Quantity and IntOrString have them): it decodes its message itself, as it decodes its
// JSON itself (UnmarshalJSON) on the JSON path.
type protoMessage interface {
	Unmarshal([]byte) error
	Marshal() ([]byte, error)
	Size() int
}

var protoMessageType = reflect.TypeFor[protoMessage]()

// protoMethodForm is the setter of a timestamp, quantity or int-or-string into a Go type
// with protobuf methods. What its JSON form would give another way (a null time, the "0" of
// an empty quantity) and what the JSON form refuses (years outside 0-9999, a third kind of
// int-or-string) go through the JSON text as for any other type.
func protoMethodForm(t reflect.Type, f *kubeschema.Field) setFunc {
	st, viaJSON, ptr := f.Type(), jsonValue(t, f), ptrTo(t)
	return func(d *Decoder, p unsafe.Pointer, v uint64, b []byte, depth int) error {
		fm, err := parseForm(st, b)
		if err != nil {
			return err
		}
		switch st.JSON {
		case "time":
			if y := time.Unix(int64(fm.u[1]), 0).UTC().Year(); !fm.any || y < 0 || y > 9999 || fm.u[2] != 0 {
				return viaJSON(d, p, v, b, depth)
			}
		case "quantity":
			if len(fm.s[1]) == 0 || fm.has[2] || fm.has[3] {
				return viaJSON(d, p, v, b, depth)
			}
		case "int-or-string":
			if int64(fm.u[1]) != 0 && int64(fm.u[1]) != 1 {
				return viaJSON(d, p, v, b, depth)
			}
		}
		if err := ptr.at(p).(protoMessage).Unmarshal(b); err != nil {
			return schemaErr("%s: %v", st.Name, err)
		}
		return nil
	}
}

// isNullForm reports whether a special form's JSON is null.
func isNullForm(st *kubeschema.Type, fm form) bool {
	switch st.JSON {
	case "time", "microtime":
		return !fm.any
	case "raw":
		return !fm.has[1]
	case "array":
		return fm.items == nil
	}
	return false
}

// jsonValue is the setter that writes the value's JSON text and lets jsondec decode it
// into t.
func jsonValue(t reflect.Type, f *kubeschema.Field) setFunc {
	in := jsondec.IntoFor(t)
	return func(d *Decoder, p unsafe.Pointer, v uint64, b []byte, _ int) error {
		js, err := d.valueJSON(f, v, b)
		if err != nil {
			return err
		}
		return d.intoJSON(js, in, p)
	}
}

// compileSlice appends one element per occurrence. The decode loop sizes the slice for all
// the occurrences of the message first (presize), so that it grows here only when a field
// is merged from several messages.
func compileSlice(t reflect.Type, f *kubeschema.Field, omitManaged bool) setFunc {
	et := t.Elem()
	elem := compileValue(et, f, omitManaged)
	size := et.Size()
	ptr := ptrTo(t)
	return func(d *Decoder, p unsafe.Pointer, v uint64, b []byte, depth int) error {
		sh := (*sliceHeader)(p)
		if sh.len == sh.cap {
			reflect.ValueOf(ptr.at(p)).Elem().Grow(1)
		}
		sh.len++
		return elem(d, unsafe.Add(sh.data, uintptr(sh.len-1)*size), v, b, depth)
	}
}

// presize gives the empty slice at p, of the type ptr makes pointers to, room for n
// elements (Grow in place: MakeSlice would allocate its header too).
func presize(ptr ptrMaker, p unsafe.Pointer, n int) {
	reflect.ValueOf(ptr.at(p)).Elem().Grow(n)
}

// ptrMaker makes the interface value of a pointer of one type (*t) without reflect.NewAt,
// whose lookup of the pointer type costs more than the rest of decoding a small field.
type ptrMaker struct{ tmpl any }

func ptrTo(t reflect.Type) ptrMaker { return ptrMaker{reflect.Zero(reflect.PointerTo(t)).Interface()} }

// at returns the *t pointing at p, as an interface value.
func (m ptrMaker) at(p unsafe.Pointer) any {
	x := m.tmpl
	(*[2]unsafe.Pointer)(unsafe.Pointer(&x))[1] = p
	return x
}

type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// compileMap decodes one map entry {1: key, 2: value} per occurrence. The decode loop makes
// the map for all the entries of the message first (presizeMap).
func compileMap(t reflect.Type, f *kubeschema.Field, omitManaged bool) setFunc {
	et := t.Elem()
	if t.Key().Kind() == reflect.String && t.Key().Name() == "string" && et == reflect.TypeFor[string]() && f.Kind == kubeschema.String {
		return func(d *Decoder, p unsafe.Pointer, _ uint64, b []byte, _ int) error {
			k, v, _, err := entry(f, b)
			if err != nil {
				return err
			}
			m := (*map[string]string)(p)
			if *m == nil {
				*m = map[string]string{}
			}
			(*m)[d.str(k)] = d.str(v)
			return nil
		}
	}
	elem := compileValue(et, f, omitManaged)
	ptr, null := ptrTo(t), jsondec.IntoFor(et)
	id := int(scratchIDs.Add(1)) - 1
	return func(d *Decoder, p unsafe.Pointer, _ uint64, b []byte, depth int) error {
		k, vb, vv, err := entry(f, b)
		if err != nil {
			return err
		}
		m := reflect.ValueOf(ptr.at(p)).Elem()
		if m.IsNil() {
			m.Set(reflect.MakeMap(t))
		}
		// The key and value are built in scratch values the map copies.
		sc := d.mapScratch(id, t)
		sc.elem.SetZero()
		if vb != nil || f.Kind != kubeschema.Bytes {
			if err := elem(d, sc.elemPtr, vv, vb, depth+1); err != nil {
				return err
			}
		} else if err := d.intoJSON([]byte("null"), null, sc.elemPtr); err != nil {
			return err
		}
		sc.key.SetString(d.str(k))
		m.SetMapIndex(sc.key, sc.elem)
		return nil
	}
}

// scratchIDs numbers the map codecs, whose scratch values a Decoder keeps (mapScratch).
var scratchIDs atomic.Int64

// mapScratch is the key and value a map codec decodes an entry into before the map copies
// them; one per map codec and Decoder.
type mapScratch struct {
	key, elem reflect.Value // settable
	elemPtr   unsafe.Pointer
}

func (d *Decoder) mapScratch(id int, t reflect.Type) *mapScratch {
	for len(d.scratch) <= id {
		d.scratch = append(d.scratch, nil)
	}
	if d.scratch[id] == nil {
		ev := reflect.New(t.Elem())
		d.scratch[id] = &mapScratch{key: reflect.New(t.Key()).Elem(), elem: ev.Elem(), elemPtr: ev.UnsafePointer()}
	}
	return d.scratch[id]
}

// presizeMap makes the nil map of type t at p with room for n entries.
func presizeMap(t reflect.Type, p unsafe.Pointer, n int, ptr ptrMaker) {
	reflect.ValueOf(ptr.at(p)).Elem().Set(reflect.MakeMapWithSize(t, n))
}
