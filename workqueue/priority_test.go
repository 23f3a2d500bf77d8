package workqueue

import (
	"math"
	"slices"
	"testing"
	"testing/synctest"
)

func drain[T comparable](t *testing.T, q Interface[T]) []T {
	t.Helper()
	var got []T
	for q.Len() > 0 {
		item := getNow(t, q)
		got = append(got, item)
		q.Done(item)
	}
	return got
}

func TestPriorityHigherFirst(t *testing.T) {
	q := New[string](Config{Priorities: true})
	defer q.ShutDown()
	q.AddWithPriority("low", -10)
	q.Add("zero")
	q.AddWithPriority("high", 10)
	q.AddWithPriority("mid", 5)
	if got, want := drain(t, q), []string{"high", "mid", "zero", "low"}; !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

func TestPriorityFIFOWithinPriority(t *testing.T) {
	q := New[int](Config{Priorities: true})
	defer q.ShutDown()
	for i := range 10 {
		q.AddWithPriority(i, i%2) // odd ones at 1, even ones at 0
	}
	want := []int{1, 3, 5, 7, 9, 0, 2, 4, 6, 8}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

func TestPriorityReAddRaisesWaitingItem(t *testing.T) {
	q := New[string](Config{Priorities: true}).(*queue[string])
	defer q.ShutDown()
	q.AddWithPriority("a", 0)
	q.AddWithPriority("b", 0)
	q.AddWithPriority("c", 5)
	q.AddWithPriority("b", 5) // raised: goes to the end of priority 5
	wantLen(t, q, 3)
	if got, want := drain(t, q), []string{"c", "b", "a"}; !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
	if q.live != 0 {
		t.Fatalf("%d entries live after drain", q.live)
	}
}

func TestPriorityReAddNeverLowers(t *testing.T) {
	q := New[string](Config{Priorities: true})
	defer q.ShutDown()
	q.AddWithPriority("a", 5)
	q.AddWithPriority("b", 3)
	q.AddWithPriority("a", 1) // lower: ignored
	q.Add("a")                // priority 0: ignored
	if got, want := drain(t, q), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

func TestPriorityOfItemAddedWhileProcessingAppliesAfterDone(t *testing.T) {
	q := New[string](Config{Priorities: true})
	defer q.ShutDown()
	q.AddWithPriority("a", 1)
	item := getNow(t, q)
	q.AddWithPriority("a", -5) // first re-add while processing sets the priority
	q.AddWithPriority("a", 7)  // a higher one raises it
	q.AddWithPriority("a", 2)  // a lower one does not
	q.AddWithPriority("b", 3)
	q.Done(item)
	if got, want := drain(t, q), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v (a should wait with priority 7)", got, want)
	}
}

func TestPrioritiesIgnoredWithoutConfig(t *testing.T) {
	q := New[string](Config{})
	defer q.ShutDown()
	q.AddWithPriority("a", -1)
	q.AddWithPriority("b", 100)
	q.AddWithPriority("a", 1000)
	if got, want := drain(t, q), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("order = %v, want FIFO %v", got, want)
	}
}

func TestPriorityInitialListHandedOutAfterLiveChanges(t *testing.T) {
	const initialList = -100
	q := New[string](Config{Priorities: true})
	defer q.ShutDown()
	for _, k := range []string{"ns/a", "ns/b", "ns/c"} {
		q.AddWithPriority(k, initialList)
	}
	q.Add("ns/live-1") // a live change arrives during the initial sync
	q.Add("ns/b")      // a live change to an object of the initial list raises it
	q.AddWithPriority("ns/c", initialList)
	want := []string{"ns/live-1", "ns/b", "ns/a", "ns/c"}
	if got := drain(t, q); !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

func TestPriorityExtremesAreClamped(t *testing.T) {
	q := New[string](Config{Priorities: true})
	defer q.ShutDown()
	q.AddWithPriority("min", math.MinInt)
	q.AddWithPriority("max", math.MaxInt)
	q.Add("zero")
	if got, want := drain(t, q), []string{"max", "zero", "min"}; !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

func TestPriorityManyLevelsDoNotPileUp(t *testing.T) {
	q := New[int](Config{Priorities: true}).(*queue[int])
	defer q.ShutDown()
	for round := range 10 {
		for i := range 100 {
			q.AddWithPriority(i, round*100+i) // a fresh priority for every item
		}
		got := drain(t, q)
		for i, v := range got {
			if v != 99-i {
				t.Fatalf("round %d: order %v", round, got)
			}
		}
	}
	if len(q.levels) > keepLevels {
		t.Fatalf("%d levels kept, want at most %d", len(q.levels), keepLevels)
	}
}

func TestPriorityGetWakesWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](Config{Priorities: true})
		defer q.ShutDown()
		got := getAsync(q)
		synctest.Wait()
		q.AddWithPriority("a", 3)
		if r := <-got; r.item != "a" {
			t.Fatalf("Get = %+v", r)
		}
	})
}
