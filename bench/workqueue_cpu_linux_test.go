package bench

import (
	"os"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestQueueCPUTimeAB compares the single-worker Get/Done/Add cycle of both queues by the CPU
// time of the measuring thread, in alternating rounds, which shrugs off most of the noise of
// a shared machine (time spent descheduled does not count; GC work on other threads does
// not count either, which favours client-go, the side that allocates). It is a measuring
// tool, not a test: it runs only with INFORMERKIT_CPU_AB=1.
//
//	INFORMERKIT_CPU_AB=1 go test -run TestQueueCPUTimeAB -v .
func TestQueueCPUTimeAB(t *testing.T) {
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
	const ops, rounds = 300_000, 40
	cycle := func(q benchQueue) time.Duration {
		start := threadCPU()
		for range ops {
			item, _ := q.Get()
			q.Done(item)
			q.Add(item)
		}
		return threadCPU() - start
	}
	var queues []benchQueue
	for _, impl := range queueImpls {
		q := impl.plain()
		defer q.ShutDown()
		for _, k := range queueKeys[:256] {
			q.Add(k)
		}
		cycle(q) // warm up
		queues = append(queues, q)
	}
	ns := make([][]float64, len(queues))
	var ratios []float64
	for range rounds {
		var d []time.Duration
		for i, q := range queues {
			d = append(d, cycle(q))
			ns[i] = append(ns[i], float64(d[i])/ops)
		}
		ratios = append(ratios, float64(d[1])/float64(d[0]))
	}
	for i := range ns {
		slices.Sort(ns[i])
	}
	slices.Sort(ratios)
	t.Logf("CPU ns per Get+Done+Add, median of %d rounds: %s %.1f, %s %.1f; client-go/informerkit p25 %.2f, p50 %.2f, p75 %.2f",
		rounds, queueImpls[0].name, ns[0][rounds/2], queueImpls[1].name, ns[1][rounds/2],
		ratios[rounds/4], ratios[rounds/2], ratios[3*rounds/4])
}
