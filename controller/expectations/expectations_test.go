package expectations_test

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/controller/expectations"
)

func TestExpectationsCounts(t *testing.T) {
	e := expectations.New[string](expectations.Options{})
	if !e.SatisfiedExpectations("a") {
		t.Fatal("no expectations must be satisfied")
	}
	e.CreationObserved("a") // nothing recorded: a no-op, not a negative count
	if _, ok := e.Get("a"); ok {
		t.Fatal("an observation created expectations")
	}
	e.ExpectCreations("a", 2)
	if e.SatisfiedExpectations("a") {
		t.Fatal("2 creations pending, satisfied")
	}
	e.CreationObserved("a")
	if e.SatisfiedExpectations("a") {
		t.Fatal("1 creation pending, satisfied")
	}
	e.CreationObserved("a")
	if !e.SatisfiedExpectations("a") {
		t.Fatal("all observed, not satisfied")
	}
	e.CreationObserved("a") // one too many: stays fulfilled
	if p, _ := e.Get("a"); p.Add != -1 || !p.Fulfilled() {
		t.Fatalf("pending %+v", p)
	}

	// ExpectDeletions replaces; Raise and Lower adjust.
	e.ExpectDeletions("a", 1)
	e.RaiseExpectations("a", 1, 1)
	if p, _ := e.Get("a"); p.Add != 1 || p.Del != 2 {
		t.Fatalf("after raise %+v", p)
	}
	e.LowerExpectations("a", 1, 0) // a create that failed
	e.DeletionObserved("a")
	if e.SatisfiedExpectations("a") {
		t.Fatal("1 deletion pending, satisfied")
	}
	e.DeletionObserved("a")
	if !e.SatisfiedExpectations("a") {
		t.Fatal("not satisfied after every deletion")
	}
	if e.SatisfiedExpectations("b") != true || e.Len() != 1 {
		t.Fatal("other keys")
	}
	e.DeleteExpectations("a")
	if e.Len() != 0 {
		t.Fatal("DeleteExpectations kept the key")
	}
}

// Unfulfilled expectations expire after the TTL (5 minutes by default), counted from when
// they were set, not from the last observation.
func TestExpectationsTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := expectations.New[string](expectations.Options{})
		e.ExpectCreations("a", 2)
		time.Sleep(4 * time.Minute)
		e.CreationObserved("a")
		time.Sleep(time.Minute - time.Second)
		if e.SatisfiedExpectations("a") {
			t.Fatal("satisfied before the TTL")
		}
		time.Sleep(2 * time.Second)
		if !e.SatisfiedExpectations("a") {
			t.Fatal("not satisfied after the TTL")
		}
		// Setting them again restarts the TTL.
		e.ExpectCreations("a", 1)
		if e.SatisfiedExpectations("a") {
			t.Fatal("fresh expectations satisfied")
		}
	})
	synctest.Test(t, func(t *testing.T) {
		e := expectations.New[string](expectations.Options{TTL: time.Second})
		e.ExpectDeletions("a", 1)
		time.Sleep(time.Second + time.Nanosecond)
		if !e.SatisfiedExpectations("a") {
			t.Fatal("a 1s TTL did not expire")
		}
		never := expectations.New[string](expectations.Options{TTL: -1})
		never.ExpectCreations("a", 1)
		time.Sleep(24 * time.Hour)
		if never.SatisfiedExpectations("a") {
			t.Fatal("a negative TTL expired")
		}
	})
}

func TestUIDTracking(t *testing.T) {
	u := expectations.NewUIDTracking[string](expectations.Options{})
	u.ExpectDeletions("rs", []string{"u1", "u2", "u2"}) // a repeated uid counts once
	if p, _ := u.Get("rs"); p.Del != 2 {
		t.Fatalf("pending %+v", p)
	}
	u.DeletionObserved("rs", "u1")
	u.DeletionObserved("rs", "u1")    // the delete after a graceful deletion, a tombstone
	u.DeletionObserved("rs", "other") // a child nobody deleted
	u.DeletionObserved("x", "u2")     // another owner
	if u.SatisfiedExpectations("rs") {
		t.Fatal("u2 pending, satisfied")
	}
	if got := u.PendingDeletions("rs"); !slices.Equal(got, []string{"u2"}) {
		t.Fatalf("pending %v", got)
	}
	u.DeletionObserved("rs", "u2")
	if !u.SatisfiedExpectations("rs") {
		t.Fatal("not satisfied")
	}

	u.ExpectCreations("rs", 2)
	u.CreationObserved("rs")
	u.LowerExpectations("rs", 1) // the second create failed
	if !u.SatisfiedExpectations("rs") {
		t.Fatal("creations not satisfied")
	}
	u.ExpectDeletions("rs", []string{"u3"})
	u.DeleteExpectations("rs")
	if _, ok := u.Get("rs"); ok || len(u.PendingDeletions("rs")) != 0 {
		t.Fatal("DeleteExpectations kept state")
	}
	u.DeletionObserved("rs", "u3") // after DeleteExpectations: a no-op
	if !u.SatisfiedExpectations("rs") {
		t.Fatal("not satisfied without expectations")
	}
}

func TestUIDTrackingTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		u := expectations.NewUIDTracking[string](expectations.Options{})
		u.ExpectDeletions("rs", []string{"u1"})
		time.Sleep(expectations.DefaultTTL)
		if u.SatisfiedExpectations("rs") {
			t.Fatal("satisfied at exactly the TTL")
		}
		time.Sleep(time.Nanosecond)
		if !u.SatisfiedExpectations("rs") {
			t.Fatal("not satisfied after the TTL")
		}
	})
}
