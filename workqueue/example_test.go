package workqueue_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/informerkit/informerkit/workqueue"
)

// A worker loop: Get an item, process it, Done. Adding a key that is already queued does
// nothing, so three events for "default/a" are processed once.
func Example() {
	q := workqueue.New[string](workqueue.Config{})
	for _, key := range []string{"default/a", "default/b", "default/a", "default/a"} {
		q.Add(key)
	}
	q.ShutDown() // no more adds; the workers drain what is queued and stop

	var mu sync.Mutex
	var processed []string
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				key, shutdown := q.Get()
				if shutdown {
					return
				}
				mu.Lock()
				processed = append(processed, key)
				mu.Unlock()
				q.Done(key)
			}
		})
	}
	wg.Wait()
	sort.Strings(processed)
	fmt.Println(processed)
	// Output: [default/a default/b]
}

// A controller worker: retry a failing item with AddRateLimited, Forget it once it succeeds.
// Done is called in both cases.
func ExampleRateLimitingInterface() {
	q := workqueue.NewRateLimiting(
		workqueue.NewItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second),
		workqueue.Config{Name: "example"},
	)
	defer q.ShutDown()

	attempts := 0
	reconcile := func(key string) error {
		attempts++
		if attempts < 3 {
			return errors.New("not ready")
		}
		return nil
	}

	q.Add("default/a")
	for {
		key, shutdown := q.Get()
		if shutdown {
			return
		}
		err := reconcile(key)
		if err != nil {
			fmt.Printf("%s failed (%d earlier retries), retrying\n", key, q.NumRequeues(key))
			q.AddRateLimited(key) // back in the queue after 1 ms, then 2 ms, ...
			q.Done(key)
			continue
		}
		q.Forget(key) // reset its backoff
		q.Done(key)
		fmt.Printf("%s reconciled after %d attempts\n", key, attempts)
		break
	}
	// Output:
	// default/a failed (0 earlier retries), retrying
	// default/a failed (1 earlier retries), retrying
	// default/a reconciled after 3 attempts
}

// GetWithContext lets a worker stop when its context is done, even while the queue is empty.
func ExampleInterface_getWithContext() {
	q := workqueue.New[string](workqueue.Config{})
	defer q.ShutDown()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, _, err := q.GetWithContext(ctx)
	fmt.Println(err)
	// Output: context deadline exceeded
}

// With priorities, items from an initial list can wait behind live changes.
func ExampleInterface_priorities() {
	const initialList = -100
	q := workqueue.New[string](workqueue.Config{Priorities: true})
	defer q.ShutDown()
	q.AddWithPriority("default/old-1", initialList)
	q.AddWithPriority("default/old-2", initialList)
	q.Add("default/changed") // a live change: priority 0
	for q.Len() > 0 {
		key, _ := q.Get()
		fmt.Println(key)
		q.Done(key)
	}
	// Output:
	// default/changed
	// default/old-1
	// default/old-2
}

// AddAfter re-adds an item once a delay has passed; repeated calls keep the earliest time.
func ExampleDelayingInterface() {
	q := workqueue.NewDelaying[string](workqueue.Config{})
	defer q.ShutDown()
	start := time.Now()
	q.AddAfter("default/a", time.Hour)
	q.AddAfter("default/a", 20*time.Millisecond) // earlier: wins
	key, _ := q.Get()
	fmt.Println(key, time.Since(start) >= 20*time.Millisecond)
	q.Done(key)
	// Output: default/a true
}

// ParallelizeUntilWithOptions spreads pieces of work over a few goroutines, ten at a time.
func ExampleParallelizeUntilWithOptions() {
	squares := make([]int, 100)
	var calls atomic.Int32
	workqueue.ParallelizeUntilWithOptions(context.Background(), 4, len(squares), func(i int) {
		calls.Add(1)
		squares[i] = i * i
	}, workqueue.ParallelizeOptions{ChunkSize: 10})
	fmt.Println(calls.Load(), squares[9], squares[99])
	// Output: 100 81 9801
}

// A queue whose items carry what added them: three events for one key while it waits are
// handed out once, with the three causes (repeats of one object merged into a count).
func ExampleNewRateLimitingWithCauses() {
	type cause struct {
		object string
		count  int
	}
	q, err := workqueue.NewRateLimitingWithCauses[string](nil, workqueue.Config{}, workqueue.CauseOptions[cause]{
		Merge: func(kept *cause, c cause) bool {
			if kept.object != c.object {
				return false
			}
			kept.count += c.count
			return true
		},
	})
	if err != nil {
		panic(err)
	}
	defer q.ShutDown()
	q.AddWithCause("default/web", 0, cause{"Deployment default/web", 1})
	q.AddWithCause("default/web", 0, cause{"Pod default/web-1", 1})
	q.AddWithCause("default/web", 0, cause{"Pod default/web-1", 1})
	key, causes, _, _ := q.GetWithCauses(context.Background(), nil)
	fmt.Println(key)
	for _, c := range causes.List {
		fmt.Printf("  %s ×%d\n", c.object, c.count)
	}
	q.Done(key)
	// Output:
	// default/web
	//   Deployment default/web ×1
	//   Pod default/web-1 ×2
}
