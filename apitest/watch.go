package apitest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/meta"
)

// A watch's stream of events: its starting point, the initial events, then the events of
// the resource's history as they come, with bookmarks, until the watch ends.

// watchStart is where a watch starts: the initial objects to send as ADDED, the history
// position of the first live event, and the RV of the initial state; or the error to send
// as an ERROR event.
type watchStart struct {
	initial []*storedObj
	cursor  uint64
	snapRV  uint64
	sie     bool // end the initial events with the annotated bookmark
	err     *meta.Status
}

// prepareWatch computes the starting point and registers the watcher (unless err is set).
func (s *Server) prepareWatch(ctx context.Context, w *watcher, want uint64, hasSIE, sendInitial bool) watchStart {
	res := w.res
	s.mu.Lock()
	defer s.mu.Unlock()
	if want > s.rv && !s.waitForRVLocked(ctx, want) {
		return watchStart{err: apierr.TooLargeResourceVersion(want, s.rv)}
	}
	view := s.viewRVLocked(w.client, res) // the server's RV, or the client's held view's (holds.go)
	st := watchStart{snapRV: view, sie: hasSIE && sendInitial}
	switch {
	case hasSIE && sendInitial:
		st.initial = res.snapshot(view)
		st.cursor = res.seqAfter(view)
	case hasSIE && !sendInitial && want == 0:
		st.cursor = res.seqAfter(view)
	case !hasSIE && want == 0:
		st.initial = res.snapshot(view)
		st.cursor = res.seqAfter(view)
	default:
		if want < res.oldestRV() {
			return watchStart{err: apierr.Expired(fmt.Sprintf("too old resource version: %d (%d)", want, res.oldestRV()))}
		}
		st.cursor = res.seqAfter(want)
		st.snapRV = want
	}
	w.lastRV.Store(st.snapRV)
	s.watchers[w.id] = w
	return st
}

// errWatchEnded ends a watch cleanly (the client went, or a fault cut the stream);
// errAbort ends it by dropping the connection.
var (
	errWatchEnded = errors.New("watch ended")
	errAbort      = errors.New("abort")
)

// runWatch streams events until the watch ends. It returns errAbort when the connection
// must be dropped; any other return is a clean end.
func (s *Server) runWatch(ctx context.Context, w *watcher, st watchStart, timeout time.Duration) error {
	if st.err != nil {
		return w.sendError(st.err)
	}
	s.notifyChange()
	s.notifyWatchOpened(w)
	if err := w.sendInitialEvents(st); err != nil {
		return err
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	bookmarks := newBookmarkTimer(w.bookmark, s.opts.BookmarkInterval, timeout)
	defer bookmarks.stop()
	cursor := st.cursor
	bookmarkDue := false
	for {
		// Faults first.
		for _, c := range w.takeCtl() {
			if err := w.applyCtl(ctx, c); err != nil {
				return err
			}
		}
		b := s.takeBatch(w, cursor)
		switch {
		case b.retry:
			continue
		case b.behind > 0:
			s.recordFault(FaultRecord{Kind: FaultSlowWatcherClosed, Resource: w.res.typ.name(), WatchID: w.id,
				Detail: fmt.Sprintf("watcher fell %d events behind the history window", b.behind)})
			return nil
		case len(b.events) > 0:
			if err := s.sendEvents(ctx, w, b.events, &cursor); err != nil {
				return err
			}
			continue
		}
		if bookmarkDue {
			bookmarkDue = false
			if err := s.sendDueBookmark(w, b.progressRV); err != nil {
				return err
			}
		}
		select {
		case <-b.notify:
		case <-w.wake:
		case <-bookmarks.C():
			bookmarkDue = true
			bookmarks.reset()
		case <-deadline.C:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// sendInitialEvents sends the initial objects as ADDED events and, for sendInitialEvents,
// the bookmark that ends them.
func (w *watcher) sendInitialEvents(st watchStart) error {
	for _, o := range st.initial {
		if w.f.matches(o) {
			if err := w.send(w.eventFrame(apiclient.Added, o, nil, nil), o.rv, true); err != nil {
				return err
			}
		}
	}
	if st.sie && w.bookmark {
		if err := w.sendBookmark(st.snapRV, true, 0); err != nil {
			return err
		}
	}
	if err := w.sink.flush(); err != nil {
		return errWatchEnded
	}
	return nil
}

// batch is what a watch takes from its resource's history in one go.
type batch struct {
	events []*event
	// progressRV is what a bookmark would carry now; notify is closed at the next event.
	progressRV uint64
	notify     <-chan struct{}
	// retry: a fault arrived, apply it first; behind > 0: the watcher fell that many
	// events behind the history window.
	retry  bool
	behind uint64
}

// takeBatch takes up to 1024 events from the history position cursor on.
func (s *Server) takeBatch(w *watcher, cursor uint64) batch {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.hasCtl() {
		// A fault injected before a write must act before that write's event is sent:
		// the write appended under s.mu after the push, so a fault that arrived since the
		// loop's top is seen here, and applied first.
		return batch{retry: true}
	}
	res := w.res
	if cursor < res.base {
		return batch{behind: res.base - cursor} // read under s.mu: append moves res.base
	}
	n := min(int(res.end()-cursor), 1024)
	b := batch{events: make([]*event, n), progressRV: res.progressRV, notify: res.notify}
	copy(b.events, res.events[cursor-res.base:])
	if s.opts.ProgressNotify {
		b.progressRV = s.rv
	}
	b.events, b.progressRV = s.capBatchLocked(w, b.events, b.progressRV) // a held view (holds.go)
	return b
}

// sendEvents sends the frames of events (cursor moves past each) and flushes them. A
// non-nil error ends the watch.
func (s *Server) sendEvents(ctx context.Context, w *watcher, events []*event, cursor *uint64) error {
	for _, ev := range events {
		if ev == mergedAway {
			*cursor++
			continue
		}
		frame := w.convert(ev)
		*cursor++
		if frame == nil {
			continue
		}
		if d := s.writeDelay(w.res); d > 0 {
			if !sleepCtx(ctx, d) {
				return errWatchEnded
			}
		}
		if err := w.send(frame, ev.rv, true); err != nil {
			return err
		}
		if w.cutAfter > 0 && w.sent.Load() >= w.cutAfter {
			w.sink.flush()
			s.recordFault(FaultRecord{Kind: FaultCutWatch, Resource: w.res.typ.name(), WatchID: w.id, Detail: "after events"})
			return errWatchEnded
		}
	}
	if err := w.sink.flush(); err != nil {
		return errWatchEnded
	}
	return nil
}

// sendDueBookmark sends the bookmark that is due, at progressRV, unless the watch has
// delivered that already: the watch cache sends none then either. A non-nil error ends
// the watch.
func (s *Server) sendDueBookmark(w *watcher, progressRV uint64) error {
	defer s.notifyChange() // tests wait on WatchInfo.BookmarkTicks
	if progressRV <= w.lastRV.Load() {
		w.bmTicks.Add(1)
		return nil
	}
	if err := w.sendBookmark(progressRV, false, 0); err != nil {
		return err
	}
	w.bmSent.Add(1)
	w.bmTicks.Add(1)
	if err := w.sink.flush(); err != nil {
		return errWatchEnded
	}
	return nil
}

// bookmarkTimer says when a bookmark is due: every BookmarkInterval and, as from the
// kube-apiserver, once more about two seconds before the watch times out. Without
// bookmarks its channel is nil.
type bookmarkTimer struct {
	t        *time.Timer
	interval time.Duration
	end      time.Time
}

func newBookmarkTimer(enabled bool, interval, timeout time.Duration) *bookmarkTimer {
	b := &bookmarkTimer{interval: interval, end: time.Now().Add(timeout)}
	if enabled {
		b.t = time.NewTimer(b.next())
	}
	return b
}

func (b *bookmarkTimer) next() time.Duration {
	d := b.interval
	if pre := time.Until(b.end.Add(-2 * time.Second)); pre > 0 && pre < d {
		d = pre
	}
	return d
}

// C is the timer's channel (nil without bookmarks: it never fires).
func (b *bookmarkTimer) C() <-chan time.Time {
	if b.t == nil {
		return nil
	}
	return b.t.C
}

func (b *bookmarkTimer) reset() { b.t.Reset(b.next()) }

func (b *bookmarkTimer) stop() {
	if b.t != nil {
		b.t.Stop()
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// convert returns the frame this watcher sends for ev (nil: nothing), turning selector
// transitions into ADDED and DELETED as the kube-apiserver does.
func (w *watcher) convert(ev *event) []byte {
	if w.f.empty() && w.f.namespace == "" {
		return w.eventFrame(ev.typ, ev.obj, nil, ev.frame)
	}
	cur := ev.typ != apiclient.Deleted && w.f.matches(ev.obj)
	old := ev.prev != nil && w.f.matches(ev.prev)
	switch {
	case ev.typ == apiclient.Added:
		if cur {
			return w.eventFrame(ev.typ, ev.obj, nil, ev.frame)
		}
	case ev.typ == apiclient.Deleted:
		if old {
			return w.eventFrame(ev.typ, ev.obj, nil, ev.frame)
		}
	case cur && old:
		return w.eventFrame(ev.typ, ev.obj, nil, ev.frame)
	case cur:
		return w.eventFrame(apiclient.Added, ev.obj, nil, nil)
	case old:
		return w.eventFrame(apiclient.Deleted, nil, ev.prev.withRV(ev.rv), nil)
	}
	return nil
}

func (w *watcher) send(frame []byte, rv uint64, counts bool) error {
	if err := w.sink.write(frame); err != nil {
		return errWatchEnded
	}
	if counts {
		w.sent.Add(1)
	}
	if rv > w.lastRV.Load() {
		w.lastRV.Store(rv)
	}
	return nil
}

func (w *watcher) bookmarkFrame(rv uint64, initialEnd bool, padding int) []byte {
	meta := map[string]any{"resourceVersion": strconv.FormatUint(rv, 10)}
	ann := map[string]any{}
	if initialEnd {
		ann[apiclient.InitialEventsEndAnnotation] = "true"
	}
	if padding > 0 {
		ann["apitest.informerkit.io/padding"] = strings.Repeat("x", padding)
	}
	if len(ann) > 0 {
		meta["annotations"] = ann
	}
	obj := map[string]any{"kind": w.res.typ.Kind, "apiVersion": w.res.typ.GroupVersion().String(), "metadata": meta}
	if !w.out.Plain() {
		return w.objectFrame(apiclient.Bookmark, obj)
	}
	b, _ := json.Marshal(map[string]any{"type": apiclient.Bookmark, "object": obj})
	return append(b, '\n')
}

func (w *watcher) sendBookmark(rv uint64, initialEnd bool, padding int) error {
	return w.send(w.bookmarkFrame(rv, initialEnd, padding), rv, false)
}

// sendError writes an ERROR event and ends the watch.
func (w *watcher) sendError(st *meta.Status) error {
	if err := w.sink.write(w.errorFrame(st)); err != nil {
		return nil
	}
	w.sink.flush()
	return nil
}
