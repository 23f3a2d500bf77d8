package workqueue

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimiter decides how long an item waits before it is re-added (client-go's
// TypedRateLimiter). Implementations must be safe for concurrent use.
type RateLimiter[T comparable] interface {
	// When returns how long item should wait now. Per-item limiters count the call as one more
	// retry of item.
	When(item T) time.Duration
	// Forget stops tracking item: its next When starts from scratch.
	Forget(item T)
	// NumRequeues returns how many retries of item the limiter counts.
	NumRequeues(item T) int
}

// DefaultControllerRateLimiter returns client-go's default for controllers: the larger of a
// per-item exponential backoff from 5 ms to 1000 s and an overall token bucket of 10 per second
// with a burst of 100.
//
// Under a flood of failures the bucket's delays grow without bound (see BucketRateLimiter);
// wrap it with NewWithMaxWaitRateLimiter, or build the same combination with
// BucketRateLimiter.MaxDelay set, if that matters.
func DefaultControllerRateLimiter[T comparable]() RateLimiter[T] {
	return NewMaxOfRateLimiter(
		NewItemExponentialFailureRateLimiter[T](5*time.Millisecond, 1000*time.Second),
		NewBucketRateLimiter[T](rate.Limit(10), 100),
	)
}

// DefaultItemBasedRateLimiter returns client-go's per-item default: exponential backoff from
// 1 ms to 1000 s, with no overall limit.
func DefaultItemBasedRateLimiter[T comparable]() RateLimiter[T] {
	return NewItemExponentialFailureRateLimiter[T](time.Millisecond, 1000*time.Second)
}

// ItemExponentialFailureRateLimiter delays an item base·2^n, capped at max, where n is the
// number of When calls for the item since it was last forgotten.
type ItemExponentialFailureRateLimiter[T comparable] struct {
	mu       sync.Mutex
	failures map[T]int
	base     time.Duration
	max      time.Duration
}

// NewItemExponentialFailureRateLimiter returns an ItemExponentialFailureRateLimiter: the first
// When of an item returns base, then 2·base, 4·base, ... never more than max. The computation
// cannot overflow however often an item fails.
func NewItemExponentialFailureRateLimiter[T comparable](base, max time.Duration) RateLimiter[T] {
	return &ItemExponentialFailureRateLimiter[T]{failures: make(map[T]int), base: base, max: max}
}

// When returns base·2^n capped at max and counts one more failure of item.
func (r *ItemExponentialFailureRateLimiter[T]) When(item T) time.Duration {
	r.mu.Lock()
	n := r.failures[item]
	if n < math.MaxInt {
		r.failures[item] = n + 1
	}
	r.mu.Unlock()
	return exponential(r.base, r.max, n)
}

// exponential returns base·2^n capped at max, without overflow.
func exponential(base, max time.Duration, n int) time.Duration {
	if base <= 0 {
		return 0
	}
	if n >= 63 || base > time.Duration(math.MaxInt64>>uint(n)) {
		return max
	}
	if d := base << uint(n); d < max {
		return d
	}
	return max
}

// NumRequeues returns how many times When was called for item since it was last forgotten.
func (r *ItemExponentialFailureRateLimiter[T]) NumRequeues(item T) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[item]
}

// Forget resets item's backoff.
func (r *ItemExponentialFailureRateLimiter[T]) Forget(item T) {
	r.mu.Lock()
	delete(r.failures, item)
	r.mu.Unlock()
}

// ItemFastSlowRateLimiter delays an item by a fast delay for its first few retries and by a
// slow delay afterwards.
type ItemFastSlowRateLimiter[T comparable] struct {
	mu              sync.Mutex
	failures        map[T]int
	fast, slow      time.Duration
	maxFastAttempts int
}

// NewItemFastSlowRateLimiter returns an ItemFastSlowRateLimiter: the first maxFastAttempts
// When calls for an item return fast, later ones return slow.
func NewItemFastSlowRateLimiter[T comparable](fast, slow time.Duration, maxFastAttempts int) RateLimiter[T] {
	return &ItemFastSlowRateLimiter[T]{failures: make(map[T]int), fast: fast, slow: slow, maxFastAttempts: maxFastAttempts}
}

// When counts one more retry of item and returns the fast or the slow delay.
func (r *ItemFastSlowRateLimiter[T]) When(item T) time.Duration {
	r.mu.Lock()
	n := r.failures[item]
	if n < math.MaxInt {
		n++
		r.failures[item] = n
	}
	r.mu.Unlock()
	if n <= r.maxFastAttempts {
		return r.fast
	}
	return r.slow
}

// NumRequeues returns how many times When was called for item since it was last forgotten.
func (r *ItemFastSlowRateLimiter[T]) NumRequeues(item T) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[item]
}

// Forget resets item's count.
func (r *ItemFastSlowRateLimiter[T]) Forget(item T) {
	r.mu.Lock()
	delete(r.failures, item)
	r.mu.Unlock()
}

// BucketRateLimiter is an overall token bucket (golang.org/x/time/rate) shared by all items:
// every When takes a token, and the delay is how long until that token is available. It keeps
// no per-item state.
//
// A known complaint about client-go's bucket limiter: every When reserves a token, so under a
// flood of N failures the k-th item waits about (k-burst)/rate, which grows without bound, and
// the bucket stays in debt long after the flood (a failure an hour later may still wait for the
// tokens the flood reserved). Capping the delay with NewWithMaxWaitRateLimiter bounds what each
// item waits but not the debt: once the flood has reserved tokens far ahead, every later item
// waits the full cap until the debt is paid. Setting MaxDelay here does better: a reservation
// that would wait longer than MaxDelay is cancelled (it takes no token) and MaxDelay is
// returned, so delays stay within MaxDelay and the bucket's debt never exceeds MaxDelay·rate;
// items over the cap are then no longer held to the rate.
type BucketRateLimiter[T comparable] struct {
	// Limiter is the token bucket.
	Limiter *rate.Limiter
	// MaxDelay, if positive, caps the delay without leaving the bucket in debt (see above).
	MaxDelay time.Duration
}

// NewBucketRateLimiter returns a BucketRateLimiter allowing limit items per second with the
// given burst.
func NewBucketRateLimiter[T comparable](limit rate.Limit, burst int) *BucketRateLimiter[T] {
	return &BucketRateLimiter[T]{Limiter: rate.NewLimiter(limit, burst)}
}

// When reserves a token and returns how long until it is available.
func (r *BucketRateLimiter[T]) When(item T) time.Duration {
	res := r.Limiter.Reserve()
	d := res.Delay()
	if r.MaxDelay > 0 && d > r.MaxDelay {
		res.Cancel()
		return r.MaxDelay
	}
	return d
}

// NumRequeues returns 0: the bucket does not track items.
func (r *BucketRateLimiter[T]) NumRequeues(item T) int { return 0 }

// Forget does nothing: the bucket does not track items.
func (r *BucketRateLimiter[T]) Forget(item T) {}

// MaxOfRateLimiter returns the longest delay of several limiters.
type MaxOfRateLimiter[T comparable] struct {
	limiters []RateLimiter[T]
}

// NewMaxOfRateLimiter returns a limiter whose When is the largest When of limiters (every one
// of them is called, so each counts the retry), whose NumRequeues is the largest of theirs and
// whose Forget forgets in all of them.
func NewMaxOfRateLimiter[T comparable](limiters ...RateLimiter[T]) RateLimiter[T] {
	return &MaxOfRateLimiter[T]{limiters: append([]RateLimiter[T](nil), limiters...)}
}

// When returns the longest delay of the limiters.
func (r *MaxOfRateLimiter[T]) When(item T) time.Duration {
	var d time.Duration
	for _, l := range r.limiters {
		d = max(d, l.When(item))
	}
	return d
}

// NumRequeues returns the largest count of the limiters.
func (r *MaxOfRateLimiter[T]) NumRequeues(item T) int {
	n := 0
	for _, l := range r.limiters {
		n = max(n, l.NumRequeues(item))
	}
	return n
}

// Forget forgets item in every limiter.
func (r *MaxOfRateLimiter[T]) Forget(item T) {
	for _, l := range r.limiters {
		l.Forget(item)
	}
}

// WithMaxWaitRateLimiter caps the delay of another limiter.
type WithMaxWaitRateLimiter[T comparable] struct {
	limiter  RateLimiter[T]
	maxDelay time.Duration
}

// NewWithMaxWaitRateLimiter returns a limiter that returns limiter's delay, but never more than
// maxDelay. It is the answer to delays that grow without bound under a flood: no item waits
// longer than maxDelay. It cannot undo what the wrapped limiter has recorded (a token bucket
// stays in debt, see BucketRateLimiter.MaxDelay for a cap that does not).
func NewWithMaxWaitRateLimiter[T comparable](limiter RateLimiter[T], maxDelay time.Duration) RateLimiter[T] {
	return &WithMaxWaitRateLimiter[T]{limiter: limiter, maxDelay: maxDelay}
}

// When returns the wrapped limiter's delay capped at the maximum.
func (r *WithMaxWaitRateLimiter[T]) When(item T) time.Duration {
	return min(r.limiter.When(item), r.maxDelay)
}

// NumRequeues returns the wrapped limiter's count.
func (r *WithMaxWaitRateLimiter[T]) NumRequeues(item T) int { return r.limiter.NumRequeues(item) }

// Forget forgets item in the wrapped limiter.
func (r *WithMaxWaitRateLimiter[T]) Forget(item T) { r.limiter.Forget(item) }
