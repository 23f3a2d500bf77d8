package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	runtime2 "runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/informerkit/informerkit/internal/jsondec"
	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/internal/protodec"
	"github.com/informerkit/informerkit/internal/share"
)

// The protobuf prototype (internal/protodec) against the JSON decoder (internal/jsondec) and
// against client-go's generated protobuf unmarshalling, on the pod recorded from
// kube-apiserver v1.36.3 in both encodings (internal/jsondec/testdata/real).

func readReal(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../internal/jsondec/testdata/real/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestProtodecMatchesJSON: the recorded pod decoded from protobuf equals the same pod
// decoded from JSON, into the full *corev1.Pod and into the partial type.
func TestProtodecMatchesJSON(t *testing.T) {
	pb, js := readReal(t, "pod.pb"), readReal(t, "pod.json")
	pd := protodec.NewDecoder(protodec.Options{})
	var fromPB, fromJSON corev1.Pod
	if err := protodec.DecodeObject(pd, pb, &fromPB); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &fromJSON); err != nil {
		t.Fatal(err)
	}
	fromJSON.TypeMeta = fromPB.TypeMeta // the protobuf message has no apiVersion/kind
	if !reflect.DeepEqual(fromPB, fromJSON) {
		a, _ := json.Marshal(fromPB)
		b, _ := json.Marshal(fromJSON)
		t.Fatalf("protobuf:\n%s\nJSON:\n%s", a, b)
	}
	// client-go's own protobuf decoding gives the same pod.
	var generated corev1.Pod
	if _, _, err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Decode(pb, nil, &generated); err != nil {
		t.Fatal(err)
	}
	generated.TypeMeta = fromPB.TypeMeta
	if !reflect.DeepEqual(fromPB, generated) {
		t.Fatal("protodec and client-go's generated unmarshalling differ")
	}

	var partialPB, partialJSON partialPod
	if err := protodec.DecodeObject(pd, pb, &partialPB); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &partialJSON); err != nil {
		t.Fatal(err)
	}
	partialJSON.TypeMeta = partialPB.TypeMeta
	// A json.RawMessage of a sub-object (meta.ObjectMeta.ManagedFields) holds JSON
	// re-encoded from protobuf: the same value, its keys in another order.
	var a, b any
	if json.Unmarshal(partialPB.ManagedFields, &a) != nil || json.Unmarshal(partialJSON.ManagedFields, &b) != nil || !reflect.DeepEqual(a, b) {
		t.Fatalf("partial: managedFields differ:\n%s\n%s", partialPB.ManagedFields, partialJSON.ManagedFields)
	}
	partialPB.ManagedFields, partialJSON.ManagedFields = nil, nil
	if !reflect.DeepEqual(partialPB, partialJSON) {
		t.Fatalf("partial: protobuf %+v, JSON %+v", partialPB, partialJSON)
	}
}

// BenchmarkDecodePod decodes the recorded pod: obj=pod into *corev1.Pod, obj=partial into
// the partial type, with impl=jsondec (JSON), impl=protodec (protobuf, the prototype) and
// impl=client-go (protobuf, k8s.io/api's generated Unmarshal through the serializer; its
// obj=partial is the full pod). managedFields are skipped by jsondec and protodec (what
// informers do by default) and decoded by client-go.
func BenchmarkDecodePod(b *testing.B) {
	pb, js := readReal(b, "pod.pb"), readReal(b, "pod.json")
	omit := []string{"metadata", "managedFields"}
	jd := jsondec.NewDecoder(jsondec.Options{Omit: omit})
	pd := protodec.NewDecoder(protodec.Options{OmitManagedFields: true})
	ser := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	run := func(name string, size int, fn func() error) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if err := fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	run("obj=pod/impl=jsondec", len(js), func() error { var p corev1.Pod; return jd.Unmarshal(js, &p) })
	run("obj=pod/impl=protodec", len(pb), func() error { var p corev1.Pod; return protodec.DecodeObject(pd, pb, &p) })
	run("obj=pod/impl=client-go", len(pb), func() error {
		var p corev1.Pod
		_, _, err := ser.Decode(pb, nil, &p)
		return err
	})
	// What an informer does: strings supplied by its structural-sharing table, which the
	// pods decoded before filled.
	sh := share.New[*corev1.Pod]()
	ps := protodec.NewDecoder(protodec.Options{OmitManagedFields: true, Strings: sh.String})
	var keep []*corev1.Pod
	for range 10 {
		var p corev1.Pod
		if err := protodec.DecodeObject(ps, pb, &p); err != nil {
			b.Fatal(err)
		}
		keep = append(keep, sh.Share(&p))
	}
	run("obj=pod/impl=protodec-shared", len(pb), func() error { var p corev1.Pod; return protodec.DecodeObject(ps, pb, &p) })
	run("obj=partial/impl=jsondec", len(js), func() error { var p partialPod; return jd.Unmarshal(js, &p) })
	run("obj=partial/impl=protodec", len(pb), func() error { var p partialPod; return protodec.DecodeObject(pd, pb, &p) })
	var _ runtime.Object = (*corev1.Pod)(nil)
	runtime2.KeepAlive(keep)
}

// TestProtodecIntoK8sTypes decodes every protobuf body recorded from kube-apiserver (objects
// and lists of the kinds internal/protodec's fuzz target covers) into k8s.io/api's Go types
// three ways: protodec (whose Time, Quantity and IntOrString fields decode through their own
// protobuf methods), encoding/json on the JSON form of the same bytes, and client-go's
// generated protobuf unmarshalling. All three must agree.
func TestProtodecIntoK8sTypes(t *testing.T) {
	files, err := filepath.Glob("../internal/protodec/testdata/real/*.pb")
	if err != nil || len(files) < 10 {
		t.Fatalf("%d files: %v", len(files), err)
	}
	ser := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			generated, _, err := ser.Decode(b, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			typ := reflect.TypeOf(generated).Elem()
			viaProto, viaJSON := reflect.New(typ), reflect.New(typ)
			if err := decodeObjectAny(b, viaProto); err != nil {
				t.Fatal(err)
			}
			m, err := kubeproto.DecodeObject(b)
			if err != nil {
				t.Fatal(err)
			}
			js, _ := json.Marshal(m)
			if err := json.Unmarshal(js, viaJSON.Interface()); err != nil {
				t.Fatal(err)
			}
			for name, other := range map[string]any{"encoding/json": viaJSON.Interface(), "client-go": generated} {
				if !reflect.DeepEqual(viaProto.Interface(), other) {
					a, _ := json.Marshal(viaProto.Interface())
					c, _ := json.Marshal(other)
					t.Fatalf("protodec and %s differ:\n%s\n%s", name, a, c)
				}
			}
		})
	}
}

// decodeObjectAny is protodec.DecodeObject into the value out points to.
func decodeObjectAny(b []byte, out reflect.Value) error {
	env, err := protodec.ParseEnvelope(b)
	if err != nil {
		return err
	}
	st, _ := env.Type()
	plan := protodec.PlanFor(out.Type().Elem(), st, false)
	return plan.Decode(protodec.NewDecoder(protodec.Options{}), env.Raw, out.UnsafePointer(), env.APIVersion, env.Kind)
}
