package workqueue

import (
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/time/rate"
)

func wantWhen[T comparable](t *testing.T, r RateLimiter[T], item T, want time.Duration) {
	t.Helper()
	if got := r.When(item); got != want {
		t.Fatalf("When(%v) = %v, want %v", item, got, want)
	}
}

func wantRequeues[T comparable](t *testing.T, r RateLimiter[T], item T, want int) {
	t.Helper()
	if got := r.NumRequeues(item); got != want {
		t.Fatalf("NumRequeues(%v) = %d, want %d", item, got, want)
	}
}

func TestItemExponentialFailureRateLimiterDoublesUpToMax(t *testing.T) {
	r := NewItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second)
	for _, want := range []time.Duration{1, 2, 4, 8, 16, 32, 64, 128, 256, 512} {
		wantWhen(t, r, "a", want*time.Millisecond)
	}
	wantWhen(t, r, "a", time.Second) // 1024 ms capped
	wantWhen(t, r, "a", time.Second)
	wantRequeues(t, r, "a", 12)
	wantWhen(t, r, "b", time.Millisecond) // per item
	wantRequeues(t, r, "b", 1)
}

func TestItemExponentialFailureRateLimiterForgetResets(t *testing.T) {
	r := NewItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second)
	r.When("a")
	r.When("a")
	r.Forget("a")
	wantRequeues(t, r, "a", 0)
	wantWhen(t, r, "a", time.Millisecond)
}

func TestItemExponentialFailureRateLimiterDoesNotOverflow(t *testing.T) {
	r := NewItemExponentialFailureRateLimiter[string](time.Millisecond, 1000*time.Second)
	for range 10_000 {
		if d := r.When("a"); d <= 0 || d > 1000*time.Second {
			t.Fatalf("When = %v, want within (0, 1000s]", d)
		}
	}
	wantWhen(t, r, "a", 1000*time.Second)

	// A base so large that base·2 overflows, and a max of MaxInt64.
	huge := NewItemExponentialFailureRateLimiter[string](math.MaxInt64/3, math.MaxInt64)
	wantWhen(t, huge, "a", math.MaxInt64/3)
	wantWhen(t, huge, "a", math.MaxInt64/3*2)
	wantWhen(t, huge, "a", math.MaxInt64)
	wantWhen(t, huge, "a", math.MaxInt64)

	for n := range 200 {
		if d := exponential(time.Nanosecond, math.MaxInt64, n); d <= 0 {
			t.Fatalf("exponential(1ns, max, %d) = %v", n, d)
		}
	}
	if d := exponential(0, time.Second, 5); d != 0 {
		t.Fatalf("exponential with base 0 = %v, want 0", d)
	}
}

func TestItemFastSlowRateLimiter(t *testing.T) {
	r := NewItemFastSlowRateLimiter[string](time.Millisecond, time.Minute, 3)
	for range 3 {
		wantWhen(t, r, "a", time.Millisecond)
	}
	wantWhen(t, r, "a", time.Minute)
	wantWhen(t, r, "a", time.Minute)
	wantRequeues(t, r, "a", 5)
	wantWhen(t, r, "b", time.Millisecond)
	r.Forget("a")
	wantRequeues(t, r, "a", 0)
	wantWhen(t, r, "a", time.Millisecond)
}

func TestBucketRateLimiterBurstThenRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := NewBucketRateLimiter[string](rate.Limit(10), 3)
		for range 3 {
			wantWhen(t, r, "any", 0)
		}
		wantWhen(t, r, "any", 100*time.Millisecond)
		wantWhen(t, r, "any", 200*time.Millisecond)
		time.Sleep(time.Second) // pays the debt and refills the burst
		for range 3 {
			wantWhen(t, r, "any", 0)
		}
		wantRequeues(t, r, "any", 0)
		r.Forget("any")
	})
}

func TestBucketRateLimiterGrowsWithoutBoundUnderFlood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := NewBucketRateLimiter[int](rate.Limit(10), 100)
		var last time.Duration
		for i := range 10_000 {
			last = r.When(i)
		}
		if last < 990*time.Second {
			t.Fatalf("10000th delay = %v, want about (10000-100)/10 s", last)
		}
	})
}

func TestBucketRateLimiterMaxDelayCancelsReservation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := NewBucketRateLimiter[int](rate.Limit(10), 100)
		r.MaxDelay = time.Second
		for i := range 10_000 {
			if d := r.When(i); d > time.Second {
				t.Fatalf("When = %v beyond MaxDelay", d)
			}
		}
		// The flood did not leave the bucket in debt beyond MaxDelay·rate: after MaxDelay the
		// next item has no wait at all.
		time.Sleep(time.Second + 100*time.Millisecond)
		wantWhen(t, r, 0, 0)

		// Compare with WithMaxWait over a plain bucket: the debt stays.
		capped := NewWithMaxWaitRateLimiter[int](NewBucketRateLimiter[int](rate.Limit(10), 100), time.Second)
		for i := range 10_000 {
			capped.When(i)
		}
		time.Sleep(time.Minute)
		wantWhen(t, capped, 0, time.Second)
	})
}

func TestMaxOfRateLimiter(t *testing.T) {
	fastSlow := NewItemFastSlowRateLimiter[string](5*time.Millisecond, 3*time.Second, 3)
	exp := NewItemExponentialFailureRateLimiter[string](time.Millisecond, time.Second)
	r := NewMaxOfRateLimiter(fastSlow, exp)
	wantWhen(t, r, "a", 5*time.Millisecond) // max(5ms, 1ms)
	wantWhen(t, r, "a", 5*time.Millisecond) // max(5ms, 2ms)
	wantWhen(t, r, "a", 5*time.Millisecond) // max(5ms, 4ms)
	wantWhen(t, r, "a", 3*time.Second)      // max(3s, 8ms)
	wantWhen(t, r, "b", 5*time.Millisecond) // per item
	wantRequeues(t, r, "a", 4)
	r.Forget("a")
	wantRequeues(t, r, "a", 0)
	wantRequeues(t, fastSlow, "a", 0)
	wantRequeues(t, exp, "a", 0)
	wantWhen(t, NewMaxOfRateLimiter[string](), "x", 0)
}

func TestWithMaxWaitRateLimiterCaps(t *testing.T) {
	inner := NewItemExponentialFailureRateLimiter[string](time.Second, time.Hour)
	r := NewWithMaxWaitRateLimiter(inner, 3*time.Second)
	wantWhen(t, r, "a", time.Second)
	wantWhen(t, r, "a", 2*time.Second)
	wantWhen(t, r, "a", 3*time.Second) // 4s capped
	wantWhen(t, r, "a", 3*time.Second)
	wantRequeues(t, r, "a", 4)
	r.Forget("a")
	wantRequeues(t, inner, "a", 0)
}

func TestDefaultControllerRateLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := DefaultControllerRateLimiter[int]()
		// Per item: 5ms, 10ms, 20ms ... while the bucket's burst of 100 lasts.
		wantWhen(t, r, 0, 5*time.Millisecond)
		wantWhen(t, r, 0, 10*time.Millisecond)
		wantWhen(t, r, 0, 20*time.Millisecond)
		wantRequeues(t, r, 0, 3)
		for i := 1; i < 98; i++ {
			wantWhen(t, r, i, 5*time.Millisecond)
		}
		// Burst of 100 used up: the bucket (10 qps) decides.
		wantWhen(t, r, 1000, 100*time.Millisecond)
		wantWhen(t, r, 1001, 200*time.Millisecond)
		r.Forget(0)
		wantRequeues(t, r, 0, 0)
		// The exponential part is capped at 1000 s.
		for range 100 {
			r.When(5)
		}
		if d := r.When(5); d != 1000*time.Second {
			t.Fatalf("When after many failures = %v, want 1000s", d)
		}
	})
}

func TestDefaultItemBasedRateLimiter(t *testing.T) {
	r := DefaultItemBasedRateLimiter[string]()
	wantWhen(t, r, "a", time.Millisecond)
	wantWhen(t, r, "a", 2*time.Millisecond)
	for range 100 {
		r.When("a")
	}
	wantWhen(t, r, "a", 1000*time.Second)
}

func TestRateLimitersAreSafeForConcurrentUse(t *testing.T) {
	limiters := map[string]RateLimiter[int]{
		"exponential": NewItemExponentialFailureRateLimiter[int](time.Millisecond, time.Second),
		"fastslow":    NewItemFastSlowRateLimiter[int](time.Millisecond, time.Second, 2),
		"default":     DefaultControllerRateLimiter[int](),
		"maxwait":     NewWithMaxWaitRateLimiter(DefaultItemBasedRateLimiter[int](), time.Second),
	}
	for name, r := range limiters {
		t.Run(name, func(t *testing.T) {
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Go(func() {
					for i := range 1000 {
						r.When(i % 10)
						r.NumRequeues(i % 10)
						if i%7 == w {
							r.Forget(i % 10)
						}
					}
				})
			}
			wg.Wait()
		})
	}
}

func TestAddRateLimitedUsesLimiterDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := NewItemExponentialFailureRateLimiter[string](time.Second, time.Minute)
		q := NewRateLimiting(r, Config{})
		defer q.ShutDown()
		q.AddRateLimited("a") // 1s
		sleep(time.Second - 1)
		wantLen(t, q, 0)
		sleep(1)
		wantLen(t, q, 1)
		item := getNow(t, q)
		q.AddRateLimited(item) // 2s, while processing
		q.Done(item)
		if q.NumRequeues("a") != 2 {
			t.Fatalf("NumRequeues = %d, want 2", q.NumRequeues("a"))
		}
		sleep(2*time.Second - 1)
		wantLen(t, q, 0)
		sleep(1)
		wantLen(t, q, 1)
		q.Forget("a")
		if q.NumRequeues("a") != 0 {
			t.Fatalf("NumRequeues after Forget = %d", q.NumRequeues("a"))
		}
		wantLen(t, q, 1) // Forget does not remove the item
	})
}

func TestAddRateLimitedAfterShutDownStillCountsRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewRateLimiting[string](DefaultItemBasedRateLimiter[string](), Config{})
		q.ShutDown()
		q.AddRateLimited("a")
		sleep(time.Minute)
		wantLen(t, q, 0)
		if n := q.NumRequeues("a"); n != 1 {
			t.Fatalf("NumRequeues = %d, want 1 (the limiter is asked as in client-go)", n)
		}
	})
}

func TestNewRateLimitingNilLimiterUsesDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewRateLimiting[string](nil, Config{})
		defer q.ShutDown()
		q.AddRateLimited("a")
		sleep(5*time.Millisecond - 1)
		wantLen(t, q, 0)
		sleep(1)
		wantLen(t, q, 1)
	})
}
