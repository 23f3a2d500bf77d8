package protodec

import (
	"encoding/json"
	"reflect"
	"sync"
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
