// Package workqueue is informerkit's rebuild of client-go's k8s.io/client-go/util/workqueue:
// a deduplicating work queue for controllers, with delayed and rate-limited re-adds, rate
// limiters, metrics hooks and ParallelizeUntil. It imports nothing from the rest of
// informerkit. The names are client-go's without the Typed prefix (Interface[T],
// NewRateLimiting[T], DefaultControllerRateLimiter[T], ...); New[T](Config) is
// NewTypedWithConfig. A queue reports metrics only when its Config names it and carries a
// MetricsProvider (there is no global provider).
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
// Unlike client-go: Get and ShutDownWithDrain have context forms; Config.Priorities orders
// the queue by priority, Config.Fairness serves each priority round robin across namespaces
// (or any key), Config.Aging bounds how long priorities hold an item back; no per-item
// allocation once warmed up; one runtime timer for all delays, and no goroutine without
// delays or metrics; ParallelizeUntil re-raises a worker's panic in the caller; items may
// carry their causes, merged as the adds coalesce (NewRateLimitingWithCauses).
// docs/workqueue.md lists every difference; time comes from the standard library (synctest).
package workqueue
