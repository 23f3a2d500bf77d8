package workqueue

import (
	"math"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

// sleep advances the bubble's clock by d and lets every timer due by then finish its work.
func sleep(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

func TestAddAfterAddsOnceDelayHasPassed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewDelaying[string](Config{})
		defer q.ShutDown()
		q.AddAfter("a", time.Second)
		sleep(time.Second - time.Nanosecond)
		wantLen(t, q, 0)
		sleep(time.Nanosecond)
		wantLen(t, q, 1)
		if got := getNow(t, q); got != "a" {
			t.Fatalf("Get = %q", got)
		}
	})
}

func TestAddAfterWakesBlockedGet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewDelaying[string](Config{})
		defer q.ShutDown()
		start := time.Now()
		got := getAsync[string](q)
		q.AddAfter("a", time.Minute)
		r := <-got
		if r.item != "a" || time.Since(start) != time.Minute {
			t.Fatalf("Get = %+v after %v, want a after 1m", r, time.Since(start))
		}
	})
}

func TestAddAfterNonPositiveDelayIsAdd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewDelaying[string](Config{}).(*queue[string])
		defer q.ShutDown()
		q.AddAfter("zero", 0)
		q.AddAfter("negative", -time.Hour)
		wantLen(t, q, 2)
		if q.timer != nil || len(q.heap) != 0 {
			t.Fatalf("non-positive delay used the heap (%d) or a timer", len(q.heap))
		}
		if got := getNow(t, q); got != "zero" {
			t.Fatalf("Get = %q, want zero", got)
		}
	})
}

func TestAddAfterDuplicateKeepsEarliestTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewDelaying[string](Config{}).(*queue[string])
		defer q.ShutDown()
		q.AddAfter("a", 10*time.Second)
		q.AddAfter("a", 5*time.Second) // earlier: wins
		q.AddAfter("a", 7*time.Second) // later: ignored
		if len(q.heap) != 1 {
			t.Fatalf("heap has %d entries for one item", len(q.heap))
		}
		sleep(5*time.Second - 1)
		wantLen(t, q, 0)
		sleep(1)
		wantLen(t, q, 1)
		item := getNow(t, q)
		q.Done(item)
		sleep(10 * time.Second) // the superseded times must not add it again
		wantLen(t, q, 0)
		if q.live != 0 {
			t.Fatalf("%d entries still live", q.live)
		}
	})
}

func TestAddAfterHandsOutByReadyTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewDelaying[string](Config{})
		defer q.ShutDown()
		q.AddAfter("c", 3*time.Second)
		q.AddAfter("a", 1*time.Second)
		q.AddAfter("d", 4*time.Second)
		q.AddAfter("b", 2*time.Second)
		sleep(10 * time.Second)
		for _, want := range []string{"a", "b", "c", "d"} {
			if got := getNow(t, q); got != want {
				t.Fatalf("Get = %q, want %q", got, want)
			}
		}
	})
}

func TestAddAfterEqualTimesInCallOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewDelaying[int](Config{})
		defer q.ShutDown()
		for i := range 50 {
			q.AddAfter(i, time.Second)
		}
		sleep(time.Second)
		for want := range 50 {
			if got := getNow(t, q); got != want {
				t.Fatalf("Get = %d, want %d", got, want)
			}
		}
	})
}

func TestAddAfterOfWaitingItemDoesNotDuplicate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewDelaying[string](Config{})
		defer q.ShutDown()
		q.Add("a")
		q.AddAfter("a", time.Second)
		sleep(time.Second)
		wantLen(t, q, 1)
		getNow(t, q)
		wantLen(t, q, 0)
	})
}

func TestAddAfterOfProcessingItemRequeuesOnDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewDelaying[string](Config{})
		defer q.ShutDown()
		q.Add("a")
		item := getNow(t, q)
		q.AddAfter("a", time.Second)
		sleep(time.Second)
		wantLen(t, q, 0) // still processing: marked dirty only
		q.Done(item)
		wantLen(t, q, 1)
	})
}

func TestShutDownDropsPendingDelays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewDelaying[string](Config{}).(*queue[string])
		q.AddAfter("a", time.Second)
		q.AddAfter("b", 2*time.Second)
		q.Add("c")
		q.ShutDown()
		sleep(time.Hour)
		wantLen(t, q, 1)
		if len(q.heap) != 0 || q.live != 1 {
			t.Fatalf("after ShutDown: heap %d, live %d; want 0, 1 (only c)", len(q.heap), q.live)
		}
		if got, _ := q.Get(); got != "c" {
			t.Fatalf("Get = %q, want c", got)
		}
		q.Done("c")
		if _, shutdown := q.Get(); !shutdown {
			t.Fatal("delayed items must not appear after ShutDown")
		}
	})
}

func TestShutDownReleasesDelayOnlyEntries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewDelaying[int](Config{}).(*queue[int])
		for i := range 100 {
			q.AddAfter(i, time.Duration(i+1)*time.Second)
		}
		q.ShutDown()
		if q.live != 0 || q.used != 0 {
			t.Fatalf("after ShutDown: live %d, index %d", q.live, q.used)
		}
	})
}

func TestAddAfterIgnoredAfterShutDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewDelaying[string](Config{}).(*queue[string])
		q.ShutDown()
		q.AddAfter("a", time.Second)
		q.AddAfter("b", 0)
		sleep(time.Minute)
		wantLen(t, q, 0)
		if q.live != 0 || q.timer != nil {
			t.Fatalf("AddAfter after ShutDown left state: live %d, timer %v", q.live, q.timer)
		}
	})
}

func TestRepeatedAddAfterKeepsOneHeapEntryAndOneTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewDelaying[string](Config{}).(*queue[string])
		defer q.ShutDown()
		q.AddAfter("a", time.Hour)
		timer := q.timer
		for i := range 10_000 {
			// Alternating later and earlier times: each earlier one moves the single entry.
			q.AddAfter("a", time.Hour-time.Duration(i%2)*time.Duration(i)*time.Millisecond)
		}
		if len(q.heap) != 1 || q.live != 1 {
			t.Fatalf("heap %d entries, %d live, want 1", len(q.heap), q.live)
		}
		if q.timer != timer {
			t.Fatal("AddAfter created a second timer")
		}
		synctest.Wait()
		if n := q.timerAt; n == noTimer {
			t.Fatal("timer not armed")
		}
	})
}

func TestAddAfterEarlierItemRearmsTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewDelaying[string](Config{})
		defer q.ShutDown()
		start := time.Now()
		q.AddAfter("late", time.Hour)
		q.AddAfter("early", time.Second)
		got := getAsync[string](q)
		r := <-got
		if r.item != "early" || time.Since(start) != time.Second {
			t.Fatalf("Get = %+v after %v, want early after 1s", r, time.Since(start))
		}
	})
}

func TestAddAfterHugeDelayDoesNotOverflow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewDelaying[string](Config{})
		defer q.ShutDown()
		sleep(time.Hour) // now > 0, so now+MaxInt64 would overflow
		q.AddAfter("never", math.MaxInt64)
		q.AddAfter("soon", time.Second)
		sleep(time.Second)
		wantLen(t, q, 1)
		if got := getNow(t, q); got != "soon" {
			t.Fatalf("Get = %q, want soon", got)
		}
	})
}

func TestDelayingQueueStartsNothingUntilAddAfter(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	q := NewDelaying[string](Config{}).(*queue[string])
	q.Add("a")
	q.AddAfter("b", 0)
	item, _ := q.Get()
	q.Done(item)
	if q.timer != nil {
		t.Fatal("timer created without a positive AddAfter")
	}
}

func TestNoGoroutineWaitsForDelays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		before := goleak.IgnoreCurrent()
		q := NewDelaying[string](Config{})
		defer q.ShutDown()
		q.AddAfter("a", time.Hour)
		synctest.Wait()
		// The pending delay is a runtime timer, not a goroutine.
		if err := goleak.Find(before); err != nil {
			t.Fatalf("goroutine waiting for a delay: %v", err)
		}
	})
}
