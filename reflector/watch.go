package reflector

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/meta"
)

// watchWithResync runs the watch phase with the resync timer beside it. w, if not nil, is the
// stream a streaming list handed over after its initial events.
func (r *Reflector[T]) watchWithResync(ctx context.Context, w apiclient.Watcher[T]) error {
	resyncErr := make(chan error, 1)
	rctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if r.cfg.ResyncPeriod > 0 {
		wg.Go(func() { r.resyncLoop(rctx, resyncErr) })
	}
	defer func() {
		cancel()
		wg.Wait()
	}()
	return r.watch(ctx, w, resyncErr)
}

// resyncLoop calls Store.Resync every ResyncPeriod (when ShouldResync agrees) until ctx is
// done or Resync fails.
func (r *Reflector[T]) resyncLoop(ctx context.Context, errc chan<- error) {
	t := time.NewTimer(r.cfg.ResyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if r.cfg.ShouldResync == nil || r.cfg.ShouldResync() {
			r.log.Debug("resync")
			if err := r.store.Resync(); err != nil {
				errc <- err
				return
			}
			r.st.resyncs.Add(1)
		}
		t.Reset(r.cfg.ResyncPeriod)
	}
}

// watchTimeout returns a timeoutSeconds random in [MinWatchTimeout, 2×MinWatchTimeout], at
// least one second.
func (r *Reflector[T]) watchTimeout() *int64 {
	d := r.cfg.MinWatchTimeout + time.Duration(rand.Float64()*float64(r.cfg.MinWatchTimeout))
	s := int64(d / time.Second)
	if s < 1 {
		s = 1
	}
	return &s
}

// watch opens watches from the last synced resourceVersion and applies their events until
// one ends in a way that needs a relist (it returns that error) or ctx is done (nil).
func (r *Reflector[T]) watch(ctx context.Context, w apiclient.Watcher[T], resyncErr <-chan error) error {
	defer func() {
		if w != nil {
			w.Stop()
		}
	}()
	// A stream handed over by a streaming list is past its initial events: its ADDED events
	// are in resourceVersion order, and it did deliver events, so it cannot be "very short".
	var start time.Time
	propagate := true
	internal := internalErrorRetry{max: r.cfg.MaxInternalErrorRetryDuration}
	for {
		if ctx.Err() != nil {
			return nil
		}
		if w == nil {
			rv := r.LastSyncResourceVersion()
			opts := apiclient.ListOptions{
				ResourceVersion:     rv,
				AllowWatchBookmarks: true,
				TimeoutSeconds:      r.watchTimeout(),
			}
			// From "" or "0" the server starts with synthetic ADDED events in no particular
			// order: the resourceVersion only advances once something else arrives.
			propagate = rv != "" && rv != "0"
			start = time.Now()
			r.st.watches.Add(1)
			r.markAttempt()
			var err error
			w, err = r.lw.Watch(ctx, opts)
			if err == nil && w == nil {
				err = errNoWatcher
			}
			if err != nil {
				w = nil
				if ctx.Err() != nil {
					return nil
				}
				r.st.watchErrors.Add(1)
				if !watchOpenRetriable(err) {
					return r.wrap("watch", err)
				}
				// The server is unreachable, overloaded or failing: the resourceVersion is
				// still good, and a relist would cost more than the watch for the same
				// answer. Try the watch again after the backoff.
				r.report(ctx, r.wrap("watch", err))
				if !r.wait(ctx, r.backoff.next(retryAfter(err)), err) {
					return nil
				}
				continue
			}
			r.opened(w)
			r.touch()
		}
		err := r.handleWatch(ctx, w, start, propagate, resyncErr)
		w.Stop()
		w = nil
		if ctx.Err() != nil {
			return nil
		}
		switch {
		case err == nil:
			// Clean close (server timeout, load balancer, apitest cut): re-watch from the
			// last synced resourceVersion, no relist.
			r.log.Debug("watch closed, re-watching", "resourceVersion", r.LastSyncResourceVersion())
		case errors.Is(err, ErrConnectionLost):
			// client-go takes this for a clean close and says nothing; it is counted and
			// reported here, then handled as one: re-watch at once from the last synced
			// resourceVersion (if the server is gone, opening the watch fails and backs off).
			r.st.watchErrors.Add(1)
			r.st.connectionsLost.Add(1)
			r.report(ctx, r.wrap("watch", err))
		case errors.Is(err, ErrWatchStalled):
			r.st.stalls.Add(1)
			r.report(ctx, r.wrap("watch", err))
		case retryWithoutRelist(err), meta.IsInternalError(err) && internal.retry(time.Now()):
			r.st.watchErrors.Add(1)
			r.report(ctx, r.wrap("watch", err))
			if !r.wait(ctx, r.backoff.next(retryAfter(err)), err) {
				return nil
			}
		default:
			var re *Error
			if !errors.As(err, &re) {
				r.st.watchErrors.Add(1)
			}
			return r.wrap("watch", err)
		}
	}
}

// internalErrorRetry decides whether a watch that ended with a 500 is re-opened instead of
// relisting (Options.MaxInternalErrorRetryDuration): yes while the first 500 of the current
// run of them is at most max ago. A run ends when a minute passes without a 500, or when it
// has lasted longer than max (that 500 relists, and the next one starts a new run).
type internalErrorRetry struct {
	max         time.Duration
	first, last time.Time
}

func (ir *internalErrorRetry) retry(now time.Time) bool {
	if ir.max <= 0 {
		return false
	}
	if ir.first.IsZero() || now.Sub(ir.last) >= time.Minute {
		ir.first = now
	}
	ir.last = now
	if now.Sub(ir.first) <= ir.max {
		return true
	}
	ir.first = time.Time{}
	return false
}

// handleWatch applies the events of w to the store until the stream ends (nil for a clean
// close), an ERROR event arrives (its error), the watch stalls (ErrWatchStalled), the
// resync fails (a *Error with Op "resync") or ctx is done (nil). A zero start disables the
// very-short-watch check.
func (r *Reflector[T]) handleWatch(ctx context.Context, w apiclient.Watcher[T], start time.Time, propagate bool, resyncErr <-chan error) error {
	// The stall timer is re-armed lazily: events only record their time, and the timer,
	// when it fires, either declares a stall or sleeps for the rest of the idle allowance.
	stall := r.cfg.StallTimeout
	var stallT *time.Timer
	var stallC <-chan time.Time
	if stall > 0 {
		stallT = time.NewTimer(stall)
		defer stallT.Stop()
		stallC = stallT.C
	}
	lastActivity := r.sinceCreated()
	ch := w.ResultChan()
	events := 0
	seenNonAdded := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-resyncErr:
			return &Error{Reflector: r.name, Op: "resync", Err: err}
		case <-stallC:
			idle := time.Duration(r.sinceCreated() - lastActivity)
			if idle >= stall {
				return fmt.Errorf("%w (%v without an event or bookmark, resourceVersion %s)",
					ErrWatchStalled, stall, r.LastSyncResourceVersion())
			}
			stallT.Reset(stall - idle)
		case ev, ok := <-ch:
			if !ok {
				if events == 0 && !start.IsZero() && time.Since(start) < VeryShortWatch {
					return ErrVeryShortWatch
				}
				return streamError(w)
			}
			now := r.sinceCreated()
			lastActivity = now
			if ev.Type == apiclient.Error {
				if ev.Err == nil {
					return errors.New("ERROR watch event without a status")
				}
				return ev.Err
			}
			if ev.Type == apiclient.Skipped {
				r.skipped(ctx, ev.Err)
				continue
			}
			obj := ev.Object
			if isNil(obj) {
				r.log.Warn("watch event without an object, ignored", "type", string(ev.Type))
				continue
			}
			var err error
			switch ev.Type {
			case apiclient.Added:
				err = r.store.Add(obj)
			case apiclient.Modified:
				seenNonAdded = true
				err = r.store.Update(obj)
			case apiclient.Deleted:
				seenNonAdded = true
				err = r.store.Delete(obj)
			case apiclient.Bookmark:
				if obj.GetResourceVersion() == "" {
					r.badBookmark(ctx)
					continue
				}
				seenNonAdded = true
				r.st.bookmarks.Add(1)
				r.st.lastBookmark.Store(now)
			default:
				r.log.Warn("unknown watch event type, ignored", "type", string(ev.Type))
				continue
			}
			if err != nil {
				r.log.Error("store rejected a watch event", "type", string(ev.Type),
					"namespace", obj.GetNamespace(), "name", obj.GetName(), "err", err)
			}
			if ev.Type != apiclient.Bookmark {
				r.st.events.Add(1)
			}
			events++
			r.st.lastEvent.Store(now)
			r.touchAt(now)
			switch rv := obj.GetResourceVersion(); {
			case rv == "":
				// Applied, but the watch goes on from the last resourceVersion it had.
				r.st.badRVs.Add(1)
			case propagate || seenNonAdded:
				r.setLastSyncRV(rv) // last: see ResourceVersionUpdater
			}
		}
	}
}

// isNil reports whether obj is a nil interface or a nil pointer (or other nil-able kind).
func isNil(obj any) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Func, reflect.Chan:
		return v.IsNil()
	}
	return false
}

// streamError returns why w's stream ended without an ERROR event: nil for a clean close (or
// a Watcher that cannot tell), or ErrConnectionLost wrapping the transport error that broke
// it (a reset, an unexpected EOF, a WebSocket read deadline or an HTTP/2 ping timeout on a
// dead connection). apiclient's watchers tell through an Err method.
func streamError[T any](w apiclient.Watcher[T]) error {
	e, ok := w.(interface{ Err() error })
	if !ok {
		return nil
	}
	err := e.Err()
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrConnectionLost, err)
}

// skipped reports a watch event the ListerWatcher refused (apiclient.Skipped): it is counted
// and reported, and the watch goes on without it (client-go logs an object of the wrong kind
// and skips it too).
func (r *Reflector[T]) skipped(ctx context.Context, err error) {
	r.st.skipped.Add(1)
	if err == nil {
		err = errors.New("skipped watch event")
	}
	r.report(ctx, r.wrap("watch", err))
}

// badBookmark reports a bookmark without a resourceVersion in the watch phase: it is
// skipped, so that a re-watch starts from the last resourceVersion the reflector had, not
// from "" (any state, which could miss deletions); client-go takes "" from it.
func (r *Reflector[T]) badBookmark(ctx context.Context) {
	r.st.badRVs.Add(1)
	r.report(ctx, r.wrap("watch", fmt.Errorf("%w: skipped (the watch goes on from resourceVersion %q)", ErrBadBookmark, r.LastSyncResourceVersion())))
}

// opened counts what the ListerWatcher gave up to open w (apiclient's watchers report a
// WebSocket refused for chunked HTTP, protobuf refused for JSON; the client logged each).
func (r *Reflector[T]) opened(w apiclient.Watcher[T]) {
	if f, ok := w.(interface{ Fallbacks() []error }); ok {
		if n := len(f.Fallbacks()); n > 0 {
			r.st.fallbacks.Add(uint64(n))
		}
	}
}
