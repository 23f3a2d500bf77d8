package deltafifo

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/informerkit/informerkit/indexer"
)

func TestInOrderHandsOutEveryDeltaAloneInExactOrder(t *testing.T) {
	f := newFIFO(modeInOrder, nil)
	a1, b1, a2 := obj("a", "1"), obj("b", "1"), obj("a", "2")
	must(t, f.Add(a1))
	must(t, f.Add(b1))
	must(t, f.Update(a2))
	wantPop(t, f, d(Added, a1))
	wantPop(t, f, d(Added, b1))
	wantPop(t, f, d(Updated, a2))
	wantEmpty(t, f)
}

func TestInOrderQueuesEveryDeleteWithoutMerging(t *testing.T) {
	f := newFIFO(modeInOrder, newKnown())
	a1, a2 := obj("a", "1"), obj("a", "2")
	must(t, f.Delete(a1)) // neither known nor queued: still queued
	must(t, f.Delete(a2))
	wantPop(t, f, d(Deleted, a1))
	wantPop(t, f, d(Deleted, a2))
}

func TestInOrderReplaceQueuesTombstonesThenReplaced(t *testing.T) {
	k0 := obj("k", "0")
	f := newFIFO(modeInOrder, newKnown(k0, obj("b", "0")))
	a1, b1 := obj("a", "1"), obj("b", "1")
	must(t, f.Add(a1))
	must(t, f.Replace([]*testObj{b1}, "5"))
	wantPop(t, f, d(Added, a1))
	wantPop(t, f, tomb(a1)) // queued, not listed
	wantPop(t, f, tomb(k0)) // known, not listed, not queued
	wantPop(t, f, d(Replaced, b1))
	wantEmpty(t, f)
}

func TestInOrderReplaceSkipsQueuedKeysWhoseNewestDeltaIsADelete(t *testing.T) {
	a0 := obj("a", "0")
	f := newFIFO(modeInOrder, newKnown(a0))
	a1 := obj("a", "1")
	must(t, f.Delete(a1))
	must(t, f.Replace(nil, "5"))
	wantPop(t, f, d(Deleted, a1))
	wantEmpty(t, f)
}

func TestInOrderHasSyncedCountsEveryDeltaQueuedByTheFirstReplace(t *testing.T) {
	f := newFIFO(modeInOrder, newKnown(obj("k", "0")))
	must(t, f.Replace([]*testObj{obj("a", "1"), obj("b", "1")}, "1"))
	for i := range 3 { // tombstone k, Replaced a, Replaced b
		if f.HasSynced() {
			t.Fatalf("synced after %d of 3 pops", i)
		}
		if p := mustPop(t, f); !p.init {
			t.Fatalf("pop %d not in the initial list", i)
		}
	}
	if !f.HasSynced() {
		t.Fatal("not synced")
	}
}

func TestInOrderResyncSkipsKeysWithQueuedDeltas(t *testing.T) {
	a0, b0 := obj("a", "0"), obj("b", "0")
	f := newFIFO(modeInOrder, newKnown(a0, b0))
	b1 := obj("b", "1")
	must(t, f.Update(b1))
	must(t, f.Resync())
	wantPop(t, f, d(Updated, b1))
	wantPop(t, f, d(Sync, a0))
	wantEmpty(t, f)
}

func TestInOrderPopBatchEndsBeforeARepeatedKey(t *testing.T) {
	f := newFIFO(modeInOrder, nil)
	a1, b1, a2, c1 := obj("a", "1"), obj("b", "1"), obj("a", "2"), obj("c", "1")
	for _, o := range []*testObj{a1, b1, a2, c1} {
		must(t, f.Update(o))
	}
	var batches [][]*testObj
	for f.Len() > 0 {
		must(t, f.PopBatch(t.Context(), 10, func(batch []Deltas[*testObj], _ bool) error {
			var objs []*testObj
			for _, ds := range batch {
				if len(ds) != 1 {
					t.Fatalf("in-order batch element with %d deltas", len(ds))
				}
				objs = append(objs, ds[0].Object)
			}
			batches = append(batches, objs)
			return nil
		}))
	}
	if len(batches) != 2 || !slices.Equal(batches[0], []*testObj{a1, b1}) || !slices.Equal(batches[1], []*testObj{a2, c1}) {
		t.Fatalf("batches = %v", batches)
	}
}

func TestInOrderListAndGetByKeyFollowArrivalOrder(t *testing.T) {
	f := newFIFO(modeInOrder, nil)
	a1, b1, a2 := obj("a", "1"), obj("b", "1"), obj("a", "2")
	must(t, f.Add(a1))
	must(t, f.Add(b1))
	must(t, f.Update(a2))
	if got := f.ListKeys(); !slices.Equal(got, []string{"ns/a", "ns/b"}) {
		t.Fatalf("ListKeys = %v", got)
	}
	if got := f.List(); !slices.Equal(got, []*testObj{a2, b1}) {
		t.Fatalf("List = %v", got)
	}
	ds, ok, _ := f.GetByKey("ns/a")
	if !ok {
		t.Fatal("GetByKey: absent")
	}
	wantDeltas(t, ds, d(Added, a1), d(Updated, a2))
	if f.Len() != 3 {
		t.Fatalf("Len = %d, want 3 deltas", f.Len())
	}
}

func TestAtomicReplaceQueuesOneReplacedAllDeltaWithTheWholeList(t *testing.T) {
	f := newFIFO(modeAtomic, nil)
	a0 := obj("a", "0")
	must(t, f.Add(a0))
	list := []*testObj{obj("a", "1"), obj("b", "1")}
	must(t, f.Replace(list, "77"))
	if f.Len() != 2 {
		t.Fatalf("Len = %d, want 2", f.Len())
	}
	wantPop(t, f, d(Added, a0))
	p := mustPop(t, f)
	if len(p.deltas) != 1 || p.deltas[0].Type != ReplacedAll || p.deltas[0].All == nil {
		t.Fatalf("deltas = %s", deltasString(p.deltas))
	}
	all := p.deltas[0].All
	if all.ResourceVersion != "77" || !slices.Equal(all.Objects, list) {
		t.Fatalf("All = %+v", all)
	}
}

func TestAtomicReplaceTransformsIntoANewSlice(t *testing.T) {
	f := newQueue(testOptions{key: keyFunc, mode: modeAtomic, transform: func(o *testObj) (*testObj, error) {
		return &testObj{ns: o.ns, name: o.name, rv: o.rv, transformed: 1}, nil
	}})
	list := []*testObj{obj("a", "1")}
	must(t, f.Replace(list, "1"))
	p := mustPop(t, f)
	got := p.deltas[0].All.Objects
	if got[0] == list[0] || got[0].transformed != 1 || list[0].transformed != 0 {
		t.Fatal("the ReplacedAll payload does not hold the transformed objects")
	}
}

func TestAtomicFirstReplaceCountsItsDeltaForHasSynced(t *testing.T) {
	f := newFIFO(modeAtomic, nil)
	must(t, f.Replace([]*testObj{obj("a", "1"), obj("b", "1")}, "1"))
	if f.HasSynced() {
		t.Fatal("synced before the ReplacedAll was popped")
	}
	if p := mustPop(t, f); !p.init {
		t.Fatal("ReplacedAll not in the initial list")
	}
	if !f.HasSynced() {
		t.Fatal("not synced")
	}
}

func TestAtomicResyncQueuesOneSyncAllDelta(t *testing.T) {
	f := newFIFO(modeAtomic, nil)
	must(t, f.Resync())
	must(t, f.Resync()) // merged with the previous one
	must(t, f.Add(obj("a", "1")))
	must(t, f.Resync())
	if f.Len() != 3 {
		t.Fatalf("Len = %d, want 3", f.Len())
	}
	wantPop(t, f, Delta[*testObj]{Type: SyncAll})
	mustPop(t, f)
	wantPop(t, f, Delta[*testObj]{Type: SyncAll})
}

func TestAtomicReplacedAllAndSyncAllArePoppedAloneInABatch(t *testing.T) {
	f := newFIFO(modeAtomic, nil)
	must(t, f.Add(obj("a", "1")))
	must(t, f.Replace(nil, "1"))
	must(t, f.Add(obj("b", "1")))
	must(t, f.Resync())
	var sizes []int
	var types []DeltaType
	for f.Len() > 0 {
		must(t, f.PopBatch(t.Context(), 10, func(batch []Deltas[*testObj], _ bool) error {
			sizes = append(sizes, len(batch))
			types = append(types, batch[0][0].Type)
			return nil
		}))
	}
	if !slices.Equal(sizes, []int{1, 1, 1, 1}) || !slices.Equal(types, []DeltaType{Added, ReplacedAll, Added, SyncAll}) {
		t.Fatalf("batches %v of %v", sizes, types)
	}
}

// applyDelta is a minimal informer: it applies a popped delta to store and records the
// handler notifications it implies.
func applyDelta(t *testing.T, store indexer.Indexer[*testObj], dl Delta[*testObj], events *[]string) error {
	t.Helper()
	ix := store
	switch dl.Type {
	case ReplacedAll:
		return applyReplacedAll(store, dl.All, func(key string, c Delta[*testObj], old *testObj, existed bool) {
			switch {
			case c.Type == Deleted:
				*events = append(*events, "delete "+c.Object.String())
			case existed:
				*events = append(*events, "update "+old.String()+" -> "+c.Object.String())
			default:
				*events = append(*events, "add "+c.Object.String())
			}
		})
	case Deleted:
		k, _ := keyFunc(dl.Object)
		ix.DeleteByKey(k)
		*events = append(*events, "delete "+dl.Object.String())
	default:
		old, existed, err := ix.Upsert(dl.Object)
		if err != nil {
			return err
		}
		if existed {
			*events = append(*events, "update "+old.String()+" -> "+dl.Object.String())
		} else {
			*events = append(*events, "add "+dl.Object.String())
		}
	}
	return nil
}

func TestApplyReplacedAllDiffsTheListAgainstTheStore(t *testing.T) {
	a0, b0, c0 := obj("a", "0"), obj("b", "0"), obj("c", "0")
	store := newKnown(a0, b0, c0)
	f := newFIFO(modeAtomic, nil)
	a1, d1 := obj("a", "1"), obj("d", "1")
	must(t, f.Replace([]*testObj{a1, d1}, "9"))
	var events []string
	must(t, f.Pop(t.Context(), func(ds Deltas[*testObj], _ bool) error { return applyDelta(t, store, ds[0], &events) }))
	want := []string{
		"delete ns/b@0", "delete ns/c@0", // deletions first, in store order
		"update ns/a@0 -> ns/a@1", "add ns/d@1", // then the list, in list order
	}
	slices.Sort(events[:2])
	if !slices.Equal(events, want) {
		t.Fatalf("events = %q, want %q", events, want)
	}
	if got := store.List(); len(got) != 2 || store.LastSyncResourceVersion() != "9" {
		t.Fatalf("store = %v @ %q", got, store.LastSyncResourceVersion())
	}
}

func TestUnlockWhileProcessingLetsTheProducerEnqueueDuringProcessing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newQueue(testOptions{key: keyFunc, mode: modeAtomic, unlock: true})
		must(t, f.Add(obj("a", "1")))
		inProcess, release := make(chan struct{}), make(chan struct{})
		done := make(chan error)
		go func() {
			done <- f.Pop(t.Context(), func(Deltas[*testObj], bool) error {
				close(inProcess)
				<-release
				return Requeue(nil)
			})
		}()
		<-inProcess
		// With the lock held by Pop this would block until release; it must not.
		b := obj("b", "1")
		must(t, f.Add(b))
		if f.Len() != 1 {
			t.Fatalf("Len = %d during processing", f.Len())
		}
		close(release)
		if err := <-done; !errors.As(err, new(*RequeueError)) {
			t.Fatal(err)
		}
		// The requeued delta is back in front of the one added meanwhile.
		if p := mustPop(t, f); p.deltas[0].Object.name != "a" {
			t.Fatalf("first pop after requeue: %s", deltasString(p.deltas))
		}
		wantPop(t, f, d(Added, b))
	})
}

func TestUnlockWhileProcessingSerialisesPops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newQueue(testOptions{key: keyFunc, mode: modeAtomic, unlock: true})
		must(t, f.Add(obj("a", "1")))
		must(t, f.Add(obj("b", "1")))
		inProcess, release := make(chan struct{}), make(chan struct{})
		first := make(chan error)
		go func() {
			first <- f.Pop(t.Context(), func(Deltas[*testObj], bool) error { close(inProcess); <-release; return nil })
		}()
		<-inProcess
		second := make(chan error)
		secondRan := false
		go func() {
			second <- f.Pop(t.Context(), func(Deltas[*testObj], bool) error { secondRan = true; return nil })
		}()
		synctest.Wait() // the second Pop is blocked although b is queued
		select {
		case err := <-second:
			t.Fatalf("second Pop returned %v while the first was processing", err)
		default:
		}
		close(release)
		must(t, <-first)
		must(t, <-second)
		if !secondRan {
			t.Fatal("second Pop did not process")
		}
	})
}
