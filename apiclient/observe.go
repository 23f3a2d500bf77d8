package apiclient

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/informerkit/informerkit/tracing"
)

// RequestMetrics observes the API requests of a Client: every HTTP round trip (each attempt
// of a retried request, each WebSocket handshake), once its response headers arrived or it
// failed. It is client-go's rest_client_requests_total and
// rest_client_request_duration_seconds; the controller Manager's Registry implements it
// under those names. Calls come from many goroutines and must be quick.
type RequestMetrics interface {
	// ObserveRequest records one round trip: method is the HTTP method (a watch is a GET),
	// host the server's host:port, code the HTTP status code ("200") or "<error>" when no
	// response came, latency the time until the response headers (or the failure).
	ObserveRequest(method, host, code string, latency time.Duration)
}

// errorCode is the code of a round trip that got no response, as in client-go.
const errorCode = "<error>"

// observedTransport measures and traces every round trip of a Client: the one place where
// requests are observed (the WebSocket handshake, which does not go through it, calls
// observe too).
type observedTransport struct {
	base    http.RoundTripper
	metrics RequestMetrics
	tracer  tracing.Tracer
}

func (t *observedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	end := startObserving(req.Context(), t.metrics, t.tracer, req.Method, req.URL.Host, req.URL.Path)
	if ctx := end.ctx; ctx != nil {
		req = req.WithContext(ctx)
	}
	resp, err := t.base.RoundTrip(req)
	end.done(resp, err)
	return resp, err
}

// observation is one round trip being measured and traced.
type observation struct {
	metrics      RequestMetrics
	method, host string
	start        time.Time
	span         tracing.Span
	ctx          context.Context // carries span; nil without a tracer
}

// startObserving starts measuring (and, with a tracer, a client span of) one round trip.
func startObserving(ctx context.Context, m RequestMetrics, tr tracing.Tracer, method, host, path string) *observation {
	o := &observation{metrics: m, method: method, host: host, start: time.Now()}
	if tr != nil {
		o.ctx, o.span = tr.Start(ctx, "HTTP "+method, tracing.StartOptions{Kind: tracing.SpanKindClient, Attributes: []tracing.Attribute{
			tracing.String(tracing.AttrHTTPMethod, method),
			tracing.String(tracing.AttrURLPath, path),
			tracing.String(tracing.AttrServerAddress, host),
		}})
	}
	return o
}

// done records the round trip's outcome: resp (nil if none came) or err.
func (o *observation) done(resp *http.Response, err error) {
	code := errorCode
	if resp != nil {
		code = strconv.Itoa(resp.StatusCode)
	}
	if o.metrics != nil {
		o.metrics.ObserveRequest(o.method, o.host, code, time.Since(o.start))
	}
	if o.span != nil {
		if resp != nil {
			o.span.SetAttributes(tracing.String(tracing.AttrHTTPStatus, code))
		}
		if err != nil {
			o.span.RecordError(err)
		} else if resp.StatusCode >= 500 {
			o.span.RecordError(errors.New(resp.Status)) // the body is the caller's to read
		}
		o.span.End()
	}
}
