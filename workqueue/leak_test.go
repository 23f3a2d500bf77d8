package workqueue

import (
	"runtime"
	"testing"
	"testing/synctest"
	"time"
)

type object struct {
	name    string
	payload [1 << 10]byte
}

// collected reports, through the returned channel, when obj becomes unreachable.
func collected(obj *object) <-chan struct{} {
	ch := make(chan struct{})
	runtime.AddCleanup(obj, func(ch chan struct{}) { close(ch) }, ch)
	return ch
}

// waitCollected runs the GC until ch is closed (the finalizer has run), or fails after 30
// seconds: a loaded machine may take a while to schedule the finalizer goroutine.
func waitCollected(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		runtime.GC()
		select {
		case <-ch:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("%s is still reachable: the queue keeps a reference", what)
}

func TestQueueReleasesItemAfterGetAndDone(t *testing.T) {
	q := New[*object](Config{})
	defer q.ShutDown()
	first := &object{name: "first"}
	gone := collected(first)
	q.Add(first)
	q.Add(&object{name: "second"}) // keeps the queue non-empty and running
	item, _ := q.Get()
	if item != first {
		t.Fatal("wrong item")
	}
	q.Done(item)
	first, item = nil, nil
	waitCollected(t, gone, "an item that was handed out and Done")
	wantLen(t, q, 1)
}

func TestQueueReleasesItemsOfBusyQueue(t *testing.T) {
	// Thousands of items pass through while the queue always holds some: the ring buffer
	// must not pin handed-out items (the upstream backing-slice leak).
	q := New[*object](Config{})
	defer q.ShutDown()
	var watched []<-chan struct{}
	for i := range 5000 {
		obj := &object{}
		if i%1000 == 0 {
			watched = append(watched, collected(obj))
		}
		q.Add(obj)
		if q.Len() > 10 {
			item, _ := q.Get()
			q.Done(item)
		}
	}
	for _, ch := range watched {
		waitCollected(t, ch, "an early item of a busy queue")
	}
}

func TestQueueReleasesDelayedItemAfterShutDown(t *testing.T) {
	q := NewDelaying[*object](Config{})
	obj := &object{}
	gone := collected(obj)
	q.AddAfter(obj, time.Hour)
	q.Add(&object{}) // a live entry, so the dropped delay is released entry by entry
	obj = nil
	q.ShutDown()
	waitCollected(t, gone, "an item whose delay was dropped by ShutDown")
	runtime.KeepAlive(q)
}

func TestQueueReleasesItemAfterDelayFired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewDelaying[string](Config{}).(*queue[string])
		defer q.ShutDown()
		q.AddAfter("a", time.Second)
		sleep(time.Second)
		item := getNow(t, q)
		q.Done(item)
		if q.live != 0 || q.used != 0 || len(q.heap) != 0 {
			t.Fatalf("after the delayed item was done: live %d, index %d, heap %d", q.live, q.used, len(q.heap))
		}
		for i := range q.slab {
			if q.slab[i].item != "" {
				t.Fatalf("slab slot %d still holds %q", i, q.slab[i].item)
			}
		}
	})
}

func TestIdleQueueDropsTablesAfterBurst(t *testing.T) {
	q := New[int](Config{}).(*queue[int])
	defer q.ShutDown()
	for i := range 10_000 {
		q.Add(i)
	}
	if len(q.slab) != 10_000 {
		t.Fatalf("slab %d", len(q.slab))
	}
	for range 10_000 {
		item, _ := q.Get()
		q.Done(item)
	}
	if q.slab != nil || q.levels[0].r.buf != nil || q.used != 0 {
		t.Fatalf("idle queue kept its tables: slab %d, ring %d", cap(q.slab), len(q.levels[0].r.buf))
	}
	// And it still works.
	q.Add(1)
	wantLen(t, q, 1)
}

func TestCompactionBacksOffWhenQueueRefillsQuickly(t *testing.T) {
	q := New[int](Config{}).(*queue[int])
	defer q.ShutDown()
	q.compactAt = 100
	cycle := func() {
		for i := range 200 {
			q.Add(i)
		}
		for range 200 {
			item, _ := q.Get()
			q.Done(item)
		}
	}
	cycle()
	if q.compactions != 1 {
		t.Fatalf("compactions after one burst = %d, want 1", q.compactions)
	}
	for range 20 {
		cycle()
	}
	// Backoff doubles the churn needed: 2, 4, 8, 16 bursts... so 20 more bursts allow 3 more.
	if q.compactions > 4 {
		t.Fatalf("compactions after 21 bursts = %d, want at most 4", q.compactions)
	}
}
