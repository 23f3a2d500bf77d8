package apitest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"
	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/negotiation"
	"github.com/informerkit/informerkit/meta"
)

// The HTTP side of watches: the request's parameters, and the stream over chunked
// HTTP/1.1, HTTP/2 or WebSocket.

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
	binary bool // protobuf frames: binary messages
}

func (c *wsSink) write(frame []byte) error {
	if c.binary {
		// One WatchEvent per binary message, without the 4-byte length prefix of chunked
		// streams: kube-apiserver frames protobuf watches over WebSocket so (v1.36 and v1.37).
		return c.conn.WriteMessage(websocket.BinaryMessage, frame[4:])
	}
	return c.conn.WriteMessage(websocket.TextMessage, frame[:len(frame)-1])
}
func (c *wsSink) flush() error { return nil }

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

// watchRequest is a watch's parameters, checked.
type watchRequest struct {
	f         *filter
	bookmarks bool
	timeout   time.Duration
	// rv is the resourceVersion parameter; want is it as a number (0 for "" and "0").
	rv   string
	want uint64
	// hasSIE: sendInitialEvents was sent (and is served); sendInitial is its value.
	hasSIE, sendInitial bool
}

// parseWatch reads and checks a watch's parameters as the kube-apiserver does.
func (s *Server) parseWatch(r *http.Request, ri *reqInfo) (watchRequest, *meta.Status) {
	q := r.URL.Query()
	var wr watchRequest
	wr.sendInitial, wr.hasSIE = boolParam(q, "sendInitialEvents")
	switch s.opts.InitialEvents {
	case InitialEventsIgnored:
		wr.hasSIE, wr.sendInitial = false, false
		q.Del("sendInitialEvents")
		q.Del("resourceVersionMatch")
	case InitialEventsRefused:
		if wr.hasSIE {
			errs := listOptionErrors(q, true)
			errs = append(errs, apierr.ForbiddenValue("sendInitialEvents", "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"))
			return wr, apierr.Invalid("ListOptions", "meta.k8s.io", "", errs)
		}
	}
	if errs := listOptionErrors(q, true); len(errs) > 0 {
		return wr, apierr.Invalid("ListOptions", "meta.k8s.io", "", errs)
	}
	if rv := q.Get("resourceVersion"); s.opts.InitialEvents == InitialEventsSupported && !wr.hasSIE &&
		q.Get("resourceVersionMatch") == "" && (rv == "" || rv == "0") {
		// The kube-apiserver's defaulting when WatchList is on (SetListOptionsDefaults): a
		// watch from "" or "0" is a streaming list, which ends its initial events with a
		// bookmark if bookmarks are allowed, and is gzipped as one when asked (1.37).
		wr.hasSIE, wr.sendInitial = true, true
	}
	var st *meta.Status
	if wr.f, st = s.parseFilter(r, ri); st != nil {
		return wr, st
	}
	wr.bookmarks, _ = boolParam(q, "allowWatchBookmarks")
	wr.timeout = s.opts.WatchTimeout
	if v := q.Get("timeoutSeconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return wr, apierr.BadRequest("timeoutSeconds: " + err.Error())
		}
		if n > 0 {
			wr.timeout = time.Duration(n) * time.Second
		}
	}
	wr.rv = q.Get("resourceVersion")
	if wr.rv != "" && wr.rv != "0" {
		if wr.want, st = parseRV(wr.rv); st != nil {
			return wr, st
		}
	}
	return wr, nil
}

// handleWatch serves a watch: it checks the request, registers the watcher at its
// starting point, starts the stream (chunked HTTP or WebSocket) and runs it (watch.go).
func (s *Server) handleWatch(w http.ResponseWriter, r *http.Request, ri *reqInfo) {
	wr, st := s.parseWatch(r, ri)
	if st != nil {
		writeStatus(w, st)
		return
	}
	res := ri.res
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
	out := outputOf(w)
	if out.As == "PartialObjectMetadataList" {
		writeStatus(w, apierr.New(http.StatusNotAcceptable, meta.StatusReasonNotAcceptable,
			fmt.Sprintf("you requested PartialObjectMetadataList, but the requested object is not a list (%s)", goTypeName(res, false))))
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
	wt := &watcher{s: s, res: res, version: ri.version, f: wr.f, bookmark: wr.bookmarks, wake: make(chan struct{}, 1), out: out}
	wt.client = clientName(r)
	protocol := r.Proto
	if isWebSocket(r) {
		protocol = "websocket"
	}
	s.mu.Lock()
	s.nextWatch++
	wt.id = s.nextWatch
	wt.info = WatchInfo{ID: wt.id, Resource: res.typ.name(), Namespace: ri.namespace, Query: r.URL.Query(),
		Protocol: protocol, Opened: time.Now(), StartRV: wr.rv}
	s.mu.Unlock()
	prep := s.prepareWatch(ctx, wt, wr.want, wr.hasSIE, wr.sendInitial)
	if prep.err == nil {
		defer func() {
			s.mu.Lock()
			delete(s.watchers, wt.id)
			s.mu.Unlock()
			s.notifyChange()
		}()
	}

	if !isWebSocket(r) {
		compressStream(w, r, s.rel.gzipsStreamingLists() && wr.hasSIE && wr.sendInitial && wr.bookmarks)
		wt.sink = startChunked(w, out)
		if errors.Is(s.runWatch(ctx, wt, prep, wr.timeout), errAbort) {
			panic(http.ErrAbortHandler)
		}
		return
	}
	conn, done := s.startWebSocket(w, r, wt, cancel)
	if conn == nil {
		return // the upgrader has answered
	}
	defer done()
	if errors.Is(s.runWatch(ctx, wt, prep, wr.timeout), errAbort) {
		return // done drops the connection without a close frame
	}
	conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
}

// startChunked starts a watch's chunked HTTP response in the negotiated format.
func startChunked(w http.ResponseWriter, out negotiation.Output) sink {
	ct := negotiation.MediaJSON
	switch out.Format {
	case negotiation.Protobuf:
		ct = negotiation.MediaProtobuf + ";stream=watch"
	case negotiation.CBOR:
		ct = negotiation.MediaCBORSeq
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()
	return &chunkedSink{bw: bufio.NewWriterSize(w, 32<<10), rc: rc}
}

// startWebSocket upgrades a watch to WebSocket and sets wt's sink. The connection's reader
// calls cancel when the client goes; done closes the connection and waits for the reader.
// A nil conn means the upgrade failed (the upgrader has answered).
func (s *Server) startWebSocket(w http.ResponseWriter, r *http.Request, wt *watcher, cancel func()) (conn *websocket.Conn, done func()) {
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
		return nil, nil
	}
	s.setRequestCodeFromWriter(w, http.StatusSwitchingProtocols)
	wt.sink = &wsSink{conn: conn, binary: wt.out.Format == negotiation.Protobuf}
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
	return conn, func() {
		conn.Close()
		<-readDone
	}
}

func (s *Server) setRequestCodeFromWriter(w http.ResponseWriter, code int) {
	if cw, ok := w.(*codeWriter); ok && !cw.done {
		cw.done = true
		s.setRequestCode(cw.rec, code)
	}
}
