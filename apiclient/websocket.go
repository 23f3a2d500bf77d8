package apiclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// bearerProtocolPrefix is the WebSocket subprotocol prefix that carries a bearer token for
// clients that cannot set an Authorization header (browsers); the API server authenticates
// "base64url.bearer.authorization.k8s.io.<base64url(token), no padding>" and strips it.
const bearerProtocolPrefix = "base64url.bearer.authorization.k8s.io."

// ErrWebSocketRefused is the error of a WebSocket watch the server (or a proxy in front of
// it) answered with an ordinary HTTP response: a 200 (the watch as a chunked stream, from a
// proxy that dropped the Upgrade header), 400, 405, 426 or 501. It is decided at the
// answer's status line and headers. WatchAuto then opens the watch over chunked HTTP at
// once, and every later watch of the client too; with WatchWebSocket it is the watch's
// error.
var ErrWebSocketRefused = errors.New("apiclient: the server refused the WebSocket upgrade")

// wsDialer makes the gorilla/websocket dialers of the client's handshakes.
type wsDialer struct {
	conn wsConnector
}

func newWSDialer(tlsConf *tls.Config, proxy func(*http.Request) (*url.URL, error), dial func(ctx context.Context, network, addr string) (net.Conn, error), tlsTimeout time.Duration, deadline func(*TimeoutError)) wsDialer {
	tc := tlsConf.Clone()
	tc.NextProtos = []string{"http/1.1"} // WebSocket needs HTTP/1.1; never negotiate h2
	pc := tlsConf.Clone()
	pc.NextProtos = nil // a CONNECT to an https:// proxy is HTTP/1.1, as in net/http
	return wsDialer{conn: wsConnector{proxy: proxy, dial: dial, tls: tc, proxyTLS: pc, tlsTimeout: tlsTimeout, deadline: deadline}}
}

// dialer returns a gorilla/websocket Dialer for one handshake of a watch of path. The
// connection comes from the wsConnector (proxy, deadlines, TLS); gorilla's own proxy and TLS
// are not used. The connection lives until ctx is done: gorilla honours the context while
// dialing only, and closing the connection makes the handshake honour it too (the deadline
// and the recovery of an attempt, see attempt). The context lives as long as the watch.
func (d wsDialer) dialer(path string) *websocket.Dialer {
	open := func(secure bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
		return func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := d.conn.connect(ctx, secure, addr, path)
			if err != nil {
				return nil, err
			}
			return &answerConn{Conn: conn}, nil
		}
	}
	return &websocket.Dialer{
		NetDialContext:    open(false),
		NetDialTLSContext: open(true),
		ReadBufferSize:    32 << 10,
		WriteBufferSize:   4 << 10,
	}
}

// openWebSocket opens a watch over WebSocket: the same URL as a chunked watch, one event
// per message (a JSON event in a text message, or a protobuf WatchEvent, without the length
// prefix of chunked streams, in a binary message, as kube-apiserver sends them). The bearer
// token travels both as the Authorization header and as the base64url subprotocol, so that
// proxies that drop the header on upgrades still pass it.
func (c *Client) openWebSocket(ctx context.Context, path string, query url.Values, accept string) (eventSource, error) {
	u := *c.base
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	default:
		u.Scheme = "ws"
	}
	full, err := url.Parse(c.url(path, query))
	if err != nil {
		return nil, err
	}
	u.Path, u.RawPath, u.RawQuery = full.Path, full.RawPath, full.RawQuery

	a := c.startAttempt(ctx, "WebSocket handshake", http.MethodGet, path, c.timeouts.watchHeader)
	conn, contentType, err := c.dialWebSocket(a.ctx, u.String(), path, accept, true)
	if err != nil {
		a.finish()
		return nil, a.err(err)
	}
	a.answered()
	conn.SetReadLimit(int64(c.maxEventSize))
	src := &wsSource{conn: conn, max: c.maxEventSize, done: make(chan struct{}), attempt: a}
	switch {
	case isProtobuf(contentType):
		src.format = wsProtobuf
	case contentType != "":
		src.format = wsJSON
	}
	src.startHealthCheck()
	return src, nil
}

// WebSocket health check, the counterpart of HTTP/2 pings for chunked watches: the client
// pings every wsPingInterval, and a connection on which nothing (event, bookmark, pong)
// arrives for wsReadTimeout ends the watch with a timeout error (Err), not a clean close.
// Variables only so that tests can shorten them (export_test.go).
var (
	wsPingInterval = 10 * time.Second
	wsReadTimeout  = 30 * time.Second
)

func (s *wsSource) startHealthCheck() {
	s.readTimeout = wsReadTimeout
	ping := wsPingInterval
	s.conn.SetReadDeadline(time.Now().Add(s.readTimeout))
	s.conn.SetPongHandler(func(string) error {
		if s.inMessage {
			// A pong shows the connection alive, not the message moving: a message whose
			// rest never comes must not be waited for as long as pongs do.
			return nil
		}
		return s.conn.SetReadDeadline(time.Now().Add(s.readTimeout))
	})
	s.pinger.Add(1)
	go func() {
		defer s.pinger.Done()
		t := time.NewTicker(ping)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
				if err := s.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(ping)); err != nil {
					return
				}
			}
		}
	}()
}

// dialWebSocket performs the handshake. After a 401 with credentials that can be renewed
// (exec plugin, token file) it tries once more with fresh ones, as authTransport does for
// ordinary requests.
func (c *Client) dialWebSocket(ctx context.Context, wsURL, path, accept string, retryAuth bool) (*websocket.Conn, string, error) {
	authz, bearer, used, err := c.auth.credentials(ctx)
	if err != nil {
		return nil, "", err
	}
	h := http.Header{}
	h.Set("User-Agent", c.userAgent)
	if accept == "" {
		accept = mediaJSON
	}
	h.Set("Accept", accept)
	// kube-apiserver's WebSocket handler (golang.org/x/net/websocket) answers 403 to a
	// handshake without an Origin; name the server itself.
	h.Set("Origin", c.base.Scheme+"://"+c.base.Host)
	if authz != "" {
		h.Set("Authorization", authz)
	}
	d := c.wsDial.dialer(path)
	if bearer != "" {
		d.Subprotocols = []string{bearerProtocolPrefix + base64.RawURLEncoding.EncodeToString([]byte(bearer))}
	}
	var obs *observation
	if c.metrics != nil || c.tracer != nil {
		obs = startObserving(ctx, c.metrics, c.tracer, http.MethodGet, c.base.Host, path)
	}
	conn, resp, err := d.DialContext(ctx, wsURL, h)
	if obs != nil {
		obs.done(resp, err)
	}
	if err == nil {
		return conn, resp.Header.Get("Content-Type"), nil
	}
	if resp == nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		return nil, "", fmt.Errorf("apiclient: websocket watch %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized && retryAuth && used != nil && c.auth.unauthorized(used) {
		return c.dialWebSocket(ctx, wsURL, path, accept, false)
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		// A redirect is never followed: the handshake would carry the credentials along.
		return nil, "", &RedirectError{Method: http.MethodGet, Path: path, Code: resp.StatusCode, Location: redactURL(resp.Header.Get("Location"))}
	}
	return nil, "", classifyRefusal(resp)
}

// classifyRefusal decides whether a failed handshake means "no WebSocket here" (fall back
// to chunked) or is an API error to return as it is (401, 403, 410, 429, 5xx...).
func classifyRefusal(resp *http.Response) error {
	refused := fmt.Errorf("%w: it answered %q", ErrWebSocketRefused, resp.Status)
	switch resp.StatusCode {
	case http.StatusOK, http.StatusUpgradeRequired, http.StatusNotImplemented, http.StatusMethodNotAllowed:
		return refused
	}
	st := statusFromResponse(resp)
	if resp.StatusCode == http.StatusBadRequest && st.Kind == "Status" && st.Message != "" &&
		!strings.HasPrefix(st.Message, "the server responded with status") {
		return st // a real Status: bad parameters
	}
	if resp.StatusCode == http.StatusBadRequest {
		return refused
	}
	return st
}

// wsFormat is the media type of a WebSocket watch's messages.
type wsFormat uint8

const (
	// wsByMessage: the handshake named none; a binary message is protobuf, a text one JSON.
	wsByMessage wsFormat = iota
	wsJSON
	wsProtobuf
)

// wsSource reads one event per WebSocket message.
type wsSource struct {
	conn   *websocket.Conn
	max    int
	buf    bytes.Buffer
	n      int64
	format wsFormat
	binary bool // the last message was a binary one
	once   sync.Once
	done   chan struct{}
	pinger sync.WaitGroup
	// readTimeout is wsReadTimeout when the watch opened.
	readTimeout time.Duration
	// attempt is the handshake's, finished (its context cancelled) when the source closes.
	attempt *attempt
	// fr reads JSON messages, checking them as they arrive (made on first use).
	fr *frameReader
	// inMessage: a data message is being read; only its own bytes move the read deadline
	// then. Touched by the reading goroutine only (the pong handler runs on it).
	inMessage bool
	cur       io.Reader // the message being read
}

// progress moves the read deadline of a message being read at each of its bytes.
type progress struct{ s *wsSource }

func (p progress) Read(b []byte) (int, error) {
	n, err := p.s.cur.Read(b)
	if n > 0 {
		p.s.conn.SetReadDeadline(time.Now().Add(p.s.readTimeout))
	}
	return n, err
}

func (s *wsSource) next() ([]byte, int64, error) {
	for {
		mt, r, err := s.conn.NextReader()
		if err != nil {
			return nil, 0, s.mapErr(err)
		}
		if mt != websocket.TextMessage && mt != websocket.BinaryMessage {
			continue
		}
		s.binary = mt == websocket.BinaryMessage
		idx := s.n
		s.n++
		s.inMessage, s.cur = true, r
		var frame []byte
		if s.protobuf() {
			frame, err = s.protoMessage(progress{s}, idx)
		} else {
			frame, err = s.jsonMessage(progress{s}, idx)
		}
		s.inMessage, s.cur = false, nil
		if err != nil {
			return nil, 0, err
		}
		s.conn.SetReadDeadline(time.Now().Add(s.readTimeout))
		return frame, idx, nil
	}
}

// jsonMessage reads a JSON message through a frameReader, which checks the bytes as they
// arrive: a message of garbage ends the watch within bytes, not once the read limit's worth
// of it is buffered. The message must hold one JSON object (and whitespace).
func (s *wsSource) jsonMessage(r io.Reader, idx int64) ([]byte, error) {
	if s.fr == nil {
		s.fr = newFrameReader(r, s.max)
	} else {
		s.fr.reset(r)
	}
	frame, err := s.fr.next()
	if err == nil {
		if c, perr := s.fr.peek(); perr == nil {
			detail := fmt.Sprintf("more than one JSON value in a WebSocket message (then %q)", c)
			if !jsonOutside[c] {
				detail = notJSON(s.fr, s.fr.start)
			}
			return nil, &DecodeError{Err: ErrMalformedEvent, Offset: idx, Detail: detail}
		} else if perr != io.EOF {
			err = perr
		}
	}
	var de *DecodeError
	switch {
	case err == nil:
		return frame, nil
	case err == io.EOF:
		return nil, &DecodeError{Err: ErrMalformedEvent, Offset: idx, Detail: "empty WebSocket message"}
	case err == io.ErrUnexpectedEOF:
		return nil, &DecodeError{Err: ErrMalformedEvent, Offset: idx, Detail: "the WebSocket message ends inside its JSON object"}
	case errors.As(err, &de):
		if errors.Is(err, ErrEventTooLarge) {
			return nil, &DecodeError{Err: ErrEventTooLarge, Offset: idx, Detail: fmt.Sprintf("WebSocket message larger than %d bytes", s.max)}
		}
		return nil, &DecodeError{Err: de.Err, Offset: idx, Detail: fmt.Sprintf("byte %d of the message: %s", de.Offset, de.Detail)}
	}
	return nil, s.mapErr(err)
}

// protoMessage reads a protobuf message, a WatchEvent, after checking its first byte: the
// tag of its field type or object, and nothing else.
func (s *wsSource) protoMessage(r io.Reader, idx int64) ([]byte, error) {
	s.buf.Reset()
	var first [1]byte
	if _, err := io.ReadFull(r, first[:]); err != nil {
		if err == io.EOF {
			return nil, &DecodeError{Err: ErrMalformedEvent, Offset: idx, Detail: "empty WebSocket message"}
		}
		return nil, s.mapErr(err)
	}
	if first[0] != watchEventTypeTag && first[0] != watchEventObjectTag {
		head := make([]byte, 64)
		head[0] = first[0]
		n, _ := io.ReadFull(r, head[1:])
		return nil, &DecodeError{Err: ErrMalformedEvent, Offset: idx, Detail: "not a protobuf WatchEvent: the message starts with " + describeStart(head[:1+n])}
	}
	s.buf.WriteByte(first[0])
	if _, err := s.buf.ReadFrom(r); err != nil {
		return nil, s.mapErr(err)
	}
	return s.buf.Bytes(), nil
}

func (s *wsSource) protobuf() bool {
	return s.format == wsProtobuf || s.format == wsByMessage && s.binary
}

func (s *wsSource) mapErr(err error) error {
	if errors.Is(err, websocket.ErrReadLimit) {
		return &DecodeError{Err: ErrEventTooLarge, Offset: s.n, Detail: fmt.Sprintf("WebSocket message larger than %d bytes", s.max)}
	}
	if websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway, websocket.CloseNoStatusReceived) {
		return io.EOF
	}
	return err
}

func (s *wsSource) close() {
	s.once.Do(func() {
		close(s.done)
		s.conn.Close()
		s.pinger.Wait()
		s.attempt.finish()
	})
}
