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
			var err error
			w, err = r.lw.Watch(ctx, opts)
			if err == nil && w == nil {
				err = errors.New("watch returned no watcher")
			}
			if err != nil {
				w = nil
				if ctx.Err() != nil {
					return nil
				}
				r.st.watchErrors.Add(1)
				if retryWithoutRelist(err) {
					r.report(ctx, r.wrap("watch", err))
					r.st.backoffs.Add(1)
					if !sleepCtx(ctx, r.backoff.next(retryAfter(err))) {
						return nil
					}
					continue
				}
				return r.wrap("watch", err)
			}
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
		case errors.Is(err, ErrWatchStalled):
			r.st.stalls.Add(1)
			r.report(ctx, r.wrap("watch", err))
		case retryWithoutRelist(err):
			r.st.watchErrors.Add(1)
			r.report(ctx, r.wrap("watch", err))
			r.st.backoffs.Add(1)
			if !sleepCtx(ctx, r.backoff.next(retryAfter(err))) {
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
				return nil
			}
			now := r.sinceCreated()
			lastActivity = now
			if ev.Type == apiclient.Error {
				if ev.Err == nil {
					return errors.New("ERROR watch event without a status")
				}
				return ev.Err
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
			r.st.lastContact.Store(now)
			if propagate || seenNonAdded {
				r.setLastSyncRV(obj.GetResourceVersion()) // last: see ResourceVersionUpdater
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
