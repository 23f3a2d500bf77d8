package workqueue

import (
	"fmt"
	"slices"
	"testing"
)

// TestObserveReportsDirtyAndProcessing: Config.Observe hears every Add, Get and Done with
// the item's state before and after: an Add of a waiting item changes nothing, an Add
// during processing marks it dirty, and Done puts a dirty item back.
func TestObserveReportsDirtyAndProcessing(t *testing.T) {
	var got []string
	state := func(s State) string {
		switch {
		case s.Dirty && s.Processing:
			return "dirty+processing"
		case s.Dirty:
			return "dirty"
		case s.Processing:
			return "processing"
		}
		return "-"
	}
	q := New[string](Config{Observe: func(o Observation) {
		got = append(got, fmt.Sprintf("%s %v %s→%s", o.Op, o.Item, state(o.Before), state(o.After)))
	}})
	q.Add("a")
	q.Add("a")
	item, _ := q.Get()
	q.Add(item)
	q.Add(item)
	q.Done(item)
	item, _ = q.Get()
	q.Done(item)
	q.Done(item) // not processing: nothing to report
	want := []string{
		"add a -→dirty", "add a dirty→dirty", "get a dirty→processing",
		"add a processing→dirty+processing", "add a dirty+processing→dirty+processing",
		"done a dirty+processing→dirty", "get a dirty→processing", "done a processing→-",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
