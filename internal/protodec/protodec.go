// Package protodec decodes the kube-apiserver's protobuf encoding of built-in objects into
// the user's JSON-tagged Go structs, through the field-number table of package kubeschema:
// a prototype measured against the JSON decoder (internal/jsondec), not wired into apiclient.
//
// The decision (bench/README.md, "Real kube-apiserver"): on kube-apiserver v1.36.3 with
// 20,000 pods, an informer over this decoder needed 1.96 s of client CPU to sync full pods
// against 3.17 s with jsondec (1.6×; client-go 1.95 s), 0.57 s against 1.84 s with a partial
// type (3.2×) and 1.5× less for configmaps, above the 1.3× that adoption required; time to sync
// fell to 0.54× (the server encodes protobuf faster). So protobuf is to be used for built-in
// kinds; until apiclient negotiates it (WebSocket watches, protobuf Status in ERROR events,
// streaming lists and a JSON fallback are missing) only the benchmark uses this package.
//
// A decoder is compiled once per Go type and schema type. Each protobuf field is matched, by
// its JSON name, to the Go field the JSON member would fill (jsondec.LookupField), so the
// result is what decoding the kube-apiserver's JSON of the same object gives, with two
// differences inherent to protobuf: an empty list or map decodes as nil (the JSON may say []
// or {}), and numbers keep their protobuf width. Fields the Go type does not declare are
// skipped by their length, without being read. Values whose JSON form is not an object
// (timestamps, quantities, int-or-strings, raw JSON) and values whose Go type does not match
// their kind are turned into their JSON text and handed to jsondec, so that the Go type's
// own rules (UnmarshalJSON) apply.
package protodec

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/informerkit/informerkit/internal/jsondec"
	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/internal/kubeschema"
)

// ErrMalformed is wrapped by the errors of input that is not well-formed protobuf.
var ErrMalformed = errors.New("protodec: malformed protobuf")

const maxDepth = 64

// Options tune a Decoder.
type Options struct {
	// OmitManagedFields skips metadata.managedFields (ObjectMeta's field) instead of
	// decoding it. Default false.
	OmitManagedFields bool
	// Strings, if set, supplies decoded strings instead of new allocations (see
	// jsondec.Options.Strings). Default: allocate.
	Strings func(b []byte) string
}

// Decoder decodes messages; it keeps scratch space and is not safe for concurrent use.
type Decoder struct {
	opts Options
	jd   *jsondec.Decoder
	buf  []byte
	err  error
}

// NewDecoder returns a Decoder with opts.
func NewDecoder(opts Options) *Decoder {
	return &Decoder{opts: opts, jd: jsondec.NewDecoder(jsondec.Options{Strings: opts.Strings})}
}

// Decode decodes msg, the protobuf message of an object of schema type st (the raw bytes
// of the runtime.Unknown envelope, without "k8s\x00"), into *out. Like jsondec, a value
// that does not fit its Go field is reported after the rest was decoded.
func Decode[T any](d *Decoder, st *kubeschema.Type, msg []byte, out *T) error {
	t, p := reflect.TypeFor[T](), unsafe.Pointer(out)
	if t.Kind() == reflect.Pointer && t.Name() == "" && t.Elem().Kind() == reflect.Struct {
		// *T objects (what informers hold): into the pointee, allocated if needed.
		pp := (*unsafe.Pointer)(p)
		if *pp == nil {
			*pp = reflect.New(t.Elem()).UnsafePointer()
		}
		t, p = t.Elem(), *pp
	}
	c := codecFor(t, st, d.opts.OmitManagedFields)
	d.err = nil
	if err := c.decode(d, msg, p, 0); err != nil {
		return err
	}
	return d.err
}

// DecodeObject decodes an enveloped object ("k8s\x00" + runtime.Unknown), as a GET with
// Accept: application/vnd.kubernetes.protobuf returns it, into *out.
func DecodeObject[T any](d *Decoder, b []byte, out *T) error {
	env, err := kubeproto.Unwrap(b)
	if err != nil {
		return err
	}
	gv, v := "", env.APIVersion
	for i := len(v) - 1; i >= 0; i-- {
		if v[i] == '/' {
			gv, v = v[:i], v[i+1:]
			break
		}
	}
	ki, ok := kubeschema.ForKind(gv, v, env.Kind)
	if !ok {
		return fmt.Errorf("protodec: unknown kind %s %s", env.APIVersion, env.Kind)
	}
	return Decode(d, ki.Type, env.Raw, out)
}

// reading

func varint(b []byte, i int) (uint64, int, error) {
	var v uint64
	for s := uint(0); s < 64; s += 7 {
		if i >= len(b) {
			return 0, 0, fmt.Errorf("%w: truncated varint at %d", ErrMalformed, i)
		}
		c := b[i]
		i++
		v |= uint64(c&0x7f) << s
		if c < 0x80 {
			return v, i, nil
		}
	}
	return 0, 0, fmt.Errorf("%w: varint too long at %d", ErrMalformed, i)
}

// compiling

type codecKey struct {
	goType      reflect.Type
	schema      *kubeschema.Type
	omitManaged bool
}

var (
	codecsMu sync.Mutex
	codecs   = map[codecKey]*msgCodec{}
)

// msgCodec decodes one message type into one Go struct type.
type msgCodec struct {
	goType reflect.Type
	schema *kubeschema.Type
	byNum  []*fieldCodec // by field number
	// whole, when set, decodes the message through its JSON form (a Go type this package
	// does not decode field by field), with into.
	whole bool
	into  jsondec.Into
	// always are the fields the JSON always has (not pointers, lists or maps, or omitempty
	// scalars): when one is missing from the wire, its zero is decoded, as from the JSON.
	always []*fieldCodec
}

// setFunc stores one occurrence of a field (its varint value or its bytes) at p.
type setFunc func(d *Decoder, p unsafe.Pointer, v uint64, b []byte, depth int) error

type hop struct {
	off  uintptr
	elem reflect.Type
}

type fieldCodec struct {
	f        *kubeschema.Field
	inline   *msgCodec // an Inline field: its message's fields belong to this struct
	hops     []hop
	off      uintptr
	set      setFunc
	omitZero bool // omitempty, not a pointer: a zero scalar is absent from the JSON
}

func codecFor(t reflect.Type, st *kubeschema.Type, omitManaged bool) *msgCodec {
	codecsMu.Lock()
	defer codecsMu.Unlock()
	return compile(t, st, omitManaged)
}

func compile(t reflect.Type, st *kubeschema.Type, omitManaged bool) *msgCodec {
	k := codecKey{t, st, omitManaged}
	if c, ok := codecs[k]; ok {
		return c
	}
	c := &msgCodec{goType: t, schema: st}
	codecs[k] = c
	c.into = jsondec.IntoFor(t)
	if t.Kind() != reflect.Struct || st.JSON != "" {
		c.whole = true
		return c
	}
	for _, f := range st.Fields {
		if f.NoJSON || f.Number <= 0 {
			continue
		}
		if omitManaged && f.Name == "managedFields" && st.Name == "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" {
			continue
		}
		fc := &fieldCodec{f: f}
		if f.Inline {
			fc.inline = compile(t, f.Type(), omitManaged)
		} else {
			jf, ok := jsondec.LookupField(t, f.Name)
			if !ok {
				continue // not declared: skipped on the wire
			}
			if jf.Quoted {
				c.whole = true // ",string": the JSON path has the rules
				return c
			}
			var goType reflect.Type
			fc.hops, fc.off, goType = path(t, jf.Index)
			set, ok := compileSet(goType, f, omitManaged)
			if !ok {
				c.whole = true // a list or map into another Go type: the JSON rules
				return c
			}
			fc.set = set
			fc.omitZero = f.OmitEmpty && !f.Pointer && !f.Repeated && f.MapKey == "" && f.Kind != kubeschema.Message
		}
		for len(c.byNum) <= f.Number {
			c.byNum = append(c.byNum, nil)
		}
		c.byNum[f.Number] = fc
		if !f.Pointer && !f.Repeated && f.MapKey == "" && !(f.OmitEmpty && f.Kind != kubeschema.Message) {
			c.always = append(c.always, fc)
		}
	}
	return c
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

// decoding

func (c *msgCodec) decode(d *Decoder, b []byte, p unsafe.Pointer, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: nested deeper than %d", ErrMalformed, maxDepth)
	}
	if c.whole {
		return d.viaJSON(c.schema, b, c.into, p)
	}
	var seenBits uint64
	var seenMore []bool
	for i := 0; i < len(b); {
		key, n, err := varint(b, i)
		if err != nil {
			return err
		}
		i = n
		num, wt := int(key>>3), key&7
		var v uint64
		var sub []byte
		switch wt {
		case 0:
			if v, i, err = varint(b, i); err != nil {
				return err
			}
		case 1:
			if i+8 > len(b) {
				return fmt.Errorf("%w: truncated fixed64 at %d", ErrMalformed, i)
			}
			v = binary.LittleEndian.Uint64(b[i:])
			i += 8
		case 2:
			var l uint64
			if l, i, err = varint(b, i); err != nil {
				return err
			}
			if l > uint64(len(b)-i) {
				return fmt.Errorf("%w: length %d past the end at %d", ErrMalformed, l, i)
			}
			sub = b[i : i+int(l)]
			i += int(l)
		case 5:
			if i+4 > len(b) {
				return fmt.Errorf("%w: truncated fixed32 at %d", ErrMalformed, i)
			}
			v = uint64(binary.LittleEndian.Uint32(b[i:]))
			i += 4
		default:
			return fmt.Errorf("%w: wire type %d at %d", ErrMalformed, wt, i)
		}
		if num >= len(c.byNum) || c.byNum[num] == nil {
			continue
		}
		fc := c.byNum[num]
		if num < 64 {
			seenBits |= 1 << num
		} else {
			for len(seenMore) <= num-64 {
				seenMore = append(seenMore, false)
			}
			seenMore[num-64] = true
		}
		if fc.inline != nil {
			if err := fc.inline.decode(d, sub, p, depth+1); err != nil {
				return err
			}
			continue
		}
		if fc.omitZero && v == 0 && len(sub) == 0 {
			continue
		}
		q := p
		for _, h := range fc.hops {
			pp := (*unsafe.Pointer)(unsafe.Add(q, h.off))
			if *pp == nil {
				*pp = reflect.New(h.elem).UnsafePointer()
			}
			q = *pp
		}
		if err := fc.set(d, unsafe.Add(q, fc.off), v, sub, depth+1); err != nil {
			return err
		}
	}
	// Fields a real server always writes but this message lacks.
	for _, fc := range c.always {
		n := fc.f.Number
		if n < 64 && seenBits&(1<<n) != 0 || n >= 64 && n-64 < len(seenMore) && seenMore[n-64] {
			continue
		}
		if err := c.zero(d, fc, p, depth); err != nil {
			return err
		}
	}
	return nil
}

// zero decodes the zero value of a field missing from the message.
func (c *msgCodec) zero(d *Decoder, fc *fieldCodec, p unsafe.Pointer, depth int) error {
	if fc.inline != nil {
		return fc.inline.decode(d, nil, p, depth+1)
	}
	q := p
	for _, h := range fc.hops {
		pp := (*unsafe.Pointer)(unsafe.Add(q, h.off))
		if *pp == nil {
			*pp = reflect.New(h.elem).UnsafePointer()
		}
		q = *pp
	}
	return fc.set(d, unsafe.Add(q, fc.off), 0, nil, depth+1)
}

// viaJSON decodes a message of schema type st through its JSON form into the value at p.
func (d *Decoder) viaJSON(st *kubeschema.Type, b []byte, in jsondec.Into, p unsafe.Pointer) error {
	js, err := d.messageJSON(st, b)
	if err != nil {
		return err
	}
	return d.intoJSON(js, in, p)
}

// intoJSON hands the JSON text js to jsondec for the value at p; a type error is kept for
// the end, as jsondec keeps it.
func (d *Decoder) intoJSON(js []byte, in jsondec.Into, p unsafe.Pointer) error {
	err := in.Decode(d.jd, js, p)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if d.err == nil {
			d.err = err
		}
		return nil
	}
	return err
}

// messageJSON returns the JSON text of a message: its special form, or the object.
func (d *Decoder) messageJSON(st *kubeschema.Type, b []byte) ([]byte, error) {
	if st.JSON == "" {
		m, err := kubeproto.Decode(st, b)
		if err != nil {
			return nil, err
		}
		return json.Marshal(m)
	}
	fields := map[int]any{}
	var raw []byte
	var items []string
	for i := 0; i < len(b); {
		key, n, err := varint(b, i)
		if err != nil {
			return nil, err
		}
		i = n
		num, wt := int(key>>3), key&7
		switch wt {
		case 0:
			var v uint64
			if v, i, err = varint(b, i); err != nil {
				return nil, err
			}
			fields[num] = v
		case 2:
			var l uint64
			if l, i, err = varint(b, i); err != nil {
				return nil, err
			}
			if l > uint64(len(b)-i) {
				return nil, fmt.Errorf("%w: length past the end", ErrMalformed)
			}
			s := b[i : i+int(l)]
			i += int(l)
			fields[num] = s
			if num == 1 {
				raw = s
				items = append(items, string(s))
			}
		default:
			return nil, fmt.Errorf("%w: wire type %d in a %s", ErrMalformed, wt, st.JSON)
		}
	}
	u := func(n int) int64 { v, _ := fields[n].(uint64); return int64(v) }
	s := func(n int) string { v, _ := fields[n].([]byte); return string(v) }
	d.buf = d.buf[:0]
	switch st.JSON {
	case "time", "microtime":
		if len(fields) == 0 {
			return append(d.buf, "null"...), nil
		}
		layout, t := time.RFC3339, time.Unix(u(1), 0)
		if st.JSON == "microtime" {
			layout = "2006-01-02T15:04:05.000000Z07:00"
			t = time.Unix(u(1), int64(time.Duration(int32(u(2))).Truncate(time.Microsecond)))
		}
		return strconv.AppendQuote(d.buf, t.UTC().Format(layout)), nil
	case "duration":
		return strconv.AppendQuote(d.buf, time.Duration(u(1)).String()), nil
	case "quantity":
		q := s(1)
		if q == "" {
			q = "0"
		}
		return strconv.AppendQuote(d.buf, q), nil
	case "int-or-string":
		if u(1) == 1 {
			return json.Marshal(s(3))
		}
		return strconv.AppendInt(d.buf, int64(int32(u(2))), 10), nil
	case "raw":
		if raw == nil {
			return append(d.buf, "null"...), nil
		}
		return raw, nil
	case "array":
		if items == nil {
			return append(d.buf, "null"...), nil
		}
		return json.Marshal(items)
	}
	return nil, fmt.Errorf("protodec: unknown JSON form %q", st.JSON)
}

// compileSet returns the setter of one occurrence of schema field f into a Go value of
// type t; ok is false for a list or map whose Go type is not a slice or a map with string
// keys (the enclosing message is then decoded through its JSON form).
func compileSet(t reflect.Type, f *kubeschema.Field, omitManaged bool) (setFunc, bool) {
	if f.MapKey != "" {
		if t.Kind() != reflect.Map || t.Key().Kind() != reflect.String || reflect.PointerTo(t.Key()).Implements(textUnmarshalerType) {
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
	named := t.Name() != "" && t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface
	if named && (reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType)) {
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
		switch t.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			is32, bits, size := f.Kind == kubeschema.Int32, t.Bits(), t.Size()
			return func(d *Decoder, p unsafe.Pointer, v uint64, _ []byte, _ int) error {
				n := int64(v)
				if is32 {
					n = int64(int32(v))
				}
				if bits < 64 && (n < -1<<(bits-1) || n > 1<<(bits-1)-1) {
					return d.intoJSON(strconv.AppendInt(d.buf[:0], n, 10), jsondec.IntoFor(t), p)
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
	case kubeschema.Float64:
		if t.Kind() == reflect.Float64 {
			return func(d *Decoder, p unsafe.Pointer, v uint64, _ []byte, _ int) error {
				*(*float64)(p) = math.Float64frombits(v)
				return nil
			}
		}
	case kubeschema.Bytes:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return func(d *Decoder, p unsafe.Pointer, _ uint64, b []byte, _ int) error {
				reflect.NewAt(t, p).Elem().SetBytes(append([]byte{}, b...))
				return nil
			}
		}
	case kubeschema.Message:
		st := f.Type()
		if st.JSON != "" {
			return jsonValue(t, f)
		}
		switch t.Kind() {
		case reflect.Struct:
			c := compile(t, st, omitManaged)
			return func(d *Decoder, p unsafe.Pointer, _ uint64, b []byte, depth int) error {
				return c.decode(d, b, p, depth)
			}
		case reflect.Pointer:
			if t.Name() == "" && t.Elem().Kind() == reflect.Struct && !hasMethods(t) {
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
		}
	}
	if t.Kind() == reflect.Pointer && t.Name() == "" && !hasMethods(t) && f.Kind != kubeschema.Message {
		et := t.Elem()
		elem := compileValue(et, f, omitManaged)
		return func(d *Decoder, p unsafe.Pointer, v uint64, b []byte, depth int) error {
			pp := (*unsafe.Pointer)(p)
			if *pp == nil {
				*pp = reflect.New(et).UnsafePointer()
			}
			return elem(d, *pp, v, b, depth)
		}
	}
	return jsonValue(t, f)
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[interface{ UnmarshalText([]byte) error }]()
	numberType          = reflect.TypeFor[json.Number]()
)

func hasMethods(pt reflect.Type) bool {
	return pt.Implements(unmarshalerType) || pt.Implements(textUnmarshalerType)
}

func (d *Decoder) str(b []byte) string {
	if d.opts.Strings != nil {
		return d.opts.Strings(b)
	}
	return string(b)
}

// jsonValue is the setter that writes the value's JSON text and lets jsondec decode it
// into t.
func jsonValue(t reflect.Type, f *kubeschema.Field) setFunc {
	in := jsondec.IntoFor(t)
	return func(d *Decoder, p unsafe.Pointer, v uint64, b []byte, _ int) error {
		var js []byte
		var err error
		switch f.Kind {
		case kubeschema.String:
			js, err = json.Marshal(string(b))
		case kubeschema.Bool:
			js = strconv.AppendBool(d.buf[:0], v != 0)
		case kubeschema.Int32:
			js = strconv.AppendInt(d.buf[:0], int64(int32(v)), 10)
		case kubeschema.Int64:
			js = strconv.AppendInt(d.buf[:0], int64(v), 10)
		case kubeschema.Float64:
			js, err = json.Marshal(math.Float64frombits(v))
		case kubeschema.Bytes:
			js, err = json.Marshal(b)
		case kubeschema.Message:
			js, err = d.messageJSON(f.Type(), b)
		}
		if err != nil {
			return err
		}
		return d.intoJSON(js, in, p)
	}
}

// compileSlice appends one element per occurrence.
func compileSlice(t reflect.Type, f *kubeschema.Field, omitManaged bool) setFunc {
	et := t.Elem()
	elem := compileValue(et, f, omitManaged)
	size := et.Size()
	proto := reflect.New(t).Interface()
	return func(d *Decoder, p unsafe.Pointer, v uint64, b []byte, depth int) error {
		sh := (*sliceHeader)(p)
		if sh.len == sh.cap {
			x := proto
			(*[2]unsafe.Pointer)(unsafe.Pointer(&x))[1] = p
			reflect.ValueOf(x).Elem().Grow(1)
		}
		sh.len++
		return elem(d, unsafe.Add(sh.data, uintptr(sh.len-1)*size), v, b, depth)
	}
}

type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// compileMap decodes one map entry {1: key, 2: value} per occurrence.
func compileMap(t reflect.Type, f *kubeschema.Field, omitManaged bool) setFunc {
	et := t.Elem()
	if et.Kind() == reflect.String && f.Kind == kubeschema.String && et != numberType &&
		!(et.Name() != "" && hasMethods(reflect.PointerTo(et))) {
		return func(d *Decoder, p unsafe.Pointer, _ uint64, b []byte, _ int) error {
			k, v, err := entry(b)
			if err != nil {
				return err
			}
			if *(*unsafe.Pointer)(p) == nil {
				*(*unsafe.Pointer)(p) = reflect.MakeMap(t).UnsafePointer()
			}
			(*(*map[string]string)(p))[d.str(k)] = d.str(v)
			return nil
		}
	}
	elem := compileValue(et, f, omitManaged)
	return func(d *Decoder, p unsafe.Pointer, _ uint64, b []byte, depth int) error {
		k, vb, err := entry(b)
		if err != nil {
			return err
		}
		m := reflect.NewAt(t, p).Elem()
		if m.IsNil() {
			m.Set(reflect.MakeMap(t))
		}
		ev := reflect.New(et)
		var vv uint64
		if f.Kind != kubeschema.Message && f.Kind != kubeschema.String && f.Kind != kubeschema.Bytes {
			vv, _, _ = varint(vb, 0)
		}
		if err := elem(d, ev.UnsafePointer(), vv, vb, depth); err != nil {
			return err
		}
		kv := reflect.New(t.Key()).Elem()
		kv.SetString(d.str(k))
		m.SetMapIndex(kv, ev.Elem())
		return nil
	}
}

// entry splits a map entry into its key bytes and its value's bytes.
func entry(b []byte) (key, val []byte, err error) {
	for i := 0; i < len(b); {
		k, n, err := varint(b, i)
		if err != nil {
			return nil, nil, err
		}
		i = n
		if k&7 != 2 {
			// A scalar value: keep its varint bytes for the caller.
			start := i
			if _, i, err = varint(b, i); err != nil {
				return nil, nil, err
			}
			if k>>3 == 2 {
				val = b[start:i]
			}
			continue
		}
		l, n, err := varint(b, i)
		if err != nil {
			return nil, nil, err
		}
		i = n
		if l > uint64(len(b)-i) {
			return nil, nil, fmt.Errorf("%w: map entry length past the end", ErrMalformed)
		}
		switch k >> 3 {
		case 1:
			key = b[i : i+int(l)]
		case 2:
			val = b[i : i+int(l)]
		}
		i += int(l)
	}
	return key, val, nil
}
