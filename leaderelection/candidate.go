package leaderelection

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/informerkit/informerkit/apiclient"
)

// acquire tries until it holds the Lease (returning the start of the successful attempt) or
// ctx is done. Between attempts it watches the Lease (see watchLease): a release is taken at
// once, and an expiry is judged from the moment the last renewal arrived, not from the next
// poll, while the polls every RetryPeriod (with jitter) go on in case the watch fails.
func (e *Elector) acquire(ctx context.Context) (time.Time, bool) {
	e.log.Info("trying to acquire the lease")
	var watching sync.WaitGroup
	wctx, stopWatch := context.WithCancel(ctx)
	defer func() {
		stopWatch()
		watching.Wait()
	}()
	changes := make(chan struct{}, 1)
	for attempt := 0; ; attempt++ {
		start := time.Now()
		actx, cancel := context.WithTimeout(ctx, e.cfg.RenewDeadline)
		ok := e.tryAcquireOrRenew(actx, false)
		cancel()
		if ok {
			return start, true
		}
		if attempt == 0 {
			// After the first read, so that the watch starts from the version it saw.
			watching.Go(func() { e.watchLease(wctx, changes) })
		}
		if !e.waitAttempt(ctx, changes) {
			return time.Time{}, false
		}
	}
}

// waitAttempt waits for the next attempt to acquire: RetryPeriod with jitter, or the expiry
// of the observed Lease if that comes first, or at once when the watch shows the Lease
// released, deleted or expired. It reports false when ctx is done.
func (e *Elector) waitAttempt(ctx context.Context, changes <-chan struct{}) bool {
	poll := time.Now().Add(time.Duration(float64(e.cfg.RetryPeriod) * (1 + JitterFactor*rand.Float64())))
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		at := poll
		if exp, ok := e.expiry(); ok && exp.Add(time.Millisecond).Before(at) {
			at = exp.Add(time.Millisecond) // retry right when the observed Lease expires
		}
		if ctx.Err() != nil {
			// Before takeable: a candidate whose context ended right after it released the
			// Lease sees it free, and would try again at once, for ever.
			return false
		}
		if e.takeable() {
			return true
		}
		t.Reset(time.Until(at))
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		case <-changes:
		}
	}
}

// takeable reports whether the last observation shows the Lease free: released (or deleted),
// or held by another candidate whose record has not changed for its duration.
func (e *Elector) takeable() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.observedTime.IsZero() || e.observed.holder == e.cfg.Identity {
		return false
	}
	return e.observed.holder == "" || !time.Now().Before(e.observedTime.Add(e.observedDuration()))
}

// watchLease watches the Lease while the elector is a candidate, records what it sees (as a
// read would) and signals changes. It stops with ctx; a watch that ends is opened again
// after RetryPeriod, from the last version seen (from now after a 410 Gone).
func (e *Elector) watchLease(ctx context.Context, changes chan<- struct{}) {
	signal := func() {
		select {
		case changes <- struct{}{}:
		default:
		}
	}
	rv := e.observedVersion()
	for ctx.Err() == nil {
		w, err := e.leases.Watch(ctx, apiclient.ListOptions{FieldSelector: "metadata.name=" + e.cfg.Name, ResourceVersion: rv})
		if err == nil {
			rv = e.followWatch(w, rv, signal)
			w.Stop()
		} else {
			e.log.Debug("watching the lease failed", "err", err)
		}
		if !sleepCtx(ctx, e.cfg.RetryPeriod) {
			return
		}
	}
}

// followWatch records the events of one watch of the Lease and returns the resourceVersion
// to watch from next ("" after an error: the version may be gone).
func (e *Elector) followWatch(w apiclient.Watcher[*Lease], rv string, signal func()) string {
	for ev := range w.ResultChan() {
		switch ev.Type {
		case apiclient.Added, apiclient.Modified:
			e.observe(ev.Object, time.Now())
			rv = ev.Object.ResourceVersion
		case apiclient.Deleted:
			e.forget()
			rv = ev.Object.ResourceVersion
		case apiclient.Bookmark:
			rv = ev.Object.ResourceVersion
		case apiclient.Error:
			e.log.Debug("the lease watch ended", "err", ev.Err)
			return ""
		}
		signal()
	}
	return rv
}

// observedVersion is the resourceVersion of the Lease last read or written ("" if none).
func (e *Elector) observedVersion() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lease == nil {
		return ""
	}
	return e.lease.ResourceVersion
}

// forget records that the Lease was deleted: nobody holds it.
func (e *Elector) forget() {
	e.mu.Lock()
	e.lease = nil
	e.observed = record{}
	e.observedTime = time.Now()
	e.mu.Unlock()
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// expiry is when the observed Lease, held by someone else, expires.
func (e *Elector) expiry() (time.Time, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.observed.holder == "" || e.observed.holder == e.cfg.Identity || e.observedTime.IsZero() {
		return time.Time{}, false
	}
	return e.observedTime.Add(e.observedDuration()), true
}

// observedDuration is the observed record's duration, or ours if it has none. e.mu held.
func (e *Elector) observedDuration() time.Duration {
	if e.observed.duration > 0 {
		return time.Duration(e.observed.duration) * time.Second
	}
	return e.cfg.LeaseDuration
}
