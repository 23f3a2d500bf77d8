package conditions

import (
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/meta"
)

func TestSetTransitionTimeMovesOnlyWithStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var list []Condition
		if !Set(&list, Condition{Type: "Ready", Status: False, Reason: "Starting", ObservedGeneration: 1}) {
			t.Fatal("adding a condition reported no change")
		}
		first := list[0].LastTransitionTime
		if first.IsZero() {
			t.Fatal("lastTransitionTime not set")
		}

		time.Sleep(time.Minute)
		// Same status, new reason and generation: changed, but the transition time stays.
		if !Set(&list, Condition{Type: "Ready", Status: False, Reason: "StillStarting", ObservedGeneration: 2}) {
			t.Fatal("new reason reported no change")
		}
		if c := Find(list, "Ready"); !c.LastTransitionTime.Equal(first.Time) || c.Reason != "StillStarting" || c.ObservedGeneration != 2 {
			t.Fatalf("after same-status update: %+v", c)
		}
		// Identical: no change.
		if Set(&list, Condition{Type: "Ready", Status: False, Reason: "StillStarting", ObservedGeneration: 2}) {
			t.Fatal("identical condition reported a change")
		}

		time.Sleep(time.Minute)
		// Status flips: the transition time moves to now.
		if !Set(&list, Condition{Type: "Ready", Status: True, Reason: "Running", Message: "ok", ObservedGeneration: 2}) {
			t.Fatal("status flip reported no change")
		}
		c := Find(list, "Ready")
		if want := first.Add(2 * time.Minute); !c.LastTransitionTime.Equal(want) {
			t.Fatalf("lastTransitionTime = %v, want %v", c.LastTransitionTime, want)
		}
		// A caller-provided transition time is kept.
		given := meta.NewTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
		Set(&list, Condition{Type: "Ready", Status: False, LastTransitionTime: given})
		if !Find(list, "Ready").LastTransitionTime.Equal(given.Time) {
			t.Fatal("given lastTransitionTime not kept")
		}
		if len(list) != 1 {
			t.Fatalf("one type, %d conditions", len(list))
		}
	})
}

func TestFindRemoveIs(t *testing.T) {
	list := []Condition{{Type: "A", Status: True}, {Type: "B", Status: False}, {Type: "C", Status: Unknown}}
	if !IsTrue(list, "A") || IsFalse(list, "A") || !IsFalse(list, "B") || IsTrue(list, "C") || IsFalse(list, "C") || IsTrue(list, "missing") {
		t.Fatal("IsTrue/IsFalse")
	}
	if !IsPresentAndEqual(list, "C", Unknown) || IsPresentAndEqual(list, "missing", Unknown) {
		t.Fatal("IsPresentAndEqual")
	}
	Find(list, "B").Message = "through the pointer"
	if list[1].Message != "through the pointer" {
		t.Fatal("Find does not point into the slice")
	}
	if !Remove(&list, "B") || Remove(&list, "B") || len(list) != 2 || Find(list, "B") != nil || list[1].Type != "C" {
		t.Fatalf("Remove: %+v", list)
	}
	if Set(nil, Condition{Type: "X"}) || Remove(nil, "X") || Find(nil, "X") != nil {
		t.Fatal("nil lists")
	}
}

func TestJSONMatchesMetav1Condition(t *testing.T) {
	c := Condition{Type: "Ready", Status: True, ObservedGeneration: 3, Reason: "R", Message: "M",
		LastTransitionTime: meta.NewTime(time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC))}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"Ready","status":"True","observedGeneration":3,"lastTransitionTime":"2024-05-06T07:08:09Z","reason":"R","message":"M"}`
	if string(b) != want {
		t.Fatalf("JSON\n got %s\nwant %s", b, want)
	}
	var back Condition
	if err := json.Unmarshal(b, &back); err != nil || !back.LastTransitionTime.Equal(c.LastTransitionTime.Time) || back.Type != "Ready" {
		t.Fatalf("round trip: %+v %v", back, err)
	}
}
