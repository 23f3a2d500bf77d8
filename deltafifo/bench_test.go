package deltafifo

import (
	"context"
	"fmt"
	"testing"
)

const benchBacklog = 1000

func benchObjects(n int) []*testObj {
	objs := make([]*testObj, n)
	for i := range objs {
		objs[i] = &testObj{ns: fmt.Sprint("ns-", i%100), name: fmt.Sprint("obj-", i), rv: "1"}
	}
	return objs
}

var sink int

func processNothing(ds Deltas[*testObj], _ bool) error {
	sink += len(ds)
	return nil
}

func processBatchNothing(batch []Deltas[*testObj], _ bool) error {
	sink += len(batch)
	return nil
}

// BenchmarkAddPop: one Add and one Pop per op, with a backlog of benchBacklog.
func BenchmarkAddPop(b *testing.B) {
	objs := benchObjects(100_000)
	ctx := context.Background()
	for _, mode := range allModes {
		for _, batch := range []int{1, benchBacklog} {
			if batch > 1 && mode == modeCoalescing {
				continue
			}
			b.Run(fmt.Sprintf("mode=%s/batch=%d", mode, batch), func(b *testing.B) {
				f := newQueue(testOptions{key: keyFunc, mode: mode})
				b.ReportAllocs()
				i := 0
				drain := func() {
					for f.Len() > 0 {
						var err error
						if batch == 1 {
							err = f.Pop(ctx, processNothing)
						} else {
							err = f.PopBatch(ctx, batch, processBatchNothing)
						}
						if err != nil {
							b.Fatal(err)
						}
					}
				}
				for b.Loop() {
					if err := f.Add(objs[i%len(objs)]); err != nil {
						b.Fatal(err)
					}
					if i++; i%benchBacklog == 0 {
						drain()
					}
				}
				drain()
			})
		}
	}
}

// BenchmarkReplace: one Replace of 100k objects into an empty FIFO whose KnownObjects hold the
// same keys.
func BenchmarkReplace(b *testing.B) {
	objs := benchObjects(100_000)
	relist := benchObjects(100_000)
	for _, mode := range allModes {
		b.Run("mode="+mode.String(), func(b *testing.B) {
			known := newKnown(objs...)
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				opts := testOptions{key: keyFunc, mode: mode, known: known}
				if mode == modeAtomic {
					opts.known = nil
				}
				f := newQueue(opts)
				b.StartTimer()
				if err := f.Replace(relist, "2"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
