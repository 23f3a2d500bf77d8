package workqueue

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// Benchmarks of this package alone; bench/workqueue_test.go runs the same workloads side by
// side with client-go.

var benchKeys = func() []string {
	keys := make([]string, 1<<17)
	for i := range keys {
		keys[i] = fmt.Sprintf("namespace-%d/object-%d", i%97, i)
	}
	return keys
}()

// BenchmarkAddGetDone: `workers` goroutines each loop Get, Done, Add(the same item) over 256
// circulating keys; one op is one Get+Done+Add of an item the queue has seen before.
func BenchmarkAddGetDone(b *testing.B) {
	for _, workers := range []int{1, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) { benchAddGetDone(b, Config{}, workers) })
	}
}

func benchAddGetDone(b *testing.B, cfg Config, workers int) {
	q := New[string](cfg)
	defer q.ShutDown()
	for _, k := range benchKeys[:256] {
		q.Add(k)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for w := range workers {
		n := b.N / workers
		if w == 0 {
			n += b.N % workers
		}
		wg.Go(func() {
			for range n {
				item, _ := q.Get()
				q.Done(item)
				q.Add(item)
			}
		})
	}
	wg.Wait()
}

// BenchmarkProducerConsumer: one producer adds b.N keys, `workers` goroutines Get and Done.
func BenchmarkProducerConsumer(b *testing.B) {
	for _, workers := range []int{1, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) { benchProducerConsumer(b, Config{}, workers) })
	}
}

func benchProducerConsumer(b *testing.B, cfg Config, workers int) {
	q := New[string](cfg)
	b.ReportAllocs()
	var wg sync.WaitGroup
	for range workers {
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
	for i := range b.N {
		q.Add(benchKeys[i&0xffff])
	}
	q.ShutDown()
	wg.Wait()
}

// BenchmarkFairCost runs BenchmarkAddGetDone and BenchmarkProducerConsumer (one worker; the
// keys spread over 97 namespaces) on a plain queue, a fair one (FairByNamespace), and the
// controller's queue (priorities, fairness, aging; the adds carry no priority, so the
// aging check never reads the clock).
func BenchmarkFairCost(b *testing.B) {
	queues := []struct {
		name string
		cfg  Config
	}{
		{"plain", Config{}},
		{"fair", Config{Fairness: FairByNamespace()}},
		{"fair+priorities+aging", Config{Fairness: FairByNamespace(), Priorities: true, Aging: time.Minute}},
	}
	for _, q := range queues {
		b.Run("workload=AddGetDone/queue="+q.name, func(b *testing.B) { benchAddGetDone(b, q.cfg, 1) })
	}
	for _, q := range queues {
		b.Run("workload=ProducerConsumer/queue="+q.name, func(b *testing.B) { benchProducerConsumer(b, q.cfg, 1) })
	}
}

// BenchmarkFairness: 10,000 items of namespace a wait, then one of namespace b is added; one
// op builds that queue and Gets until b's item comes out. The figure is gets-until-b: the
// Get that hands it out (10,001 on a FIFO queue, 2 on a fair one).
func BenchmarkFairness(b *testing.B) {
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = fmt.Sprintf("a/object-%d", i)
	}
	for _, fair := range []bool{false, true} {
		b.Run(fmt.Sprintf("fair=%v", fair), func(b *testing.B) {
			cfg := Config{}
			if fair {
				cfg.Fairness = FairByNamespace()
			}
			gets := 0
			for b.Loop() {
				q := New[string](cfg)
				for _, k := range keys {
					q.Add(k)
				}
				q.Add("b/object-0")
				for gets = 1; ; gets++ {
					item, _ := q.Get()
					q.Done(item)
					if item == "b/object-0" {
						break
					}
				}
				q.ShutDown()
			}
			b.ReportMetric(float64(gets), "gets-until-b")
		})
	}
}

// BenchmarkDuplicateAdds: every key is added twice before it is handed out.
func BenchmarkDuplicateAdds(b *testing.B) {
	q := New[string](Config{})
	defer q.ShutDown()
	b.ReportAllocs()
	for done := 0; done < b.N; done += 512 {
		keys := benchKeys[(done>>9&63)*256:][:256]
		for _, k := range keys {
			q.Add(k)
		}
		for _, k := range keys {
			q.Add(k)
		}
		for range keys {
			item, _ := q.Get()
			q.Done(item)
		}
	}
}

func benchDelays(n int, lo, hi time.Duration) []time.Duration {
	r := rand.New(rand.NewPCG(1, 2))
	ds := make([]time.Duration, n)
	for i := range ds {
		ds[i] = lo + time.Duration(r.Int64N(int64(hi-lo)))
	}
	return ds
}

// BenchmarkAddAfter: AddAfter of 100k distinct items with delays over an hour, then ShutDown.
func BenchmarkAddAfter(b *testing.B) {
	ds := benchDelays(100_000, time.Hour, 2*time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		q := NewDelaying[string](Config{})
		for i, d := range ds {
			q.AddAfter(benchKeys[i], d)
		}
		q.ShutDown()
	}
}

// BenchmarkAddAfterFire: AddAfter of 100k items with delays in [1µs, 2ms), then Get/Done all.
func BenchmarkAddAfterFire(b *testing.B) {
	ds := benchDelays(100_000, time.Microsecond, 2*time.Millisecond)
	b.ReportAllocs()
	for b.Loop() {
		q := NewDelaying[string](Config{})
		for i, d := range ds {
			q.AddAfter(benchKeys[i], d)
		}
		for range ds {
			item, _ := q.Get()
			q.Done(item)
		}
		q.ShutDown()
	}
}

// BenchmarkRepeatedAddAfter: AddAfter of one item over and over (keeps one heap entry).
func BenchmarkRepeatedAddAfter(b *testing.B) {
	q := NewDelaying[string](Config{})
	defer q.ShutDown()
	b.ReportAllocs()
	for b.Loop() {
		q.AddAfter("a", time.Hour)
	}
}

// BenchmarkRateLimitedRequeue: AddRateLimited with the default controller limiter over 1024
// keys, forgetting them every fourth round.
func BenchmarkRateLimitedRequeue(b *testing.B) {
	q := NewRateLimiting(DefaultControllerRateLimiter[string](), Config{})
	defer q.ShutDown()
	b.ReportAllocs()
	for i := range b.N {
		k := benchKeys[i&1023]
		q.AddRateLimited(k)
		if i>>10&3 == 3 {
			q.Forget(k)
		}
	}
}

// BenchmarkPriorities: Add/Get/Done with items spread over three priorities.
func BenchmarkPriorities(b *testing.B) {
	q := New[string](Config{Priorities: true})
	defer q.ShutDown()
	for i, k := range benchKeys[:256] {
		q.AddWithPriority(k, i%3)
	}
	b.ReportAllocs()
	for i := range b.N {
		item, _ := q.Get()
		q.Done(item)
		q.AddWithPriority(item, i%3)
	}
}

// BenchmarkCauses is BenchmarkAddGetDone's loop (one worker) on a queue with causes: each Add
// records a cause the size of a controller's trigger, and each Get hands it out into a reused
// buffer. "plain" is the same queue without causes, the cost the hooks add to a queue that
// records none.
func BenchmarkCauses(b *testing.B) {
	type trigger struct {
		kind                 uint8
		source, ns, name, rv string
		arrived, enqueued    time.Time
		count                int
		span                 any
	}
	b.Run("queue=plain", func(b *testing.B) { benchAddGetDone(b, Config{}, 1) })
	b.Run("queue=causes", func(b *testing.B) {
		q, err := NewRateLimitingWithCauses[string](nil, Config{}, CauseOptions[trigger]{})
		if err != nil {
			b.Fatal(err)
		}
		defer q.ShutDown()
		now := time.Now()
		for _, k := range benchKeys[:256] {
			q.AddWithCause(k, 0, trigger{source: "pods.v1", name: k, arrived: now})
		}
		var buf []trigger
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			item, causes, _, _ := q.GetWithCauses(context.Background(), buf)
			buf = causes.List
			q.Done(item)
			q.AddWithCause(item, 0, trigger{source: "pods.v1", name: item, arrived: now})
		}
	})
}
