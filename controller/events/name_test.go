package events

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apitest"
)

// Inside a synctest bubble time stands still: two Events recorded about one object at one
// instant used to get one name ("<object>.<UnixNano in hex>"), and the second, answered
// AlreadyExists, was dropped. Both are written, under two names.
func TestEventsAtOneInstantGetTwoNames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnvOn(t, apitest.Options{InMemory: true}, Options{})
		e.run(t)
		e.rec.Event(w("a"), Normal, "First", "one")
		e.rec.Event(w("a"), Warning, "Second", "two")
		got := e.waitEvents(t, "shop", "both events", func(ev []Event) bool { return len(ev) == 2 })
		if got[0].Name == got[1].Name || got[0].Reason != "First" || got[1].Reason != "Second" {
			t.Fatalf("events %+v", got)
		}
		synctest.Wait() // the sender has taken the answers in
		if s := e.b.Stats(); s.Created != 2 || s.Failed != 0 || s.Renamed != 0 {
			t.Fatalf("stats %+v", s)
		}
	})
}

// Names are unique in a process only: another writer (a replica that named an Event at the
// same nanosecond, or someone who picked the name) may hold the name already. The Event is
// written under a new name; the other one is left alone.
func TestTakenEventNameIsNotDropped(t *testing.T) {
	e := newEnv(t, Options{})
	// The next name this process makes is "a.<next in hex>" (the clock is behind next).
	next := time.Now().Add(time.Hour).UnixNano()
	lastNameNanos.Store(next - 1)
	taken := fmt.Sprintf("a.%x", next)
	if _, err := e.srv.Create("events", map[string]any{
		"metadata":       map[string]any{"namespace": "shop", "name": taken},
		"involvedObject": map[string]any{"kind": "Widget", "namespace": "shop", "name": "a"},
		"reason":         "Foreign", "message": "another writer's", "type": Normal,
	}); err != nil {
		t.Fatal(err)
	}
	e.run(t)
	e.rec.Event(w("a"), Normal, "Mine", "recorded here")
	got := e.waitEvents(t, "shop", "both events", func(ev []Event) bool { return len(ev) == 2 })
	if got[0].Reason != "Foreign" || got[0].Name != taken || got[1].Reason != "Mine" || got[1].Name == taken {
		t.Fatalf("events %+v", got)
	}
	e.waitStats(t, "the renamed create counted", func(s Stats) bool { return s.Created == 1 })
	if s := e.b.Stats(); s.Renamed != 1 || s.Failed != 0 {
		t.Fatalf("stats %+v", s)
	}
	// The log of written events knows the new name: the same event again patches its count.
	e.rec.Event(w("a"), Normal, "Mine", "recorded here")
	e.waitEvents(t, "shop", "count 2 on the renamed event", func(ev []Event) bool {
		return len(ev) == 2 && ev[1].Name == got[1].Name && ev[1].Count == 2
	})
}

// A create whose answer is lost (the connection breaks after the server stored the Event)
// is tried again and answered AlreadyExists: that is the Event itself, not a collision, so
// it is neither dropped nor written a second time under another name.
func TestLostCreateAnswerIsNotADuplicate(t *testing.T) {
	e := newEnv(t, Options{})
	e.run(t)
	if err := e.srv.Faults().TruncateResponses(apitest.VerbCreate, "events", 1, 0); err != nil {
		t.Fatal(err)
	}
	e.rec.Event(w("a"), Normal, "R", "once")
	e.sentinel(t)
	if got := e.events(t, "shop"); len(got) != 1 {
		t.Fatalf("events %+v, want one", got)
	}
	if s := e.b.Stats(); s.Retries != 1 || s.Failed != 0 || s.Renamed != 0 {
		t.Fatalf("stats %+v", s)
	}
	e.rec.Event(w("a"), Normal, "R", "once")
	e.waitEvents(t, "shop", "count 2", func(ev []Event) bool { return len(ev) == 1 && ev[0].Count == 2 })
}
