package bench

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/informerkit/informerkit/internal/jsondec"
	"github.com/informerkit/informerkit/internal/protodec"
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
	run("obj=partial/impl=jsondec", len(js), func() error { var p partialPod; return jd.Unmarshal(js, &p) })
	run("obj=partial/impl=protodec", len(pb), func() error { var p partialPod; return protodec.DecodeObject(pd, pb, &p) })
	var _ runtime.Object = (*corev1.Pod)(nil)
}
