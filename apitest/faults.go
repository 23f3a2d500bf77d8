package apitest

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/meta"
)

// FaultKind names a fault in the fault log.
type FaultKind string

// The faults the server records. All but FaultSlowWatcherClosed and
// FaultWebSocketRefused are injected by a test.
const (
	// FaultCutWatch: a watch stream was ended cleanly (CutWatches, CutWatchesAfter).
	FaultCutWatch FaultKind = "CutWatch"
	// FaultAbortWatch: a watch connection was dropped without a clean end (AbortWatches).
	FaultAbortWatch FaultKind = "AbortWatch"
	// FaultWatchError: an ERROR event was sent and the watch ended (ExpireWatches,
	// SendWatchError).
	FaultWatchError FaultKind = "WatchError"
	// FaultStall / FaultStallEnd: a watch stopped sending anything, and resumed.
	FaultStall    FaultKind = "Stall"
	FaultStallEnd FaultKind = "StallEnd"
	// FaultPartition: a watch stopped sending anything and stopped answering WebSocket pings
	// (PartitionWatches); it ends with a FaultStallEnd.
	FaultPartition FaultKind = "Partition"
	// FaultCorruptFrame / FaultOversizedFrame: a frame that does not decode, or a huge one.
	FaultCorruptFrame   FaultKind = "CorruptFrame"
	FaultOversizedFrame FaultKind = "OversizedFrame"
	// FaultForeignEvent: an event the test made up was sent (SendWatchEvent).
	FaultForeignEvent FaultKind = "ForeignEvent"
	// FaultFailRequest: a request was answered with an injected error (FailRequests,
	// FailRequestsWithStatus).
	FaultFailRequest FaultKind = "FailRequest"
	// FaultResetRequest: a request was dropped without an answer (ResetRequests).
	FaultResetRequest FaultKind = "ResetRequest"
	// FaultHangRequest: a request was read and never answered (HangRequests).
	FaultHangRequest FaultKind = "HangRequest"
	// FaultTruncateResponse / FaultCorruptResponse: a response was cut off part-way, or went
	// on with garbage (TruncateResponses, CorruptResponses).
	FaultTruncateResponse FaultKind = "TruncateResponse"
	FaultCorruptResponse  FaultKind = "CorruptResponse"
	// FaultCompact: the history was compacted (Compact).
	FaultCompact FaultKind = "Compact"
	// FaultWriteDelay: slow writes were switched on or off (SetWriteDelay).
	FaultWriteDelay FaultKind = "WriteDelay"
	// FaultSlowWatcherClosed: a watcher fell further behind than the history and was closed,
	// as the kube-apiserver closes watchers that cannot keep up. Not injected.
	FaultSlowWatcherClosed FaultKind = "SlowWatcherClosed"
	// FaultWebSocketRefused: a WebSocket upgrade was refused (Options.RefuseWebSocket).
	FaultWebSocketRefused FaultKind = "WebSocketRefused"
)

// FaultRecord is one entry of the fault log.
type FaultRecord struct {
	Seq      int64
	Time     time.Time
	Kind     FaultKind
	Resource string
	// Verb is set for FaultFailRequest.
	Verb Verb
	// WatchID is the watch the fault hit (see WatchInfo.ID), 0 if none.
	WatchID int64
	// Code is the HTTP or Status code of an injected error.
	Code   int
	Detail string
}

// Faults is the fault injection of a Server: the watches it cuts, stalls, partitions or
// feeds with errors and bad frames, the requests it fails, drops, hangs or answers with a
// broken body, the writes it delays, and the log of what it did. Get it with
// Server.Faults; it is safe for concurrent use.
type Faults struct{ s *Server }

// Faults returns the server's fault injection: srv.Faults().CutWatches("pods").
func (s *Server) Faults() *Faults { return &Faults{s: s} }

func (s *Server) recordFault(f FaultRecord) {
	s.logMu.Lock()
	f.Seq = int64(len(s.faults) + 1)
	f.Time = time.Now()
	s.faults = append(s.faults, f)
	s.notifyChangeLogLocked()
	s.logMu.Unlock()
}

// Records returns the fault log, oldest first.
func (f *Faults) Records() []FaultRecord {
	s := f.s
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return append([]FaultRecord(nil), s.faults...)
}

// RecordsOf returns the logged faults of one kind.
func (f *Faults) RecordsOf(kind FaultKind) []FaultRecord {
	var out []FaultRecord
	for _, r := range f.Records() {
		if r.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

// CutWatches ends every open watch of resource ("" for all) cleanly, as a server ending a
// watch at its timeout does: the client sees the end of the stream without an ERROR.
// It returns the number of watches hit.
func (f *Faults) CutWatches(resource string) (int, error) {
	s := f.s
	return s.forWatchers(resource, func(w *watcher) { w.push(watchCtl{kind: ctlCut}) })
}

// CutWatchesAfter ends every open watch of resource cleanly after it has sent n more
// ADDED/MODIFIED/DELETED events (bookmarks do not count).
func (f *Faults) CutWatchesAfter(resource string, n int) (int, error) {
	s := f.s
	return s.forWatchers(resource, func(w *watcher) { w.push(watchCtl{kind: ctlCutAfter, n: n}) })
}

// AbortWatches drops the connection of every open watch of resource without ending the
// stream (HTTP/1.1: the TCP connection closes mid-stream; HTTP/2: the stream is reset;
// WebSocket: the connection closes without a close frame).
func (f *Faults) AbortWatches(resource string) (int, error) {
	s := f.s
	return s.forWatchers(resource, func(w *watcher) { w.push(watchCtl{kind: ctlAbort}) })
}

// ExpireWatches sends every open watch of resource an ERROR event with a 410 Expired
// Status ("too old resource version"), after which the watch ends, as the kube-apiserver
// does when a watcher's resourceVersion is compacted.
func (f *Faults) ExpireWatches(resource string) (int, error) {
	s := f.s
	return s.forWatchers(resource, func(w *watcher) {
		rv := w.lastRV.Load()
		w.push(watchCtl{kind: ctlError, status: apierr.Expired(fmt.Sprintf("too old resource version: %d (%d)", rv, rv+1))})
	})
}

// SendWatchError sends every open watch of resource an ERROR event carrying st, then ends
// the watch.
func (f *Faults) SendWatchError(resource string, st *meta.Status) (int, error) {
	s := f.s
	return s.forWatchers(resource, func(w *watcher) { w.push(watchCtl{kind: ctlError, status: st}) })
}

// StallWatches makes every open watch of resource hold its connection and send nothing,
// not even bookmarks, for d (d <= 0: until release is called). Events of writes made after
// StallWatches returns are sent when the stall ends (unless the watcher fell out of the
// history), never before: every fault acts before the events of later writes.
// release may be called any number of times.
func (f *Faults) StallWatches(resource string, d time.Duration) (release func(), n int, err error) {
	s := f.s
	ch := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	n, err = s.forWatchers(resource, func(w *watcher) { w.push(watchCtl{kind: ctlStall, d: d, release: ch}) })
	return release, n, err
}

// PartitionWatches is StallWatches as a network partition between the client and the
// server makes it: nothing gets through in either direction, so a WebSocket watch also stops
// answering the client's pings (a client health check finds the connection dead), where a
// stalled watch on a live server keeps answering them. HTTP/2 pings are answered by the
// connection, which other requests share: over HTTP/2 and HTTP/1.1 it is a stall.
func (f *Faults) PartitionWatches(resource string, d time.Duration) (release func(), n int, err error) {
	s := f.s
	ch := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	n, err = s.forWatchers(resource, func(w *watcher) {
		w.push(watchCtl{kind: ctlStall, d: d, release: ch, partition: true})
	})
	return release, n, err
}

// SendCorruptFrame writes a frame that is not valid JSON on every open watch of resource.
// The stream stays open.
func (f *Faults) SendCorruptFrame(resource string) (int, error) {
	s := f.s
	return s.forWatchers(resource, func(w *watcher) { w.push(watchCtl{kind: ctlCorrupt}) })
}

// SendWatchEvent writes an event of type typ carrying obj (an object in its JSON form, with
// its apiVersion and kind) on every open watch of resource, encoded as the watch's other
// events (JSON, or protobuf for a kind the schema table has), and nothing else: obj need
// not be an object of the resource, nor stored, nor newer than anything, as from a broken
// or hostile server. The stream stays open.
func (f *Faults) SendWatchEvent(resource string, typ apiclient.EventType, obj map[string]any) (int, error) {
	s := f.s
	return s.forWatchers(resource, func(w *watcher) { w.push(watchCtl{kind: ctlForeign, event: typ, object: obj}) })
}

// SendOversizedFrame writes a valid BOOKMARK frame of at least size bytes (a padding
// annotation) on every open watch of resource. The stream stays open.
func (f *Faults) SendOversizedFrame(resource string, size int) (int, error) {
	s := f.s
	return s.forWatchers(resource, func(w *watcher) { w.push(watchCtl{kind: ctlOversize, n: size}) })
}

type failRule struct {
	verb        Verb
	resource    string
	subresource string // "" matches the resource and all its subresources
	left        int
	code        int
	retryAfter  int
	status      *meta.Status // FailRequestsWithStatus: the answer, as given
	reset       bool         // ResetRequests: no answer, the connection is reset
	hang        bool         // HangRequests: no answer, the connection stays open
	cut         *cutRule     // TruncateResponses, CorruptResponses: answered, then broken
}

// FailRequests answers the next n requests of verb (VerbAny: all) on resource ("" for
// all) with the HTTP status code (429, 500, 503, 504, 410, ...) and a matching Status body;
// resource is any name the request filters take ("webapps", "webapps.example.com", a short
// name), with "/subresource" to fail only that subresource ("webapps/status",
// "pods/eviction"; without it, the resource's subresources fail too);
// retryAfter > 0 adds a Retry-After header and details.retryAfterSeconds (whole seconds,
// at least 1). Rules are consumed in the order they were added.
func (f *Faults) FailRequests(verb Verb, resource string, n, code int, retryAfter time.Duration) error {
	s := f.s
	if code < 400 || code > 599 {
		return fmt.Errorf("apitest: FailRequests code %d is not an HTTP error", code)
	}
	secs := 0
	if retryAfter > 0 {
		secs = max(1, int((retryAfter+time.Second-1)/time.Second))
	}
	return s.addFailRule(resource, &failRule{verb: verb, left: n, code: code, retryAfter: secs})
}

// FailRequestsWithStatus answers the next n requests of verb (VerbAny: all) on resource (""
// for all) with st, exactly as given, with st.Code as the HTTP status (and a Retry-After
// header if st.Details.RetryAfterSeconds is set), as FailRequests does with a Status of its
// own. Use it for answers FailRequests does not make, such as those of older kube-apiservers.
func (f *Faults) FailRequestsWithStatus(verb Verb, resource string, n int, st *meta.Status) error {
	s := f.s
	if st == nil || st.Code < 400 || st.Code > 599 {
		return fmt.Errorf("apitest: FailRequestsWithStatus needs a Status with an HTTP error code")
	}
	retry := 0
	if st.Details != nil {
		retry = int(st.Details.RetryAfterSeconds)
	}
	return s.addFailRule(resource, &failRule{verb: verb, left: n, code: int(st.Code), retryAfter: retry, status: st})
}

// ResetRequests drops the next n requests of verb (VerbAny: all) on resource ("" for all)
// without an answer, as a proxy or load balancer in front of an API server that is down
// does: over HTTP/1.1 (WebSocket handshakes included) the TCP connection is reset (RST), over
// HTTP/2 the request's stream is reset. The client sees a transport error, not a status: not
// "connection refused" (nothing listens), but "connection reset by peer" or an unexpected
// EOF. The request log records CodeDropped.
func (f *Faults) ResetRequests(verb Verb, resource string, n int) error {
	s := f.s
	return s.addFailRule(resource, &failRule{verb: verb, left: n, reset: true})
}

// CodeDropped is Request.Code of a request the server dropped without an answer
// (ResetRequests).
const CodeDropped = -1

// HangRequests reads the next n requests of verb (VerbAny: all) on resource ("" for all)
// and never answers them: no status, no headers, the connection kept open, until the client
// gives up (or the server closes), as a server stuck behind a live connection does. A
// client without a deadline waits for good. The request log records CodeHung.
func (f *Faults) HangRequests(verb Verb, resource string, n int) error {
	s := f.s
	return s.addFailRule(resource, &failRule{verb: verb, left: n, hang: true})
}

// CodeHung is Request.Code of a request the server never answered (HangRequests).
const CodeHung = -2

// ReleaseHungRequests ends every request HangRequests holds at that moment as ResetRequests
// would (the connection reset, HTTP/2: the stream), as a server that gives up on them, and
// returns how many there were.
func (f *Faults) ReleaseHungRequests() int {
	s := f.s
	s.logMu.Lock()
	defer s.logMu.Unlock()
	n := s.hung
	if s.hungRelease != nil {
		close(s.hungRelease)
	}
	s.hungRelease, s.hung = make(chan struct{}), 0
	return n
}

// hangUntilReleased holds a request taken by HangRequests until the client goes away, the
// server closes, or ReleaseHungRequests resets it.
func (s *Server) hangUntilReleased(w http.ResponseWriter, r *http.Request) {
	s.logMu.Lock()
	if s.hungRelease == nil {
		s.hungRelease = make(chan struct{})
	}
	release := s.hungRelease
	s.hung++
	s.logMu.Unlock()
	select {
	case <-r.Context().Done(): // the client went away, or the server is closing
		s.logMu.Lock()
		if s.hungRelease == release {
			s.hung--
		}
		s.logMu.Unlock()
	case <-release:
		resetConnection(w, r)
	}
}

func (s *Server) addFailRule(resource string, r *failRule) error {
	if resource != "" {
		name, sub, err := s.resolveRef(resource)
		if err != nil {
			return err
		}
		r.resource, r.subresource = name, sub
	}
	s.logMu.Lock()
	s.failRules = append(s.failRules, r)
	s.logMu.Unlock()
	return nil
}

// takeFailure consumes a matching failure rule and returns a copy of it.
func (s *Server) takeFailure(verb Verb, resource, sub string, rec *Request) (failRule, bool) {
	var f failRule
	ok := false
	s.logMu.Lock()
	for i, r := range s.failRules {
		if (r.verb == VerbAny || r.verb == verb) && (r.resource == "" || r.resource == resource) &&
			(r.subresource == "" || r.subresource == sub) {
			r.left--
			if r.left <= 0 {
				s.failRules = append(s.failRules[:i:i], s.failRules[i+1:]...)
			}
			f, ok = *r, true
			break
		}
	}
	s.logMu.Unlock()
	if ok {
		kind, detail := FaultFailRequest, fmt.Sprintf("request %d", rec.Seq)
		switch {
		case f.reset:
			kind = FaultResetRequest
		case f.hang:
			kind = FaultHangRequest
		case f.cut != nil && f.cut.garbage:
			kind = FaultCorruptResponse
		case f.cut != nil:
			kind = FaultTruncateResponse
		}
		s.recordFault(FaultRecord{Kind: kind, Resource: resource, Verb: verb, Code: f.code, Detail: detail})
	}
	return f, ok
}

// answerFailure answers a request that a failure rule took.
func (s *Server) answerFailure(w http.ResponseWriter, r *http.Request, f failRule) {
	if f.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(f.retryAfter))
	}
	switch {
	case f.reset:
		s.setRequestCodeFromWriter(w, CodeDropped)
		resetConnection(w, r)
	case f.hang:
		s.setRequestCodeFromWriter(w, CodeHung)
		s.hangUntilReleased(w, r)
	case f.status != nil:
		writeJSON(w, f.code, f.status)
	default:
		writeJSON(w, f.code, errInjected(f.code, int32(f.retryAfter)))
	}
}

// resetConnection drops the request without an answer: an HTTP/1.1 connection is closed
// with a TCP reset (SO_LINGER 0), an HTTP/2 stream is reset.
func resetConnection(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor == 1 {
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			raw := conn
			if tc, ok := conn.(*tls.Conn); ok {
				raw = tc.NetConn()
			}
			if tcp, ok := raw.(*net.TCPConn); ok {
				tcp.SetLinger(0)
			}
			raw.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// Compact drops the history of resource ("" for all) up to the current resourceVersion,
// as etcd compaction does: watches and continue tokens from an older resourceVersion then
// get 410 Expired. Open watches are not affected.
func (s *Server) Compact(resource string) error {
	s.mu.Lock()
	r, err := s.lookupLocked(resource)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	rv := s.rv
	for _, x := range s.order {
		if r == nil || x == r {
			x.compactedRV = rv
		}
	}
	s.mu.Unlock()
	name := ""
	if r != nil {
		name = r.typ.name()
	}
	s.recordFault(FaultRecord{Kind: FaultCompact, Resource: name, Detail: fmt.Sprintf("compacted at %d", rv)})
	return nil
}

// SetWriteDelay makes the server wait d before every response and every watch frame of
// resource ("" for all); d = 0 switches it off.
func (f *Faults) SetWriteDelay(resource string, d time.Duration) error {
	s := f.s
	s.mu.Lock()
	r, err := s.lookupLocked(resource)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	name := ""
	if r != nil {
		name = r.typ.name()
	}
	if d <= 0 {
		delete(s.writeWait, name)
	} else {
		s.writeWait[name] = d
	}
	s.hasWriteWait.Store(len(s.writeWait) > 0)
	s.mu.Unlock()
	s.recordFault(FaultRecord{Kind: FaultWriteDelay, Resource: name, Detail: d.String()})
	return nil
}

func (s *Server) writeDelay(r *resource) time.Duration {
	if !s.hasWriteWait.Load() {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.writeWait) == 0 {
		return 0
	}
	return max(s.writeWait[""], s.writeWait[r.typ.name()])
}
