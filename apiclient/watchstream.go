package apiclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/informerkit/informerkit/meta"
)

// eventSource yields the raw frames of a watch stream, one event per frame.
type eventSource interface {
	// next returns the next frame (valid until the following call) and its offset, io.EOF
	// at a clean end, a *DecodeError, or a transport error.
	next() (frame []byte, offset int64, err error)
	// protobuf reports whether the frame returned last is a protobuf WatchEvent message
	// (else a JSON event).
	protobuf() bool
	// close releases the connection; it may be called concurrently with next.
	close()
}

// streamWatcher turns an eventSource into a Watcher[T]. One goroutine decodes frames and
// sends events on an unbuffered channel, so a slow consumer slows the reading and the
// memory held is bounded by one frame.
type streamWatcher[T any] struct {
	ch     chan Event[T]
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	src    eventSource
	kind   string
	dec    *objectDecoder
	pk     *protoKind
	// parallel: large frames may be decoded in parallel (GOMAXPROCS > 1; see parallel.go).
	parallel bool

	// fallbacks: see Fallbacks (set before the watcher is returned, read-only after).
	fallbacks []error

	mu  sync.Mutex
	err error
}

func newStreamWatcher[T any](ctx context.Context, cancel context.CancelFunc, src eventSource, kind string, dc decoding) *streamWatcher[T] {
	w := &streamWatcher[T]{
		dec:    newObjectDecoder(dc),
		ch:     make(chan Event[T]),
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
		src:    src,
		kind:   kind,
		pk:     dc.pk,

		parallel: dc.parallel(),
	}
	stopSrc := context.AfterFunc(ctx, src.close)
	go func() {
		defer close(w.done)
		defer close(w.ch)
		defer src.close()
		defer stopSrc()
		defer w.dec.release()
		w.run()
	}()
	return w
}

// ResultChan returns the channel of events; it is closed when the watch ends.
func (w *streamWatcher[T]) ResultChan() <-chan Event[T] { return w.ch }

// Stop ends the watch and waits until its goroutine has exited and its connection is
// closed. It may be called any number of times, from any goroutine.
func (w *streamWatcher[T]) Stop() {
	w.cancel()
	<-w.done
}

// Err returns why the watch ended once ResultChan is closed: nil for a clean close by the
// server or a Stop, the context's error, the decode error or *Status delivered as an Error
// event, or the transport error that cut the stream (delivered as a clean close, as
// client-go does, so that the reflector re-watches from its last resourceVersion).
func (w *streamWatcher[T]) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Fallbacks returns what the watch gave up to open, in order, as the errors that made it:
// WebSocket for chunked HTTP (ErrWebSocketRefused, Config.WatchProtocol), protobuf for JSON
// (a 406 or 415, Config.DisableProtobuf). Each is logged once per client (per resource for
// protobuf) when it first happens; a later watch of the client opens the fallback directly
// and reports none. The reflector counts them in its Stats.
func (w *streamWatcher[T]) Fallbacks() []error { return w.fallbacks }

func (w *streamWatcher[T]) setErr(err error) {
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
}

func (w *streamWatcher[T]) send(ev Event[T]) bool {
	select {
	case w.ch <- ev:
		return true
	case <-w.ctx.Done():
		return false
	}
}

func (w *streamWatcher[T]) run() {
	for {
		frame, off, err := w.src.next()
		if err != nil {
			w.end(err)
			return
		}
		proto := w.src.protobuf()
		if w.parallel && wantsParallelEvent(len(frame), proto) {
			w.runParallel(frame, off, proto)
			return
		}
		if !w.deliver(w.decode(w.dec, frame, off, proto)) {
			return
		}
	}
}

// decode decodes one frame with d.
func (w *streamWatcher[T]) decode(d *objectDecoder, frame []byte, off int64, proto bool) (Event[T], error) {
	if proto {
		return decodeProtoEvent[T](d, w.pk, frame, w.kind, off)
	}
	return decodeEvent[T](d, frame, w.kind, off)
}

// end records why the stream ended: the source's error (io.EOF at a clean end).
func (w *streamWatcher[T]) end(err error) {
	if w.ctx.Err() != nil {
		if context.Cause(w.ctx) != errStopped {
			w.setErr(context.Cause(w.ctx))
		}
		return
	}
	var de *DecodeError
	if errors.As(err, &de) {
		w.setErr(err)
		w.send(Event[T]{Type: Error, Err: err})
		return
	}
	if err != io.EOF {
		w.setErr(err)
	}
}

// deliver hands one decoded frame over; false ends the watch.
func (w *streamWatcher[T]) deliver(ev Event[T], err error) bool {
	if errors.Is(err, ErrWrongKind) {
		// An object of another kind is dropped, not the watch: the events after it are the
		// resource's again.
		return w.send(Event[T]{Type: Skipped, Err: err})
	}
	if err != nil {
		w.setErr(err)
		w.send(Event[T]{Type: Error, Err: err})
		return false
	}
	if ev.Type == Error {
		if st, ok := meta.AsStatus(ev.Err); ok {
			capRetryAfter(st)
		}
		w.setErr(ev.Err)
		w.send(ev)
		return false
	}
	return w.send(ev)
}

// runParallel is the rest of run from the first frame worth decoding in parallel (see
// parallel.go): this goroutine reads, decodes the small frames itself and hands the large
// ones to the pool; a handOver goroutine, there only while events wait, hands the results
// over in order.
func (w *streamWatcher[T]) runParallel(frame []byte, off int64, proto bool) {
	workers := parallelWorkers(w.dec.dc.workers)
	pool := newOrderedPool(workers, w.dec.clone,
		func(d *objectDecoder, j *pjob[Event[T]]) { j.res, j.err = w.decode(d, *j.buf, j.off, j.proto) })
	h := newHandOver(parallelWindow(workers), func(j *pjob[Event[T]]) bool {
		j.wait()
		pool.handedOver(j)
		if j.last {
			w.end(j.srcErr)
			return false
		}
		if !w.deliver(j.res, j.err) {
			w.src.close() // unblocks the reader: the watch ends here
			return false
		}
		return true
	})
	defer func() {
		h.wait()
		pool.close()
	}()
	for {
		j := &pjob[Event[T]]{off: off, proto: proto}
		if wantsParallelEvent(len(frame), proto) {
			if !pool.reserve(len(frame), h.stop) {
				return
			}
			pool.submit(j, frame)
		} else {
			j.res, j.err = w.decode(w.dec, frame, off, proto)
		}
		if !h.push(j) {
			return
		}
		var err error
		if frame, off, err = w.src.next(); err != nil {
			h.push(&pjob[Event[T]]{last: true, srcErr: err})
			return
		}
		proto = w.src.protobuf()
	}
}

// errStopped is the cancellation cause of a watch ended by Stop.
var errStopped = errors.New("apiclient: watch stopped")

// httpSource reads a chunked HTTP/1.1 or HTTP/2 response body: JSON events one after the
// other, or protobuf WatchEvents in length-prefixed frames.
type httpSource struct {
	body  io.ReadCloser
	fr    *frameReader // JSON
	pr    *protoReader // protobuf
	once  sync.Once
	proto int // the response's HTTP major version
}

func (s *httpSource) next() ([]byte, int64, error) {
	if s.pr != nil {
		return s.pr.frame()
	}
	frame, err := s.fr.next()
	if err != nil {
		return nil, 0, err
	}
	return frame, s.fr.offset(len(frame)), nil
}

func (s *httpSource) protobuf() bool { return s.pr != nil }

func (s *httpSource) close() { s.once.Do(func() { s.body.Close() }) }

// openWatch opens a watch on path with the protocol the client is configured for, asking
// for protobuf when the collection has it (dc.pk) and JSON again if the server refuses it.
func openWatch[T any](ctx context.Context, c *Client, dc decoding, gvr meta.GroupVersionResource, path string, query url.Values, kind string) (Watcher[T], error) {
	wctx, cancel := context.WithCancelCause(ctx)
	stop := func() { cancel(errStopped) }
	accept := ""
	pk := c.protoKind(gvr, dc.pk)
	if pk != nil {
		accept = acceptProtobuf
	}
	src, fallback, err := c.openSource(wctx, path, query, accept)
	var fallbacks []error
	if fallback != nil {
		fallbacks = append(fallbacks, fallback)
	}
	if pk != nil && refusedMedia(err) {
		fallbacks = append(fallbacks, c.refuseProtobuf(gvr, err))
		src, fallback, err = c.openSource(wctx, path, query, "")
		if fallback != nil {
			fallbacks = append(fallbacks, fallback)
		}
	}
	if err != nil {
		stop()
		return nil, err
	}
	w := newStreamWatcher[T](wctx, stop, src, kind, dc)
	w.fallbacks = fallbacks
	return w, nil
}

// openSource opens the stream of a watch over the transport Config.WatchProtocol selects.
// fallback is what made it give up WebSocket for chunked HTTP (nil if nothing did).
func (c *Client) openSource(ctx context.Context, path string, query url.Values, accept string) (src eventSource, fallback, err error) {
	switch proto := c.watchProtocol; {
	case proto == WatchWebSocket:
		src, err = c.openWebSocket(ctx, path, query, accept)
		if errors.Is(err, ErrWebSocketRefused) {
			err = fmt.Errorf("%w; Config.WatchProtocol is WatchWebSocket, so there is no fallback to chunked HTTP", err)
		}
		return src, nil, err
	case proto == WatchAuto && c.askGzip && query.Get("sendInitialEvents") == "true":
		// A streaming list is gzipped only over chunked HTTP, and where the client asks for
		// gzip (a server that is not on loopback) that pays: 5.4 times sooner through a
		// 100 Mbit/s link (bench/README.md, "Compression").
	case proto == WatchAuto && !c.wsRefused.Load():
		src, err = c.openWebSocket(ctx, path, query, accept)
		if !errors.Is(err, ErrWebSocketRefused) {
			return src, nil, err
		}
		if c.wsRefused.CompareAndSwap(false, true) {
			c.logger.Info("apiclient: the server does not speak WebSocket (or a proxy in front of it does not); "+
				"every watch of the client goes over chunked HTTP from now on",
				"host", c.base.Host, "path", path, "setting", "Config.WatchProtocol", "err", err)
		}
		src, cerr := c.openChunked(ctx, path, query, accept)
		return src, err, cerr
	}
	src, err = c.openChunked(ctx, path, query, accept)
	return src, nil, err
}

// openChunked sends the watch GET and checks the answer; the body becomes the stream, in
// the media type of its Content-Type. The answer must come within the watch response
// header deadline.
func (c *Client) openChunked(ctx context.Context, path string, query url.Values, accept string) (eventSource, error) {
	a := c.startAttempt(ctx, "watch response headers", http.MethodGet, path, c.timeouts.watchHeader)
	hreq, err := c.newHTTPRequest(a.ctx, Request{Method: http.MethodGet, Path: path, Query: query, Accept: accept})
	if err != nil {
		a.finish()
		return nil, err
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		a.finish()
		return nil, a.err(err)
	}
	a.answered()
	if resp.StatusCode != http.StatusOK {
		defer a.finish()
		defer resp.Body.Close()
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return nil, fmt.Errorf("apiclient: watch %s: unexpected status %d", path, resp.StatusCode)
		}
		return nil, statusFromResponse(resp)
	}
	body := readCloser{resp.Body, closerFunc(func() error {
		err := resp.Body.Close()
		a.finish()
		return err
	})}
	src := &httpSource{body: body, proto: resp.ProtoMajor}
	stream := decodedBody(resp.Header, resp.Body)
	if isProtobuf(resp.Header.Get("Content-Type")) {
		src.pr = newProtoReader(stream, c.maxEventSize)
	} else {
		src.fr = newFrameReader(stream, c.maxEventSize)
	}
	return src, nil
}

// closerFunc is a func as an io.Closer.
type closerFunc func() error

func (f closerFunc) Close() error { return f() }
