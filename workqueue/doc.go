// Package workqueue is informerkit's rebuild of client-go's k8s.io/client-go/util/workqueue:
// a deduplicating work queue for controllers, with delayed and rate-limited re-adds, rate
// limiters, metrics hooks and ParallelizeUntil. It imports nothing from the rest of
// informerkit.
//
// The names are client-go's without the Typed prefix (Interface[T], NewRateLimiting[T],
// DefaultControllerRateLimiter[T], ...); New[T](Config) is NewTypedWithConfig. There is no
// global metrics provider (client-go's SetProvider): a queue reports metrics only when its
// Config names it and carries a MetricsProvider.
//
// # Rules
//
// The queue keeps, for every item it knows, whether the item is dirty (needs processing) and
// whether a worker is processing it. Items wait in FIFO order.
//
//   - Add of an item that is already dirty does nothing: an item waits in the queue at most once.
//   - Get hands an item to one worker and marks it processing; the worker must call Done.
//     An item is never handed to two workers at once.
//   - Add of an item that is being processed marks it dirty without queueing it; Done then puts it
//     back at the end of the queue, so it is processed again, by one worker at a time.
//   - After ShutDown, Add, AddAfter and AddRateLimited are ignored, pending delays are dropped,
//     Get keeps handing out the items already queued and reports shutdown only once the queue is
//     empty. ShutDownWithDrain additionally waits until every item handed out has been Done.
//
// # Where it differs from client-go
//
//   - GetWithContext and ShutDownWithDrainContext take a context.
//   - With Config.Priorities, AddWithPriority orders the queue by priority, higher first,
//     FIFO within a priority (controllers hand out initial-list events after live changes).
//   - An item is released as soon as nothing refers to it; no per-item allocation once the
//     queue has warmed up, and an idle queue that held a burst drops its tables.
//   - Delays use one runtime timer for the whole queue; a queue with no delays and no metrics
//     runs no goroutine. Repeated AddAfter of one item keeps one heap entry.
//   - ShutDown lets the metrics provider forget the queue (MetricsDeleter).
//   - BucketRateLimiter.MaxDelay caps a delay without leaving the bucket in debt.
//   - ParallelizeUntil re-raises a worker's panic in the caller instead of crashing the
//     process from a background goroutine.
//
// Time comes from the standard library (time.Now, time.AfterFunc), so tests drive it with
// testing/synctest.
package workqueue
