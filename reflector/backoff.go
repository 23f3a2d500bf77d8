package reflector

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// backoffState hands out the delays described on Backoff. It takes its time from the time
// package, so testing/synctest drives it.
type backoffState struct {
	cfg Backoff

	mu   sync.Mutex
	cur  time.Duration // base of the last delay; 0 before the first one
	last time.Time     // when the last delay was handed out
}

// next returns the delay before the next attempt, at least min.
func (b *backoffState) next(minimum time.Duration) time.Duration {
	b.mu.Lock()
	now := time.Now()
	if b.cur == 0 || now.Sub(b.last) >= b.cfg.Reset {
		b.cur = b.cfg.Initial
	} else {
		grown := time.Duration(float64(b.cur) * b.cfg.Factor)
		if grown > b.cfg.Max || grown <= 0 {
			grown = b.cfg.Max
		}
		b.cur = grown
	}
	b.last = now
	d := b.cur
	b.mu.Unlock()
	if b.cfg.Jitter > 0 {
		d += time.Duration(rand.Float64() * b.cfg.Jitter * float64(d))
	}
	return max(d, minimum)
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
