package jsondec

import (
	"encoding/json"
	"os"
	"testing"
)

func benchDecode[T any](b *testing.B, file string, unmarshal func([]byte, any) error) {
	data, err := os.ReadFile("testdata/real/" + file)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var v T
		if err := unmarshal(data, &v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecode compares this package with encoding/json on the pod recorded from a
// kube-apiserver, into the same Go types: the whole pod, a partial type, no member at all.
func BenchmarkDecode(b *testing.B) {
	impls := []struct {
		name string
		fn   func([]byte, any) error
	}{{"jsondec", Unmarshal}, {"encoding-json", json.Unmarshal}}
	for _, impl := range impls {
		b.Run("obj=pod/impl="+impl.name, func(b *testing.B) { benchDecode[kPod](b, "pod.json", impl.fn) })
		b.Run("obj=partial/impl="+impl.name, func(b *testing.B) { benchDecode[kPartialPod](b, "pod.json", impl.fn) })
		b.Run("obj=nothing/impl="+impl.name, func(b *testing.B) { benchDecode[kNothing](b, "pod.json", impl.fn) })
		b.Run("obj=podlist/impl="+impl.name, func(b *testing.B) {
			benchDecode[struct {
				Items []kPod `json:"items"`
			}](b, "podlist.json", impl.fn)
		})
	}
}
