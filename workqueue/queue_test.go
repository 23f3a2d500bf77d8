package workqueue

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"go.uber.org/goleak"
)

// getNow gets an item that must be available right away.
func getNow[T comparable](t *testing.T, q Interface[T]) T {
	t.Helper()
	if q.Len() == 0 {
		t.Fatalf("Get: queue is empty")
	}
	item, shutdown := q.Get()
	if shutdown {
		t.Fatalf("Get: shutdown with Len %d", q.Len())
	}
	return item
}

func wantLen[T comparable](t *testing.T, q Interface[T], n int) {
	t.Helper()
	if got := q.Len(); got != n {
		t.Fatalf("Len = %d, want %d", got, n)
	}
}

// getAsync starts a Get in a goroutine and returns a channel with its result.
type getResult[T any] struct {
	item     T
	shutdown bool
	err      error
}

func getAsync[T comparable](q Interface[T]) <-chan getResult[T] {
	ch := make(chan getResult[T], 1)
	go func() {
		item, shutdown := q.Get()
		ch <- getResult[T]{item: item, shutdown: shutdown}
	}()
	return ch
}

func getWithContextAsync[T comparable](ctx context.Context, q Interface[T]) <-chan getResult[T] {
	ch := make(chan getResult[T], 1)
	go func() {
		item, shutdown, err := q.GetWithContext(ctx)
		ch <- getResult[T]{item, shutdown, err}
	}()
	return ch
}

// pending fails if ch already has a value (call after synctest.Wait).
func pending[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("%s returned early: %+v", what, v)
	default:
	}
}

func TestGetHandsOutItemsInFIFOOrder(t *testing.T) {
	q := New[string](Config{})
	defer q.ShutDown()
	for _, k := range []string{"c", "a", "b"} {
		q.Add(k)
	}
	wantLen(t, q, 3)
	for _, want := range []string{"c", "a", "b"} {
		if got := getNow(t, q); got != want {
			t.Fatalf("Get = %q, want %q", got, want)
		}
		q.Done(want)
	}
	wantLen(t, q, 0)
}

func TestAddOfDirtyItemIsNoOp(t *testing.T) {
	q := New[string](Config{})
	defer q.ShutDown()
	q.Add("a")
	q.Add("b")
	q.Add("a") // already waiting: must not move or duplicate
	wantLen(t, q, 2)
	if got := getNow(t, q); got != "a" {
		t.Fatalf("Get = %q, want a (re-Add must not move it)", got)
	}
	if got := getNow(t, q); got != "b" {
		t.Fatalf("Get = %q, want b", got)
	}
	wantLen(t, q, 0)
}

func TestAddWhileProcessingRequeuesOnDone(t *testing.T) {
	q := New[string](Config{})
	defer q.ShutDown()
	q.Add("a")
	item := getNow(t, q)
	q.Add("a")
	q.Add("a") // twice while processing: still queued once after Done
	wantLen(t, q, 0)
	q.Add("b")
	q.Done(item)
	wantLen(t, q, 2)
	if got := getNow(t, q); got != "b" {
		t.Fatalf("Get = %q, want b (a goes to the end on Done)", got)
	}
	if got := getNow(t, q); got != "a" {
		t.Fatalf("Get = %q, want a", got)
	}
	wantLen(t, q, 0)
}

func TestItemIsNeverHandedToTwoWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](Config{})
		defer q.ShutDown()
		q.Add("a")
		first := getNow(t, q)
		q.Add("a") // dirty while worker 1 processes it
		second := getAsync(q)
		synctest.Wait()
		pending(t, second, "second worker's Get while the item is processed")
		q.Done(first)
		synctest.Wait()
		if r := <-second; r.item != "a" || r.shutdown {
			t.Fatalf("second Get = %+v, want a", r)
		}
	})
}

func TestDoneOfItemNotProcessingIsNoOp(t *testing.T) {
	q := New[string](Config{})
	defer q.ShutDown()
	q.Done("unknown")
	q.Add("a")
	q.Done("a") // waiting, not processing: client-go would queue it twice
	wantLen(t, q, 1)
	item := getNow(t, q)
	q.Done(item)
	q.Done(item) // second Done
	wantLen(t, q, 0)
}

func TestGetBlocksUntilAdd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[int](Config{})
		defer q.ShutDown()
		got := getAsync(q)
		synctest.Wait()
		pending(t, got, "Get on an empty queue")
		q.Add(7)
		synctest.Wait()
		if r := <-got; r.item != 7 || r.shutdown {
			t.Fatalf("Get = %+v, want 7", r)
		}
	})
}

func TestEveryBlockedWorkerGetsOneItem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[int](Config{})
		defer q.ShutDown()
		var chans []<-chan getResult[int]
		for range 3 {
			chans = append(chans, getAsync(q))
		}
		synctest.Wait()
		q.Add(1)
		q.Add(2)
		q.Add(3)
		synctest.Wait()
		seen := map[int]bool{}
		for _, ch := range chans {
			r := <-ch
			if seen[r.item] {
				t.Fatalf("item %d handed out twice", r.item)
			}
			seen[r.item] = true
		}
	})
}

func TestAddAfterShutDownIsIgnored(t *testing.T) {
	q := New[string](Config{})
	q.ShutDown()
	q.Add("a")
	q.AddWithPriority("b", 3)
	wantLen(t, q, 0)
	if _, shutdown := q.Get(); !shutdown {
		t.Fatal("Get after ShutDown on an empty queue: shutdown = false")
	}
}

func TestGetDrainsQueueAfterShutDown(t *testing.T) {
	q := New[string](Config{})
	q.Add("a")
	q.Add("b")
	q.ShutDown()
	if !q.ShuttingDown() {
		t.Fatal("ShuttingDown = false after ShutDown")
	}
	for _, want := range []string{"a", "b"} {
		item, shutdown := q.Get()
		if shutdown || item != want {
			t.Fatalf("Get = %q, %v; want %q, false", item, shutdown, want)
		}
		q.Done(item)
	}
	if _, shutdown := q.Get(); !shutdown {
		t.Fatal("Get on the drained queue: shutdown = false")
	}
}

func TestDirtyItemIsRequeuedOnDoneAfterShutDown(t *testing.T) {
	q := New[string](Config{})
	q.Add("a")
	item := getNow(t, q)
	q.Add("a")
	q.ShutDown()
	q.Done(item)
	if got, shutdown := q.Get(); shutdown || got != "a" {
		t.Fatalf("Get = %q, %v; want a (added before ShutDown)", got, shutdown)
	}
}

func TestShutDownWakesBlockedGet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](Config{})
		a, b := getAsync(q), getAsync(q)
		synctest.Wait()
		q.ShutDown()
		synctest.Wait()
		for _, ch := range []<-chan getResult[string]{a, b} {
			if r := <-ch; !r.shutdown {
				t.Fatalf("blocked Get after ShutDown = %+v, want shutdown", r)
			}
		}
	})
}

func TestShuttingDown(t *testing.T) {
	q := New[int](Config{})
	if q.ShuttingDown() {
		t.Fatal("ShuttingDown = true before ShutDown")
	}
	q.ShutDown()
	q.ShutDown() // second call is harmless
	if !q.ShuttingDown() {
		t.Fatal("ShuttingDown = false after ShutDown")
	}
}

func TestShutDownWithDrainWaitsForInFlightItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](Config{})
		q.Add("a")
		q.Add("b")
		a, b := getNow(t, q), getNow(t, q)
		drained := make(chan struct{})
		go func() {
			q.ShutDownWithDrain()
			close(drained)
		}()
		synctest.Wait()
		pending(t, drained, "ShutDownWithDrain with two items in flight")
		if !q.ShuttingDown() {
			t.Fatal("ShuttingDown = false while draining")
		}
		q.Done(a)
		synctest.Wait()
		pending(t, drained, "ShutDownWithDrain with one item in flight")
		q.Done(b)
		synctest.Wait()
		select {
		case <-drained:
		default:
			t.Fatal("ShutDownWithDrain still waiting after every item is Done")
		}
	})
}

func TestShutDownWithDrainReturnsAtOnceWithNothingInFlight(t *testing.T) {
	q := New[string](Config{})
	q.Add("queued, never taken")
	q.ShutDownWithDrain() // waits for in-flight items only, as client-go
	wantLen(t, q, 1)
}

func TestShutDownWithDrainIgnoresAddsDuringDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](Config{})
		q.Add("a")
		item := getNow(t, q)
		drained := make(chan struct{})
		go func() {
			q.ShutDownWithDrain()
			close(drained)
		}()
		synctest.Wait()
		q.Add("a") // re-added during the drain: dropped
		q.Add("new")
		q.Done(item)
		synctest.Wait()
		<-drained
		if _, shutdown := q.Get(); !shutdown {
			t.Fatal("Get after drain: want shutdown, items added during the drain must be dropped")
		}
	})
}

func TestShutDownWithDrainRequeuesItemDirtiedBeforeShutDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](Config{})
		q.Add("a")
		item := getNow(t, q)
		q.Add("a") // before the shutdown: kept, like client-go
		drained := make(chan struct{})
		go func() {
			q.ShutDownWithDrain()
			close(drained)
		}()
		synctest.Wait()
		q.Done(item)
		synctest.Wait()
		<-drained // returns once nothing is in flight, even with "a" waiting again
		again, shutdown := q.Get()
		if shutdown || again != "a" {
			t.Fatalf("Get = %q, %v; want a", again, shutdown)
		}
		q.Done(again)
		if _, shutdown := q.Get(); !shutdown {
			t.Fatal("want shutdown once the requeued item is done")
		}
	})
}

func TestShutDownEndsShutDownWithDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](Config{})
		q.Add("a")
		getNow(t, q) // never Done
		drained := make(chan struct{})
		go func() {
			q.ShutDownWithDrain()
			close(drained)
		}()
		synctest.Wait()
		pending(t, drained, "ShutDownWithDrain")
		q.ShutDown()
		synctest.Wait()
		<-drained
	})
}

func TestShutDownWithDrainContextGivesUpWhenContextDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](Config{})
		q.Add("a")
		getNow(t, q) // never Done
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() { errc <- q.ShutDownWithDrainContext(ctx) }()
		synctest.Wait()
		pending(t, errc, "ShutDownWithDrainContext")
		cancel()
		synctest.Wait()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("ShutDownWithDrainContext = %v, want context.Canceled", err)
		}
		if !q.ShuttingDown() {
			t.Fatal("queue not shut down after a cancelled drain")
		}
	})
}

func TestGetWithContextGivesUpWhenContextDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](Config{})
		defer q.ShutDown()
		ctx, cancel := context.WithCancel(t.Context())
		got := getWithContextAsync(ctx, q)
		synctest.Wait()
		pending(t, got, "GetWithContext on an empty queue")
		cancel()
		synctest.Wait()
		r := <-got
		if !errors.Is(r.err, context.Canceled) || r.shutdown || r.item != "" {
			t.Fatalf("GetWithContext = %+v, want context.Canceled", r)
		}
		// The queue still works for others.
		q.Add("a")
		if item, _, err := q.GetWithContext(t.Context()); err != nil || item != "a" {
			t.Fatalf("GetWithContext = %q, %v; want a", item, err)
		}
	})
}

func TestGetWithContextDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](Config{})
		defer q.ShutDown()
		ctx, cancel := context.WithTimeout(t.Context(), 3e9)
		defer cancel()
		_, _, err := q.GetWithContext(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want DeadlineExceeded", err)
		}
	})
}

func TestGetWithContextReturnsErrorIfContextAlreadyDone(t *testing.T) {
	q := New[string](Config{})
	defer q.ShutDown()
	q.Add("a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := q.GetWithContext(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	wantLen(t, q, 1) // the item stays for another worker
}

func TestGetWithContextReturnsItemAndShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](Config{})
		got := getWithContextAsync(t.Context(), q)
		synctest.Wait()
		q.Add("a")
		synctest.Wait()
		if r := <-got; r.item != "a" || r.shutdown || r.err != nil {
			t.Fatalf("GetWithContext = %+v, want a", r)
		}
		q.Done("a")
		got = getWithContextAsync(t.Context(), q)
		synctest.Wait()
		q.ShutDown()
		synctest.Wait()
		if r := <-got; !r.shutdown || r.err != nil {
			t.Fatalf("GetWithContext after ShutDown = %+v, want shutdown", r)
		}
	})
}

func TestCancelledWaiterDoesNotSwallowWakeup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](Config{})
		defer q.ShutDown()
		ctx, cancel := context.WithCancel(t.Context())
		cancelled := getWithContextAsync(ctx, q)
		plain := getAsync(q)
		synctest.Wait()
		cancel()
		q.Add("a")
		synctest.Wait()
		// Either the cancelled waiter took the item (it raced with cancel) or the other one did;
		// the item must not be stuck in the queue with a worker blocked.
		c := <-cancelled
		if c.err == nil {
			if c.item != "a" {
				t.Fatalf("cancelled waiter got %+v", c)
			}
			q.Add("b")
			synctest.Wait()
		}
		if r := <-plain; r.shutdown {
			t.Fatalf("plain Get = %+v", r)
		}
	})
}

func TestLenCountsOnlyWaitingItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewDelaying[string](Config{})
		defer q.ShutDown()
		q.Add("a")
		q.Add("b")
		q.AddAfter("c", 1e9)
		wantLen(t, q, 2)
		item := getNow(t, q)
		wantLen(t, q, 1)
		q.Add(item) // dirty while processing: not waiting yet
		wantLen(t, q, 1)
		q.Done(item)
		wantLen(t, q, 2)
	})
}

func TestPlainQueueStartsNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	q := New[string](Config{}).(*queue[string])
	q.Add("a")
	item, _ := q.Get()
	q.Add("b")
	q.Done(item)
	if q.timer != nil || q.metrics != nil {
		t.Fatalf("plain queue created a timer (%v) or metrics (%v)", q.timer, q.metrics)
	}
	// No ShutDown: a queue that is simply dropped must not leave anything running.
}

func TestZeroValueOfTIsAnOrdinaryItem(t *testing.T) {
	q := New[int](Config{})
	defer q.ShutDown()
	q.Add(0)
	q.Add(0)
	wantLen(t, q, 1)
	if item := getNow(t, q); item != 0 {
		t.Fatalf("Get = %d", item)
	}
}

// TestBlockedWorkersLeaveNoItemWaiting checks the wakeup accounting (queue.woken): Add and Done
// signal a waiter only when more items are queued than waiters already woken, so a lost
// wakeup would leave an item waiting while every worker is parked. Bursts of adds (new keys,
// duplicates, keys being processed) race with four workers that Get and Done; whenever every
// goroutine is blocked, nothing may be left waiting.
func TestBlockedWorkersLeaveNoItemWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[int](Config{})
		var handled atomic.Int64
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for {
					item, shutdown := q.Get()
					if shutdown {
						return
					}
					handled.Add(1)
					q.Done(item)
				}
			})
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for round := range 300 {
			for range 1 + rng.IntN(8) {
				q.Add(rng.IntN(12))
			}
			synctest.Wait()
			if n := q.Len(); n != 0 {
				q.ShutDown() // the waiting item wakes nobody; ShutDown lets the workers drain it and end
				wg.Wait()
				t.Fatalf("round %d: %d items waiting while every worker is blocked in Get", round, n)
			}
		}
		q.ShutDown()
		wg.Wait()
		if handled.Load() == 0 {
			t.Fatal("no item handled")
		}
	})
}
