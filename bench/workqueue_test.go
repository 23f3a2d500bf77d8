package bench

// Workqueue comparison: the same workloads on informerkit's workqueue and on client-go's
// util/workqueue (Typed* constructors), in one process. Both queues are driven through the
// same small interfaces, so both pay one dynamic call per operation. Keys are precomputed
// "namespace/name" strings, so key construction is not measured.

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	cgworkqueue "k8s.io/client-go/util/workqueue"

	"github.com/informerkit/informerkit/workqueue"
)

type benchQueue interface {
	Add(item string)
	Len() int
	Get() (item string, shutdown bool)
	Done(item string)
	ShutDown()
}

type benchDelayingQueue interface {
	benchQueue
	AddAfter(item string, d time.Duration)
}

type benchRateLimitingQueue interface {
	benchDelayingQueue
	AddRateLimited(item string)
	Forget(item string)
	NumRequeues(item string) int
}

type queueImpl struct {
	name        string
	plain       func() benchQueue
	delaying    func() benchDelayingQueue
	rateLimited func() benchRateLimitingQueue
}

var queueImpls = []queueImpl{
	{
		name:     "informerkit",
		plain:    func() benchQueue { return workqueue.New[string](workqueue.Config{}) },
		delaying: func() benchDelayingQueue { return workqueue.NewDelaying[string](workqueue.Config{}) },
		rateLimited: func() benchRateLimitingQueue {
			return workqueue.NewRateLimiting(workqueue.DefaultControllerRateLimiter[string](), workqueue.Config{})
		},
	},
	{
		name:     "client-go",
		plain:    func() benchQueue { return cgworkqueue.NewTyped[string]() },
		delaying: func() benchDelayingQueue { return cgworkqueue.NewTypedDelayingQueue[string]() },
		rateLimited: func() benchRateLimitingQueue {
			return cgworkqueue.NewTypedRateLimitingQueue(cgworkqueue.DefaultTypedControllerRateLimiter[string]())
		},
	},
}

// queueKeys are distinct object keys; 1<<17 covers the 100k-item workloads.
var queueKeys = func() []string {
	keys := make([]string, 1<<17)
	for i := range keys {
		keys[i] = fmt.Sprintf("namespace-%d/object-%d", i%97, i)
	}
	return keys
}()

// BenchmarkQueueAddGetDone: 256 keys circulate; each of `workers` goroutines loops Get, Done,
// Add(the same item). One op is one Get+Done+Add of an item the queue has seen before. With
// workers=1 this is the bare cost of the three calls; with workers=4 it adds lock contention.
// (Each item is always either queued or held by exactly one worker, so no Add is a
// duplicate and no worker can starve.)
func BenchmarkQueueAddGetDone(b *testing.B) {
	for _, workers := range []int{1, 4} {
		for _, impl := range queueImpls {
			b.Run(fmt.Sprintf("workers=%d/impl=%s", workers, impl.name), func(b *testing.B) {
				q := impl.plain()
				defer q.ShutDown()
				for _, k := range queueKeys[:256] {
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
}

// BenchmarkQueueProducerConsumer: one producer adds b.N keys (cycling over 65536, so a key
// may still be queued when it comes round again), `workers` goroutines Get and Done until
// the queue is shut down and drained. Includes the cost of waking blocked workers.
func BenchmarkQueueProducerConsumer(b *testing.B) {
	for _, workers := range []int{1, 4} {
		for _, impl := range queueImpls {
			b.Run(fmt.Sprintf("workers=%d/impl=%s", workers, impl.name), func(b *testing.B) {
				q := impl.plain()
				b.ReportAllocs()
				var wg sync.WaitGroup
				b.ResetTimer()
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
					q.Add(queueKeys[i&0xffff])
				}
				q.ShutDown()
				wg.Wait()
			})
		}
	}
}

// BenchmarkQueueDuplicateAdds: half of the adds are duplicates of queued items. Batches of
// 256 keys are each added twice (k0..k255, k0..k255) and then drained with Get/Done; one op
// is one Add plus half a Get/Done.
func BenchmarkQueueDuplicateAdds(b *testing.B) {
	for _, impl := range queueImpls {
		b.Run("dup=50%/impl="+impl.name, func(b *testing.B) {
			q := impl.plain()
			defer q.ShutDown()
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; done += 512 {
				keys := queueKeys[(done>>9&63)*256:][:256]
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
		})
	}
}

// delays returns n pseudo-random delays in [lo, hi).
func delays(n int, lo, hi time.Duration) []time.Duration {
	r := rand.New(rand.NewPCG(1, 2))
	ds := make([]time.Duration, n)
	for i := range ds {
		ds[i] = lo + time.Duration(r.Int64N(int64(hi-lo)))
	}
	return ds
}

// BenchmarkQueueAddAfter: one op is AddAfter of 100k distinct items with delays spread
// over an hour (none fires), on a fresh delaying queue, followed by ShutDown.
func BenchmarkQueueAddAfter(b *testing.B) {
	const n = 100_000
	ds := delays(n, time.Hour, 2*time.Hour)
	for _, impl := range queueImpls {
		b.Run("items=100000/impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				q := impl.delaying()
				for i, d := range ds {
					q.AddAfter(queueKeys[i], d)
				}
				q.ShutDown()
			}
		})
	}
}

// BenchmarkQueueAddAfterFire: one op is AddAfter of 100k distinct items with delays spread
// over [1µs, 2ms), then Get/Done of all of them as they become ready.
func BenchmarkQueueAddAfterFire(b *testing.B) {
	const n = 100_000
	ds := delays(n, time.Microsecond, 2*time.Millisecond)
	for _, impl := range queueImpls {
		b.Run("items=100000/impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				q := impl.delaying()
				for i, d := range ds {
					q.AddAfter(queueKeys[i], d)
				}
				for range n {
					item, _ := q.Get()
					q.Done(item)
				}
				q.ShutDown()
			}
		})
	}
}

// BenchmarkQueueRateLimitedRequeue: the failure path of a worker with the default controller
// rate limiter: one op is AddRateLimited of one of 1024 keys; every fourth round over the keys
// also Forgets them. The overall token bucket soon pushes delays far out, so items stay in the
// delay heap and repeated AddRateLimited of a key keeps its earliest ready time.
func BenchmarkQueueRateLimitedRequeue(b *testing.B) {
	for _, impl := range queueImpls {
		b.Run("limiter=default/impl="+impl.name, func(b *testing.B) {
			q := impl.rateLimited()
			defer q.ShutDown()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				k := queueKeys[i&1023]
				q.AddRateLimited(k)
				if i>>10&3 == 3 {
					q.Forget(k)
				}
			}
		})
	}
}
