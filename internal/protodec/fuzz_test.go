package protodec

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/internal/jsondec"
	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/internal/kubeschema"
	metapkg "github.com/informerkit/informerkit/meta"
)

// fullType builds, by reflection, a Go struct that declares every field of schema type st
// with json tags, as a user who declares everything would: nothing is skipped, so the
// protobuf path and the JSON path must agree exactly (same value, or both failing).
func fullType(st *kubeschema.Type, building map[*kubeschema.Type]bool) reflect.Type {
	if building[st] {
		return reflect.TypeFor[any]() // a recursive type: its recursion point is dynamic
	}
	building[st] = true
	defer delete(building, st)
	var fields []reflect.StructField
	var add func(t *kubeschema.Type)
	add = func(t *kubeschema.Type) {
		for _, f := range t.Fields {
			if f.Inline {
				add(f.Type())
				continue
			}
			if f.NoJSON || f.Number <= 0 {
				continue
			}
			ft := valueType(f, building)
			switch {
			case f.MapKey != "":
				ft = reflect.MapOf(reflect.TypeFor[string](), ft)
			case f.Repeated:
				ft = reflect.SliceOf(ft)
			case f.Pointer:
				ft = reflect.PointerTo(ft)
			}
			fields = append(fields, reflect.StructField{
				Name: fmt.Sprintf("F%d_%s", len(fields), strings.Map(goIdent, f.Name)),
				Type: ft,
				Tag:  reflect.StructTag(`json:"` + f.Name + `"`),
			})
		}
	}
	add(st)
	return reflect.StructOf(fields)
}

func goIdent(r rune) rune {
	if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
		return r
	}
	return '_'
}

func valueType(f *kubeschema.Field, building map[*kubeschema.Type]bool) reflect.Type {
	switch f.Kind {
	case kubeschema.String:
		return reflect.TypeFor[string]()
	case kubeschema.Bool:
		return reflect.TypeFor[bool]()
	case kubeschema.Int32:
		return reflect.TypeFor[int32]()
	case kubeschema.Int64:
		return reflect.TypeFor[int64]()
	case kubeschema.Float64:
		return reflect.TypeFor[float64]()
	case kubeschema.Bytes:
		return reflect.TypeFor[[]byte]()
	}
	st := f.Type()
	switch st.JSON {
	case "time":
		return reflect.TypeFor[metapkg.Time]()
	case "microtime", "duration", "quantity":
		return reflect.TypeFor[string]()
	case "int-or-string":
		return reflect.TypeFor[any]()
	case "raw":
		return reflect.TypeFor[json.RawMessage]()
	case "array":
		return reflect.TypeFor[[]string]()
	}
	return fullType(st, building)
}

// fuzzKind is one schema type and the Go types the fuzz target decodes it into.
type fuzzKind struct {
	schema *kubeschema.Type
	// full declares every field; partial ones declare some (the protobuf path may then
	// accept what the JSON path refuses in the fields it skips).
	full    reflect.Type
	partial []reflect.Type
}

func fuzzKinds() []fuzzKind {
	var out []fuzzKind
	meta := []reflect.Type{reflect.TypeFor[metaOnly]()}
	for _, k := range []struct {
		group, version, kind string
		partial              []reflect.Type
	}{
		{"", "v1", "Pod", []reflect.Type{reflect.TypeFor[tPod](), reflect.TypeFor[tPartial](), reflect.TypeFor[metaOnly]()}},
		{"apps", "v1", "Deployment", []reflect.Type{reflect.TypeFor[tDeployment](), reflect.TypeFor[metaOnly]()}},
		{"apps", "v1", "ReplicaSet", meta},
		{"", "v1", "ConfigMap", meta},
		{"", "v1", "Service", meta},
		{"", "v1", "Secret", meta},
		{"", "v1", "Namespace", meta},
		{"", "v1", "Event", meta},
		{"coordination.k8s.io", "v1", "Lease", meta},
		{"meta.k8s.io", "v1", "Status", []reflect.Type{reflect.TypeFor[metapkg.Status]()}},
		{"", "v1", "PodList", []reflect.Type{reflect.TypeFor[metapkg.List[*tPartial]]()}},
		{"apps", "v1", "DeploymentList", []reflect.Type{reflect.TypeFor[metapkg.List[*metaOnly]]()}},
		{"", "v1", "ConfigMapList", []reflect.Type{reflect.TypeFor[metapkg.List[metaOnly]]()}},
		{"", "v1", "EventList", []reflect.Type{reflect.TypeFor[metapkg.List[*metaOnly]]()}},
	} {
		ki, ok := kubeschema.ForKind(k.group, k.version, k.kind)
		if !ok {
			panic(k.kind)
		}
		out = append(out, fuzzKind{schema: ki.Type, full: fullType(ki.Type, map[*kubeschema.Type]bool{}), partial: k.partial})
	}
	return out
}

// metaOnly is what a metadata informer declares.
type metaOnly struct {
	metapkg.TypeMeta   `json:",inline"`
	metapkg.ObjectMeta `json:"metadata"`
}

// viaJSON decodes msg the JSON way: kubeproto's JSON form of the message (of the enveloped
// object, with its apiVersion and kind, when env), then jsondec.
func viaJSON(st *kubeschema.Type, msg []byte, env bool, t reflect.Type) (reflect.Value, error) {
	out := reflect.New(t)
	var m map[string]any
	var err error
	if env {
		m, err = kubeproto.DecodeObject(msg)
	} else {
		m, err = kubeproto.Decode(st, msg)
	}
	if err != nil {
		return out, err
	}
	js, err := json.Marshal(m)
	if err != nil {
		return out, err
	}
	return out, jsondec.Unmarshal(js, out.Interface())
}

// viaProto decodes msg with a plan, as apiclient does (an enveloped object's apiVersion and
// kind into its TypeMeta).
func viaProto(st *kubeschema.Type, msg []byte, env bool, t reflect.Type, d *Decoder) (reflect.Value, error) {
	out := reflect.New(t)
	var apiVersion, kind []byte
	if env {
		e, err := ParseEnvelope(msg)
		if err != nil {
			return out, err
		}
		msg, apiVersion, kind = e.Raw, e.APIVersion, e.Kind
	}
	err := PlanFor(t, st, false).Decode(d, msg, out.UnsafePointer(), apiVersion, kind)
	return out, err
}

// checkAgainstJSON decodes msg (a message of k's type, or an enveloped object of it when
// env) both ways into every Go type of k.
func checkAgainstJSON(t *testing.T, k fuzzKind, msg []byte, env bool) {
	d := NewDecoder(Options{})
	for i, gt := range append([]reflect.Type{k.full}, k.partial...) {
		want, werr := viaJSON(k.schema, msg, env, gt)
		got, gerr := viaProto(k.schema, msg, env, gt, d)
		full := i == 0
		switch {
		case werr == nil && gerr != nil:
			t.Fatalf("%s into %v: the protobuf path failed (%v) where the JSON path decoded", k.schema.Name, gt, gerr)
		case werr != nil && gerr == nil && full:
			t.Fatalf("%s into the full type: the protobuf path decoded where the JSON path failed (%v)", k.schema.Name, werr)
		case werr == nil && !reflect.DeepEqual(got.Interface(), want.Interface()):
			a, _ := json.Marshal(got.Interface())
			b, _ := json.Marshal(want.Interface())
			t.Fatalf("%s into %v:\nprotobuf %s\nJSON     %s", k.schema.Name, gt, a, b)
		}
	}
}

// check runs checkAgainstJSON on a fuzz input: an enveloped object ("k8s\x00"...) of a
// kind of the list, or else a message of kinds[which].
func check(t *testing.T, kinds []fuzzKind, which uint8, data []byte) {
	if env, err := ParseEnvelope(data); err == nil {
		if st, ok := env.Type(); ok {
			for _, k := range kinds {
				if k.schema == st {
					checkAgainstJSON(t, k, data, true)
					return
				}
			}
		}
	} else if len(data) >= len(Magic) && string(data[:len(Magic)]) == string(Magic) {
		if _, jerr := kubeproto.DecodeObject(data); jerr == nil {
			t.Fatalf("the envelope does not parse (%v), kubeproto decodes it", err)
		}
		return
	}
	checkAgainstJSON(t, kinds[int(which)%len(kinds)], data, false)
}

// recorded returns the protobuf bodies recorded from kube-apiserver v1.36.3 (testdata/real
// and ../jsondec/testdata/real; e2e's TestRecordProtobufCorpus records them): enveloped
// objects and lists.
func recorded(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	for _, pattern := range []string{"testdata/real/*.pb", "../jsondec/testdata/real/*.pb"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[f] = b
		}
	}
	if len(out) < 15 {
		t.Fatalf("%d recorded bodies", len(out))
	}
	return out
}

// Every recorded body, and every recorded object's message on its own, decodes to the same
// value both ways.
func TestRecordedAgainstJSON(t *testing.T) {
	kinds := fuzzKinds()
	for name, b := range recorded(t) {
		t.Run(filepath.Base(name), func(t *testing.T) {
			env, err := ParseEnvelope(b)
			if err != nil {
				t.Fatal(err)
			}
			st, ok := env.Type()
			i := slices.IndexFunc(kinds, func(k fuzzKind) bool { return k.schema == st })
			if !ok || i < 0 {
				t.Fatalf("no fuzz kind for %s %s", env.APIVersion, env.Kind)
			}
			check(t, kinds, 0, b)
			check(t, kinds, uint8(i), env.Raw)
		})
	}
}

// FuzzAgainstJSON: the protobuf path (a Plan) and the JSON path (kubeproto's JSON form,
// then jsondec) decode the same bytes into the same Go type to the same value, or both fail.
// For partial types the protobuf path may accept what the JSON path refuses, in the fields
// the type does not declare (skipped by their length, unread). Inputs are enveloped objects
// ("k8s\x00" + runtime.Unknown, kind from the envelope) or messages of the kind which
// selects; seeds are the recorded bodies.
func FuzzAgainstJSON(f *testing.F) {
	kinds := fuzzKinds()
	for _, b := range recorded(f) {
		f.Add(uint8(0), b)
		if env, err := ParseEnvelope(b); err == nil {
			if st, ok := env.Type(); ok {
				if i := slices.IndexFunc(kinds, func(k fuzzKind) bool { return k.schema == st }); i >= 0 {
					f.Add(uint8(i), env.Raw)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		check(t, kinds, which, data)
	})
}
