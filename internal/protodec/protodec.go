// Package protodec decodes the kube-apiserver's protobuf encoding of built-in objects
// (application/vnd.kubernetes.protobuf) straight into the caller's JSON-tagged Go structs,
// through the field-number table of package kubeschema. apiclient reads every built-in kind
// with it.
//
// A Plan is compiled once per Go type and schema type: each protobuf field is matched, by
// its JSON name, to the Go field the JSON member would fill (jsondec.LookupField), and
// decoding then writes through offsets. Fields the Go type does not declare are skipped by
// their length without being read or allocated. The result is what decoding the
// kube-apiserver's JSON of the same object gives (kubeproto's JSON form, then jsondec; the
// fuzz target FuzzAgainstJSON holds the two to it): the same zero values for fields a server
// always writes, the same omissions, the same merging of repeated message fields. Values
// whose JSON form is not an object (timestamps, quantities, int-or-strings, raw JSON) and
// values whose Go type does not match their kind are turned into their JSON text and handed
// to jsondec, so that the Go type's own rules (UnmarshalJSON) apply; meta.Time and string
// targets are set directly, and Go types with protobuf methods of their own
// (k8s.io/apimachinery's Time, Quantity, IntOrString) decode their message themselves.
//
// Input that is not well-formed protobuf fails with ErrMalformed, a value that does not fit
// its field's schema (a wire type the field cannot have, an int-or-string of a third type,
// a timestamp outside years 0-9999) with ErrSchema, and a value that does not fit the Go
// type with jsondec's type error, reported once the rest is decoded.
package protodec

import (
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/informerkit/informerkit/internal/jsondec"
	"github.com/informerkit/informerkit/internal/kubeschema"
)

// The kinds of errors (match with errors.Is).
var (
	// ErrMalformed: the input is not well-formed protobuf.
	ErrMalformed = errors.New("protodec: malformed protobuf")
	// ErrSchema: a well-formed value does not fit its field in the schema.
	ErrSchema = errors.New("protodec: value does not fit the schema")
)

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
}

func schemaErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrSchema}, args...)...)
}

// maxDepth bounds message nesting, as kubeproto's does.
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

// Decoder holds the scratch space of decoding; it is not safe for concurrent use.
type Decoder struct {
	opts Options
	jd   *jsondec.Decoder
	buf  []byte
	err  error // the first type error, reported at the end
	// The last TypeMeta strings set (they repeat from object to object).
	lastAPIVersion, lastKind string
	// cache holds the last strings Options.Strings returned, by hash (see str).
	cache []cachedString
	// scratch holds each map codec's scratch key and value (mapScratch), by codec number.
	scratch []*mapScratch
}

type cachedString struct {
	h uint64
	s string
}

// NewDecoder returns a Decoder with opts.
func NewDecoder(opts Options) *Decoder {
	d := &Decoder{opts: opts}
	if opts.Strings != nil {
		d.cache = make([]cachedString, 512)
	}
	return d
}

// Options returns the options the decoder was made with.
func (d *Decoder) Options() Options { return d.opts }

func (d *Decoder) json() *jsondec.Decoder {
	if d.jd == nil {
		d.jd = jsondec.NewDecoder(jsondec.Options{Strings: d.opts.Strings})
	}
	return d.jd
}

// Plan decodes messages of one schema type into values of one Go type.
type Plan struct {
	goType reflect.Type
	schema *kubeschema.Type
	omit   bool
	// deref: the Go type is a pointer to a struct, decoded into its pointee (allocated).
	deref bool
	msg   *msgCodec
	// whole: a top-level Go type that is not a struct, decoded through the JSON form.
	whole bool
	into  jsondec.Into
	// apiVersion and kind: setters of TypeMeta from an envelope (nil if not declared).
	apiVersion, kind *fieldCodec
}

// PlanFor returns the plan of Go type t and object type st (compiled once and cached).
// omitManaged leaves ObjectMeta's managedFields out.
func PlanFor(t reflect.Type, st *kubeschema.Type, omitManaged bool) *Plan {
	k := planKey{t, st, omitManaged}
	if p, ok := plans.Load(k); ok {
		return p.(*Plan)
	}
	compileMu.Lock()
	defer compileMu.Unlock()
	if p, ok := plans.Load(k); ok {
		return p.(*Plan)
	}
	p := &Plan{goType: t, schema: st, omit: omitManaged, into: jsondec.IntoFor(t)}
	st2 := t
	if t.Kind() == reflect.Pointer && t.Name() == "" && t.Elem().Kind() == reflect.Struct && !hasMethods(t) {
		p.deref, st2 = true, t.Elem()
	}
	if st2.Kind() == reflect.Struct && st.JSON == "" && !hasMethods(reflect.PointerTo(st2)) {
		p.msg = compile(st2, st, omitManaged)
		p.apiVersion = typeMetaField(st2, "apiVersion")
		p.kind = typeMetaField(st2, "kind")
	} else {
		p.whole = true
	}
	settle(pending)
	pending = nil
	plans.Store(k, p)
	return p
}

type planKey struct {
	t     reflect.Type
	st    *kubeschema.Type
	omitM bool
}

// GoType returns the Go type the plan decodes into.
func (p *Plan) GoType() reflect.Type { return p.goType }

// Decode decodes msg, the protobuf message of an object (the raw bytes of the
// runtime.Unknown envelope, without "k8s\x00"), into the value of the plan's Go type at out,
// which must hold that type's zero value. apiVersion and kind, if not nil, are the
// envelope's, set into the type's TypeMeta members as the JSON's would be.
func (p *Plan) Decode(d *Decoder, msg []byte, out unsafe.Pointer, apiVersion, kind []byte) error {
	d.err = nil
	if p.whole {
		return p.decodeWhole(d, msg, out, apiVersion, kind)
	}
	target := out
	if p.deref {
		pp := (*unsafe.Pointer)(out)
		if *pp == nil {
			*pp = reflect.New(p.goType.Elem()).UnsafePointer()
		}
		target = *pp
	}
	if err := p.setTypeMeta(d, target, apiVersion, kind); err != nil {
		return err
	}
	err := p.msg.decode(d, msg, target, 0)
	if err == errDuplicate {
		// A message field that occurs twice: protobuf merges the occurrences. Decode again,
		// from the zero value, the message with every such field's occurrences merged.
		merged, merr := normalize(p.schema, msg, 0)
		if merr != nil {
			return merr
		}
		reset(p, out)
		target = out
		if p.deref {
			target = *(*unsafe.Pointer)(out)
		}
		d.err = nil
		if err := p.setTypeMeta(d, target, apiVersion, kind); err != nil {
			return err
		}
		err = p.msg.decode(d, merged, target, 0)
		if err == errDuplicate {
			err = schemaErr("message fields still repeated after merging")
		}
	}
	if err != nil {
		return err
	}
	return d.err
}

// reset gives the value at out its zero value again (a new pointee for a pointer type).
func reset(p *Plan, out unsafe.Pointer) {
	if p.deref {
		*(*unsafe.Pointer)(out) = reflect.New(p.goType.Elem()).UnsafePointer()
		return
	}
	reflect.NewAt(p.goType, out).Elem().SetZero()
}

func (p *Plan) setTypeMeta(d *Decoder, target unsafe.Pointer, apiVersion, kind []byte) error {
	if apiVersion != nil && p.apiVersion != nil {
		if err := p.apiVersion.setString(d, target, apiVersion, &d.lastAPIVersion); err != nil {
			return err
		}
	}
	if kind != nil && p.kind != nil {
		if err := p.kind.setString(d, target, kind, &d.lastKind); err != nil {
			return err
		}
	}
	return nil
}

// decodeWhole decodes through the JSON form (a top-level Go type that is not a struct).
func (p *Plan) decodeWhole(d *Decoder, msg []byte, out unsafe.Pointer, apiVersion, kind []byte) error {
	js, err := d.objectJSON(p.schema, msg, apiVersion, kind)
	if err != nil {
		return err
	}
	if err := d.intoJSON(js, p.into, out); err != nil {
		return err
	}
	return d.err
}

// Decode decodes msg, a message of schema type st, into *out with d's options (see
// Plan.Decode; TypeMeta is left alone).
func Decode[T any](d *Decoder, st *kubeschema.Type, msg []byte, out *T) error {
	return PlanFor(reflect.TypeFor[T](), st, d.opts.OmitManagedFields).Decode(d, msg, unsafe.Pointer(out), nil, nil)
}

// DecodeObject decodes an enveloped object ("k8s\x00" + runtime.Unknown), as a GET with
// Accept: application/vnd.kubernetes.protobuf returns it, into *out, with its TypeMeta.
func DecodeObject[T any](d *Decoder, b []byte, out *T) error {
	env, err := ParseEnvelope(b)
	if err != nil {
		return err
	}
	st, ok := env.Type()
	if !ok {
		return schemaErr("no protobuf schema for kind %q of %q", env.Kind, env.APIVersion)
	}
	return PlanFor(reflect.TypeFor[T](), st, d.opts.OmitManagedFields).Decode(d, env.Raw, unsafe.Pointer(out), env.APIVersion, env.Kind)
}
