package deltafifo

import (
	"errors"
	"slices"
	"testing"

	"github.com/informerkit/informerkit/indexer"
)

func TestPopHandsOverAllDeltasOfOneKeyOldestFirst(t *testing.T) {
	f := newFIFO(modeCoalescing, nil)
	a1, a2, a3 := obj("a", "1"), obj("a", "2"), obj("a", "3")
	must(t, f.Add(a1))
	must(t, f.Update(a2))
	must(t, f.Delete(a3))
	wantPop(t, f, d(Added, a1), d(Updated, a2), d(Deleted, a3))
	wantEmpty(t, f)
}

func TestPopOrderIsTheOrderInWhichKeysWereFirstQueued(t *testing.T) {
	f := newFIFO(modeCoalescing, nil)
	a1, b1, a2, c1 := obj("a", "1"), obj("b", "1"), obj("a", "2"), obj("c", "1")
	for _, o := range []*testObj{a1, b1, a2, c1} {
		must(t, f.Add(o))
	}
	if got := f.ListKeys(); !slices.Equal(got, []string{"ns/a", "ns/b", "ns/c"}) {
		t.Fatalf("ListKeys = %v", got)
	}
	wantPop(t, f, d(Added, a1), d(Added, a2))
	wantPop(t, f, d(Added, b1))
	wantPop(t, f, d(Added, c1))
}

func TestTwoConsecutiveDeletesMergeKeepingTheOlder(t *testing.T) {
	f := newFIFO(modeCoalescing, nil)
	a1, a2, a3 := obj("a", "1"), obj("a", "2"), obj("a", "3")
	must(t, f.Add(a1))
	must(t, f.Delete(a2))
	must(t, f.Delete(a3))
	wantPop(t, f, d(Added, a1), d(Deleted, a2))
}

func TestADeleteAfterATombstoneReplacesTheTombstone(t *testing.T) {
	known := newKnown(obj("a", "1"))
	f := newFIFO(modeCoalescing, known)
	must(t, f.Replace(nil, "5")) // a is known but not listed: tombstone
	a2 := obj("a", "2")
	must(t, f.Delete(a2))
	wantPop(t, f, d(Deleted, a2))
}

func TestATombstoneAfterADeleteIsDropped(t *testing.T) {
	a0 := obj("a", "0")
	f := newFIFO(modeCoalescing, newKnown(a0))
	a1 := obj("a", "1")
	must(t, f.Delete(a1))
	must(t, f.Replace(nil, "5"))
	wantPop(t, f, d(Deleted, a1))
}

func TestNonConsecutiveDeletesDoNotMerge(t *testing.T) {
	f := newFIFO(modeCoalescing, nil)
	a1, a2, a3 := obj("a", "1"), obj("a", "2"), obj("a", "3")
	must(t, f.Add(a1))
	must(t, f.Delete(a1))
	must(t, f.Add(a2))
	must(t, f.Delete(a3))
	wantPop(t, f, d(Added, a1), d(Deleted, a1), d(Added, a2), d(Deleted, a3))
}

func TestDeleteOfAKeyNeitherKnownNorQueuedIsDropped(t *testing.T) {
	for name, known := range map[string]KnownObjects[*testObj]{"without KnownObjects": nil, "with KnownObjects": newKnown(obj("other", "1"))} {
		t.Run(name, func(t *testing.T) {
			f := newFIFO(modeCoalescing, known)
			must(t, f.Delete(obj("a", "1")))
			wantEmpty(t, f)
		})
	}
}

func TestDeleteOfAKnownKeyIsQueued(t *testing.T) {
	f := newFIFO(modeCoalescing, newKnown(obj("a", "1")))
	a2 := obj("a", "2")
	must(t, f.Delete(a2))
	wantPop(t, f, d(Deleted, a2))
}

func TestDeleteOfAQueuedKeyIsQueuedEvenWhenUnknown(t *testing.T) {
	f := newFIFO(modeCoalescing, newKnown())
	a1, a2 := obj("a", "1"), obj("a", "2")
	must(t, f.Add(a1))
	must(t, f.Delete(a2))
	wantPop(t, f, d(Added, a1), d(Deleted, a2))
}

func TestDeleteIsQueuedWhenKnownObjectsCannotTell(t *testing.T) {
	f := newFIFO(modeCoalescing, failingKnown{newKnown(), map[string]bool{"ns/a": true}})
	a1 := obj("a", "1")
	must(t, f.Delete(a1))
	wantPop(t, f, d(Deleted, a1))
}

func TestReplaceQueuesReplacedForEveryListedObject(t *testing.T) {
	f := newFIFO(modeCoalescing, newKnown())
	a, b := obj("a", "1"), obj("b", "1")
	must(t, f.Replace([]*testObj{a, b}, "10"))
	wantPop(t, f, d(Replaced, a))
	wantPop(t, f, d(Replaced, b))
	wantEmpty(t, f)
}

func TestReplaceTombstonesQueuedKeysMissingFromTheListWithTheNewestQueuedObject(t *testing.T) {
	f := newFIFO(modeCoalescing, newKnown())
	a1, a2, b := obj("a", "1"), obj("a", "2"), obj("b", "1")
	must(t, f.Add(a1))
	must(t, f.Update(a2))
	must(t, f.Replace([]*testObj{b}, "10"))
	wantPop(t, f, d(Added, a1), d(Updated, a2), tomb(a2))
	wantPop(t, f, d(Replaced, b))
}

func TestReplaceTombstonesKnownKeysMissingFromTheListWithTheKnownObject(t *testing.T) {
	a0, b0 := obj("a", "0"), obj("b", "0")
	f := newFIFO(modeCoalescing, newKnown(a0, b0))
	b1 := obj("b", "1")
	must(t, f.Replace([]*testObj{b1}, "10"))
	wantPop(t, f, d(Replaced, b1))
	wantPop(t, f, tomb(a0))
	wantEmpty(t, f)
}

func TestReplaceDoesNotTombstoneAKnownKeyThatIsQueued(t *testing.T) {
	a0 := obj("a", "0")
	f := newFIFO(modeCoalescing, newKnown(a0))
	a1 := obj("a", "1")
	must(t, f.Update(a1))
	must(t, f.Replace(nil, "10"))
	// One tombstone, carrying the queued object, not the known one.
	wantPop(t, f, d(Updated, a1), tomb(a1))
	wantEmpty(t, f)
}

func TestReplaceTombstoneOfAKnownKeyWhoseObjectCannotBeReadCarriesTheZeroObject(t *testing.T) {
	f := newFIFO(modeCoalescing, failingKnown{newKnown(obj("a", "0")), map[string]bool{"ns/a": true}})
	must(t, f.Replace(nil, "10"))
	wantPop(t, f, tomb(nil))
}

func TestReplaceWithAFailingKeyFunctionQueuesNothing(t *testing.T) {
	f := newFIFO(modeCoalescing, newKnown(obj("gone", "1")))
	err := f.Replace([]*testObj{obj("a", "1"), nil}, "10")
	if !errors.Is(err, indexer.ErrNilObject) {
		t.Fatalf("err = %v", err)
	}
	wantEmpty(t, f)
	if f.HasSynced() {
		t.Fatal("a failed Replace populated the FIFO")
	}
}

func TestHasSyncedOnceTheFirstReplaceIsPopped(t *testing.T) {
	f := newFIFO(modeCoalescing, newKnown())
	if f.HasSynced() {
		t.Fatal("synced before anything")
	}
	a, b := obj("a", "1"), obj("b", "1")
	must(t, f.Replace([]*testObj{a, b}, "1"))
	must(t, f.Add(obj("c", "1"))) // after the Replace: not part of the initial list
	if p := wantPop(t, f, d(Replaced, a)); !p.init {
		t.Fatal("first item not in the initial list")
	}
	if f.HasSynced() {
		t.Fatal("synced with an initial item left")
	}
	if p := wantPop(t, f, d(Replaced, b)); !p.init {
		t.Fatal("second item not in the initial list")
	}
	if !f.HasSynced() {
		t.Fatal("not synced after popping the initial list")
	}
	select {
	case <-f.Synced():
	default:
		t.Fatal("Synced channel not closed")
	}
	if p := mustPop(t, f); p.init {
		t.Fatal("item added after the Replace reported as initial")
	}
}

func TestHasSyncedCountsTheQueuedDeletionsOfTheFirstReplace(t *testing.T) {
	f := newFIFO(modeCoalescing, newKnown(obj("k1", "0"), obj("k2", "0")))
	must(t, f.Replace([]*testObj{obj("a", "1")}, "1"))
	for i := range 3 {
		if f.HasSynced() {
			t.Fatalf("synced after %d of 3 pops", i)
		}
		mustPop(t, f)
	}
	if !f.HasSynced() {
		t.Fatal("not synced after 3 pops")
	}
}

func TestTheFirstAddUpdateOrDeleteBeforeAnyReplaceMarksThePopulationDone(t *testing.T) {
	for name, op := range map[string]func(Queue[*testObj]) error{
		"Add":            func(f Queue[*testObj]) error { return f.Add(obj("a", "1")) },
		"Update":         func(f Queue[*testObj]) error { return f.Update(obj("a", "1")) },
		"dropped Delete": func(f Queue[*testObj]) error { return f.Delete(obj("a", "1")) },
	} {
		t.Run(name, func(t *testing.T) {
			f := newFIFO(modeCoalescing, newKnown())
			must(t, op(f))
			if !f.HasSynced() {
				t.Fatal("not synced")
			}
			// A later Replace does not reopen the initial list.
			must(t, f.Replace([]*testObj{obj("b", "1")}, "2"))
			if !f.HasSynced() {
				t.Fatal("a Replace after an Add unsynced the FIFO")
			}
		})
	}
}

func TestOnlyTheFirstReplaceSetsTheInitialCount(t *testing.T) {
	f := newFIFO(modeCoalescing, newKnown())
	must(t, f.Replace([]*testObj{obj("a", "1")}, "1"))
	must(t, f.Replace([]*testObj{obj("a", "2"), obj("b", "2"), obj("c", "2")}, "2"))
	mustPop(t, f)
	if !f.HasSynced() {
		t.Fatal("the second Replace changed the initial count")
	}
}

func TestAnEmptyFirstReplaceSyncsAtOnce(t *testing.T) {
	f := newFIFO(modeCoalescing, newKnown())
	must(t, f.Replace(nil, "1"))
	if !f.HasSynced() {
		t.Fatal("not synced after an empty initial list")
	}
}

func TestResyncQueuesSyncOnlyForKnownKeysWithNothingQueued(t *testing.T) {
	a0, b0, c0 := obj("a", "0"), obj("b", "0"), obj("c", "0")
	f := newFIFO(modeCoalescing, newKnown(a0, b0, c0))
	b1 := obj("b", "1")
	must(t, f.Update(b1))
	must(t, f.Resync())
	got := map[string]Deltas[*testObj]{}
	for f.Len() > 0 {
		p := mustPop(t, f)
		k, _ := keyFunc(p.deltas[0].Object)
		got[k] = p.deltas
	}
	wantDeltas(t, got["ns/a"], d(Sync, a0))
	wantDeltas(t, got["ns/b"], d(Updated, b1))
	wantDeltas(t, got["ns/c"], d(Sync, c0))
}

func TestResyncWithoutKnownObjectsDoesNothing(t *testing.T) {
	f := newFIFO(modeCoalescing, nil)
	must(t, f.Resync())
	wantEmpty(t, f)
}

func TestResyncSkipsKeysKnownObjectsCannotProduce(t *testing.T) {
	f := newFIFO(modeCoalescing, failingKnown{newKnown(obj("a", "0")), map[string]bool{"ns/a": true}})
	must(t, f.Resync())
	wantEmpty(t, f)
}

func TestListListKeysAndGetByKeyShowTheQueue(t *testing.T) {
	f := newFIFO(modeCoalescing, nil)
	a1, a2, b1 := obj("a", "1"), obj("a", "2"), obj("b", "1")
	must(t, f.Add(a1))
	must(t, f.Add(b1))
	must(t, f.Update(a2))
	if got := f.List(); !slices.Equal(got, []*testObj{a2, b1}) {
		t.Fatalf("List = %v", got)
	}
	ds, ok, err := f.GetByKey("ns/a")
	if err != nil || !ok {
		t.Fatalf("GetByKey = %v, %v", ok, err)
	}
	wantDeltas(t, ds, d(Added, a1), d(Updated, a2))
	ds[0].Object = nil // a copy: the queue is unaffected
	wantPop(t, f, d(Added, a1), d(Updated, a2))
	if _, ok, _ := f.GetByKey("ns/a"); ok {
		t.Fatal("popped key still present")
	}
}
