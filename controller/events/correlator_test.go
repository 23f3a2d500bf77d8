package events

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

func ev(obj, reason, message string) *Event {
	e := &Event{InvolvedObject: ObjectReference{Kind: "Widget", Namespace: "n", Name: obj}, Type: Normal, Reason: reason, Message: message, Count: 1}
	e.Name, e.Namespace = obj+".1", "n"
	return e
}

func TestCorrelatorAggregationWindow(t *testing.T) {
	c := newCorrelator(DefaultCacheSize, DefaultAggregateMaxEvents, DefaultAggregateInterval, 1000, 1000)
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i < DefaultAggregateMaxEvents; i++ {
		r := c.correlate(ev("a", "R", fmt.Sprint(i)), t0.Add(time.Duration(i)*time.Second))
		if r.patch != nil || r.event.Message != fmt.Sprint(i) {
			t.Fatalf("event %d: %+v", i, r)
		}
	}
	// The 10th distinct message, 11 minutes after the 9th: the window restarted, no
	// aggregation.
	late := t0.Add(9*time.Second + DefaultAggregateInterval + time.Minute)
	if r := c.correlate(ev("a", "R", "10"), late); r.event.Message != "10" {
		t.Fatalf("after the window: %+v", r.event)
	}
	// Within the window the 10th distinct message is aggregated.
	for i := 11; i < 11+DefaultAggregateMaxEvents-2; i++ {
		c.correlate(ev("a", "R", fmt.Sprint(i)), late)
	}
	r := c.correlate(ev("a", "R", "last"), late)
	if r.event.Message != aggregatePrefix+"last" || r.patch != nil || r.event.Count != 1 {
		t.Fatalf("aggregate: %+v", r)
	}
}

func TestCorrelatorCountsAndPatches(t *testing.T) {
	c := newCorrelator(DefaultCacheSize, DefaultAggregateMaxEvents, DefaultAggregateInterval, 1000, 1000)
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	first := c.correlate(ev("a", "R", "m"), t0)
	if first.patch != nil {
		t.Fatal("first occurrence patched")
	}
	stored := *first.event
	stored.ResourceVersion = "7"
	c.written(first.key, &stored)
	second := ev("a", "R", "m")
	second.LastTimestamp.Time = t0.Add(time.Minute)
	r := c.correlate(second, t0.Add(time.Minute))
	if r.event.Name != stored.Name || r.event.Count != 2 || r.event.ResourceVersion != "7" {
		t.Fatalf("second: %+v", r.event)
	}
	var p map[string]any
	if err := json.Unmarshal(r.patch, &p); err != nil || p["count"] != 2.0 || p["message"] != "m" || p["lastTimestamp"] != "2024-01-01T00:01:00Z" || len(p) != 3 {
		t.Fatalf("patch = %s (%v)", r.patch, err)
	}
}

func TestCorrelatorSpamBucketRefills(t *testing.T) {
	c := newCorrelator(DefaultCacheSize, DefaultAggregateMaxEvents, DefaultAggregateInterval, DefaultSpamBurst, DefaultSpamQPS)
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range DefaultSpamBurst {
		if c.correlate(ev("a", fmt.Sprint("R", i), "m"), t0).skip {
			t.Fatalf("event %d of the burst skipped", i)
		}
	}
	if !c.correlate(ev("a", "over", "m"), t0).skip {
		t.Fatal("event past the burst not skipped")
	}
	if c.correlate(ev("b", "other object", "m"), t0).skip {
		t.Fatal("another object shares the bucket")
	}
	// One token every 5 minutes.
	if c.correlate(ev("a", "later", "m"), t0.Add(4*time.Minute)).skip == false {
		t.Fatal("token before 5 minutes")
	}
	if c.correlate(ev("a", "later2", "m"), t0.Add(5*time.Minute+time.Second)).skip {
		t.Fatal("no token after 5 minutes")
	}
}

func TestLRUEvicts(t *testing.T) {
	l := newLRU[int](2)
	l.add("a", 1)
	l.add("b", 2)
	l.get("a") // a is now more recent than b
	l.add("c", 3)
	if _, ok := l.get("b"); ok {
		t.Fatal("b should have been evicted")
	}
	if v, ok := l.get("a"); !ok || v != 1 || l.len() != 2 {
		t.Fatal("a lost")
	}
	l.add("a", 9)
	if v, _ := l.get("a"); v != 9 || l.len() != 2 {
		t.Fatal("update")
	}
}
