package reflector

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestBackoffGrowsCapsAndResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := backoffState{cfg: Options[*testObj]{}.withDefaults().backoff}
		// Base delays 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30 s; jitter adds up to +100 %.
		bases := []time.Duration{800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond,
			6400 * time.Millisecond, 12800 * time.Millisecond, 25600 * time.Millisecond, 30 * time.Second, 30 * time.Second}
		for i, base := range bases {
			d := b.next(0)
			if d < base || d >= 2*base {
				t.Fatalf("delay %d = %v, want in [%v, %v)", i, d, base, 2*base)
			}
			time.Sleep(d) // a failing server: the next attempt comes right after the delay
		}
		// Two minutes without a delay request: back to the initial delay.
		time.Sleep(2 * time.Minute)
		if d := b.next(0); d < 800*time.Millisecond || d >= 1600*time.Millisecond {
			t.Fatalf("after 2 min healthy, delay = %v, want in [800ms, 1.6s)", d)
		}
	})
}

func TestBackoffHonoursMinimumAndNoJitter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := backoffState{cfg: Options[*testObj]{Backoff: Backoff{Initial: time.Millisecond, Jitter: -1}}.withDefaults().backoff}
		if d := b.next(0); d != time.Millisecond {
			t.Fatalf("delay without jitter = %v, want 1ms", d)
		}
		if d := b.next(5 * time.Second); d != 5*time.Second {
			t.Fatalf("delay with Retry-After 5s = %v, want 5s", d)
		}
	})
}

func TestSleepCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		start := time.Now()
		if !sleepCtx(ctx, time.Second) || time.Since(start) != time.Second {
			t.Fatalf("sleepCtx did not wait exactly 1s")
		}
		go func() { time.Sleep(100 * time.Millisecond); cancel() }()
		if sleepCtx(ctx, time.Hour) {
			t.Fatal("sleepCtx returned true after cancellation")
		}
		if time.Since(start) != time.Second+100*time.Millisecond {
			t.Fatalf("sleepCtx returned at %v, want 1.1s", time.Since(start))
		}
	})
}
