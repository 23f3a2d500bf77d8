package reflector

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

func TestBackoffGrowsCapsAndResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := backoffState{cfg: Options[*testobj.ConfigMap]{}.withDefaults().backoff}
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
		b := backoffState{cfg: Options[*testobj.ConfigMap]{Backoff: Backoff{Initial: time.Millisecond, Jitter: -1}}.withDefaults().backoff}
		if d := b.next(0); d != time.Millisecond {
			t.Fatalf("delay without jitter = %v, want 1ms", d)
		}
		if d := b.next(5 * time.Second); d != 5*time.Second {
			t.Fatalf("delay with Retry-After 5s = %v, want 5s", d)
		}
	})
}

// The zero Backoff is client-go's (jitter 1.0); once a field is set, Jitter reads as in
// wait.Backoff: 0 is no jitter, and the other zero fields keep their defaults.
func TestBackoffJitterZeroValue(t *testing.T) {
	cfg := func(b Backoff) Backoff { return Options[*testobj.ConfigMap]{Backoff: b}.withDefaults().backoff }
	for _, tc := range []struct {
		name string
		in   Backoff
		want Backoff
	}{
		{"zero", Backoff{}, Backoff{Initial: 800 * time.Millisecond, Factor: 2, Jitter: 1, Max: 30 * time.Second, Reset: 2 * time.Minute}},
		{"initial only", Backoff{Initial: time.Second}, Backoff{Initial: time.Second, Factor: 2, Jitter: 0, Max: 30 * time.Second, Reset: 2 * time.Minute}},
		{"max only", Backoff{Max: time.Minute}, Backoff{Initial: 800 * time.Millisecond, Factor: 2, Jitter: 0, Max: time.Minute, Reset: 2 * time.Minute}},
		{"jitter", Backoff{Jitter: 0.5}, Backoff{Initial: 800 * time.Millisecond, Factor: 2, Jitter: 0.5, Max: 30 * time.Second, Reset: 2 * time.Minute}},
		{"negative jitter", Backoff{Jitter: -1}, Backoff{Initial: 800 * time.Millisecond, Factor: 2, Jitter: 0, Max: 30 * time.Second, Reset: 2 * time.Minute}},
	} {
		if got := cfg(tc.in); got != tc.want {
			t.Errorf("%s: %+v becomes %+v, want %+v", tc.name, tc.in, got, tc.want)
		}
	}
	synctest.Test(t, func(t *testing.T) {
		b := backoffState{cfg: cfg(Backoff{Initial: time.Second})}
		for _, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
			if d := b.next(0); d != want {
				t.Fatalf("delay %v, want exactly %v (no jitter)", d, want)
			}
		}
	})
}

// The backoff returns to Initial once the reflector has been healthy for as long as the last
// delay: a second outage a while after the first starts from the bottom, while a server that
// fails again right after answering keeps growing the delay.
func TestBackoffResetsAfterBeingHealthyForTheLastDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := backoffState{cfg: Options[*testobj.ConfigMap]{Backoff: Backoff{Initial: time.Second, Jitter: -1}}.withDefaults().backoff}
		fail := func(want time.Duration) {
			t.Helper()
			d := b.next(0)
			if d != want {
				t.Fatalf("delay %v, want %v", d, want)
			}
			time.Sleep(d)
		}
		// First outage: 1, 2, 4 s, then the server answers.
		fail(time.Second)
		fail(2 * time.Second)
		fail(4 * time.Second)
		b.healthy()
		// Flapping: it fails again within the last delay: the delay keeps growing.
		time.Sleep(3 * time.Second)
		fail(8 * time.Second)
		b.healthy()
		b.healthy() // further signs of health do not move the start of the healthy time
		time.Sleep(8 * time.Second)
		// Healthy for 8 s, the last delay: the next outage starts from Initial.
		fail(time.Second)
		fail(2 * time.Second)
		// No sign of health at all: Reset (2 min) without a delay also starts over.
		time.Sleep(2 * time.Minute)
		fail(time.Second)
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
	r := New(unusedLW(t), newRecStore(), Options[*testobj.ConfigMap]{})
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
	small := New(unusedLW(t), newRecStore(), Options[*testobj.ConfigMap]{MinWatchTimeout: time.Millisecond})
	if s := *small.watchTimeout(); s != 1 {
		t.Fatalf("tiny MinWatchTimeout gave timeoutSeconds %d, want the minimum of 1", s)
	}
}

func TestStalenessBeforeFirstSync(t *testing.T) {
	lw := unusedLW(t)
	synctest.Test(t, func(t *testing.T) {
		r := New(lw, newRecStore(), Options[*testobj.ConfigMap]{})
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
	if n := New(unusedLW(t), newRecStore(), Options[*testobj.ConfigMap]{}).Name(); n != "configmaps.v1" {
		t.Fatalf("default name %q, want the resource's configmaps.v1", n)
	}
	if n := New(unusedLW(t), newRecStore(), Options[*testobj.ConfigMap]{Name: "mine"}).Name(); n != "mine" {
		t.Fatalf("name %q, want mine", n)
	}
}

func TestNewPanicsWithoutListerWatcherOrStore(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("New without a ListerWatcher did not panic")
		}
	}()
	New(nil, newRecStore(), Options[*testobj.ConfigMap]{})
}

// unusedLW is an apiclient.Resource that is never asked anything (no server runs).
func unusedLW(t *testing.T) *apiclient.Resource[*testobj.ConfigMap] {
	c, err := apiclient.New(&apiclient.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return apiclient.NewResource[*testobj.ConfigMap](c, meta.GroupVersionResource{Version: "v1", Resource: cms})
}
