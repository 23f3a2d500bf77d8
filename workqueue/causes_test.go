package workqueue

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

func newCausesQueue(t *testing.T, opts CauseOptions[string]) CausesInterface[string, string] {
	t.Helper()
	q, err := NewRateLimitingWithCauses[string](fuzzStringDelay{}, Config{Priorities: true}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.ShutDown)
	return q
}

type fuzzStringDelay struct{}

func (fuzzStringDelay) When(string) time.Duration { return time.Second }
func (fuzzStringDelay) Forget(string)             {}
func (fuzzStringDelay) NumRequeues(string) int    { return 0 }

func getCauses(t *testing.T, q CausesInterface[string, string]) (string, Causes[string]) {
	t.Helper()
	item, causes, shutdown, err := q.GetWithCauses(context.Background(), nil)
	if shutdown || err != nil {
		t.Fatalf("GetWithCauses: shutdown %v, %v", shutdown, err)
	}
	return item, causes
}

// Three adds of a waiting item coalesce into one hand-out that carries the three causes, in
// order; a priority raise on the way keeps them.
func TestCausesMergeWhenAddsCoalesce(t *testing.T) {
	q := newCausesQueue(t, CauseOptions[string]{})
	q.AddWithCause("a", 0, "event 1")
	q.AddWithCause("a", 5, "event 2")
	q.AddWithCause("a", 0, "event 3")
	if n := q.Len(); n != 1 {
		t.Fatalf("Len %d, want 1", n)
	}
	item, causes := getCauses(t, q)
	if item != "a" || !slices.Equal(causes.List, []string{"event 1", "event 2", "event 3"}) || causes.Dropped != 0 {
		t.Fatalf("got %q with %v (dropped %d)", item, causes.List, causes.Dropped)
	}
	q.Done("a")
	if n := q.Len(); n != 0 {
		t.Fatalf("Len %d after Done", n)
	}
}

// A cause recorded while its item is processed goes with the next hand-out, not the current.
func TestACauseRecordedDuringProcessingGoesWithTheNextHandOut(t *testing.T) {
	q := newCausesQueue(t, CauseOptions[string]{})
	q.AddWithCause("a", 0, "first")
	_, causes := getCauses(t, q)
	q.AddWithCause("a", 0, "while processing")
	if !slices.Equal(causes.List, []string{"first"}) {
		t.Fatalf("first hand-out: %v", causes.List)
	}
	q.Done("a")
	_, causes = getCauses(t, q)
	if !slices.Equal(causes.List, []string{"while processing"}) {
		t.Fatalf("second hand-out: %v", causes.List)
	}
}

// Past Max, causes are counted, not kept; Merge folds repeats without using the bound.
func TestCausesPastMaxAreCountedAndRepeatsMerge(t *testing.T) {
	q := newCausesQueue(t, CauseOptions[string]{Max: 2})
	for _, c := range []string{"x", "y", "z", "w"} {
		q.AddWithCause("a", 0, c)
	}
	_, causes := getCauses(t, q)
	if !slices.Equal(causes.List, []string{"x", "y"}) || causes.Dropped != 2 {
		t.Fatalf("got %v dropped %d, want [x y] dropped 2", causes.List, causes.Dropped)
	}
	q.Done("a")

	counts := newCausesQueue(t, CauseOptions[string]{Max: 2, Merge: func(kept *string, c string) bool {
		if (*kept)[:1] != c[:1] {
			return false
		}
		*kept += "+" // one more of the same kind
		return true
	}})
	for _, c := range []string{"u1", "u2", "d1", "u3", "x1"} {
		counts.AddWithCause("a", 0, c)
	}
	_, causes = getCauses(t, counts)
	if !slices.Equal(causes.List, []string{"u1++", "d1"}) || causes.Dropped != 1 {
		t.Fatalf("merged: %v dropped %d, want [u1++ d1] dropped 1", causes.List, causes.Dropped)
	}
}

// A delayed cause joins the item when the delay ends, not before: an item handed out while
// the delay is pending does not carry it. ShutDown drops delayed causes.
func TestDelayedCausesJoinWhenTheDelayEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newCausesQueue(t, CauseOptions[string]{})
		q.AddAfterWithCause("a", time.Second, "retry")
		q.AddWithCause("a", 0, "event")
		_, causes := getCauses(t, q)
		if !slices.Equal(causes.List, []string{"event"}) {
			t.Fatalf("before the delay: %v", causes.List)
		}
		q.Done("a")
		time.Sleep(time.Second)
		synctest.Wait()
		_, causes = getCauses(t, q)
		if !slices.Equal(causes.List, []string{"retry"}) {
			t.Fatalf("after the delay: %v", causes.List)
		}
		q.Done("a")

		q.AddRateLimitedWithCause("b", "later")
		q.ShutDown()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if _, _, shutdown, _ := q.GetWithCauses(context.Background(), nil); !shutdown {
			t.Fatal("a dropped delay was handed out after ShutDown")
		}
	})
}

// Get and GetWithContext hand the item out without its causes, and lose them.
func TestAPlainGetLosesTheCauses(t *testing.T) {
	q := newCausesQueue(t, CauseOptions[string]{})
	q.AddWithCause("a", 0, "lost")
	if item, _ := q.Get(); item != "a" {
		t.Fatalf("Get %q", item)
	}
	q.Done("a")
	q.Add("a")
	_, causes := getCauses(t, q)
	if len(causes.List) != 0 || causes.Dropped != 0 {
		t.Fatalf("causes %v survived a plain Get", causes.List)
	}
}

func TestNewRateLimitingWithCausesRejectsAnInvalidMax(t *testing.T) {
	for _, max := range []int{-1, 257} {
		if _, err := NewRateLimitingWithCauses[string, string](nil, Config{}, CauseOptions[string]{Max: max}); err == nil {
			t.Errorf("Max %d accepted", max)
		}
	}
}

// Recording a cause allocates nothing once the item's entry exists: the first cause is
// inline, a merged one folds in place, and a warm entry reuses its slice.
func TestRecordingACauseAllocatesNothingWhenWarm(t *testing.T) {
	q := newCausesQueue(t, CauseOptions[string]{})
	buf := make([]string, 0, DefaultMaxCauses)
	cycle := func() {
		q.AddWithCause("a", 0, "one")
		q.AddWithCause("a", 0, "two")
		q.AddWithCause("a", 0, "three")
		_, causes, _, _ := q.GetWithCauses(context.Background(), buf)
		buf = causes.List
		q.Done("a")
	}
	cycle()
	q.Add("b") // keeps the table from being released between cycles
	if n := testing.AllocsPerRun(100, cycle); n != 0 {
		t.Fatalf("%v allocations per add/get/done cycle with three causes", n)
	}
}
