package deltafifo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
)

var allModes = []fifoMode{modeCoalescing, modeInOrder, modeAtomic}

func forEachMode(t *testing.T, fn func(t *testing.T, mode fifoMode)) {
	for _, m := range allModes {
		t.Run(m.String(), func(t *testing.T) { fn(t, m) })
	}
}

func TestPopOnAClosedEmptyFIFOReturnsErrClosed(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		f := newFIFO(mode, nil)
		f.Close()
		if !f.IsClosed() {
			t.Fatal("IsClosed = false")
		}
		called := false
		err := f.Pop(t.Context(), func(Deltas[*testObj], bool) error { called = true; return nil })
		if !errors.Is(err, ErrClosed) || called {
			t.Fatalf("Pop = %v (process called: %v), want ErrClosed", err, called)
		}
		if err := f.PopBatch(t.Context(), 10, func([]Deltas[*testObj], bool) error { return nil }); !errors.Is(err, ErrClosed) {
			t.Fatalf("PopBatch = %v, want ErrClosed", err)
		}
	})
}

func TestCloseDoesNotDiscardQueuedDeltas(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		f := newFIFO(mode, nil)
		a := obj("a", "1")
		must(t, f.Add(a))
		f.Close()
		wantPop(t, f, d(Added, a))
		if err := f.Pop(t.Context(), func(Deltas[*testObj], bool) error { return nil }); !errors.Is(err, ErrClosed) {
			t.Fatalf("Pop = %v, want ErrClosed", err)
		}
	})
}

func TestPopBlockedOnAnEmptyFIFOReturnsWhenTheContextIsCancelled(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		synctest.Test(t, func(t *testing.T) {
			f := newFIFO(mode, nil)
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error)
			go func() {
				done <- f.Pop(ctx, func(Deltas[*testObj], bool) error { return nil })
			}()
			synctest.Wait() // Pop is now blocked
			select {
			case err := <-done:
				t.Fatalf("Pop returned %v before cancellation", err)
			default:
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("Pop = %v, want context.Canceled", err)
			}
		})
	})
}

func TestPopBlockedOnAnEmptyFIFOReturnsWhenTheFIFOCloses(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		synctest.Test(t, func(t *testing.T) {
			f := newFIFO(mode, nil)
			done := make(chan error)
			go func() {
				done <- f.Pop(t.Context(), func(Deltas[*testObj], bool) error { return nil })
			}()
			synctest.Wait()
			f.Close()
			if err := <-done; !errors.Is(err, ErrClosed) {
				t.Fatalf("Pop = %v, want ErrClosed", err)
			}
		})
	})
}

func TestPopWithAContextAlreadyDoneReturnsAtOnce(t *testing.T) {
	f := newFIFO(modeCoalescing, nil)
	must(t, f.Add(obj("a", "1")))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := f.Pop(ctx, func(Deltas[*testObj], bool) error { t.Fatal("process called"); return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Pop = %v", err)
	}
	if f.Len() != 1 {
		t.Fatal("the delta was consumed")
	}
}

func TestPopWakesUpWhenADeltaArrives(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		synctest.Test(t, func(t *testing.T) {
			f := newFIFO(mode, nil)
			got := make(chan Deltas[*testObj])
			go func() {
				_ = f.Pop(t.Context(), func(ds Deltas[*testObj], _ bool) error { got <- ds.Clone(); return nil })
			}()
			synctest.Wait()
			a := obj("a", "1")
			must(t, f.Add(a))
			wantDeltas(t, <-got, d(Added, a))
		})
	})
}

func TestEveryWaitingPopperIsWokenWhenDeltasArrive(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		synctest.Test(t, func(t *testing.T) {
			f := newFIFO(mode, nil)
			const poppers = 4
			var mu sync.Mutex
			seen := map[string]bool{}
			var wg sync.WaitGroup
			for range poppers {
				wg.Go(func() {
					err := f.Pop(t.Context(), func(ds Deltas[*testObj], _ bool) error {
						mu.Lock()
						seen[ds[0].Object.name] = true
						mu.Unlock()
						return nil
					})
					if err != nil {
						t.Error(err)
					}
				})
			}
			synctest.Wait()
			for i := range poppers {
				must(t, f.Add(obj(fmt.Sprint(i), "1")))
			}
			wg.Wait()
			if len(seen) != poppers {
				t.Fatalf("popped %v", seen)
			}
		})
	})
}

func TestRequeuePutsTheDeltasBackAtTheFront(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		f := newFIFO(mode, nil)
		a, b := obj("a", "1"), obj("b", "1")
		must(t, f.Add(a))
		must(t, f.Add(b))
		cause := errors.New("store busy")
		err := f.Pop(t.Context(), func(Deltas[*testObj], bool) error { return Requeue(cause) })
		var rq *RequeueError
		if !errors.As(err, &rq) || !errors.Is(err, cause) {
			t.Fatalf("Pop = %v, want a RequeueError wrapping the cause", err)
		}
		wantPop(t, f, d(Added, a))
		wantPop(t, f, d(Added, b))
	})
}

func TestRequeueMergesWithDeltasThatArriveLater(t *testing.T) {
	f := newFIFO(modeCoalescing, nil)
	a1, a2 := obj("a", "1"), obj("a", "2")
	must(t, f.Add(a1))
	_ = f.Pop(t.Context(), func(Deltas[*testObj], bool) error { return Requeue(nil) })
	must(t, f.Update(a2))
	wantPop(t, f, d(Added, a1), d(Updated, a2))
}

func TestARequeuedInitialItemIsStillInTheInitialList(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		f := newFIFO(mode, nil)
		must(t, f.Replace([]*testObj{obj("a", "1")}, "1"))
		_ = f.Pop(t.Context(), func(Deltas[*testObj], bool) error { return Requeue(nil) })
		if f.HasSynced() {
			t.Fatal("synced although the only initial item was requeued")
		}
		if p := mustPop(t, f); !p.init {
			t.Fatal("requeued initial item no longer in the initial list")
		}
		if !f.HasSynced() {
			t.Fatal("not synced")
		}
	})
}

func TestAnyOtherProcessErrorConsumesTheDeltas(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		f := newFIFO(mode, nil)
		must(t, f.Add(obj("a", "1")))
		cause := errors.New("handler failed")
		if err := f.Pop(t.Context(), func(Deltas[*testObj], bool) error { return cause }); err != cause {
			t.Fatalf("Pop = %v, want the process error as is", err)
		}
		wantEmpty(t, f)
	})
}

func TestTransformRunsOnEnqueueButNotOnTombstonesOrSync(t *testing.T) {
	for _, mode := range []fifoMode{modeCoalescing, modeInOrder} {
		t.Run(mode.String(), func(t *testing.T) {
			k0, gone := obj("k", "0"), obj("gone", "0")
			known := newKnown(k0, gone)
			f := newQueue(testOptions{key: keyFunc, known: known, mode: mode,
				transform: func(o *testObj) (*testObj, error) { o.transformed++; return o, nil }})
			a, b, k1 := obj("a", "1"), obj("b", "1"), obj("k", "1")
			must(t, f.Add(a))
			must(t, f.Delete(b))                    // unknown: dropped in Coalescing, queued in InOrder
			must(t, f.Resync())                     // Sync for k and gone
			must(t, f.Replace([]*testObj{k1}, "1")) // tombstone for a (queued) and gone (known? queued by Resync)
			for f.Len() > 0 {
				mustPop(t, f)
			}
			if a.transformed != 1 || b.transformed != 1 || k1.transformed != 1 {
				t.Fatalf("enqueued objects transformed %d, %d, %d times, want once each", a.transformed, b.transformed, k1.transformed)
			}
			if k0.transformed != 0 || gone.transformed != 0 {
				t.Fatalf("Sync/tombstone objects transformed %d, %d times, want never", k0.transformed, gone.transformed)
			}
		})
	}
}

func TestATransformErrorEnqueuesNothing(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		boom := errors.New("cannot slim")
		f := newQueue(testOptions{key: keyFunc, mode: mode, transform: func(o *testObj) (*testObj, error) {
			if o.name == "bad" {
				return nil, boom
			}
			return o, nil
		}})
		if err := f.Add(obj("bad", "1")); !errors.Is(err, boom) {
			t.Fatalf("Add = %v", err)
		}
		if err := f.Replace([]*testObj{obj("ok", "1"), obj("bad", "1")}, "1"); !errors.Is(err, boom) {
			t.Fatalf("Replace = %v", err)
		}
		wantEmpty(t, f)
	})
}

func TestAKeyErrorEnqueuesNothing(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		f := newFIFO(mode, nil)
		for name, op := range map[string]func() error{
			"Add":    func() error { return f.Add(nil) },
			"Update": func() error { return f.Update(nil) },
			"Delete": func() error { return f.Delete(nil) },
		} {
			if err := op(); err == nil {
				t.Errorf("%s(nil): no error", name)
			}
		}
		wantEmpty(t, f)
	})
}

func TestPopBatchHandsOutUpToMaxKeysUnderOneCall(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		f := newFIFO(mode, nil)
		var objs []*testObj
		for i := range 5 {
			o := obj(fmt.Sprint(i), "1")
			objs = append(objs, o)
			must(t, f.Add(o))
		}
		var got []Deltas[*testObj]
		err := f.PopBatch(t.Context(), 3, func(batch []Deltas[*testObj], _ bool) error {
			for _, ds := range batch {
				got = append(got, ds.Clone())
			}
			return nil
		})
		must(t, err)
		if len(got) != 3 {
			t.Fatalf("batch of %d, want 3", len(got))
		}
		for i, ds := range got {
			wantDeltas(t, ds, d(Added, objs[i]))
		}
		if f.Len() != 2 {
			t.Fatalf("Len = %d", f.Len())
		}
	})
}

func TestPopBatchNeverMixesTheInitialListWithLaterDeltas(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		f := newFIFO(mode, nil)
		must(t, f.Replace([]*testObj{obj("a", "1"), obj("b", "1")}, "1"))
		must(t, f.Add(obj("c", "1")))
		var sizes []int
		var inits []bool
		for f.Len() > 0 {
			must(t, f.PopBatch(t.Context(), 100, func(batch []Deltas[*testObj], init bool) error {
				sizes = append(sizes, len(batch))
				inits = append(inits, init)
				return nil
			}))
		}
		want := []int{2, 1}
		if mode == modeAtomic {
			want = []int{1, 1} // the ReplacedAll delta, then c
		}
		if fmt.Sprint(sizes) != fmt.Sprint(want) || fmt.Sprint(inits) != "[true false]" {
			t.Fatalf("batches %v (initial %v), want %v ([true false])", sizes, inits, want)
		}
	})
}

func TestPopBatchRequeuePutsTheWholeBatchBack(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		f := newFIFO(mode, nil)
		a, b, c := obj("a", "1"), obj("b", "1"), obj("c", "1")
		for _, o := range []*testObj{a, b, c} {
			must(t, f.Add(o))
		}
		err := f.PopBatch(t.Context(), 2, func([]Deltas[*testObj], bool) error { return Requeue(nil) })
		if !errors.As(err, new(*RequeueError)) {
			t.Fatalf("PopBatch = %v", err)
		}
		wantPop(t, f, d(Added, a))
		wantPop(t, f, d(Added, b))
		wantPop(t, f, d(Added, c))
	})
}

// The invalid combinations of the former single constructor (KnownObjects with atomic
// events, UnlockWhileProcessing without them, an unknown mode) cannot be written any more;
// a nil key function is the one programming error left.
func TestConstructorsPanicOnANilKeyFunction(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		defer func() {
			if recover() == nil {
				t.Fatal("no panic")
			}
		}()
		newQueue(testOptions{mode: mode})
	})
}

func TestDeltasOldestNewestAndClone(t *testing.T) {
	var empty Deltas[*testObj]
	if empty.Oldest() != nil || empty.Newest() != nil || empty.Clone() != nil {
		t.Fatal("empty Deltas helpers")
	}
	a, b := obj("a", "1"), obj("a", "2")
	ds := Deltas[*testObj]{d(Added, a), d(Updated, b)}
	if ds.Oldest().Object != a || ds.Newest().Object != b {
		t.Fatal("Oldest/Newest")
	}
	c := ds.Clone()
	c[0].Object = nil
	if ds[0].Object != a {
		t.Fatal("Clone shares the backing array")
	}
}

func TestProcessMayKeepTheObjectsButTheDeltasSliceIsReused(t *testing.T) {
	f := newFIFO(modeCoalescing, nil)
	a, b := obj("a", "1"), obj("b", "1")
	must(t, f.Add(a))
	must(t, f.Add(b))
	var kept Deltas[*testObj]
	var keptObj *testObj
	_ = f.Pop(t.Context(), func(ds Deltas[*testObj], _ bool) error { kept, keptObj = ds, ds[0].Object; return nil })
	if keptObj != a {
		t.Fatal("object")
	}
	// The slice the FIFO handed out no longer refers to the object: it was cleared for reuse.
	if len(kept) == 1 && kept[0].Object != nil {
		t.Fatal("the popped slot still references the object")
	}
}
