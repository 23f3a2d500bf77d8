package apiclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"
)

// Deadlines of the client where client-go has none: a server that accepts a request and
// never answers (or stops in the middle of a body) must not hang a caller for good.
const (
	// DefaultResponseHeaderTimeout bounds the wait for the response headers of every request
	// but a watch when Config.ResponseHeaderTimeout is 0. The kube-apiserver answers a request
	// it could not finish within its --request-timeout (default 60 s) with a 504; ten seconds
	// more leave that answer room to arrive.
	DefaultResponseHeaderTimeout = 70 * time.Second
	// DefaultWatchResponseHeaderTimeout bounds the wait for a watch's answer (the response
	// headers of a chunked watch, the WebSocket handshake) when
	// Config.WatchResponseHeaderTimeout is 0. The kube-apiserver answers a watch at once, or
	// after at most about 3 s when it first waits for its cache to reach the resourceVersion.
	DefaultWatchResponseHeaderTimeout = 30 * time.Second
	// DefaultResponseBodyIdleTimeout bounds, when Config.ResponseBodyIdleTimeout is 0, how long
	// the client waits for the next bytes of a response body that has started (a LIST, a GET;
	// not a watch stream, which has its own health checks). A kube-apiserver writes a body
	// from memory once it has started it.
	DefaultResponseBodyIdleTimeout = 30 * time.Second
	// DefaultTLSHandshakeTimeout bounds a TLS handshake (with the server, or an https://
	// proxy) when Config.TLSHandshakeTimeout is 0: net/http's and client-go's 10 s.
	DefaultTLSHandshakeTimeout = 10 * time.Second
	// DefaultDialTimeout bounds the opening of a TCP connection when Config.DialTimeout is
	// 0: client-go's 30 s.
	DefaultDialTimeout = 30 * time.Second
)

// ErrTimeout is matched (errors.Is) by every *TimeoutError.
var ErrTimeout = errors.New("apiclient: timeout")

// TimeoutError is the error of a wait that reached one of the client's deadlines: a dial, a
// TLS handshake, response headers, a WebSocket handshake, a response body that went silent,
// an exec credential plugin. It is a net.Error whose Timeout() is true, so the client's
// retries and the reflector's backoff treat it as the transport error it stands for. The
// client logs each one at Warn (Config.Logger) when it passes, naming its Setting.
type TimeoutError struct {
	// Op is what the client waited for: "dial", "TLS handshake", "response headers",
	// "watch response headers", "WebSocket handshake", "response body" or "exec plugin".
	Op string
	// Method and Path are the request's; for a dial Method is "" and Path the address, for
	// an exec plugin Method is "" and Path the plugin's command.
	Method, Path string
	// Limit is the deadline that passed.
	Limit time.Duration
	// Setting names the configuration field that sets Limit: "Config.DialTimeout",
	// "Config.TLSHandshakeTimeout", "Config.ResponseHeaderTimeout",
	// "Config.WatchResponseHeaderTimeout", "Config.ResponseBodyIdleTimeout" or
	// "ExecConfig.Timeout".
	Setting string
}

// Error says what did not arrive in time, and which setting gave up.
func (e *TimeoutError) Error() string {
	set := ""
	if e.Setting != "" {
		set = " (" + e.Setting + ")"
	}
	if e.Method == "" {
		return fmt.Sprintf("apiclient: %s %q: no answer within %v%s", e.Op, e.Path, e.Limit, set)
	}
	return fmt.Sprintf("apiclient: %s %s: no %s within %v%s", e.Method, e.Path, e.Op, e.Limit, set)
}

// deadlinePassed logs te, a deadline that has just passed: once, at Warn, whatever the
// request does next (a retry, an error for its caller).
func (c *Client) deadlinePassed(te *TimeoutError) { logDeadline(c.logger, te) }

func logDeadline(l *slog.Logger, te *TimeoutError) {
	l.Warn("apiclient: a deadline passed; giving up the wait", "op", te.Op, "method", te.Method, "path", te.Path,
		"limit", te.Limit, "setting", te.Setting, "err", te)
}

// Timeout reports true (net.Error).
func (e *TimeoutError) Timeout() bool { return true }

// Temporary reports true (net.Error): the same request may succeed later.
func (e *TimeoutError) Temporary() bool { return true }

// Is matches ErrTimeout.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// timeouts are the client's deadlines with defaults applied; a negative Config value is
// kept as "no deadline" (0 here).
type timeouts struct {
	header, watchHeader, bodyIdle, tlsHandshake, dial time.Duration
}

func newTimeouts(cfg *Config) timeouts {
	pick := func(v, def time.Duration) time.Duration {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	return timeouts{
		header:      pick(cfg.ResponseHeaderTimeout, DefaultResponseHeaderTimeout),
		watchHeader: pick(cfg.WatchResponseHeaderTimeout, DefaultWatchResponseHeaderTimeout),
		bodyIdle:    pick(cfg.ResponseBodyIdleTimeout, DefaultResponseBodyIdleTimeout),

		tlsHandshake: pick(cfg.TLSHandshakeTimeout, DefaultTLSHandshakeTimeout),
		dial:         pick(cfg.DialTimeout, DefaultDialTimeout),
	}
}

// settingOf names the Config field of the deadline of an attempt's op.
func settingOf(op string) string {
	switch op {
	case "response headers":
		return "Config.ResponseHeaderTimeout"
	case "watch response headers", "WebSocket handshake":
		return "Config.WatchResponseHeaderTimeout"
	case "response body":
		return "Config.ResponseBodyIdleTimeout"
	}
	return ""
}

// attempt is one request from the moment it is sent until the server's first answer
// (response headers, or a completed WebSocket handshake). Its context, which the request
// must use, is cancelled with a *TimeoutError when the answer does not come in time, and
// with errSuperseded when the server is found reachable again (a probe got through) while
// this attempt, sent before, still waits: it is stuck on a connection from before the
// outage, and a new attempt will be answered at once. After answered, the context stays
// valid for reading the body, until finish.
type attempt struct {
	c      *Client
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	start  time.Time
	// bodyIdle and te serve the body's idle deadline (idleBody).
	bodyIdle time.Duration
	te       TimeoutError
	// suspectT makes the attempt suspect an outage after suspectAfter; suspected is set
	// then (guarded by the reachability's lock).
	suspectT  *time.Timer
	suspected bool
}

// errSuperseded is the cancellation cause of an attempt that was still waiting for the
// server when a reachability probe, sent after it, was answered.
var errSuperseded = errors.New("apiclient: the server answered a newer request while this one was still waiting; it was abandoned")

// startAttempt begins an attempt of method path waiting at most timeout (0: no limit) for
// op.
func (c *Client) startAttempt(ctx context.Context, op, method, path string, timeout time.Duration) *attempt {
	actx, cancel := context.WithCancelCause(ctx)
	a := &attempt{c: c, ctx: actx, cancel: cancel, start: time.Now(),
		te: TimeoutError{Op: op, Method: method, Path: path, Limit: timeout, Setting: settingOf(op)}}
	if timeout > 0 {
		te := a.te
		a.timer = time.AfterFunc(timeout, func() {
			c.deadlinePassed(&te)
			cancel(&te)
		})
	}
	c.reach.register(a)
	a.suspectT = time.AfterFunc(suspectAfter, func() { c.reach.suspect(a) })
	return a
}

// answered records the server's first answer: the deadline and the recovery cancellation
// no longer apply.
func (a *attempt) answered() {
	if a.timer != nil {
		a.timer.Stop()
	}
	a.suspectT.Stop()
	a.c.reach.unregister(a)
}

// finish releases the attempt; its context is cancelled.
func (a *attempt) finish() {
	a.answered()
	a.cancel(context.Canceled)
}

// err returns the error to report for err, an error of the request made with the
// attempt's context: the *TimeoutError or errSuperseded that cancelled it, the caller's own
// context error, or err (a refused redirect unwrapped).
func (a *attempt) err(err error) error {
	if err == nil {
		return nil
	}
	if a.ctx.Err() != nil && context.Cause(a.ctx) != context.Canceled {
		var te *TimeoutError
		if cause := context.Cause(a.ctx); errors.As(cause, &te) || cause == errSuperseded {
			return cause
		}
	}
	if isTLSHandshakeTimeout(err) {
		// net/http's own deadline (Transport.TLSHandshakeTimeout), named as the client's.
		te := &TimeoutError{Op: "TLS handshake", Method: a.te.Method, Path: a.te.Path,
			Limit: a.c.timeouts.tlsHandshake, Setting: "Config.TLSHandshakeTimeout"}
		a.c.deadlinePassed(te)
		return te
	}
	return unwrapRedirect(err)
}

// isTLSHandshakeTimeout reports net/http's TLS handshake timeout, whose type is unexported:
// a timeout whose message has been "net/http: TLS handshake timeout" since Go 1.3.
func isTLSHandshakeTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() && strings.HasSuffix(err.Error(), "TLS handshake timeout")
}

// dialWithin bounds dial by timeout (0: none) and makes its deadline a *TimeoutError, logged
// by l when it passes. net/http and the WebSocket handshakes dial through it.
func dialWithin(dial func(ctx context.Context, network, addr string) (net.Conn, error), timeout time.Duration, l func() *slog.Logger) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if timeout <= 0 {
		return dial
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		dctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		conn, err := dial(dctx, network, addr)
		if err != nil && ctx.Err() == nil && dctx.Err() != nil {
			te := &TimeoutError{Op: "dial", Path: addr, Limit: timeout, Setting: "Config.DialTimeout"}
			logDeadline(l(), te)
			return nil, te
		}
		return conn, err
	}
}

// idleBody bounds the silence of a response body: a Read that waits longer than d for the
// server cancels the request with a *TimeoutError. Only the time spent inside Read counts,
// so a slow consumer is not mistaken for a silent server.
type idleBody struct {
	a     *attempt
	r     io.Reader
	timer *time.Timer
}

// body wraps r in the attempt's idle deadline (none if the client has none).
func (a *attempt) body(r io.Reader) io.Reader {
	if a.bodyIdle <= 0 {
		return r
	}
	te := a.te
	te.Op, te.Limit, te.Setting = "response body", a.bodyIdle, settingOf("response body")
	cancel := a.cancel
	c := a.c
	t := time.AfterFunc(time.Hour, func() {
		c.deadlinePassed(&te)
		cancel(&te)
	})
	t.Stop()
	return &idleBody{a: a, r: r, timer: t}
}

func (b *idleBody) Read(p []byte) (int, error) {
	b.timer.Reset(b.a.bodyIdle)
	n, err := b.r.Read(p)
	b.timer.Stop()
	if err != nil && err != io.EOF {
		err = b.a.err(err)
	}
	return n, err
}
