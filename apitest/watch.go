package apitest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/negotiation"
	"github.com/informerkit/informerkit/meta"
)

// WatchInfo describes an open (or closed) watch.
type WatchInfo struct {
	ID        int64
	Resource  string
	Namespace string
	Query     url.Values
	// Protocol is "HTTP/1.1", "HTTP/2.0" or "websocket".
	Protocol string
	Opened   time.Time
	// StartRV is the resourceVersion the watch asked for ("" or "0": the current state).
	StartRV string
	// EventsSent counts ADDED/MODIFIED/DELETED events written so far; LastRV is the
	// resourceVersion of the last event or bookmark written.
	EventsSent int64
	LastRV     uint64
	// BookmarkTicks counts the times a bookmark was due (allowWatchBookmarks: every
	// BookmarkInterval and before the timeout), and BookmarksSent those that were written
	// (a bookmark is skipped when there is nothing newer to confirm). Tests wait on
	// BookmarkTicks to know that bookmark intervals have passed without sleeping.
	BookmarkTicks int64
	BookmarksSent int64
}

type ctlKind int

const (
	ctlCut ctlKind = iota
	ctlCutAfter
	ctlAbort
	ctlError
	ctlStall
	ctlCorrupt
	ctlOversize
)

type watchCtl struct {
	kind    ctlKind
	n       int
	d       time.Duration
	release chan struct{}
	status  *meta.Status
	// partition: a ctlStall that also stops answering WebSocket pings (PartitionWatches).
	partition bool
}

// watcher is one open watch stream.
type watcher struct {
	id       int64
	s        *Server
	res      *resource
	f        *filter
	info     WatchInfo
	sent     atomic.Int64
	lastRV   atomic.Uint64
	bmTicks  atomic.Int64
	bmSent   atomic.Int64
	sink     sink
	bookmark bool
	// partitioned: a PartitionWatches is in progress; a WebSocket watch stops answering pings.
	partitioned atomic.Bool

	ctlMu sync.Mutex
	ctl   []watchCtl
	wake  chan struct{}

	cutAfter int64 // >0: end the stream when sent reaches it

	// out is the negotiated representation of events (watchenc.go); headersSent records
	// that a Table watch has sent its column definitions (only the first event has them).
	out         negotiation.Output
	headersSent bool
}

func (w *watcher) push(c watchCtl) {
	w.ctlMu.Lock()
	w.ctl = append(w.ctl, c)
	w.ctlMu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// hasCtl reports whether faults are waiting to be applied.
func (w *watcher) hasCtl() bool {
	w.ctlMu.Lock()
	defer w.ctlMu.Unlock()
	return len(w.ctl) > 0
}

func (w *watcher) takeCtl() []watchCtl {
	w.ctlMu.Lock()
	defer w.ctlMu.Unlock()
	c := w.ctl
	w.ctl = nil
	return c
}

func (w *watcher) snapshotInfo() WatchInfo {
	i := w.info
	i.Query = cloneValues(i.Query)
	i.EventsSent = w.sent.Load()
	i.LastRV = w.lastRV.Load()
	i.BookmarkTicks = w.bmTicks.Load()
	i.BookmarksSent = w.bmSent.Load()
	return i
}

// sink writes frames to a chunked response or a WebSocket.
type sink interface {
	write(frame []byte) error // frame ends with '\n'
	flush() error
}

type chunkedSink struct {
	bw *bufio.Writer
	rc *http.ResponseController
}

func (c *chunkedSink) write(frame []byte) error { _, err := c.bw.Write(frame); return err }
func (c *chunkedSink) flush() error {
	if err := c.bw.Flush(); err != nil {
		return err
	}
	return c.rc.Flush()
}

type wsSink struct {
	conn   *websocket.Conn
	binary bool // protobuf frames: binary messages, as they are
}

func (c *wsSink) write(frame []byte) error {
	if c.binary {
		return c.conn.WriteMessage(websocket.BinaryMessage, frame)
	}
	return c.conn.WriteMessage(websocket.TextMessage, frame[:len(frame)-1])
}
func (c *wsSink) flush() error { return nil }

var errWatchEnded = errors.New("watch ended")

func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

func websocketProtocols(r *http.Request) []string {
	var out []string
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(h, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func boolParam(q url.Values, k string) (bool, bool) {
	v, ok := q[k]
	if !ok || len(v) == 0 {
		return false, false
	}
	b, _ := strconv.ParseBool(v[0])
	return b, true
}

func (s *Server) handleWatch(w http.ResponseWriter, r *http.Request, ri *reqInfo) {
	q := r.URL.Query()
	res := ri.res
	sendInitial, hasSIE := boolParam(q, "sendInitialEvents")
	switch s.opts.InitialEvents {
	case InitialEventsIgnored:
		hasSIE, sendInitial = false, false
		q.Del("sendInitialEvents")
		q.Del("resourceVersionMatch")
	case InitialEventsRefused:
		if hasSIE {
			errs := listOptionErrors(q, true)
			errs = append(errs, apierr.ForbiddenValue("sendInitialEvents", "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"))
			writeStatus(w, apierr.Invalid("ListOptions", "meta.k8s.io", "", errs))
			return
		}
	}
	if errs := listOptionErrors(q, true); len(errs) > 0 {
		writeStatus(w, apierr.Invalid("ListOptions", "meta.k8s.io", "", errs))
		return
	}
	f, st := s.parseFilter(r, ri)
	if st != nil {
		writeStatus(w, st)
		return
	}
	bookmarks, _ := boolParam(q, "allowWatchBookmarks")
	timeout := s.opts.WatchTimeout
	if v := q.Get("timeoutSeconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			writeStatus(w, apierr.BadRequest("timeoutSeconds: "+err.Error()))
			return
		}
		if n > 0 {
			timeout = time.Duration(n) * time.Second
		}
	}
	rvParam := q.Get("resourceVersion")
	var want uint64
	if rvParam != "" && rvParam != "0" {
		if want, st = parseRV(rvParam); st != nil {
			writeStatus(w, st)
			return
		}
	}
	if isWebSocket(r) && r.Header.Get("Origin") == "" {
		// The kube-apiserver's WebSocket handler (golang.org/x/net/websocket) refuses a
		// handshake without an Origin.
		http.Error(w, "websocket: missing Origin header", http.StatusForbidden)
		return
	}
	if isWebSocket(r) && s.opts.RefuseWebSocket {
		s.recordFault(FaultRecord{Kind: FaultWebSocketRefused, Resource: res.typ.name()})
		writeStatus(w, apierr.New(http.StatusNotImplemented, meta.StatusReasonUnknown, "apitest: WebSocket upgrades are refused by this server"))
		return
	}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		// End the watch when the server closes.
		select {
		case <-s.ctx.Done():
			cancel()
		case <-ctx.Done():
		}
	}()

	// Register the watch and take its starting point before the response starts, as the
	// kube-apiserver does: once the client has the response, no later change is missed.
	protocol := r.Proto
	if isWebSocket(r) {
		protocol = "websocket"
	}
	wt := &watcher{s: s, res: res, f: f, bookmark: bookmarks, wake: make(chan struct{}, 1), out: outputOf(w)}
	if wt.out.As == "PartialObjectMetadataList" {
		writeStatus(w, apierr.New(http.StatusNotAcceptable, meta.StatusReasonNotAcceptable,
			fmt.Sprintf("you requested PartialObjectMetadataList, but the requested object is not a list (%s)", goTypeName(res, false))))
		return
	}
	s.mu.Lock()
	s.nextWatch++
	wt.id = s.nextWatch
	wt.info = WatchInfo{ID: wt.id, Resource: res.typ.name(), Namespace: ri.namespace, Query: r.URL.Query(),
		Protocol: protocol, Opened: time.Now(), StartRV: rvParam}
	s.mu.Unlock()
	prep := s.prepareWatch(ctx, wt, want, hasSIE, sendInitial)
	if prep.err == nil {
		defer func() {
			s.mu.Lock()
			delete(s.watchers, wt.id)
			s.mu.Unlock()
			s.notifyChange()
		}()
	}

	// Start the stream.
	var sk sink
	var wsConn *websocket.Conn
	if isWebSocket(r) {
		up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
		var hdr http.Header
		for _, p := range websocketProtocols(r) {
			if !strings.HasPrefix(p, "base64url.bearer.authorization.k8s.io.") {
				hdr = http.Header{"Sec-WebSocket-Protocol": {p}}
				break
			}
		}
		conn, err := up.Upgrade(w, r, hdr)
		if err != nil {
			return // the upgrader has answered
		}
		s.setRequestCodeFromWriter(w, http.StatusSwitchingProtocols)
		wsConn = conn
		sk = &wsSink{conn: conn, binary: wt.out.Format == negotiation.Protobuf}
		conn.SetPingHandler(func(data string) error {
			if wt.partitioned.Load() {
				return nil // nothing gets through a partition
			}
			err := conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
			if err == websocket.ErrCloseSent {
				return nil
			}
			return err
		})
		readDone := make(chan struct{})
		go func() {
			defer close(readDone)
			for {
				if _, _, err := conn.ReadMessage(); err != nil {
					cancel()
					return
				}
			}
		}()
		defer func() {
			conn.Close()
			<-readDone
		}()
	} else {
		ct := negotiation.MediaJSON
		if wt.out.Format == negotiation.Protobuf {
			ct = negotiation.MediaProtobuf + ";stream=watch"
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Cache-Control", "no-cache, private")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		rc.Flush()
		sk = &chunkedSink{bw: bufio.NewWriterSize(w, 32<<10), rc: rc}
	}

	wt.sink = sk
	err := s.runWatch(ctx, wt, prep, timeout)
	if errors.Is(err, errAbort) {
		if wsConn != nil {
			return // the deferred Close drops the connection without a close frame
		}
		panic(http.ErrAbortHandler)
	}
	if wsConn != nil {
		wsConn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	}
}

var errAbort = errors.New("abort")

func (s *Server) setRequestCodeFromWriter(w http.ResponseWriter, code int) {
	if cw, ok := w.(*codeWriter); ok && !cw.done {
		cw.done = true
		s.setRequestCode(cw.rec, code)
	}
}

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
	st := watchStart{snapRV: s.rv, sie: hasSIE && sendInitial}
	switch {
	case hasSIE && sendInitial:
		st.initial = res.snapshot(s.rv)
		st.cursor = res.end()
	case hasSIE && !sendInitial && want == 0:
		st.cursor = res.end()
	case !hasSIE && want == 0:
		st.initial = res.snapshot(s.rv)
		st.cursor = res.end()
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

// runWatch streams events until the watch ends. It returns errAbort when the connection
// must be dropped, nil on a clean end.
func (s *Server) runWatch(ctx context.Context, w *watcher, st watchStart, timeout time.Duration) error {
	if st.err != nil {
		return w.sendError(st.err)
	}
	res := w.res
	initial, cursor, snapRV := st.initial, st.cursor, st.snapRV
	s.notifyChange()
	s.notifyWatchOpened(w)

	for _, o := range initial {
		if w.f.matches(o) {
			if err := w.send(w.eventFrame(apiclient.Added, o, nil, nil), o.rv, true); err != nil {
				return err
			}
		}
	}
	if st.sie && w.bookmark {
		if err := w.sendBookmark(snapRV, true, 0); err != nil {
			return err
		}
	}
	if err := w.sink.flush(); err != nil {
		return nil
	}

	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	// Bookmarks come every BookmarkInterval and, as from the kube-apiserver, once more
	// about two seconds before the watch times out.
	var tick <-chan time.Time
	var bmTimer *time.Timer
	end := time.Now().Add(timeout)
	nextBookmark := func() time.Duration {
		d := s.opts.BookmarkInterval
		if pre := time.Until(end.Add(-2 * time.Second)); pre > 0 && pre < d {
			d = pre
		}
		return d
	}
	if w.bookmark {
		bmTimer = time.NewTimer(nextBookmark())
		defer bmTimer.Stop()
		tick = bmTimer.C
	}
	bookmarkDue := false
	for {
		// Faults first.
		for _, c := range w.takeCtl() {
			if err := w.applyCtl(ctx, c); err != nil {
				return err
			}
		}
		s.mu.Lock()
		if w.hasCtl() {
			// A fault injected before a write must act before that write's event is sent:
			// the write appended under s.mu after the push, so a fault that arrived since
			// the loop's top is seen here, and applied first.
			s.mu.Unlock()
			continue
		}
		if cursor < res.base {
			behind := res.base - cursor // read under s.mu: append moves res.base
			s.mu.Unlock()
			s.recordFault(FaultRecord{Kind: FaultSlowWatcherClosed, Resource: res.typ.name(), WatchID: w.id,
				Detail: fmt.Sprintf("watcher fell %d events behind the history window", behind)})
			return nil
		}
		n := min(int(res.end()-cursor), 1024)
		evs := make([]*event, n)
		copy(evs, res.events[cursor-res.base:])
		curRV := res.progressRV
		if s.opts.ProgressNotify {
			curRV = s.rv
		}
		notify := res.notify
		s.mu.Unlock()

		if n > 0 {
			for _, ev := range evs {
				frame := w.convert(ev)
				cursor++
				if frame == nil {
					continue
				}
				if d := s.writeDelay(res); d > 0 {
					if !sleepCtx(ctx, d) {
						return nil
					}
				}
				if err := w.send(frame, ev.rv, true); err != nil {
					return err
				}
				if w.cutAfter > 0 && w.sent.Load() >= w.cutAfter {
					w.sink.flush()
					s.recordFault(FaultRecord{Kind: FaultCutWatch, Resource: res.typ.name(), WatchID: w.id, Detail: "after events"})
					return nil
				}
			}
			if err := w.sink.flush(); err != nil {
				return nil
			}
			continue
		}
		if bookmarkDue {
			bookmarkDue = false
			if curRV <= w.lastRV.Load() {
				w.bmTicks.Add(1)
				s.notifyChange()
				goto wait // nothing new to confirm: the watch cache sends no bookmark either
			}
			if err := w.sendBookmark(curRV, false, 0); err != nil {
				return err
			}
			w.bmSent.Add(1)
			w.bmTicks.Add(1)
			s.notifyChange()
			if err := w.sink.flush(); err != nil {
				return nil
			}
		}
	wait:
		select {
		case <-notify:
		case <-w.wake:
		case <-tick:
			bookmarkDue = true
			bmTimer.Reset(nextBookmark())
		case <-deadline.C:
			return nil
		case <-ctx.Done():
			return nil
		}
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

// applyCtl carries out one injected fault; a non-nil error ends the watch.
func (w *watcher) applyCtl(ctx context.Context, c watchCtl) error {
	s := w.s
	name := w.res.typ.name()
	switch c.kind {
	case ctlCut:
		w.sink.flush()
		s.recordFault(FaultRecord{Kind: FaultCutWatch, Resource: name, WatchID: w.id})
		return errWatchEnded
	case ctlAbort:
		s.recordFault(FaultRecord{Kind: FaultAbortWatch, Resource: name, WatchID: w.id})
		return errAbort
	case ctlCutAfter:
		if c.n <= 0 {
			w.sink.flush()
			s.recordFault(FaultRecord{Kind: FaultCutWatch, Resource: name, WatchID: w.id, Detail: "after events"})
			return errWatchEnded
		}
		w.cutAfter = w.sent.Load() + int64(c.n)
	case ctlError:
		s.recordFault(FaultRecord{Kind: FaultWatchError, Resource: name, WatchID: w.id, Code: int(c.status.Code), Detail: c.status.Message})
		w.sendError(c.status)
		return errWatchEnded
	case ctlCorrupt:
		s.recordFault(FaultRecord{Kind: FaultCorruptFrame, Resource: name, WatchID: w.id})
		// Balanced braces (so a framing reader hands it over) but not JSON.
		w.sink.write(w.corruptFrame())
		w.sink.flush()
	case ctlOversize:
		s.recordFault(FaultRecord{Kind: FaultOversizedFrame, Resource: name, WatchID: w.id, Detail: strconv.Itoa(c.n) + " bytes"})
		w.sink.write(w.bookmarkFrame(w.lastRV.Load(), false, c.n))
		w.sink.flush()
	case ctlStall:
		w.sink.flush()
		kind := FaultStall
		if c.partition {
			kind = FaultPartition
			w.partitioned.Store(true)
			defer w.partitioned.Store(false)
		}
		s.recordFault(FaultRecord{Kind: kind, Resource: name, WatchID: w.id, Detail: c.d.String()})
		var timer <-chan time.Time
		if c.d > 0 {
			t := time.NewTimer(c.d)
			defer t.Stop()
			timer = t.C
		}
		for {
			select {
			case <-timer:
				s.recordFault(FaultRecord{Kind: FaultStallEnd, Resource: name, WatchID: w.id})
				return nil
			case <-c.release:
				s.recordFault(FaultRecord{Kind: FaultStallEnd, Resource: name, WatchID: w.id, Detail: "released"})
				return nil
			case <-ctx.Done():
				return errWatchEnded
			case <-w.wake:
				// Only cuts and aborts act during a stall; the rest waits.
				var keep []watchCtl
				for _, o := range w.takeCtl() {
					if o.kind == ctlCut || o.kind == ctlAbort || o.kind == ctlError {
						if err := w.applyCtl(ctx, o); err != nil {
							return err
						}
						continue
					}
					keep = append(keep, o)
				}
				w.ctlMu.Lock()
				w.ctl = append(keep, w.ctl...)
				w.ctlMu.Unlock()
			}
		}
	}
	return nil
}

// Watches returns the open watches of a resource ("" for all), oldest first.
func (s *Server) Watches(resource string) []WatchInfo {
	resource = s.canonical(resource)
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []WatchInfo
	for _, w := range s.watchers {
		if resource == "" || w.info.Resource == resource {
			out = append(out, w.snapshotInfo())
		}
	}
	sortWatchInfos(out)
	return out
}

func sortWatchInfos(ws []WatchInfo) {
	for i := 1; i < len(ws); i++ {
		for j := i; j > 0 && ws[j].ID < ws[j-1].ID; j-- {
			ws[j], ws[j-1] = ws[j-1], ws[j]
		}
	}
}

// WaitForWatches waits until at least n watches of resource ("" for all) are open and
// returns them.
func (s *Server) WaitForWatches(ctx context.Context, resource string, n int) ([]WatchInfo, error) {
	var got []WatchInfo
	err := s.WaitFor(ctx, func() bool {
		got = s.Watches(resource)
		return len(got) >= n
	})
	return got, err
}

type watchSub struct {
	resource string
	ch       chan WatchInfo
}

// NextWatch returns a channel that receives the next watch of resource ("" for any) opened
// after the call, once its initial events are about to be sent.
func (s *Server) NextWatch(resource string) <-chan WatchInfo {
	resource = s.canonical(resource)
	ch := make(chan WatchInfo, 1)
	s.logMu.Lock()
	s.watchSubs = append(s.watchSubs, watchSub{resource: resource, ch: ch})
	s.logMu.Unlock()
	return ch
}

func (s *Server) notifyWatchOpened(w *watcher) {
	info := w.snapshotInfo()
	s.logMu.Lock()
	defer s.logMu.Unlock()
	keep := s.watchSubs[:0]
	for _, sub := range s.watchSubs {
		if sub.resource == "" || sub.resource == info.Resource {
			sub.ch <- info
			continue
		}
		keep = append(keep, sub)
	}
	s.watchSubs = keep
}

// forWatchers runs fn on every open watcher of resource ("" for all) and returns how many.
func (s *Server) forWatchers(resource string, fn func(*watcher)) (int, error) {
	s.mu.Lock()
	r, err := s.lookupLocked(resource)
	if err != nil {
		s.mu.Unlock()
		return 0, err
	}
	var ws []*watcher
	for _, w := range s.watchers {
		if r == nil || w.res == r {
			ws = append(ws, w)
		}
	}
	s.mu.Unlock()
	for _, w := range ws {
		fn(w)
	}
	return len(ws), nil
}
