package bench

import (
	"fmt"
	"sync"
	"testing"
)

// BenchmarkQueueContention is a controller's queue under contention: one producer (an
// informer's event handler) adds two keys per event and four workers Get and Done, on
// however many cores the machine has (2 here). One op is one producer iteration. The
// second key is
//
//   - second=distinct: another object's key, new every time (2 new items per iteration);
//   - second=same: the same key again (the second Add is a duplicate, or re-queues the
//     key if a worker took it meanwhile);
//   - second=owner: the key of the object's owner, which four consecutive events share;
//   - second=hot: both keys come from 256 hot keys (keys often re-added while a worker
//     processes them, which Done then re-queues).
//
// cpu-ns/op is the process's CPU time (all goroutines) per op, next to wall time.
func BenchmarkQueueContention(b *testing.B) {
	for _, second := range []string{"distinct", "same", "owner", "hot"} {
		for _, impl := range queueImpls {
			b.Run(fmt.Sprintf("producers=1/adds=2/second=%s/workers=4/impl=%s", second, impl.name), func(b *testing.B) {
				q := impl.plain()
				b.ReportAllocs()
				var wg sync.WaitGroup
				b.ResetTimer()
				cpu0 := cpuTime()
				for range 4 {
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
					if second == "hot" {
						q.Add(queueKeys[i&0xff])
						q.Add(queueKeys[(i+128)&0xff])
						continue
					}
					q.Add(queueKeys[i&0xffff])
					switch second {
					case "distinct":
						q.Add(queueKeys[0x10000+i&0xffff])
					case "same":
						q.Add(queueKeys[i&0xffff])
					default:
						q.Add(queueKeys[0x10000+(i>>2)&0xffff])
					}
				}
				q.ShutDown()
				wg.Wait()
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
