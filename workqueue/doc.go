// Package workqueue is informerkit's rebuild of client-go's k8s.io/client-go/util/workqueue:
// a deduplicating work queue for controllers, with delayed and rate-limited re-adds, rate
// limiters, metrics hooks and ParallelizeUntil. It imports nothing from the rest of
// informerkit.
//
// # Mapping to client-go
//
//	client-go util/workqueue                      this package
//	TypedInterface[T]                             Interface[T]
//	TypedDelayingInterface[T]                     DelayingInterface[T]
//	TypedRateLimitingInterface[T]                 RateLimitingInterface[T]
//	NewTypedWithConfig(TypedQueueConfig[T])       New[T](Config)
//	NewTypedDelayingQueueWithConfig(...)          NewDelaying[T](Config)
//	NewTypedRateLimitingQueueWithConfig(rl, ...)  NewRateLimiting[T](rl, Config)
//	TypedRateLimiter[T]                           RateLimiter[T]
//	NewTypedItemExponentialFailureRateLimiter     NewItemExponentialFailureRateLimiter
//	NewTypedItemFastSlowRateLimiter               NewItemFastSlowRateLimiter
//	TypedBucketRateLimiter[T]                     BucketRateLimiter[T] (NewBucketRateLimiter)
//	NewTypedMaxOfRateLimiter                      NewMaxOfRateLimiter
//	NewTypedWithMaxWaitRateLimiter                NewWithMaxWaitRateLimiter
//	DefaultTypedControllerRateLimiter[T]()        DefaultControllerRateLimiter[T]()
//	DefaultTypedItemBasedRateLimiter[T]()         DefaultItemBasedRateLimiter[T]()
//	MetricsProvider, GaugeMetric, ...             MetricsProvider, GaugeMetric, ... (+ MetricsDeleter)
//	ParallelizeUntil, Options (WithChunkSize)     ParallelizeUntil[WithOptions], ParallelizeOptions
//
// There is no global metrics provider (client-go's SetProvider): a queue reports metrics
// only when its Config names it and carries a MetricsProvider.
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
// # Beyond client-go
//
//   - GetWithContext waits for an item but gives up when its context is done, and
//     ShutDownWithDrainContext bounds the drain wait with a context.
//   - Priorities: with Config.Priorities, AddWithPriority orders the queue by priority, higher
//     first, FIFO within a priority, and a re-Add may raise a queued item's priority. Controllers
//     use it to hand out initial-list events after live changes.
//   - Memory: an item is released by the queue as soon as nothing refers to it any more (handed out
//     and Done, and no delay pending). Internally each item costs a slot in an open-addressing
//     index, an entry in a dense table and a slot in a ring buffer (client-go keeps it in two sets
//     and a slice); no per-item allocation once the queue has warmed up, and an idle queue that
//     held a burst drops its tables.
//   - Delays use one runtime timer for the whole queue (time.AfterFunc), re-armed for the earliest
//     item. No goroutine runs while nothing is due, and a queue with no delays and no metrics
//     starts none at all. Repeated AddAfter of one item keeps a single heap entry.
//   - Metrics: the unfinished-work gauges are refreshed by a timer only when metrics are enabled,
//     and ShutDown stops it and lets the provider forget the queue's metrics (MetricsDeleter).
//   - The token-bucket limiter can cap its delay without leaving the bucket in debt
//     (BucketRateLimiter.MaxDelay), see the rate limiter docs.
//   - ParallelizeUntil re-raises a worker's panic in the caller instead of crashing the process
//     from a background goroutine.
//
// Time comes from the standard library (time.Now, time.AfterFunc), so tests drive it with
// testing/synctest.
package workqueue
