package apiclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/informerkit/informerkit/internal/protodec"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/tracing"
)

// Client defaults. client-go's 5 QPS / burst 10 dates from before API Priority and Fairness;
// the server now protects itself and a controller that relists a few resources at start-up
// should not queue behind its own client. kubectl uses 50 QPS / burst 300.
const (
	// DefaultQPS is the sustained rate of non-watch requests when Config.QPS is 0.
	DefaultQPS = 50
	// DefaultBurst is the burst of non-watch requests when Config.Burst is 0.
	DefaultBurst = 100
	// DefaultMaxRetries is how often an idempotent request is retried on 429, 5xx or a
	// connection error when Config.MaxRetries is 0.
	DefaultMaxRetries = 5
	// DefaultMaxEventSize is the largest watch event accepted when Config.MaxEventSize is 0.
	// The API server stores objects of at most about 1.5 MiB; 16 MiB leaves room for
	// verbose encodings while bounding what a broken stream can make the client buffer.
	DefaultMaxEventSize = 16 << 20
	// HTTP/2 health checks: a connection that has received no frame for
	// http2SendPingTimeout is pinged, and closed if the ping is not answered within
	// http2PingTimeout, so a dead connection under a watch is noticed within ~15 s.
	http2SendPingTimeout = 10 * time.Second
	http2PingTimeout     = 5 * time.Second
	// Retry back-off when the server gives no Retry-After: 250 ms doubling, capped.
	retryBaseDelay = 250 * time.Millisecond
	retryMaxDelay  = 8 * time.Second
	// errorBodyLimit bounds how much of an error response is read.
	errorBodyLimit = 1 << 20
)

// Client talks to one API server. It is safe for concurrent use. Typed access goes through
// NewResource; Client itself offers raw requests (Do) and discovery.
type Client struct {
	base          *url.URL
	http          *http.Client
	transport     *http.Transport
	release       func() // Close's: the transport's idle connections closed, or a Transports reference dropped
	auth          *authenticator
	limiter       *rate.Limiter
	userAgent     string
	maxRetries    int
	maxEventSize  int
	decodeWorkers int // Config.DecodeWorkers (0: parallelWorkers)
	timeout       time.Duration
	watchProtocol WatchProtocol
	jsonDecoder   JSONDecoder
	logger        *slog.Logger
	namespace     string
	// metrics and tracer observe every request (observe.go); nil when Config has none.
	metrics RequestMetrics
	tracer  tracing.Tracer
	// noProtobuf: Config.DisableProtobuf.
	noProtobuf bool
	// askGzip: requests carry Accept-Encoding: gzip (Config.Compression).
	askGzip bool
	// protoRefused holds the resources (meta.GroupVersionResource) whose server answered
	// 406 or 415 to a protobuf Accept header: they are read as JSON from then on.
	protoRefused sync.Map
	// followCrossHost is Config.FollowCrossHostRedirects.
	followCrossHost bool
	// learnedKinds holds the kinds of custom resources learned from their lists
	// (meta.GroupVersionResource → kind), for the kind check of their watches.
	learnedKinds sync.Map

	// wsRefused remembers that the server refused a WebSocket upgrade, so WatchAuto goes
	// straight to chunked streams afterwards.
	wsRefused atomic.Bool
	// wsDial opens WebSocket watches.
	wsDial wsDialer
	// timeouts are the deadlines of requests; reach tracks the attempts waiting for the
	// server and the outages callers wait out.
	timeouts timeouts
	reach    reachability

	discovery discoveryCache
}

// New returns a client for cfg. It reads the CA and client certificate files named by cfg
// once; token files are re-read as they change. Kept whole: it checks the Config and copies
// it into the Client field by field, one line a setting.
func New(cfg *Config) (*Client, error) { return newClient(cfg, nil) }

// newClient is New, with its HTTP transport from ts when ts is not nil (Transports.New).
func newClient(cfg *Config, ts *Transports) (*Client, error) {
	if cfg == nil {
		return nil, errors.New("apiclient: nil Config")
	}
	base, err := parseHost(cfg.Host)
	if err != nil {
		return nil, err
	}
	if err := checkCredentialsTransport(cfg, base); err != nil {
		return nil, err
	}
	auth, err := newAuthenticator(cfg)
	if err != nil {
		return nil, err
	}
	tlsConf, err := buildTLSConfig(cfg, auth)
	if err != nil {
		return nil, err
	}
	proxy, err := proxyFunc(cfg)
	if err != nil {
		return nil, err
	}
	tmo := newTimeouts(cfg)
	logger := loggerOf(cfg)
	dial := dialWithin(dialFunc(cfg), tmo.dial, func() *slog.Logger { return logger })
	tr, release, err := ts.acquire(cfg, base, func() *http.Transport { return newHTTPTransport(proxy, dial, tlsConf, tmo) })
	if err != nil {
		return nil, err
	}
	c := &Client{
		base:          base,
		transport:     tr,
		release:       release,
		auth:          auth,
		userAgent:     cfg.UserAgent,
		maxRetries:    cfg.MaxRetries,
		maxEventSize:  cfg.MaxEventSize,
		decodeWorkers: cfg.DecodeWorkers,
		timeout:       cfg.Timeout,
		watchProtocol: cfg.WatchProtocol,
		jsonDecoder:   cfg.JSONDecoder,
		noProtobuf:    cfg.DisableProtobuf,
		askGzip:       askGzip(cfg.Compression, base),
		logger:        logger,
		namespace:     cfg.Namespace,

		followCrossHost: cfg.FollowCrossHostRedirects,
		timeouts:        tmo,
	}
	c.reach.c = c
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent()
	}
	if c.maxRetries == 0 {
		c.maxRetries = DefaultMaxRetries
	} else if c.maxRetries < 0 {
		c.maxRetries = 0
	}
	if c.maxEventSize <= 0 {
		c.maxEventSize = DefaultMaxEventSize
	}
	qps, burst := float64(cfg.QPS), cfg.Burst
	if qps == 0 {
		qps = DefaultQPS
	}
	if burst <= 0 {
		burst = DefaultBurst
	}
	if qps > 0 {
		c.limiter = rate.NewLimiter(rate.Limit(qps), burst)
	}
	auth.onRotate = tr.CloseIdleConnections
	var rt http.RoundTripper = tr
	if cfg.Metrics != nil || cfg.Tracer != nil {
		rt = &observedTransport{base: rt, metrics: cfg.Metrics, tracer: cfg.Tracer}
		c.metrics, c.tracer = cfg.Metrics, cfg.Tracer
	}
	if cfg.WrapTransport != nil {
		rt = cfg.WrapTransport(rt)
	}
	c.http = &http.Client{
		Transport:     &authTransport{base: rt, auth: auth, userAgent: c.userAgent, origin: base},
		CheckRedirect: c.checkRedirect,
	}
	c.wsDial = newWSDialer(tlsConf, proxy, dial, tmo.tlsHandshake, c.deadlinePassed)
	return c, nil
}

// newHTTPTransport is the HTTP transport of a Client (or of the Clients of a Transports key).
func newHTTPTransport(proxy func(*http.Request) (*url.URL, error), dial func(ctx context.Context, network, addr string) (net.Conn, error),
	tlsConf *tls.Config, tmo timeouts) *http.Transport {
	return &http.Transport{
		Proxy:               proxy,
		DialContext:         dial,
		TLSClientConfig:     tlsConf,
		TLSHandshakeTimeout: tmo.tlsHandshake,
		ForceAttemptHTTP2:   true,
		// Compression is the client's own (Config.Compression, gzip.go): net/http's would
		// ask for gzip everywhere and read it without a bound.
		DisableCompression:    true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   25,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		HTTP2: &http.HTTP2Config{
			SendPingTimeout: http2SendPingTimeout,
			PingTimeout:     http2PingTimeout,
		},
	}
}

// proxyFunc is the proxy of cfg's requests: Config.ProxyURL, else the environment's.
func proxyFunc(cfg *Config) (func(*http.Request) (*url.URL, error), error) {
	if cfg.ProxyURL == "" {
		return http.ProxyFromEnvironment, nil
	}
	pu, err := url.Parse(cfg.ProxyURL)
	if err != nil || pu.Scheme == "" || pu.Host == "" {
		return nil, fmt.Errorf("apiclient: proxy URL %q is not an absolute URL", redactURL(cfg.ProxyURL))
	}
	return http.ProxyURL(pu), nil
}

// dialFunc opens cfg's connections: Config.Dial, or a net.Dialer. dialWithin bounds either
// by the dial deadline: net/http dials apart from the request's context (a dial a cancelled
// request started may serve the next one).
func dialFunc(cfg *Config) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if cfg.Dial != nil {
		return cfg.Dial
	}
	return (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext
}

// loggerOf is Config.Logger, or slog.Default().
func loggerOf(cfg *Config) *slog.Logger {
	if cfg.Logger != nil {
		return cfg.Logger
	}
	return slog.Default()
}

// DefaultUserAgent is the User-Agent sent when Config.UserAgent is "".
func DefaultUserAgent() string { return "informerkit-apiclient/v0" }

// Namespace returns the default namespace of the configuration the client was built from.
func (c *Client) Namespace() string { return c.namespace }

// Host returns the server's base URL.
func (c *Client) Host() string { return c.base.String() }

// Close releases idle connections. Open watches are not affected.
func (c *Client) Close() { c.release() }

func parseHost(host string) (*url.URL, error) {
	if host == "" {
		return nil, errors.New("apiclient: Config.Host is empty")
	}
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	u, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("apiclient: Config.Host %q: %w", redactURL(host), err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("apiclient: Config.Host %q: scheme must be http or https", redactURL(host))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("apiclient: Config.Host %q has no host", redactURL(host))
	}
	u.User = nil
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// redactURL hides a password in a URL.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	return u.Redacted()
}

// Request is a raw API request for Client.Do.
type Request struct {
	// Method is the HTTP method ("" means GET).
	Method string
	// Path is the absolute API path, e.g. "/api/v1/namespaces/default/pods".
	Path string
	// Query holds the query parameters.
	Query url.Values
	// Body is sent as is, with ContentType ("" means application/json).
	Body        []byte
	ContentType string
	// Accept is the Accept header ("" means application/json).
	Accept string
	// DisableRetries sends a GET once, whatever Config.MaxRetries says: the caller gets the
	// first failure at once and applies its own policy. Other methods are never retried.
	DisableRetries bool
}

// Do sends a raw request and returns the response body of a 2xx answer, or a *Status error.
// GET requests are retried on 429, 5xx and connection errors, honouring Retry-After (unless
// req.DisableRetries); other methods are sent once. Every request waits for the
// client-side rate limiter.
func (c *Client) Do(ctx context.Context, req Request) ([]byte, error) {
	if req.Method == "" {
		req.Method = http.MethodGet
	}
	return c.do(ctx, req)
}

func (c *Client) url(path string, query url.Values) string {
	u := *c.base
	u.Path = c.base.Path + path
	u.RawPath = ""
	if strings.Contains(path, "%") {
		u.RawPath = c.base.Path + path
		if p, err := url.PathUnescape(u.RawPath); err == nil {
			u.Path = p
		}
	}
	if len(query) > 0 {
		u.RawQuery = query.Encode()
	}
	return u.String()
}

func (c *Client) newHTTPRequest(ctx context.Context, req Request) (*http.Request, error) {
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	hreq, err := http.NewRequestWithContext(ctx, req.Method, c.url(req.Path, req.Query), body)
	if err != nil {
		return nil, fmt.Errorf("apiclient: %s %s: %w", req.Method, req.Path, err)
	}
	accept := req.Accept
	if accept == "" {
		accept = mediaJSON
	}
	hreq.Header.Set("Accept", accept)
	if c.askGzip {
		hreq.Header.Set("Accept-Encoding", "gzip")
	}
	if req.Body != nil {
		ct := req.ContentType
		if ct == "" {
			ct = "application/json"
		}
		hreq.Header.Set("Content-Type", ct)
	}
	return hreq, nil
}

// waitLimiter waits for the client-side rate limiter.
func (c *Client) waitLimiter(ctx context.Context) error {
	if c.limiter == nil {
		return nil
	}
	if err := c.limiter.Wait(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("apiclient: client rate limiter: %w", err)
	}
	return nil
}

// retryable reports whether a failed idempotent request may be sent again.
func retryable(status int, err error) bool {
	if status == 0 {
		var ne net.Error
		if errors.As(err, &ne) {
			return true
		}
		return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
			errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "connection reset")
	}
	return status == http.StatusTooManyRequests || (status >= 500 && status != http.StatusNotImplemented)
}

// backoff returns the delay before retry number attempt+1 when the server named none:
// 250 ms × 2^attempt with ±25 % jitter, capped at 8 s.
func backoff(attempt int) time.Duration {
	d := retryBaseDelay << min(attempt, 10)
	if d > retryMaxDelay {
		d = retryMaxDelay
	}
	jitter := time.Duration(rand.Int64N(int64(d)/2+1)) - d/4
	return d + jitter
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// statusFromResponse turns a non-2xx response into a *Status: the server's own if the body
// is a JSON Status, a synthesized one otherwise. Details.RetryAfterSeconds comes from the
// Retry-After header when the body does not set it, and is capped at MaxRetryAfter.
func statusFromResponse(resp *http.Response) *meta.Status {
	body, _ := io.ReadAll(io.LimitReader(decodedBody(resp.Header, resp.Body), errorBodyLimit))
	st := statusFromBody(resp.StatusCode, resp.Header.Get("Content-Type"), body)
	if ra, ok := parseRetryAfter(resp.Header.Get("Retry-After")); ok {
		if st.Details == nil {
			st.Details = &meta.StatusDetails{}
		}
		if st.Details.RetryAfterSeconds == 0 {
			st.Details.RetryAfterSeconds = ra
		}
	}
	capRetryAfter(st)
	return st
}

// MaxRetryAfter bounds every delay a server asks for, from a Retry-After header or a
// Status' details.retryAfterSeconds (in an answer or a watch ERROR event): a server must
// not be able to silence a client for longer. client-go caps neither.
const MaxRetryAfter = 60 * time.Second

// capRetryAfter bounds st's retryAfterSeconds by MaxRetryAfter (and drops a negative one).
func capRetryAfter(st *meta.Status) {
	if st == nil || st.Details == nil {
		return
	}
	switch {
	case st.Details.RetryAfterSeconds > int32(MaxRetryAfter/time.Second):
		st.Details.RetryAfterSeconds = int32(MaxRetryAfter / time.Second)
	case st.Details.RetryAfterSeconds < 0:
		st.Details.RetryAfterSeconds = 0
	}
}

func statusFromBody(code int, contentType string, body []byte) *meta.Status {
	if isProtobuf(contentType) && isProtobufBody(body) {
		if st, err := protoStatus(protodec.NewDecoder(protodec.Options{}), body, true); err == nil {
			return completeStatus(st, code)
		}
		body = nil // not a Status: no binary in the message
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var st meta.Status
		if err := json.Unmarshal(trimmed, &st); err == nil && st.Kind == "Status" {
			return completeStatus(&st, code)
		}
	}
	msg := fmt.Sprintf("the server responded with status %d %s", code, http.StatusText(code))
	if len(trimmed) > 0 && !strings.Contains(contentType, "html") {
		text := string(trimmed)
		if len(text) > 512 {
			text = text[:512] + "..."
		}
		msg += ": " + strings.ToValidUTF8(text, "?")
	}
	return &meta.Status{
		TypeMeta: meta.TypeMeta{APIVersion: "v1", Kind: "Status"},
		Status:   "Failure",
		Code:     int32(code),
		Reason:   reasonForCode(code),
		Message:  msg,
	}
}

// completeStatus fills the code and reason of a server's Status from the HTTP status.
func completeStatus(st *meta.Status, code int) *meta.Status {
	if st.Code == 0 {
		st.Code = int32(code)
	}
	if st.Reason == "" {
		st.Reason = reasonForCode(code)
	}
	return st
}

func reasonForCode(code int) meta.StatusReason {
	switch code {
	case http.StatusBadRequest:
		return meta.StatusReasonBadRequest
	case http.StatusUnauthorized:
		return meta.StatusReasonUnauthorized
	case http.StatusForbidden:
		return meta.StatusReasonForbidden
	case http.StatusNotFound:
		return meta.StatusReasonNotFound
	case http.StatusMethodNotAllowed:
		return meta.StatusReasonMethodNotAllowed
	case http.StatusNotAcceptable:
		return meta.StatusReasonNotAcceptable
	case http.StatusConflict:
		return meta.StatusReasonConflict
	case http.StatusGone:
		return meta.StatusReasonGone
	case http.StatusRequestEntityTooLarge:
		return meta.StatusReasonRequestEntityTooLarge
	case http.StatusUnsupportedMediaType:
		return meta.StatusReasonUnsupportedMediaType
	case http.StatusUnprocessableEntity:
		return meta.StatusReasonInvalid
	case http.StatusTooManyRequests:
		return meta.StatusReasonTooManyRequests
	case http.StatusInternalServerError:
		return meta.StatusReasonInternalError
	case http.StatusServiceUnavailable:
		return meta.StatusReasonServiceUnavailable
	case http.StatusGatewayTimeout:
		return meta.StatusReasonTimeout
	}
	return meta.StatusReasonUnknown
}

// parseRetryAfter reads a Retry-After header (seconds or an HTTP date), capped at
// MaxRetryAfter.
func parseRetryAfter(v string) (int32, bool) {
	if v == "" {
		return 0, false
	}
	var d time.Duration
	if secs, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		if secs < 0 {
			return 0, false
		}
		d = time.Duration(min(secs, int(MaxRetryAfter/time.Second))) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = time.Until(t)
		if d < 0 {
			d = 0
		}
		d = (d + time.Second - 1).Truncate(time.Second)
	} else {
		return 0, false
	}
	if d > MaxRetryAfter {
		d = MaxRetryAfter
	}
	return int32(d / time.Second), true
}
