package compat

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

var writeGoldens = flag.Bool("write-goldens", false, "write kubeproto's golden files (../internal/kubeproto/testdata/golden) from apimachinery's encoder")

// TestKubeprotoGoldens writes, with -write-goldens, pairs of protobuf bytes from
// apimachinery's serializer and the JSON encoding/json writes for the same objects, so that
// the root module's kubeproto tests check both directions without importing k8s.io.
func TestKubeprotoGoldens(t *testing.T) {
	if !*writeGoldens {
		t.Skip("run with -write-goldens to rewrite ../internal/kubeproto/testdata/golden")
	}
	dir := filepath.Join("..", "internal", "kubeproto", "testdata", "golden")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ser := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	for i, k := range protoKinds {
		for seed := int64(0); seed < 1; seed++ {
			obj := newObject(k.obj)
			filler(1000*int64(i) + seed).Fill(obj)
			clearItemTypeMeta(obj)
			obj.GetObjectKind().SetGroupVersionKind(k.gvk)
			var first bytes.Buffer
			if err := ser.Encode(obj, &first); err != nil {
				t.Fatal(err)
			}
			obj = newObject(k.obj)
			if _, _, err := ser.Decode(first.Bytes(), nil, obj); err != nil {
				t.Fatal(err)
			}
			obj.GetObjectKind().SetGroupVersionKind(k.gvk)
			js, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			// The bytes a server writes for the object its JSON unmarshals into, and that
			// object's JSON (a zero time pointer does not survive JSON).
			fromJSON := newObject(k.obj)
			if err := json.Unmarshal(js, fromJSON); err != nil {
				t.Fatal(err)
			}
			if js, err = json.Marshal(fromJSON); err != nil {
				t.Fatal(err)
			}
			var pb bytes.Buffer
			if err := ser.Encode(fromJSON, &pb); err != nil {
				t.Fatal(err)
			}
			var pretty bytes.Buffer
			json.Indent(&pretty, js, "", " ")
			base := k.gvk.Kind
			if k.gvk.Group != "" {
				base = k.gvk.Group + "-" + base
			}
			name := filepath.Join(dir, base+"-"+string(rune('0'+seed)))
			if err := os.WriteFile(name+".json", append(pretty.Bytes(), '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name+".pb", pb.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func newObject(proto runtime.Object) runtime.Object {
	return proto.DeepCopyObject().(runtime.Object)
}
