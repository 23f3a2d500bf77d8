package jsondec

import (
	"encoding/json"
	"os"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestDecodeCPUTimeAB is BenchmarkDecode measured by the CPU time of the decoding thread in
// alternating rounds (this package, then encoding/json, on the same bytes into the same
// type), which shrugs off most of the noise of a shared machine: time spent descheduled does
// not count. GC work on other threads does not count either, which favours the side that
// allocates more (encoding/json). A measuring tool, not a test: it runs only with
// INFORMERKIT_CPU_AB=1.
//
//	INFORMERKIT_CPU_AB=1 go test -run TestDecodeCPUTimeAB -v ./internal/jsondec/
func TestDecodeCPUTimeAB(t *testing.T) {
	if os.Getenv("INFORMERKIT_CPU_AB") == "" {
		t.Skip("set INFORMERKIT_CPU_AB=1 to measure")
	}
	pod, err := os.ReadFile("testdata/real/pod.json")
	if err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	threadCPU := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	const ops, rounds = 300, 31
	measure := func(newV func() any, unmarshal func([]byte, any) error) time.Duration {
		start := threadCPU()
		for range ops {
			if err := unmarshal(pod, newV()); err != nil {
				t.Fatal(err)
			}
		}
		return threadCPU() - start
	}
	for _, c := range []struct {
		name string
		newV func() any
	}{
		{"pod", func() any { return new(kPod) }},
		{"partial", func() any { return new(kPartialPod) }},
		{"nothing", func() any { return new(kNothing) }},
	} {
		measure(c.newV, Unmarshal) // warm up: compile the decoder
		measure(c.newV, json.Unmarshal)
		var ours, std, ratios []float64
		for range rounds {
			a := measure(c.newV, Unmarshal)
			b := measure(c.newV, json.Unmarshal)
			ours = append(ours, float64(a)/ops)
			std = append(std, float64(b)/ops)
			ratios = append(ratios, float64(b)/float64(a))
		}
		slices.Sort(ours)
		slices.Sort(std)
		slices.Sort(ratios)
		t.Logf("obj=%s: CPU µs per decode, median of %d rounds: jsondec %.1f, encoding/json %.1f; encoding/json / jsondec p25 %.2f, p50 %.2f, p75 %.2f",
			c.name, rounds, ours[rounds/2]/1e3, std[rounds/2]/1e3, ratios[rounds/4], ratios[rounds/2], ratios[3*rounds/4])
	}
}
