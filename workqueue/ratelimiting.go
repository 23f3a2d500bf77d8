package workqueue

// RateLimitingInterface is a DelayingInterface that asks a RateLimiter how long to wait before
// re-adding an item (client-go's TypedRateLimitingInterface). The usual worker calls
// AddRateLimited when processing an item failed and Forget when it succeeded (or failed for
// good), then Done in both cases.
type RateLimitingInterface[T comparable] interface {
	DelayingInterface[T]

	// AddRateLimited adds item after the delay the rate limiter returns for it (which also
	// counts a retry in the limiter). It is ignored after ShutDown, but the limiter has still
	// counted the retry, as in client-go.
	AddRateLimited(item T)

	// Forget tells the rate limiter to stop tracking item, resetting its backoff. It does not
	// remove the item from the queue; the worker still calls Done.
	Forget(item T)

	// NumRequeues returns how many times the rate limiter has delayed item since it was last
	// forgotten.
	NumRequeues(item T) int
}

// NewRateLimiting returns a queue with AddRateLimited, Forget and NumRequeues (client-go's
// NewTypedRateLimitingQueueWithConfig). A nil limiter means DefaultControllerRateLimiter.
// Remember to call Forget: a limiter tracks an item until then.
func NewRateLimiting[T comparable](limiter RateLimiter[T], cfg Config) RateLimitingInterface[T] {
	if limiter == nil {
		limiter = DefaultControllerRateLimiter[T]()
	}
	return newQueue(cfg, limiter)
}

func (q *queue[T]) AddRateLimited(item T) {
	q.AddAfter(item, q.rl.When(item))
}

func (q *queue[T]) Forget(item T) {
	q.rl.Forget(item)
}

func (q *queue[T]) NumRequeues(item T) int {
	return q.rl.NumRequeues(item)
}
