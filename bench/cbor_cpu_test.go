package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/informerkit/informerkit/bench/internal/fleet"
	"github.com/informerkit/informerkit/internal/jsondec"
	"github.com/informerkit/informerkit/internal/kubecbor"
	"github.com/informerkit/informerkit/meta"
)

// cborApp is the Application custom resource of bench-real, decoded by informerkit.
type cborApp struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            fleet.ApplicationSpec   `json:"spec"`
	Status          fleet.ApplicationStatus `json:"status"`
}

// applicationJSON is the i-th Application as the kube-apiserver serves it, one
// managedFields entry included (its JSON; the CBOR is transcoded from it).
func applicationJSON(t *testing.T, i int) []byte {
	spec, status := fleet.Application(i)
	obj := map[string]any{
		"apiVersion": "fleet.example.com/v1", "kind": "Application",
		"metadata": map[string]any{"name": fmt.Sprintf("app-%05d", i), "namespace": fleet.Namespace(i % fleet.Namespaces),
			"uid": "5fa50ddf-c8df-4791-81e5-1e0cda2e5f73", "resourceVersion": "123456", "generation": 1,
			"creationTimestamp": "2026-03-01T10:00:00Z", "labels": map[string]any{"team": "a"},
			"managedFields": []any{map[string]any{"manager": "benchreal", "operation": "Update", "apiVersion": "fleet.example.com/v1",
				"time": "2026-03-01T10:00:00Z", "fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:spec": map[string]any{".": map[string]any{}, "f:project": map[string]any{}, "f:source": map[string]any{}},
					"f:status": map[string]any{".": map[string]any{}, "f:sync": map[string]any{}, "f:health": map[string]any{}}}}}},
		"spec": spec, "status": status,
	}
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeApplicationCBORCPU (INFORMERKIT_CPU_AB=1) compares the process CPU time (GC
// included) of decoding one Application from JSON (jsondec) and from CBOR (kubecbor:
// transcoded to JSON, then jsondec), each with managedFields decoded and omitted, in 21
// interleaved rounds of 2000 decodes: medians per decode, and the sizes.
func TestDecodeApplicationCBORCPU(t *testing.T) {
	if os.Getenv("INFORMERKIT_CPU_AB") == "" {
		t.Skip("INFORMERKIT_CPU_AB is not set")
	}
	js := applicationJSON(t, 7)
	cb, err := kubecbor.FromJSON(nil, js)
	if err != nil {
		t.Fatal(err)
	}
	var a, b cborApp
	if err := jsondec.Unmarshal(js, &a); err != nil {
		t.Fatal(err)
	}
	if err := kubecbor.Unmarshal(cb, &b); err != nil {
		t.Fatal(err)
	}
	if a.Name != b.Name || a.Status.Sync.Revision != b.Status.Sync.Revision || len(a.ManagedFields) == 0 || string(a.ManagedFields) != string(b.ManagedFields) {
		t.Fatalf("the two decodings differ: %+v / %+v", a.ObjectMeta, b.ObjectMeta)
	}
	full := jsondec.NewDecoder(jsondec.Options{})
	omit := jsondec.NewDecoder(jsondec.Options{Omit: []string{"metadata", "managedFields"}})
	var scratch []byte
	variants := []struct {
		name string
		fn   func() error
	}{
		{"json", func() error { var o cborApp; return full.Unmarshal(js, &o) }},
		{"cbor", func() error { var o cborApp; return kubecbor.UnmarshalWith(full, cb, &o) }},
		{"json-omitMF", func() error { var o cborApp; return omit.Unmarshal(js, &o) }},
		{"cbor-omitMF", func() error { var o cborApp; return kubecbor.UnmarshalWith(omit, cb, &o) }},
		{"cbor-transcode", func() error { var err error; scratch, err = kubecbor.ToJSON(scratch[:0], cb); return err }},
	}
	res := make([][]float64, len(variants))
	for round := range 21 {
		for i := range variants {
			k := (i + round) % len(variants)
			v := variants[k]
			c0 := processCPU()
			for range 2000 {
				if err := v.fn(); err != nil {
					t.Fatal(err)
				}
			}
			res[k] = append(res[k], float64(processCPU()-c0)/2000/1000)
		}
	}
	fmt.Printf("Application: JSON %d bytes, CBOR %d bytes (%.2fx)\n", len(js), len(cb), float64(len(cb))/float64(len(js)))
	for i, v := range variants {
		slices.Sort(res[i])
		fmt.Printf("%-16s %6.1f µs (p25 %.1f, p75 %.1f)\n", v.name, res[i][10], res[i][5], res[i][15])
	}
}
