package kubeproto

import (
	"os"
	"testing"
)

// BenchmarkDecodePod and BenchmarkEncodePod measure the codec on a random pod (the golden
// file from apimachinery's encoder: every field filled, 7 KB of protobuf).
func BenchmarkDecodePod(b *testing.B) {
	pb, err := os.ReadFile("testdata/golden/Pod-0.pb")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(pb)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeObject(pb); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodePod(b *testing.B) {
	js, err := os.ReadFile("testdata/golden/Pod-0.json")
	if err != nil {
		b.Fatal(err)
	}
	obj := decodeJSON(b, js)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeObject(obj); err != nil {
			b.Fatal(err)
		}
	}
}
