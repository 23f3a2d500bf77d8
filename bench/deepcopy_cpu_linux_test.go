package bench

import (
	"os"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/informerkit/informerkit/deepcopy"
)

// TestDeepCopyCPUTimeAB compares the two deep copies of BenchmarkDeepCopy's pod by the CPU
// time of the measuring thread, in alternating rounds (see TestQueueCPUTimeAB: time spent
// descheduled does not count, nor does GC work on other threads). A measuring tool, run only
// with INFORMERKIT_CPU_AB=1:
//
//	INFORMERKIT_CPU_AB=1 go test -run TestDeepCopyCPUTimeAB -v .
func TestDeepCopyCPUTimeAB(t *testing.T) {
	if os.Getenv("INFORMERKIT_CPU_AB") == "" {
		t.Skip("set INFORMERKIT_CPU_AB=1 to measure")
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
	pod := fleetPod(7, 3, 10)
	var sink *corev1.Pod
	impls := []struct {
		name string
		copy func() *corev1.Pod
	}{
		{"informerkit", func() *corev1.Pod { return deepcopy.Copy(pod) }},
		{"client-go", func() *corev1.Pod { return pod.DeepCopy() }},
	}
	const ops, rounds = 20_000, 30
	run := func(f func() *corev1.Pod) time.Duration {
		start := threadCPU()
		for range ops {
			sink = f()
		}
		return threadCPU() - start
	}
	for _, impl := range impls {
		run(impl.copy) // warm up
	}
	ns := make([][]float64, len(impls))
	var ratios []float64
	for range rounds {
		var d []time.Duration
		for i, impl := range impls {
			d = append(d, run(impl.copy))
			ns[i] = append(ns[i], float64(d[i])/ops)
		}
		ratios = append(ratios, float64(d[0])/float64(d[1]))
	}
	_ = sink
	for i := range ns {
		slices.Sort(ns[i])
	}
	slices.Sort(ratios)
	t.Logf("CPU ns per pod deep copy, median of %d rounds: informerkit %.0f, client-go %.0f; informerkit/client-go p25 %.2f, p50 %.2f, p75 %.2f",
		rounds, ns[0][rounds/2], ns[1][rounds/2], ratios[rounds/4], ratios[rounds/2], ratios[3*rounds/4])
}
