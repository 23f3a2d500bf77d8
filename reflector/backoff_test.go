package reflector

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apiclient"
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

func TestWatchTimeoutRange(t *testing.T) {
	r := New(unusedLW(t), newRecStore(), Options[*testObj]{})
	seen := map[int64]bool{}
	for range 2000 {
		s := *r.watchTimeout()
		if s < 300 || s > 600 {
			t.Fatalf("timeoutSeconds %d outside [300, 600]", s)
		}
		seen[s] = true
	}
	if len(seen) < 100 {
		t.Fatalf("only %d distinct timeouts in 2000 draws: not spread", len(seen))
	}
	small := New(unusedLW(t), newRecStore(), Options[*testObj]{MinWatchTimeout: time.Millisecond})
	if s := *small.watchTimeout(); s != 1 {
		t.Fatalf("tiny MinWatchTimeout gave timeoutSeconds %d, want the minimum of 1", s)
	}
}

func TestStalenessBeforeFirstSync(t *testing.T) {
	lw := unusedLW(t)
	synctest.Test(t, func(t *testing.T) {
		r := New(lw, newRecStore(), Options[*testObj]{})
		time.Sleep(5 * time.Second)
		if s := r.Staleness(); s != 5*time.Second {
			t.Fatalf("Staleness before any sync = %v, want the 5s since New", s)
		}
		r.touch()
		time.Sleep(time.Second)
		if s := r.Staleness(); s != time.Second {
			t.Fatalf("Staleness = %v, want 1s since the last contact", s)
		}
	})
}

func TestDefaultName(t *testing.T) {
	if n := New(unusedLW(t), newRecStore(), Options[*testObj]{}).Name(); n != "configmaps.v1" {
		t.Fatalf("default name %q, want the resource's configmaps.v1", n)
	}
	if n := New(unusedLW(t), newRecStore(), Options[*testObj]{Name: "mine"}).Name(); n != "mine" {
		t.Fatalf("name %q, want mine", n)
	}
}

func TestNewPanicsWithoutListerWatcherOrStore(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("New without a ListerWatcher did not panic")
		}
	}()
	New(nil, newRecStore(), Options[*testObj]{})
}

// unusedLW is an apiclient.Resource that is never asked anything (no server runs).
func unusedLW(t *testing.T) *apiclient.Resource[*testObj] {
	c, err := apiclient.New(&apiclient.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return apiclient.NewResource[*testObj](c, apiclient.GroupVersionResource{Version: "v1", Resource: cms})
}
