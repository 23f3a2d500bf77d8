package protodec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/internal/jsondec"
	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/meta"
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
		return reflect.TypeFor[meta.Time]()
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
	for _, k := range []struct {
		group, version, kind string
		partial              []reflect.Type
	}{
		{"", "v1", "Pod", []reflect.Type{reflect.TypeFor[tPod](), reflect.TypeFor[tPartial](), reflect.TypeFor[metaOnly]()}},
		{"apps", "v1", "Deployment", []reflect.Type{reflect.TypeFor[tDeployment](), reflect.TypeFor[metaOnly]()}},
		{"", "v1", "ConfigMap", []reflect.Type{reflect.TypeFor[metaOnly]()}},
		{"", "v1", "Service", []reflect.Type{reflect.TypeFor[metaOnly]()}},
		{"", "v1", "Secret", []reflect.Type{reflect.TypeFor[metaOnly]()}},
		{"", "v1", "Event", []reflect.Type{reflect.TypeFor[metaOnly]()}},
		{"meta.k8s.io", "v1", "Status", []reflect.Type{reflect.TypeFor[meta.Status]()}},
		{"", "v1", "PodList", []reflect.Type{reflect.TypeFor[meta.List[*tPartial]]()}},
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
	meta.TypeMeta   `json:",inline"`
	meta.ObjectMeta `json:"metadata"`
}

// viaJSON decodes msg the JSON way: kubeproto's JSON form of the message, then jsondec.
func viaJSON(st *kubeschema.Type, msg []byte, t reflect.Type) (reflect.Value, error) {
	out := reflect.New(t)
	m, err := kubeproto.Decode(st, msg)
	if err != nil {
		return out, err
	}
	js, err := json.Marshal(m)
	if err != nil {
		return out, err
	}
	return out, jsondec.Unmarshal(js, out.Interface())
}

func viaProto(st *kubeschema.Type, msg []byte, t reflect.Type, d *Decoder) (reflect.Value, error) {
	out := reflect.New(t)
	err := PlanFor(t, st, false).Decode(d, msg, out.UnsafePointer(), nil, nil)
	return out, err
}

// checkAgainstJSON decodes msg both ways into every Go type of k.
func checkAgainstJSON(t *testing.T, k fuzzKind, msg []byte) {
	d := NewDecoder(Options{})
	for i, gt := range append([]reflect.Type{k.full}, k.partial...) {
		want, werr := viaJSON(k.schema, msg, gt)
		got, gerr := viaProto(k.schema, msg, gt, d)
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

// recorded returns the recorded protobuf bodies of testdata as (kind index, message).
func recorded(t testing.TB, kinds []fuzzKind) (idx []uint8, msgs [][]byte) {
	for _, name := range []string{"pod.pb", "deployment.pb", "podlist.pb"} {
		env, err := kubeproto.Unwrap(readReal(t, name))
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range kinds {
			if strings.HasSuffix(k.schema.Name, "."+env.Kind) {
				idx, msgs = append(idx, uint8(i)), append(msgs, env.Raw)
			}
		}
	}
	return idx, msgs
}

func TestRecordedAgainstJSON(t *testing.T) {
	kinds := fuzzKinds()
	idx, msgs := recorded(t, kinds)
	if len(msgs) < 3 {
		t.Fatalf("%d recorded messages", len(msgs))
	}
	for i := range msgs {
		checkAgainstJSON(t, kinds[idx[i]], msgs[i])
	}
}

// FuzzAgainstJSON: the protobuf path (a Plan) and the JSON path (kubeproto's JSON form,
// then jsondec) decode the same bytes into the same Go type to the same value, or both fail.
// For partial types the protobuf path may accept what the JSON path refuses, in the fields
// the type does not declare (skipped by their length, unread).
func FuzzAgainstJSON(f *testing.F) {
	kinds := fuzzKinds()
	idx, msgs := recorded(f, kinds)
	for i := range msgs {
		f.Add(idx[i], msgs[i])
	}
	f.Fuzz(func(t *testing.T, which uint8, msg []byte) {
		checkAgainstJSON(t, kinds[int(which)%len(kinds)], msg)
	})
}
