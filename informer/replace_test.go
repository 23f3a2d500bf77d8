package informer

import (
	"fmt"
	"slices"
	"testing"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/reflector"
)

// A relist reaches the cache object by object (the reflector sees the FIFO as an
// IncrementalReplacer) in every DeltaFIFO mode and over every list protocol, and handlers
// hear exactly what a whole-list Replace would have told them: OnUpdate(old, new) for a
// changed object, OnAdd(obj, false) for a new one, OnDelete(last known state,
// finalStateUnknown=true) for one the watch missed the deletion of, nothing for unchanged
// ones. With disableIncrementalRelist the notifications are the same.
func TestRelistIsIncrementalAndNotifiesLikeReplace(t *testing.T) {
	protocols := []struct {
		name      string
		watchList reflector.WatchListMode
		pageSize  int64
	}{
		{"list-unpaged", reflector.WatchListOff, 0},
		{"list-paged", reflector.WatchListOff, 2},
		{"watchlist", reflector.WatchListOn, 0},
	}
	for _, mode := range modes {
		for _, p := range protocols {
			for _, disabled := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/disabled=%v", mode, p.name, disabled), func(t *testing.T) {
					s := newServer(t)
					c := newClient(t, s)
					a := mkCM(t, s, "default", "a", nil)
					b := mkCM(t, s, "default", "b", nil)
					kept := mkCM(t, s, "default", "kept", nil)
					opts := fastOptions(t)
					opts.mode, opts.WatchList, opts.PageSize = mode, p.watchList, p.pageSize
					opts.disableIncrementalRelist = disabled
					inf := New(configMaps(c), opts)
					h := newCalls()
					reg, _ := inf.AddEventHandler(h)
					start(t, inf)
					wait(t, reg.Synced(), "sync")
					initial := []string{h.next(t), h.next(t), h.next(t)}
					slices.Sort(initial)
					if want := []string{"add default/a " + a.ResourceVersion() + " true", "add default/b " + b.ResourceVersion() + " true",
						"add default/kept " + kept.ResourceVersion() + " true"}; !slices.Equal(initial, want) {
						t.Fatalf("initial calls %q, want %q", initial, want)
					}
					if _, err := s.WaitForWatches(ctxT(t), "configmaps", 1); err != nil {
						t.Fatal(err)
					}
					// The watch misses everything that follows, and its resourceVersion is
					// compacted away: the informer must relist.
					release, n, err := s.Faults().StallWatches("configmaps", 0)
					if err != nil || n != 1 {
						t.Fatalf("StallWatches: %d, %v", n, err)
					}
					defer release()
					// The stall is in effect once recorded (an abort queued behind a stall
					// that has not started yet would wait for it).
					if err := s.WaitFor(ctxT(t), func() bool { return len(s.Faults().RecordsOf(apitest.FaultStall)) == 1 }); err != nil {
						t.Fatal(err)
					}
					a2 := setData(t, s, "default", "a", "k", "v")
					if err := s.Delete("configmaps", "default", "b"); err != nil {
						t.Fatal(err)
					}
					d := mkCM(t, s, "default", "d", nil)
					if err := s.Compact("configmaps"); err != nil {
						t.Fatal(err)
					}
					if _, err := s.Faults().AbortWatches("configmaps"); err != nil {
						t.Fatal(err)
					}
					got := []string{h.next(t), h.next(t), h.next(t)}
					slices.Sort(got)
					want := []string{
						"add default/d " + d.ResourceVersion() + " false",
						"delete default/b " + b.ResourceVersion() + " true",
						"update default/a " + a.ResourceVersion() + "→" + a2.ResourceVersion(),
					}
					if !slices.Equal(got, want) {
						t.Fatalf("relist calls %q, want %q", got, want)
					}
					wantCache := map[string]string{"default/a": a2.ResourceVersion(), "default/kept": kept.ResourceVersion(), "default/d": d.ResourceVersion()}
					if !cacheEquals(inf, wantCache) {
						t.Fatalf("cache %v, want %v", cacheSnapshot(inf), wantCache)
					}
					lists := inf.incrementalLists.Load()
					if disabled && lists != 0 || !disabled && lists != 2 {
						t.Fatalf("%d lists handed over incrementally (disabled=%v)", lists, disabled)
					}
					h.none(t) // the unchanged object was not reported
				})
			}
		}
	}
}
