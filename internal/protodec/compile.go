package protodec

import (
	"encoding/json"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/informerkit/informerkit/internal/jsondec"
	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/meta"
)

var (
	plans     sync.Map // planKey -> *Plan
	compileMu sync.Mutex
	codecs    = map[codecKey]*msgCodec{} // under compileMu
	pending   []*msgCodec                // compiled, not yet settled; under compileMu

	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[interface{ UnmarshalText([]byte) error }]()
	numberType          = reflect.TypeFor[json.Number]()
	metaTimeType        = reflect.TypeFor[meta.Time]()
)

type codecKey struct {
	goType      reflect.Type
	schema      *kubeschema.Type
	omitManaged bool
}

// msgCodec decodes one message type into one Go struct type.
type msgCodec struct {
	goType reflect.Type
	schema *kubeschema.Type
	byNum  []*fieldCodec // by field number
	// absent are the fields whose absence from the wire the JSON makes visible (a zero value
	// or null the Go type does something with): applied at the end of each message.
	absent []*fieldCodec
	// viaJSON are the fields decoded through their JSON text at the end of each message (a
	// list or map into a Go type that is not a slice or map with string keys).
	viaJSON []*fieldCodec
	// whole: the message is decoded through its JSON form (a ",string" field).
	whole bool
	// noop: decoding an empty message changes nothing in a zero Go value (see settle).
	noop bool
	into jsondec.Into
}

// setFunc stores one occurrence of a field, its varint value v or its bytes b, at p.
type setFunc func(d *Decoder, p unsafe.Pointer, v uint64, b []byte, depth int) error

type hop struct {
	off  uintptr
	elem reflect.Type
}

// What the absence of a field from the wire means for the Go value (as in kubeproto's JSON
// form, which writes what encoding/json writes for the server's Go struct).
type absence uint8

const (
	absentNothing absence = iota // the JSON omits it, or its JSON value changes nothing
	absentZero                   // the JSON holds the zero value (an empty message's form)
	absentNull                   // the JSON holds null
)

type fieldCodec struct {
	f      *kubeschema.Field
	num    int
	wire   uint8 // the wire type the field must have
	packed bool  // a repeated varint: wire type 2 holds packed values
	// single: a non-repeated message field (its occurrences merge).
	single bool
	inline *msgCodec // an Inline field: its message's fields belong to this struct
	hops   []hop
	off    uintptr
	goType reflect.Type
	set    setFunc
	// clearZero: an omitempty scalar, absent from the JSON when zero: a zero occurrence
	// leaves (or puts back) the Go field at its zero value.
	clearZero bool
	absent    absence
	sliceType reflect.Type // a list decoded into a slice by set: presized (decode.go)
	slicePtr  ptrMaker
	mapType   reflect.Type // a map decoded into a Go map by set: presized (decode.go)
	mapPtr    ptrMaker
	ptr       ptrMaker     // of the Go field's type, for clearZero
	sub       *msgCodec    // for absentZero: the codec of a struct field or inline message
	into      jsondec.Into // for absentNull and viaJSON fields
}

func compile(t reflect.Type, st *kubeschema.Type, omitManaged bool) *msgCodec {
	k := codecKey{t, st, omitManaged}
	if c, ok := codecs[k]; ok {
		return c
	}
	c := &msgCodec{goType: t, schema: st, into: jsondec.IntoFor(t)}
	codecs[k] = c
	pending = append(pending, c)
	for _, f := range st.Fields {
		if f.NoJSON || f.Number <= 0 {
			continue
		}
		if omitManaged && f.Name == "managedFields" && st.Name == "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" {
			continue
		}
		fc := &fieldCodec{f: f, num: f.Number, wire: uint8(f.Wire())}
		fc.packed = f.Repeated && f.Wire() == kubeschema.Varint
		fc.single = f.Kind == kubeschema.Message && !f.Repeated && f.MapKey == ""
		if f.Inline {
			// An absent inline message still writes its fields' zero values into the JSON.
			fc.inline = compile(t, f.Type(), omitManaged)
			fc.absent, fc.sub = absentZero, fc.inline
			c.absent = append(c.absent, fc)
		} else {
			jf, ok := jsondec.LookupField(t, f.Name)
			if !ok {
				continue // not declared: skipped on the wire
			}
			if jf.Quoted {
				c.whole = true // ",string": the JSON path has the rules
				return c
			}
			fc.hops, fc.off, fc.goType = path(t, jf.Index)
			fc.into = jsondec.IntoFor(fc.goType)
			compileField(c, fc, omitManaged)
		}
		for len(c.byNum) <= f.Number {
			c.byNum = append(c.byNum, nil)
		}
		c.byNum[f.Number] = fc
	}
	return c
}

// compileField sets the setter and the JSON presence rules of a declared field.
func compileField(c *msgCodec, fc *fieldCodec, omitManaged bool) {
	f, t := fc.f, fc.goType
	set, ok := compileSet(t, f, omitManaged)
	if !ok {
		c.viaJSON = append(c.viaJSON, fc)
		return
	}
	fc.set = set
	if f.Repeated && t.Kind() == reflect.Slice {
		fc.sliceType, fc.slicePtr = t, ptrTo(t)
	}
	if f.MapKey != "" && t.Kind() == reflect.Map {
		fc.mapType, fc.mapPtr = t, ptrTo(t)
	}
	omittable := f.OmitEmpty || f.OmitZero
	switch {
	case f.MapKey != "" || f.Repeated || f.Pointer:
		if !omittable && nullMatters(t) {
			fc.absent = absentNull
		}
	case f.Kind == kubeschema.Bytes:
		fc.clearZero = omittable
		if !omittable && nullMatters(t) {
			fc.absent = absentNull
		}
	case f.Kind == kubeschema.Message:
		st := f.Type()
		switch {
		case f.OmitZero || f.OmitEmpty && st.JSON == "array":
			// Omitted when zero, and an absent message is zero.
		case (st.JSON == "time" || st.JSON == "microtime") && t == metaTimeType:
			// null: the zero Time it already holds.
		case st.JSON == "" && t.Kind() == reflect.Struct && !hasMethods(reflect.PointerTo(t)):
			fc.absent, fc.sub = absentZero, compile(t, st, omitManaged) // unless settle finds it a no-op
		default:
			fc.absent = absentZero
		}
	default:
		fc.clearZero = omittable
		if !omittable && !scalarZeroNoop(t, f.Kind) {
			fc.absent = absentZero
		}
	}
	if fc.clearZero {
		fc.ptr = ptrTo(t)
	}
	if fc.absent != absentNothing {
		c.absent = append(c.absent, fc)
	}
}

// nullMatters reports whether JSON null changes a zero Go value of type t.
func nullMatters(t reflect.Type) bool {
	return t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && hasMethods(reflect.PointerTo(t))
}

// scalarZeroNoop reports whether the JSON zero value of kind k leaves a zero Go value of
// type t as it is, without error.
func scalarZeroNoop(t reflect.Type, k kubeschema.Kind) bool {
	if hasMethods(reflect.PointerTo(t)) {
		return false
	}
	switch k {
	case kubeschema.String:
		return t.Kind() == reflect.String && t != numberType
	case kubeschema.Bool:
		return t.Kind() == reflect.Bool
	case kubeschema.Int32, kubeschema.Int64, kubeschema.Float64:
		switch t.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
			reflect.Float32, reflect.Float64:
			return true
		}
	}
	return false
}

// settle decides, for the codecs compiled last, whether decoding an empty message changes a
// zero Go value (the JSON of an empty message is its fields' zero values), and drops the
// absence rules of fields whose empty message changes nothing. It computes the greatest
// fixed point, so that recursive types settle.
func settle(cs []*msgCodec) {
	for _, c := range cs {
		c.noop = !c.whole
		for _, fc := range c.viaJSON {
			if !fc.f.OmitEmpty && !fc.f.OmitZero {
				c.noop = false
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, c := range cs {
			if !c.noop {
				continue
			}
			for _, fc := range c.absent {
				if fc.sub == nil || !fc.sub.noop {
					c.noop, changed = false, true
					break
				}
			}
		}
	}
	for _, c := range cs {
		kept := c.absent[:0]
		for _, fc := range c.absent {
			if fc.sub == nil || !fc.sub.noop {
				kept = append(kept, fc)
			}
		}
		c.absent = kept
	}
}

// typeMetaField returns the setter of a top-level member ("apiVersion", "kind") of t.
func typeMetaField(t reflect.Type, name string) *fieldCodec {
	jf, ok := jsondec.LookupField(t, name)
	if !ok {
		return nil
	}
	fc := &fieldCodec{}
	fc.hops, fc.off, fc.goType = path(t, jf.Index)
	fc.into = jsondec.IntoFor(fc.goType)
	if jf.Quoted {
		fc.set = nil
		return fc
	}
	if fc.goType.Kind() == reflect.String && fc.goType != numberType && !hasMethods(reflect.PointerTo(fc.goType)) {
		fc.set = func(d *Decoder, p unsafe.Pointer, _ uint64, b []byte, _ int) error {
			*(*string)(p) = d.str(b)
			return nil
		}
	}
	return fc
}

// path turns a Go index path into embedded-pointer hops and the final offset and type.
func path(t reflect.Type, index []int) ([]hop, uintptr, reflect.Type) {
	var hops []hop
	var off uintptr
	cur := t
	for j, x := range index {
		sf := cur.Field(x)
		off += sf.Offset
		if j == len(index)-1 {
			return hops, off, sf.Type
		}
		if sf.Type.Kind() == reflect.Pointer {
			hops = append(hops, hop{off: off, elem: sf.Type.Elem()})
			cur, off = sf.Type.Elem(), 0
		} else {
			cur = sf.Type
		}
	}
	return hops, off, cur
}

func hasMethods(pt reflect.Type) bool {
	return pt.Implements(unmarshalerType) || pt.Implements(textUnmarshalerType)
}

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
