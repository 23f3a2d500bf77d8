package apiclient

import (
	"encoding/json"
	"reflect"
	"sync"

	"github.com/informerkit/informerkit/internal/jsondec"
	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/internal/protodec"
)

// JSONDecoder selects the JSON decoder of a Client (Config.JSONDecoder).
type JSONDecoder int

const (
	// JSONCompiled (the default) decodes with a decoder compiled once per Go type that reads
	// each response in one pass and skips undeclared members without allocating; a watch
	// event's envelope and object are decoded in the same pass. It gives the same values
	// as encoding/json for every input both accept.
	JSONCompiled JSONDecoder = iota
	// JSONStandard decodes with encoding/json.Unmarshal (the fallback).
	JSONStandard
)

// DecodeOptions tune how a Resource decodes the objects it reads (Resource.WithDecodeOptions).
// They apply to protobuf responses and to the compiled JSON decoder (JSONCompiled);
// JSONStandard ignores them.
type DecodeOptions struct {
	// OmitManagedFields leaves metadata.managedFields out of every object: the member is
	// checked and skipped instead of decoded. Informers set it when their transform is the
	// default (DropManagedFields), which would drop the field anyway. Default false.
	OmitManagedFields bool
	// Strings, if set, supplies the text of the strings decoded into Go strings and
	// interfaces, instead of a new allocation: it returns a string equal to b (one it already
	// holds, or a new one) and must not keep b. It is called from several goroutines at once
	// when large objects are decoded in parallel, so it must be safe for concurrent use.
	// Informers use it to look up the values their cache already holds before they are
	// allocated again. Default: allocate every string.
	Strings func(b []byte) string
}

// decoding is how a request decodes: the client's decoder and the resource's options,
// whether the body is a list (whose objects are its items), and the resource's protobuf
// kind (nil when it is read as JSON only).
type decoding struct {
	decoder JSONDecoder
	opts    DecodeOptions
	list    bool
	pk      *protoKind
	// kind is the kind the objects must have ("" : not checked; see expectedKind).
	kind string
	// workers is Config.DecodeWorkers (0: parallelWorkers(); see parallel.go).
	workers int
}

// objectDecoder decodes the bodies and watch events of one request, JSON or protobuf. It
// is not safe for concurrent use: a watch stream or a list has its own.
type objectDecoder struct {
	standard bool
	pooled   bool
	dec      *jsondec.Decoder
	opts     DecodeOptions
	dc       decoding          // what it was made for (clone makes another)
	pd       *protodec.Decoder // made on first use
	// The plan used last (a watch or a list decodes one Go type from one message type).
	planType   reflect.Type
	planSchema *kubeschema.Type
	lastPlan   *protodec.Plan
}

// plan returns the protobuf decoding plan of Go type t from messages of type st.
func (d *objectDecoder) plan(t reflect.Type, st *kubeschema.Type) *protodec.Plan {
	if d.lastPlan == nil || d.planType != t || d.planSchema != st {
		d.planType, d.planSchema = t, st
		d.lastPlan = protodec.PlanFor(t, st, d.opts.OmitManagedFields)
	}
	return d.lastPlan
}

// proto returns the protobuf decoder (with the same options).
func (d *objectDecoder) proto() *protodec.Decoder {
	if d.pd == nil {
		d.pd = protodec.NewDecoder(protodec.Options{OmitManagedFields: d.opts.OmitManagedFields, Strings: d.opts.Strings})
	}
	return d.pd
}

var compiledDecoders = sync.Pool{New: func() any {
	return &objectDecoder{pooled: true, dec: jsondec.NewDecoder(jsondec.Options{})}
}}

var (
	managedFieldsPath     = []string{"metadata", "managedFields"}
	listManagedFieldsPath = []string{"items", "[]", "metadata", "managedFields"}
)

// newObjectDecoder returns a decoder for dc; release gives it back.
func newObjectDecoder(dc decoding) *objectDecoder {
	switch {
	case dc.decoder == JSONStandard:
		return &objectDecoder{standard: true, opts: dc.opts, dc: dc}
	case !dc.opts.OmitManagedFields && dc.opts.Strings == nil:
		d := compiledDecoders.Get().(*objectDecoder)
		d.dc = dc
		return d
	}
	o := jsondec.Options{Strings: dc.opts.Strings}
	if dc.opts.OmitManagedFields {
		o.Omit = managedFieldsPath
		if dc.list {
			o.Omit = listManagedFieldsPath
		}
	}
	return &objectDecoder{dec: jsondec.NewDecoder(o), opts: dc.opts, dc: dc}
}

// clone returns another decoder like d (for a goroutine of its own); release gives it back.
func (d *objectDecoder) clone() *objectDecoder { return newObjectDecoder(d.dc) }

func (d *objectDecoder) release() {
	if d.pooled {
		compiledDecoders.Put(d)
	}
}

// decodeInto decodes data, one JSON value, into *out.
func decodeInto[T any](d *objectDecoder, data []byte, out *T) error {
	if d.standard {
		return json.Unmarshal(data, out)
	}
	return d.dec.Unmarshal(data, out)
}
