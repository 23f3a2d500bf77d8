package reflector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/informerkit/informerkit/apiclient"
)

// tryWatchList reports whether the next sync should be a streaming list.
func (r *Reflector[T]) tryWatchList() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.watchListOffUntil.IsZero() || !time.Now().Before(r.watchListOffUntil)
}

// watchListFailed records a streaming list that failed: the caller falls back to LIST. With
// WatchListAuto, a server that does not support streaming lists is remembered for
// WatchListReprobe.
func (r *Reflector[T]) watchListFailed(ctx context.Context, err error) {
	r.st.watchListFallbacks.Add(1)
	r.st.fallbacks.Add(1)
	if errors.Is(err, apiclient.ErrTimeout) {
		r.st.deadlines.Add(1) // the client logged it; the fallback is logged below
	}
	r.st.lastError.Store(r.sinceCreated())
	attrs := []any{"err", err, "setting", "reflector.Options.WatchList"}
	if de := (*ownDeadlineError)(nil); errors.As(err, &de) {
		attrs = append(attrs, "deadline", de.setting)
	}
	if errors.Is(err, ErrWatchListUnsupported) && r.cfg.WatchList == WatchListAuto {
		until := farFuture
		again := "never"
		if r.cfg.WatchListReprobe > 0 {
			until = time.Now().Add(r.cfg.WatchListReprobe)
			again = r.cfg.WatchListReprobe.String()
		}
		r.mu.Lock()
		r.watchListOffUntil = until
		r.mu.Unlock()
		level := slog.LevelInfo
		if errors.Is(err, ErrBadBookmark) {
			level = slog.LevelWarn // not a server without streaming lists: a broken one
		}
		r.log.Log(ctx, level, "streaming list not supported by the server, using LIST", append(attrs, "retryStreamingListAfter", again)...)
	} else {
		r.log.Info("streaming list failed, falling back to LIST for this sync", attrs...)
	}
	if h := r.cfg.WatchErrorHandler; h != nil {
		h(ctx, r.wrap("watch-list", err))
	}
}

// watchList syncs the store with a streaming list: a WATCH with sendInitialEvents=true that
// starts with the current state as ADDED events and marks its end with a bookmark annotated
// k8s.io/initial-events-end. On success the store holds that state at the bookmark's
// resourceVersion, and the same stream, now past its initial events, is returned for the
// watch phase.
//
// It backs off and retries on 429, Retry-After and connection refused, and retries at once at
// "" when the last synced resourceVersion is expired or too large. Any other failure is
// returned; ErrWatchListUnsupported marks a server that refused or ignored the request.
func (r *Reflector[T]) watchList(ctx context.Context) (apiclient.Watcher[T], error) {
	sendInitialEvents := true
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rv := r.rewatchRV()
		opts := apiclient.ListOptions{
			ResourceVersion:      rv,
			ResourceVersionMatch: apiclient.ResourceVersionMatchNotOlderThan,
			SendInitialEvents:    &sendInitialEvents,
			AllowWatchBookmarks:  true,
			TimeoutSeconds:       r.watchTimeout(),
		}
		start := time.Now()
		r.st.watches.Add(1)
		r.markAttempt()
		w, err := r.lw.Watch(ctx, opts)
		if err == nil && w == nil {
			err = errNoWatcher
		}
		if err == nil {
			r.opened(w)
			err = r.initialEvents(ctx, w, start)
			if err == nil {
				r.touch()
				return w, nil
			}
			w.Stop()
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r.st.watchErrors.Add(1)
		switch {
		case retryWithoutRelist(err):
			r.report(ctx, r.wrap("watch-list", err))
			if !r.wait(ctx, r.backoff.next(retryAfter(err)), err) {
				return nil, ctx.Err()
			}
			continue
		case rv != "" && needsFreshList(err):
			r.log.Info("streaming list resourceVersion unavailable, streaming the newest state", "resourceVersion", rv, "err", err)
			r.setRVUnavailable(true)
			continue
		case isRefusal(err) && !errors.Is(err, ErrWatchListUnsupported):
			return nil, fmt.Errorf("%w: %w", ErrWatchListUnsupported, err)
		}
		return nil, err
	}
}

// initialEvents reads the initial events of a streaming list into a fresh sink and finishes
// it at the end bookmark.
func (r *Reflector[T]) initialEvents(ctx context.Context, w apiclient.Watcher[T], start time.Time) error {
	s := r.newSink()
	defer s.abort()
	// WatchListTimeout bounds the wait for the first initial event, WatchListGap the pauses
	// between the next ones. Only ADDED events count as progress; the timer is re-armed
	// lazily as in handleWatch.
	timeout := r.cfg.WatchListTimeout
	t := time.NewTimer(timeout)
	defer t.Stop()
	lastActivity := r.sinceCreated()
	n := 0
	ch := w.ResultChan()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if n > 0 {
				timeout = r.cfg.WatchListGap
			}
			idle := time.Duration(r.sinceCreated() - lastActivity)
			if idle < timeout {
				t.Reset(timeout - idle)
				continue
			}
			r.st.deadlines.Add(1)
			if n > 0 {
				return &ownDeadlineError{setting: "reflector.Options.WatchListGap", err: fmt.Errorf(
					"%w: the initial events stopped for %v after %d of them, without the initial-events-end bookmark (the server sent the objects, not a streaming list; reflector.Options.WatchListGap)",
					ErrWatchListUnsupported, timeout, n)}
			}
			return &ownDeadlineError{setting: "reflector.Options.WatchListTimeout", err: fmt.Errorf(
				"%w: no initial event and no initial-events-end bookmark within %v (reflector.Options.WatchListTimeout)",
				ErrWatchListUnsupported, timeout)}
		case ev, ok := <-ch:
			if !ok {
				if n == 0 && time.Since(start) < VeryShortWatch {
					return fmt.Errorf("%w: %w", ErrWatchListIncomplete, ErrVeryShortWatch)
				}
				return fmt.Errorf("%w: stream closed after %d initial events", ErrWatchListIncomplete, n)
			}
			if ev.Type == apiclient.Error {
				if ev.Err == nil {
					return fmt.Errorf("%w: ERROR event without a status", ErrWatchListIncomplete)
				}
				return fmt.Errorf("%w: %w", ErrWatchListIncomplete, ev.Err)
			}
			if ev.Type == apiclient.Skipped {
				r.skipped(ctx, ev.Err)
				continue
			}
			obj := ev.Object
			if isNil(obj) {
				return fmt.Errorf("%w: %s event without an object", ErrWatchListIncomplete, ev.Type)
			}
			switch ev.Type {
			case apiclient.Added:
				lastActivity = r.sinceCreated()
				if n == 0 {
					t.Reset(r.cfg.WatchListGap) // the events have begun: pauses are short
				}
				n++
				r.st.listedItems.Add(1)
				if err := s.add(obj); err != nil {
					return err
				}
			case apiclient.Bookmark:
				if obj.GetAnnotations()[apiclient.InitialEventsEndAnnotation] != "true" {
					// A server that honours sendInitialEvents sends no other bookmark first.
					return fmt.Errorf("%w: a bookmark without %s came before the end of the initial events",
						ErrWatchListUnsupported, apiclient.InitialEventsEndAnnotation)
				}
				rv := obj.GetResourceVersion()
				if rv == "" {
					// Replace at "" would make the store current as of nothing: the next
					// watch would start from "" (any state, deletions missed), and the
					// informer's freshness would never move. client-go accepts it.
					r.st.badRVs.Add(1)
					return fmt.Errorf("%w: %w: the initial-events-end bookmark has no resourceVersion, after %d initial events",
						ErrWatchListUnsupported, ErrBadBookmark, n)
				}
				now := r.sinceCreated()
				r.st.bookmarks.Add(1)
				r.st.lastBookmark.Store(now)
				r.st.lastEvent.Store(now)
				if err := s.finish(rv); err != nil {
					return fmt.Errorf("store: %w", err)
				}
				r.markSynced(rv, true)
				r.log.Debug("streaming list complete", "items", n, "resourceVersion", rv, "duration", time.Since(start))
				return nil
			default:
				return fmt.Errorf("%w: %s event before the initial-events-end bookmark", ErrWatchListUnsupported, ev.Type)
			}
		}
	}
}

// ownDeadlineError is an error of one of the reflector's own deadlines; setting names the
// Options field that sets it, for the log.
type ownDeadlineError struct {
	setting string
	err     error
}

func (e *ownDeadlineError) Error() string { return e.err.Error() }
func (e *ownDeadlineError) Unwrap() error { return e.err }
