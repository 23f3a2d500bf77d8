package workqueue

import (
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
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			q := New[string](Config{})
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
		})
	}
}

// BenchmarkProducerConsumer: one producer adds b.N keys, `workers` goroutines Get and Done.
func BenchmarkProducerConsumer(b *testing.B) {
	for _, workers := range []int{1, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			q := New[string](Config{})
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
