package deltafifo

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestStampArrivals: once asked, every layout stamps the deltas of Add, Update and Delete
// with the time they were queued, and only those: a relist's deltas carry no arrival.
func TestStampArrivals(t *testing.T) {
	for _, mode := range []fifoMode{modeCoalescing, modeInOrder, modeAtomic} {
		t.Run(mode.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFIFO(mode, newKnown(obj("b", "1")))
				if err := f.Add(obj("a", "1")); err != nil {
					t.Fatal(err)
				}
				if p := mustPop(t, f); !p.deltas[0].Arrived.IsZero() {
					t.Fatalf("unstamped queue stamped %v", p.deltas[0].Arrived)
				}
				f.StampArrivals(true)
				time.Sleep(time.Second)
				added := time.Now()
				_ = f.Add(obj("c", "1"))
				time.Sleep(time.Second)
				deleted := time.Now()
				_ = f.Delete(obj("b", "2"))
				for _, want := range []time.Time{added, deleted} {
					p := mustPop(t, f)
					if got := p.deltas[0].Arrived; !got.Equal(want) {
						t.Fatalf("%s delta arrived %v, want %v", p.deltas[0].Type, got, want)
					}
				}
				_ = f.Replace([]*testObj{obj("x", "1")}, "5")
				for f.Len() > 0 {
					for _, d := range mustPop(t, f).deltas {
						if !d.Arrived.IsZero() {
							t.Fatalf("relist delta %s stamped %v", d.Type, d.Arrived)
						}
					}
				}
				f.StampArrivals(false)
				_ = f.Update(obj("c", "2"))
				if p := mustPop(t, f); !p.deltas[0].Arrived.IsZero() {
					t.Fatalf("stamping turned off, delta stamped %v", p.deltas[0].Arrived)
				}
			})
		})
	}
}
