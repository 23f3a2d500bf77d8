package deltafifo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/informerkit/informerkit/indexer"
)

// Rules of the incremental replacement (FIFO.BeginReplace, Relist), one test per rule.

func mustBegin(t *testing.T, f Queue[*testObj]) *Relist[*testObj] {
	t.Helper()
	r, err := f.BeginReplace()
	if err != nil {
		t.Fatalf("BeginReplace: %v", err)
	}
	return r
}

func TestBeginReplaceWhileOneIsOpenFails(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		f := newFIFO(mode, nil)
		r := mustBegin(t, f)
		if _, err := f.BeginReplace(); !errors.Is(err, ErrReplaceInProgress) {
			t.Fatalf("second BeginReplace = %v", err)
		}
		r.Abort()
		mustBegin(t, f).Abort()
	})
}

func TestEveryOtherWriteFailsWhileAReplacementIsOpen(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		var known KnownObjects[*testObj]
		if mode != modeAtomic {
			known = newKnown(obj("k", "0"))
		}
		f := newFIFO(mode, known)
		r := mustBegin(t, f)
		for name, op := range map[string]func() error{
			"Add":     func() error { return f.Add(obj("a", "1")) },
			"Update":  func() error { return f.Update(obj("a", "1")) },
			"Delete":  func() error { return f.Delete(obj("k", "1")) },
			"Replace": func() error { return f.Replace([]*testObj{obj("a", "1")}, "1") },
			"Resync":  func() error { return f.Resync() },
		} {
			if err := op(); !errors.Is(err, ErrReplaceInProgress) {
				t.Errorf("%s during a replacement = %v, want ErrReplaceInProgress", name, err)
			}
		}
		wantEmpty(t, f)
		must(t, r.Finish("1"))
		must(t, f.Add(obj("a", "2")))
	})
}

func TestAReplacementThatEndedRefusesAddAndFinish(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		f := newFIFO(mode, nil)
		finished := mustBegin(t, f)
		must(t, finished.Finish("1"))
		aborted := mustBegin(t, f)
		aborted.Abort()
		for name, r := range map[string]*Relist[*testObj]{"finished": finished, "aborted": aborted} {
			if err := r.Add(obj("a", "1")); !errors.Is(err, ErrRelistEnded) {
				t.Errorf("Add after the replacement %s = %v", name, err)
			}
			if err := r.Finish("2"); !errors.Is(err, ErrRelistEnded) {
				t.Errorf("Finish after the replacement %s = %v", name, err)
			}
			r.Abort() // no effect
		}
		// An old replacement cannot touch a newer one.
		current := mustBegin(t, f)
		aborted.Abort()
		must(t, current.Add(obj("b", "1")))
		must(t, current.Finish("3"))
	})
}

// A list that fails part-way must change nothing, so nothing of a replacement is queued
// before Finish; then it is all the initial list.
func TestNothingIsQueuedBeforeFinishThenAllOfItIsTheInitialList(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		f := newQueue(testOptions{key: keyFunc, mode: mode, chunkSize: 1})
		r := mustBegin(t, f)
		a, b := obj("a", "1"), obj("b", "1")
		must(t, r.Add(a))
		must(t, r.Add(b))
		wantEmpty(t, f)
		must(t, r.Finish("1"))
		var got []*testObj
		for f.Len() > 0 {
			if f.HasSynced() {
				t.Fatal("synced before the list was drained")
			}
			p := mustPop(t, f)
			if !p.init {
				t.Fatal("a listed object is not in the initial list")
			}
			switch d := p.deltas[0]; d.Type {
			case ReplacedChunk:
				got = append(got, d.Chunk.Objects...)
			case Replaced:
				got = append(got, d.Object)
			}
		}
		if !slices.Equal(got, []*testObj{a, b}) {
			t.Fatalf("popped %v, want the added objects", got)
		}
		if !f.HasSynced() {
			t.Fatal("not synced after Finish and draining")
		}
	})
}

func TestReplacementAddRunsTheTransformer(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		f := newQueue(testOptions{key: keyFunc, mode: mode, transform: func(o *testObj) (*testObj, error) {
			return &testObj{ns: o.ns, name: o.name, rv: o.rv, transformed: 1}, nil
		}})
		r := mustBegin(t, f)
		must(t, r.Add(obj("a", "1")))
		must(t, r.Finish("1"))
		d := mustPop(t, f).deltas[0]
		got := d.Object
		if mode == modeAtomic {
			got = d.Chunk.Objects[0]
		}
		if got.transformed != 1 {
			t.Fatalf("queued object not transformed: %s", deltasString(Deltas[*testObj]{d}))
		}
	})
}

func TestReplacementAddWithAFailingKeyOrTransformQueuesNothingAndStaysOpen(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		boom := errors.New("cannot slim")
		f := newQueue(testOptions{key: keyFunc, mode: mode, transform: func(o *testObj) (*testObj, error) {
			if o.name == "bad" {
				return nil, boom
			}
			return o, nil
		}})
		r := mustBegin(t, f)
		if err := r.Add(nil); !errors.Is(err, indexer.ErrNilObject) {
			t.Fatalf("Add(nil) = %v", err)
		}
		if err := r.Add(obj("bad", "1")); !errors.Is(err, boom) {
			t.Fatalf("Add(bad) = %v", err)
		}
		wantEmpty(t, f)
		must(t, r.Add(obj("ok", "1")))
		must(t, r.Finish("1"))
	})
}

func TestAbortQueuesNothing(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		var known KnownObjects[*testObj]
		if mode != modeAtomic {
			known = newKnown(obj("k", "0"))
		}
		f := newFIFO(mode, known)
		r := mustBegin(t, f)
		must(t, r.Add(obj("a", "1")))
		must(t, r.Keep("ns/k"))
		r.Abort()
		wantEmpty(t, f)
		if f.HasSynced() {
			t.Fatal("an aborted first replacement synced the FIFO")
		}
		// The FIFO takes writes again, and the next list starts from nothing.
		must(t, mustBegin(t, f).Finish("2"))
	})
}

func TestTheFirstFinishedReplacementCountsTheQueuePositionsLeftForHasSynced(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		f := newQueue(testOptions{key: keyFunc, mode: mode, chunkSize: 1})
		aborted := mustBegin(t, f)
		must(t, aborted.Add(obj("x", "1")))
		aborted.Abort()
		r := mustBegin(t, f)
		for _, n := range []string{"a", "b", "c"} {
			must(t, r.Add(obj(n, "1")))
		}
		must(t, r.Finish("1"))
		left := f.Len() // a, b, c (and the ReplacedEnd in mode Atomic); nothing of x
		if want := map[bool]int{true: 4, false: 3}[mode == modeAtomic]; left != want {
			t.Fatalf("%d positions after Finish, want %d", left, want)
		}
		for i := range left {
			if f.HasSynced() {
				t.Fatalf("synced with %d of %d positions left", left-i, left)
			}
			if p := mustPop(t, f); !p.init {
				t.Fatalf("position %d after Finish not in the initial list", i)
			}
		}
		if !f.HasSynced() {
			t.Fatal("not synced")
		}
		// A second replacement does not reopen the initial list.
		r2 := mustBegin(t, f)
		must(t, r2.Add(obj("a", "2")))
		must(t, r2.Finish("2"))
		if p := mustPop(t, f); p.init || !f.HasSynced() {
			t.Fatal("the second replacement changed HasSynced")
		}
	})
}

func TestAnEmptyFirstReplacementSyncsLikeAnEmptyFirstReplace(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		f := newFIFO(mode, nil)
		must(t, mustBegin(t, f).Finish("1"))
		g := newFIFO(mode, nil)
		must(t, g.Replace(nil, "1"))
		if f.HasSynced() != g.HasSynced() || f.Len() != g.Len() {
			t.Fatalf("incremental: synced %v, Len %d; Replace: synced %v, Len %d", f.HasSynced(), f.Len(), g.HasSynced(), g.Len())
		}
	})
}

func TestCoalescingFinishTombstonesQueuedKeysNotAddedWithTheNewestQueuedObject(t *testing.T) {
	f := newFIFO(modeCoalescing, newKnown())
	a1, a2, b := obj("a", "1"), obj("a", "2"), obj("b", "1")
	must(t, f.Add(a1))
	must(t, f.Update(a2))
	r := mustBegin(t, f)
	must(t, r.Add(b))
	must(t, r.Finish("10"))
	wantPop(t, f, d(Added, a1), d(Updated, a2), tomb(a2))
	wantPop(t, f, d(Replaced, b))
	wantEmpty(t, f)
}

func TestCoalescingFinishTombstonesKnownKeysNeitherQueuedNorAdded(t *testing.T) {
	a0, b0, c0 := obj("a", "0"), obj("b", "0"), obj("c", "0")
	known := newKnown(a0, b0, c0)
	f := newFIFO(modeCoalescing, known)
	c1 := obj("c", "1")
	must(t, f.Update(c1))
	r := mustBegin(t, f)
	b1 := obj("b", "1")
	must(t, r.Add(b1))
	must(t, r.Finish("10"))
	wantPop(t, f, d(Updated, c1), tomb(c1)) // queued, not added: its newest queued object
	wantPop(t, f, d(Replaced, b1))
	wantPop(t, f, tomb(a0)) // known, neither queued nor added
	wantEmpty(t, f)
}

// Keep stands for an object the consumer holds unchanged: no delta, and no tombstone.
func TestAKeptKeyGetsNeitherADeltaNorATombstone(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		a0, b0, c0 := obj("a", "0"), obj("b", "0"), obj("c", "0")
		var known KnownObjects[*testObj]
		if mode != modeAtomic {
			known = newKnown(a0, b0, c0)
		}
		f := newFIFO(mode, known)
		r := mustBegin(t, f)
		must(t, r.Keep("ns/a"))
		b1 := obj("b", "1")
		must(t, r.Add(b1))
		must(t, r.Finish("5"))
		if mode == modeAtomic {
			if c := mustPop(t, f).deltas[0]; c.Type != ReplacedChunk || !slices.Equal(c.Chunk.Objects, []*testObj{b1}) {
				t.Fatalf("popped %s", deltasString(Deltas[*testObj]{c}))
			}
			end := mustPop(t, f).deltas[0]
			if end.Type != ReplacedEnd || !slices.Equal(slices.Sorted(maps.Keys(end.End.Keys)), []string{"ns/a", "ns/b"}) {
				t.Fatalf("end %+v", end.End)
			}
		} else {
			wantPop(t, f, d(Replaced, b1))
			wantPop(t, f, tomb(c0)) // known, neither added nor kept
		}
		wantEmpty(t, f)
	})
}

func TestInOrderFinishQueuesTombstonesAfterTheListedObjects(t *testing.T) {
	k0 := obj("k", "0")
	f := newFIFO(modeInOrder, newKnown(k0, obj("b", "0")))
	a1, b1 := obj("a", "1"), obj("b", "1")
	must(t, f.Add(a1))
	r := mustBegin(t, f)
	must(t, r.Add(b1))
	must(t, r.Finish("5"))
	wantPop(t, f, d(Added, a1))
	wantPop(t, f, d(Replaced, b1))
	wantPop(t, f, tomb(a1)) // queued, not added
	wantPop(t, f, tomb(k0)) // known, neither queued nor added
	wantEmpty(t, f)
}

func TestInOrderFinishSkipsQueuedKeysWhoseNewestDeltaIsADelete(t *testing.T) {
	a0 := obj("a", "0")
	f := newFIFO(modeInOrder, newKnown(a0))
	a1 := obj("a", "1")
	must(t, f.Delete(a1))
	must(t, mustBegin(t, f).Finish("5"))
	wantPop(t, f, d(Deleted, a1))
	wantEmpty(t, f)
}

func TestAtomicReplacementQueuesChunksOfAtMostChunkSizeWithTheirKeys(t *testing.T) {
	f := newQueue(testOptions{key: keyFunc, mode: modeAtomic, chunkSize: 2})
	r := mustBegin(t, f)
	objs := []*testObj{obj("a", "1"), obj("b", "1"), obj("c", "1")}
	for _, o := range objs {
		must(t, r.Add(o))
	}
	wantEmpty(t, f)
	must(t, r.Finish("9"))
	if f.Len() != 3 {
		t.Fatalf("Len = %d, want 2 chunks and the end", f.Len())
	}
	if keys := f.ListKeys(); len(keys) != 0 {
		t.Fatalf("ListKeys = %v: chunks are queued under no key", keys)
	}
	c1 := mustPop(t, f).deltas[0]
	c2 := mustPop(t, f).deltas[0]
	if c1.Type != ReplacedChunk || !slices.Equal(c1.Chunk.Objects, objs[:2]) || !slices.Equal(c1.Chunk.Keys, []string{"ns/a", "ns/b"}) ||
		c2.Type != ReplacedChunk || !slices.Equal(c2.Chunk.Objects, objs[2:]) || !slices.Equal(c2.Chunk.Keys, []string{"ns/c"}) {
		t.Fatalf("chunks %+v, %+v", c1.Chunk, c2.Chunk)
	}
	if end := mustPop(t, f).deltas[0]; end.Type != ReplacedEnd {
		t.Fatalf("third position %s", deltasString(Deltas[*testObj]{end}))
	}
}

func TestAtomicFinishQueuesReplacedEndWithTheSetOfAddedKeys(t *testing.T) {
	f := newFIFO(modeAtomic, nil)
	r := mustBegin(t, f)
	must(t, r.Add(obj("a", "1")))
	must(t, r.Add(obj("b", "1")))
	must(t, r.Finish("42"))
	mustPop(t, f)
	end := mustPop(t, f).deltas[0]
	if end.Type != ReplacedEnd || end.End.ResourceVersion != "42" ||
		!slices.Equal(slices.Sorted(maps.Keys(end.End.Keys)), []string{"ns/a", "ns/b"}) {
		t.Fatalf("end delta %+v %+v", end, end.End)
	}
	wantEmpty(t, f)
}

func TestAtomicChunksAndTheEndArePoppedAlone(t *testing.T) {
	f := newQueue(testOptions{key: keyFunc, mode: modeAtomic, chunkSize: 1})
	must(t, f.Add(obj("x", "1")))
	r := mustBegin(t, f)
	must(t, r.Add(obj("a", "1")))
	must(t, r.Add(obj("b", "1")))
	must(t, r.Finish("1"))
	must(t, f.Add(obj("y", "1")))
	var types []DeltaType
	for f.Len() > 0 {
		must(t, f.PopBatch(t.Context(), 10, func(batch []Deltas[*testObj], _ bool) error {
			if len(batch) != 1 {
				t.Fatalf("batch of %d", len(batch))
			}
			types = append(types, batch[0][0].Type)
			return nil
		}))
	}
	if want := []DeltaType{Added, ReplacedChunk, ReplacedChunk, ReplacedEnd, Added}; !slices.Equal(types, want) {
		t.Fatalf("popped %v, want %v", types, want)
	}
}

// A waiting Pop is woken by Finish, not by the objects added before it, nor by an Abort.
func TestAWaitingPopIsWokenByFinishOnly(t *testing.T) {
	for _, end := range []string{"finish", "abort"} {
		t.Run(end, func(t *testing.T) {
			forEachMode(t, func(t *testing.T, mode fifoMode) {
				synctest.Test(t, func(t *testing.T) {
					f := newQueue(testOptions{key: keyFunc, mode: mode, chunkSize: 1})
					r := mustBegin(t, f)
					ctx, cancel := context.WithCancel(t.Context())
					defer cancel()
					got := make(chan DeltaType, 1)
					go func() {
						err := f.Pop(ctx, func(ds Deltas[*testObj], _ bool) error {
							got <- ds[0].Type
							return nil
						})
						if err != nil {
							close(got)
						}
					}()
					synctest.Wait()
					must(t, r.Add(obj("a", "1")))
					must(t, r.Add(obj("b", "1")))
					synctest.Wait()
					select {
					case typ := <-got:
						t.Fatalf("Pop woken before the end of the list, with %s", typ)
					default:
					}
					if end == "abort" {
						r.Abort()
						synctest.Wait()
						cancel()
						if typ, ok := <-got; ok {
							t.Fatalf("Pop woken by an Abort, with %s", typ)
						}
						return
					}
					must(t, r.Finish("1"))
					if typ := <-got; typ != Replaced && typ != ReplacedChunk {
						t.Fatalf("Pop got %s", typ)
					}
				})
			})
		})
	}
}

// consume applies popped deltas to store the way an informer does, recording the handler
// notifications per key.
func consume(store indexer.Indexer[*testObj], ds Deltas[*testObj], events map[string][]string) error {
	note := func(key string, d Delta[*testObj], old *testObj, existed bool) {
		switch {
		case d.Type == Deleted:
			events[key] = append(events[key], fmt.Sprintf("delete %v unknown=%v", old, d.FinalStateUnknown))
		case existed:
			events[key] = append(events[key], fmt.Sprintf("update %v->%v", old, d.Object))
		default:
			events[key] = append(events[key], fmt.Sprintf("add %v", d.Object))
		}
	}
	for _, dl := range ds {
		switch dl.Type {
		case ReplacedAll:
			if err := applyReplacedAll(store, dl.All, note); err != nil {
				return err
			}
		case ReplacedChunk:
			if err := applyReplacedChunk(store, dl.Chunk, note); err != nil {
				return err
			}
		case ReplacedEnd:
			applyReplacedEnd(store, dl.End, note)
		case Deleted:
			k, _ := keyFunc(dl.Object)
			if old, ok := store.DeleteByKey(k); ok {
				note(k, dl, old, true)
			}
		default:
			old, existed, err := store.Upsert(dl.Object)
			if err != nil {
				return err
			}
			k, _ := keyFunc(dl.Object)
			note(k, dl, old, existed)
		}
	}
	return nil
}

// popInto pops one position (which must exist) and consumes it.
func popInto(t *testing.T, f Queue[*testObj], store indexer.Indexer[*testObj], events map[string][]string) {
	t.Helper()
	must(t, f.Pop(t.Context(), func(ds Deltas[*testObj], _ bool) error { return consume(store, ds, events) }))
}

// The defining rule: once drained, an incremental replacement leaves the consumer's store,
// and the notifications each key got, as Replace of the same list at Finish time would have.
func TestAnIncrementalReplacementEndsAsReplaceAtFinishTime(t *testing.T) {
	forEachMode(t, func(t *testing.T, mode fifoMode) {
		for popsDuring := range 4 { // pops of the watch events queued before the relist
			t.Run(fmt.Sprint("popsDuringTheList=", popsDuring), func(t *testing.T) {
				run := func(incremental bool) (map[string]string, map[string][]string) {
					store := newKnown(obj("a", "0"), obj("b", "0"), obj("c", "0"), obj("d", "0"))
					var known KnownObjects[*testObj]
					if mode != modeAtomic {
						known = store
					}
					f := newQueue(testOptions{key: keyFunc, known: known, mode: mode, chunkSize: 2})
					events := map[string][]string{}
					// Watch events before the relist, some of them still queued when it starts.
					must(t, f.Update(obj("a", "1")))
					must(t, f.Delete(obj("b", "1")))
					must(t, f.Add(obj("e", "1")))
					list := []*testObj{obj("a", "2"), obj("c", "2"), obj("f", "2"), obj("g", "2"), obj("h", "2")}
					if incremental {
						r := mustBegin(t, f)
						for i, o := range list {
							must(t, r.Add(o))
							if i < popsDuring {
								popInto(t, f, store, events)
							}
						}
						must(t, r.Finish("9"))
					} else {
						// Replace at Finish time: the pops of the watch events happen first.
						for range min(popsDuring, 3) {
							popInto(t, f, store, events)
						}
						must(t, f.Replace(list, "9"))
					}
					for f.Len() > 0 {
						popInto(t, f, store, events)
					}
					content := map[string]string{}
					store.Range(func(k string, o *testObj) bool { content[k] = o.rv; return true })
					return content, events
				}
				gotStore, gotEvents := run(true)
				wantStore, wantEvents := run(false)
				if !maps.Equal(gotStore, wantStore) {
					t.Fatalf("store after the incremental replacement %v, after Replace %v", gotStore, wantStore)
				}
				if want := map[string]string{"ns/a": "2", "ns/c": "2", "ns/f": "2", "ns/g": "2", "ns/h": "2"}; !maps.Equal(gotStore, want) {
					t.Fatalf("store %v, want the list %v", gotStore, want)
				}
				if !maps.EqualFunc(gotEvents, wantEvents, slices.Equal[[]string]) {
					t.Fatalf("notifications per key:\nincremental %v\nReplace     %v", gotEvents, wantEvents)
				}
			})
		}
	})
}
