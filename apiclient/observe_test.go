package apiclient_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/tracing"
)

// requestLog is a RequestMetrics that keeps every observation as "METHOD code".
type requestLog struct {
	mu   sync.Mutex
	seen []string
	host string
}

func (l *requestLog) ObserveRequest(method, host, code string, latency time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if latency < 0 {
		code += " negative latency"
	}
	l.host = host
	l.seen = append(l.seen, method+" "+code)
}

func (l *requestLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.seen
	l.seen = nil
	return s
}

// spanLog is a tracing.Tracer that keeps every span's name, parent and attributes.
type spanLog struct {
	mu    sync.Mutex
	spans []*loggedSpan
}

type loggedSpan struct {
	l            *spanLog
	name, parent string
	kind         tracing.SpanKind
	attrs        map[string]string
	err          error
	ended        bool
}

type loggedSpanKey struct{}

func (l *spanLog) Start(ctx context.Context, name string, opts tracing.StartOptions) (context.Context, tracing.Span) {
	s := &loggedSpan{l: l, name: name, kind: opts.Kind, attrs: map[string]string{}}
	if p, ok := ctx.Value(loggedSpanKey{}).(*loggedSpan); ok {
		s.parent = p.name
	}
	for _, a := range opts.Attributes {
		s.attrs[a.Key] = a.Value
	}
	l.mu.Lock()
	l.spans = append(l.spans, s)
	l.mu.Unlock()
	return context.WithValue(ctx, loggedSpanKey{}, s), s
}

func (s *loggedSpan) SetAttributes(attrs ...tracing.Attribute) {
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	for _, a := range attrs {
		s.attrs[a.Key] = a.Value
	}
}
func (s *loggedSpan) RecordError(err error) { s.l.mu.Lock(); s.err = err; s.l.mu.Unlock() }
func (s *loggedSpan) End()                  { s.l.mu.Lock(); s.ended = true; s.l.mu.Unlock() }

func observedClient(t *testing.T, s *apitest.Server, proto apiclient.WatchProtocol) (*apiclient.Client, *requestLog, *spanLog) {
	t.Helper()
	cfg := s.Config()
	cfg.WatchProtocol = proto
	reqs, spans := &requestLog{}, &spanLog{}
	cfg.Metrics, cfg.Tracer = reqs, spans
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, reqs, spans
}

// TestEveryRequestIsObserved: each round trip, WebSocket handshakes included, is counted by
// method and code, and is a client span under the span of its context.
func TestEveryRequestIsObserved(t *testing.T) {
	for _, tc := range []struct {
		proto     apiclient.WatchProtocol
		watchCode string
	}{{apiclient.WatchChunked, "200"}, {apiclient.WatchWebSocket, "101"}} {
		t.Run(map[apiclient.WatchProtocol]string{apiclient.WatchChunked: "chunked", apiclient.WatchWebSocket: "websocket"}[tc.proto], func(t *testing.T) {
			s := apitest.NewServer()
			t.Cleanup(s.Close)
			if _, err := s.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "a"}}); err != nil {
				t.Fatal(err)
			}
			c, reqs, spans := observedClient(t, s, tc.proto)
			cms := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default")
			parent, root := spans.Start(testCtx(t), "reconcile", tracing.StartOptions{})
			if _, err := cms.Get(parent, "a", apiclient.GetOptions{}); err != nil {
				t.Fatal(err)
			}
			root.End()
			if _, err := cms.Get(testCtx(t), "missing", apiclient.GetOptions{}); !meta.IsNotFound(err) {
				t.Fatalf("Get(missing) = %v", err)
			}
			w, err := cms.Watch(testCtx(t), apiclient.ListOptions{ResourceVersion: "0"})
			if err != nil {
				t.Fatal(err)
			}
			w.Stop()
			if got, want := reqs.take(), []string{"GET 200", "GET 404", "GET " + tc.watchCode}; !slices.Equal(got, want) {
				t.Fatalf("observed %v, want %v", got, want)
			}
			if want := strings.TrimPrefix(s.Config().Host, "http://"); reqs.host != want {
				t.Errorf("host %q, want %q", reqs.host, want)
			}
			spans.mu.Lock()
			defer spans.mu.Unlock()
			var got []string
			for _, sp := range spans.spans[1:] {
				if !sp.ended || sp.kind != tracing.SpanKindClient || sp.attrs[tracing.AttrHTTPMethod] != "GET" {
					t.Errorf("span %+v", sp)
				}
				got = append(got, sp.name+" "+sp.attrs[tracing.AttrHTTPStatus]+" under "+sp.parent)
			}
			want := []string{"HTTP GET 200 under reconcile", "HTTP GET 404 under ", "HTTP GET " + tc.watchCode + " under "}
			if !slices.Equal(got, want) {
				t.Fatalf("spans %v, want %v", got, want)
			}
			if p := spans.spans[1].attrs[tracing.AttrURLPath]; p != "/api/v1/namespaces/default/configmaps/a" {
				t.Errorf("url.path %q", p)
			}
		})
	}
}

// TestRequestWithoutAnswerIsAnError: a round trip that gets no response has the code
// "<error>" and a span that records the error.
func TestRequestWithoutAnswerIsAnError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	reqs, spans := &requestLog{}, &spanLog{}
	c, err := apiclient.New(&apiclient.Config{Host: "http://" + addr, MaxRetries: -1, Metrics: reqs, Tracer: spans})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default").Get(testCtx(t), "a", apiclient.GetOptions{})
	if err == nil {
		t.Fatal("Get succeeded with nothing listening")
	}
	if got := reqs.take(); !slices.Equal(got, []string{"GET <error>"}) {
		t.Fatalf("observed %v", got)
	}
	if sp := spans.spans[0]; sp.err == nil || !sp.ended || errors.Is(sp.err, context.Canceled) {
		t.Fatalf("span %+v, want the connection error recorded", sp)
	}
}
