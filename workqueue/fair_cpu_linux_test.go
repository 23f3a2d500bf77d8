package workqueue

import (
	"os"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// TestFairCostCPUTimeAB measures what fairness (and the controller's priorities with aging)
// cost against the plain queue, by the CPU time of the measuring thread in alternating
// rounds, which shrugs off most of the noise of a shared machine (time spent descheduled
// does not count). Three workloads over keys spread across 97 namespaces: cycle is
// BenchmarkAddGetDone's Get, Done, Add(the same item) over 256 circulating keys; burst adds
// 1024 new keys, then Gets and Dones them all; pc is BenchmarkProducerConsumer with two
// workers, measured by the CPU time of the whole process (producer, workers, wakeups). It is
// a measuring tool, not a test: it runs only with INFORMERKIT_CPU_AB=1.
//
//	INFORMERKIT_CPU_AB=1 go test -run TestFairCostCPUTimeAB -v ./workqueue/
func TestFairCostCPUTimeAB(t *testing.T) {
	if os.Getenv("INFORMERKIT_CPU_AB") == "" {
		t.Skip("set INFORMERKIT_CPU_AB=1 to measure")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// clock_gettime of the thread's or the process's CPU clock: getrusage counts in
	// scheduler ticks on some kernels (4 ms, a fifth of a round).
	cpu := func(clock int) time.Duration {
		var ts syscall.Timespec
		if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, uintptr(clock), uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
			t.Fatal(e)
		}
		return time.Duration(ts.Nano())
	}
	configs := []struct {
		name string
		cfg  Config
	}{
		{"plain", Config{}},
		{"fair", Config{Fairness: FairByNamespace()}},
		{"fair+priorities+aging", Config{Fairness: FairByNamespace(), Priorities: true, Aging: time.Minute}},
		// The controller's queue in a Manager has metrics: its clock reads serve aging too.
		{"plain+metrics", Config{Name: "q", MetricsProvider: noopProvider{}}},
		{"fair+priorities+aging+metrics", Config{Name: "q", MetricsProvider: noopProvider{}, Fairness: FairByNamespace(), Priorities: true, Aging: time.Minute}},
	}
	const ops, rounds = 200_000, 30
	workloads := []struct {
		name string
		who  int // CLOCK_THREAD_CPUTIME_ID (3) or CLOCK_PROCESS_CPUTIME_ID (2)
		run  func(q Interface[string], round int)
	}{
		{"cycle", 3, func(q Interface[string], _ int) {
			for range ops {
				item, _ := q.Get()
				q.Done(item)
				q.Add(item)
			}
		}},
		{"burst", 3, func(q Interface[string], round int) {
			for i := 0; i < ops; i += 1024 {
				base := (round*ops + i) & 0xffff
				for j := range 1024 {
					q.Add(benchKeys[(base+j)&0xffff])
				}
				for range 1024 {
					item, _ := q.Get()
					q.Done(item)
				}
			}
		}},
		{"pc", 2, nil}, // runPC
	}
	for _, w := range workloads {
		var queues []Interface[string]
		for _, c := range configs {
			q := New[string](c.cfg)
			defer q.ShutDown()
			if w.name == "cycle" {
				for _, k := range benchKeys[:256] {
					q.Add(k)
				}
			}
			if w.run != nil {
				w.run(q, 0) // warm up
			}
			queues = append(queues, q)
		}
		ns := make([][]float64, len(queues))
		ratios := make([][]float64, len(queues))
		for r := range rounds {
			var base time.Duration
			for i, q := range queues {
				start := cpu(w.who)
				if w.run != nil {
					w.run(q, r+1)
				} else {
					runPC(configs[i].cfg, ops, r+1)
				}
				d := cpu(w.who) - start
				if i == 0 || configs[i].name == "plain+metrics" {
					base = d // the metrics variants compare with plain+metrics
				}
				ns[i] = append(ns[i], float64(d)/ops)
				ratios[i] = append(ratios[i], float64(d)/float64(base))
			}
		}
		for i := range queues {
			slices.Sort(ns[i])
			slices.Sort(ratios[i])
			t.Logf("%s %s: CPU ns/op median %.1f; against plain(+metrics) p25 %.2f, p50 %.2f, p75 %.2f",
				w.name, configs[i].name, ns[i][rounds/2], ratios[i][rounds/4], ratios[i][rounds/2], ratios[i][3*rounds/4])
		}
	}
}

// runPC is BenchmarkProducerConsumer with two workers on a new queue: one producer adds ops
// keys, then shuts the queue down.
func runPC(cfg Config, ops, round int) {
	q := New[string](cfg)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				item, shutdown := q.Get()
				if shutdown {
					return
				}
				q.Done(item)
			}
		})
	}
	for i := range ops {
		q.Add(benchKeys[(round*ops+i)&0xffff])
	}
	q.ShutDown()
	wg.Wait()
}

// noopProvider is a MetricsProvider whose metrics do nothing.
type noopProvider struct{}

type noopMetric struct{}

func (noopMetric) Inc()            {}
func (noopMetric) Dec()            {}
func (noopMetric) Set(float64)     {}
func (noopMetric) Observe(float64) {}

func (noopProvider) NewDepthMetric(string) GaugeMetric                         { return noopMetric{} }
func (noopProvider) NewAddsMetric(string) CounterMetric                        { return noopMetric{} }
func (noopProvider) NewLatencyMetric(string) HistogramMetric                   { return noopMetric{} }
func (noopProvider) NewWorkDurationMetric(string) HistogramMetric              { return noopMetric{} }
func (noopProvider) NewUnfinishedWorkSecondsMetric(string) SettableGaugeMetric { return noopMetric{} }
func (noopProvider) NewLongestRunningProcessorSecondsMetric(string) SettableGaugeMetric {
	return noopMetric{}
}
func (noopProvider) NewRetriesMetric(string) CounterMetric { return noopMetric{} }
