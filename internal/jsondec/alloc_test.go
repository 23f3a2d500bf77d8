//go:build !race

package jsondec

import (
	"os"
	"testing"
)

// TestSkippingAllocatesNothing: a type that declares none of a pod's members decodes the
// recorded pod (every member checked and skipped) without allocating. (Not under -race,
// whose instrumentation allocates.)
func TestSkippingAllocatesNothing(t *testing.T) {
	data, err := os.ReadFile("testdata/real/pod.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := NewDecoder(Options{})
	var v kNothing
	if n := testing.AllocsPerRun(20, func() {
		if err := dec.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("%v allocations per decode", n)
	}
}
