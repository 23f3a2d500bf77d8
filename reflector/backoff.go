package reflector

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// backoffState hands out the delays described on Backoff. It takes its time from the time
// package, so testing/synctest drives it.
type backoffState struct {
	cfg Backoff

	// unhealthy is set when a delay is handed out and cleared by the first sign of health
	// after it, so that healthy (called for every watch event) costs one atomic load.
	unhealthy atomic.Bool

	mu        sync.Mutex
	cur       time.Duration // base of the last delay; 0 before the first one
	lastDelay time.Duration // the last delay handed out, jitter and minimum included
	last      time.Time     // when the last delay was handed out
	healthy0  time.Time     // first sign of health since then; zero if none yet
	lastFree  time.Time     // the last relist after a 410 without a delay (nextExpired)
}

// healthy records a sign that the server works again: a completed list, an opened watch, an
// event or a bookmark. See Backoff for what it does to the next delay.
func (b *backoffState) healthy() {
	if !b.unhealthy.Load() {
		return
	}
	b.mu.Lock()
	if b.unhealthy.Load() {
		b.healthy0 = time.Now()
		b.unhealthy.Store(false)
	}
	b.mu.Unlock()
}

// next returns the delay before the next attempt, at least minimum.
func (b *backoffState) next(minimum time.Duration) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	recovered := !b.healthy0.IsZero() && now.Sub(b.healthy0) >= b.lastDelay
	if b.cur == 0 || recovered || now.Sub(b.last) >= b.cfg.Reset {
		b.cur = b.cfg.Initial
	} else {
		grown := time.Duration(float64(b.cur) * b.cfg.Factor)
		if grown > b.cfg.Max || grown <= 0 {
			grown = b.cfg.Max
		}
		b.cur = grown
	}
	d := b.cur
	if b.cfg.Jitter > 0 {
		d += time.Duration(rand.Float64() * b.cfg.Jitter * float64(d))
	}
	d = max(d, minimum)
	b.last, b.lastDelay, b.healthy0 = now, d, time.Time{}
	b.unhealthy.Store(true)
	return d
}

// nextExpired returns the delay before a relist the server asked for (410 Gone, a
// resourceVersion compacted away): the server answered, so none, at most once per Max (a
// 410 after an outage, or after compaction on a quiet collection, relists at once, however
// far the delay had grown); a server answering 410 more often than that gets the delays
// of next(minimum).
func (b *backoffState) nextExpired(minimum time.Duration) time.Duration {
	b.mu.Lock()
	now := time.Now()
	if minimum <= 0 && (b.lastFree.IsZero() || now.Sub(b.lastFree) >= b.cfg.Max) {
		b.lastFree = now
		b.mu.Unlock()
		return 0
	}
	b.mu.Unlock()
	return b.next(minimum)
}

// reset starts the backoff over: the server, unreachable for a while, answers again, and
// the delays grown during the outage say nothing about it now.
func (b *backoffState) reset() {
	b.mu.Lock()
	b.cur, b.lastDelay, b.healthy0 = 0, 0, time.Time{}
	b.last = time.Time{}
	b.unhealthy.Store(false)
	b.mu.Unlock()
}

// sleepCtx waits for d or until ctx is done; it reports whether the whole delay elapsed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
