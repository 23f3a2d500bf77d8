package controller

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/tracing"
	"github.com/informerkit/informerkit/workqueue"
)

// spanRecorder is a tracing.Tracer that keeps every span.
type spanRecorder struct {
	mu    sync.Mutex
	spans []*recSpan
}

type recSpan struct {
	r      *spanRecorder
	id     int
	name   string
	parent int // 0: a root span
	links  []int
	kind   tracing.SpanKind
	start  time.Time
	attrs  map[string]string
	err    error
	ended  bool
}

type recSpanKey struct{}

func (r *spanRecorder) Start(ctx context.Context, name string, opts tracing.StartOptions) (context.Context, tracing.Span) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &recSpan{r: r, id: len(r.spans) + 1, name: name, kind: opts.Kind, start: opts.Start, attrs: map[string]string{}}
	if s.start.IsZero() {
		s.start = time.Now()
	}
	if p, ok := ctx.Value(recSpanKey{}).(*recSpan); ok {
		s.parent = p.id
	}
	for _, l := range opts.Links {
		if p, ok := l.Value(recSpanKey{}).(*recSpan); ok {
			s.links = append(s.links, p.id)
		}
	}
	for _, a := range opts.Attributes {
		s.attrs[a.Key] = a.Value
	}
	r.spans = append(r.spans, s)
	return context.WithValue(ctx, recSpanKey{}, s), s
}

func (s *recSpan) SetAttributes(attrs ...tracing.Attribute) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	for _, a := range attrs {
		s.attrs[a.Key] = a.Value
	}
}

func (s *recSpan) RecordError(err error) { s.r.mu.Lock(); s.err = err; s.r.mu.Unlock() }
func (s *recSpan) End()                  { s.r.mu.Lock(); s.ended = true; s.r.mu.Unlock() }

// find returns copies of the spans named name whose attribute key has value v.
func (r *spanRecorder) find(name, key, v string) []recSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []recSpan
	for _, s := range r.spans {
		if s.name == name && s.attrs[key] == v {
			c := *s
			c.attrs = maps.Clone(s.attrs)
			out = append(out, c)
		}
	}
	return out
}

// TestWatchEventTracedToItsReconcile: a watch event gets a span that starts at its arrival,
// its Request a queue span and a reconcile span as children, its reconcile's context the
// reconcile span, and its latency is measured; the objects of the initial list are not.
func TestWatchEventTracedToItsReconcile(t *testing.T) {
	srv, client := newWidgetServer(t)
	if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "pre"}}); err != nil {
		t.Fatal(err)
	}
	tr := &spanRecorder{}
	cms := informer.New[*testobj.ConfigMap](apiclient.NewResource[*testobj.ConfigMap](client, testobj.ConfigMapGVR), informer.Options[*testobj.ConfigMap]{Logger: quiet})
	got := make(chan Request, 10)
	inReconcile := make(chan bool, 10)
	rec := ReconcilerFunc(func(ctx context.Context, req Request) (Result, error) {
		s, _ := ctx.Value(recSpanKey{}).(*recSpan)
		inReconcile <- s != nil && s.name == tracing.SpanReconcile
		got <- req
		if req.Name == "fails" {
			return Result{}, TerminalError(errors.New("boom"))
		}
		return Result{}, nil
	})
	c, err := New("cms", rec, Options{Logger: quiet, Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Watch(FromInformer[*testobj.ConfigMap](cms, EnqueueRequestForObject[*testobj.ConfigMap]())); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	infDone := make(chan struct{})
	go func() { cms.Run(ctx); close(infDone) }()
	ctlDone := make(chan error, 1)
	go func() { ctlDone <- c.Start(ctx) }()
	stop := sync.OnceValue(func() error {
		cancel()
		err := <-ctlDone
		<-infDone
		return err
	})
	defer stop()
	expect(t, got, Request{"default", "pre"}, "initial list")
	if !<-inReconcile {
		t.Error("the reconcile of an initial-list object has no reconcile span in its context")
	}
	if st := c.Stats(); st.WatchEvents != 0 {
		t.Fatalf("initial list counted as %d watch events", st.WatchEvents)
	}

	before := time.Now()
	live, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "live"}})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, got, Request{"default", "live"}, "created")
	if !<-inReconcile {
		t.Error("the reconcile's context does not carry its span")
	}
	after := time.Now()
	if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "fails"}}); err != nil {
		t.Fatal(err)
	}
	expect(t, got, Request{"default", "fails"}, "created")
	<-inReconcile
	if err := stop(); err != nil { // every span has ended
		t.Fatal(err)
	}

	st := c.Stats()
	if st.WatchEvents != 2 || st.EventLatencyMax <= 0 || st.EventLatencyMax > after.Sub(before)+time.Minute || st.EventLatencySum < st.EventLatencyMax {
		t.Fatalf("stats: %d watch events, latency sum %v max %v", st.WatchEvents, st.EventLatencySum, st.EventLatencyMax)
	}
	events := tr.find(tracing.SpanEvent, tracing.AttrName, "live")
	if len(events) != 1 {
		t.Fatalf("%d event spans for live, want 1", len(events))
	}
	ev := events[0]
	if ev.parent != 0 || ev.kind != tracing.SpanKindConsumer || !ev.ended || ev.start.Before(before) || ev.start.After(after) {
		t.Errorf("event span: parent %d kind %v ended %v start %v (want between %v and %v)", ev.parent, ev.kind, ev.ended, ev.start, before, after)
	}
	for k, v := range map[string]string{tracing.AttrNamespace: "default", tracing.AttrResourceVersion: live.ResourceVersion(),
		tracing.AttrEventType: "add", tracing.AttrController: "cms", tracing.AttrInformer: "configmaps.v1"} {
		if ev.attrs[k] != v {
			t.Errorf("event span %s = %q, want %q", k, ev.attrs[k], v)
		}
	}
	q := tr.find(tracing.SpanQueue, tracing.AttrController, "cms")
	if !slices.ContainsFunc(q, func(s recSpan) bool { return s.parent == ev.id && s.ended }) {
		t.Errorf("no ended queue span under the event span: %+v", q)
	}
	rs := tr.find(tracing.SpanReconcile, tracing.AttrName, "live")
	if len(rs) != 1 || rs[0].parent != ev.id || !rs[0].ended || rs[0].attrs[tracing.AttrResult] != ResultSuccess {
		t.Fatalf("reconcile spans of live: %+v, want one ended under span %d with result success", rs, ev.id)
	}
	if rs := tr.find(tracing.SpanReconcile, tracing.AttrName, "fails"); len(rs) != 1 || rs[0].err == nil || rs[0].attrs[tracing.AttrResult] != ResultError {
		t.Fatalf("reconcile span of a failed reconcile: %+v, want its error recorded", rs)
	}
	if rs := tr.find(tracing.SpanReconcile, tracing.AttrName, "pre"); len(rs) != 1 || rs[0].parent != 0 {
		t.Fatalf("reconcile span of an initial-list object: %+v, want one root span", rs)
	}
}

// TestEventTrackerSplitsEventsAtTheGet: a worker takes the events enqueued before its Get;
// one that arrives while the Request is being reconciled waits for its next reconcile.
func TestEventTrackerSplitsEventsAtTheGet(t *testing.T) {
	h := &histogram{}
	tk := newEventTracker("c", nil, latencyProvider{h})
	req := Request{"ns", "a"}
	t0 := time.Unix(1000, 0)
	tk.record(req, pendingEvent{arrived: t0, enqueued: t0.Add(time.Millisecond)})
	tk.record(req, pendingEvent{arrived: t0.Add(2 * time.Millisecond), enqueued: t0.Add(3 * time.Millisecond)})
	tk.record(req, pendingEvent{arrived: t0.Add(10 * time.Millisecond), enqueued: t0.Add(11 * time.Millisecond)})
	if evs := tk.take(req, t0.Add(5*time.Millisecond)); evs.n != 2 || evs.at(1).arrived != t0.Add(2*time.Millisecond) {
		t.Fatalf("took %d events at the first Get, want 2", evs.n)
	}
	if p := tk.pending[req]; p.n != 1 || p.first.arrived != t0.Add(10*time.Millisecond) || len(p.more) != 0 {
		t.Fatalf("left pending: %+v, want the third event", p)
	}
	if want := []float64{0.005, 0.003}; !slices.Equal(h.obs, want) {
		t.Fatalf("observed %v, want %v", h.obs, want)
	}
	if evs := tk.take(req, t0.Add(20*time.Millisecond)); evs.n != 1 || len(tk.pending) != 0 {
		t.Fatalf("took %d events at the second Get, %d Requests left pending", evs.n, len(tk.pending))
	}
	if evs := tk.take(req, t0.Add(30*time.Millisecond)); evs.n != 0 {
		t.Fatalf("took %d events of a Request with none pending", evs.n)
	}
	if tk.events.Load() != 3 || time.Duration(tk.latencyMax.Load()) != 10*time.Millisecond {
		t.Fatalf("%d events, max %v", tk.events.Load(), time.Duration(tk.latencyMax.Load()))
	}
	for range 2 * maxPendingEvents {
		tk.record(req, pendingEvent{arrived: t0, enqueued: t0})
	}
	if n := tk.pending[req].n; n != maxPendingEvents || len(tk.pending[req].more) != maxPendingEvents-1 {
		t.Fatalf("%d events pending for one Request, want at most %d", n, maxPendingEvents)
	}
}

// TestEventQueueRecordsOnlyWatchEvents: the source queue ties a Request to the event being
// handled, for every kind of add; outside an event, or for a list (no arrival), nothing.
func TestEventQueueRecordsOnlyWatchEvents(t *testing.T) {
	tk := newEventTracker("c", &spanRecorder{}, nil)
	wq := workqueue.NewRateLimiting[Request](nil, workqueue.Config{Priorities: true})
	defer wq.ShutDown()
	q := &eventQueue{Queue: wq, t: tk}
	obj := &testobj.ConfigMap{}
	q.Add(Request{"", "outside"})
	_, eq, span := beginEvent[*testobj.ConfigMap](context.Background(), q, informer.EventInfo{}, "add", obj, "i")
	q.Add(Request{"", "listed"})
	endEvent(eq, span)
	_, eq, span = beginEvent[*testobj.ConfigMap](context.Background(), q, informer.EventInfo{Arrived: time.Now()}, "update", obj, "i")
	q.Add(Request{"", "add"})
	q.AddWithPriority(Request{"", "prio"}, -1)
	q.AddAfter(Request{"", "after"}, time.Hour)
	q.AddRateLimited(Request{"", "limited"})
	endEvent(eq, span)
	q.Add(Request{"", "after-end"})
	var names []string
	for r, evs := range tk.pending {
		if evs.n != 1 || evs.first.span == nil {
			t.Errorf("%v: %d events %+v", r, evs.n, evs)
		}
		names = append(names, r.Name)
	}
	slices.Sort(names)
	if want := []string{"add", "after", "limited", "prio"}; !slices.Equal(names, want) {
		t.Fatalf("recorded %v, want %v", names, want)
	}
}

// TestReconcileSpanLinksTheOtherEvents: a reconcile that handles several events is the child
// of the oldest and linked to the others.
func TestReconcileSpanLinksTheOtherEvents(t *testing.T) {
	tr := &spanRecorder{}
	tk := newEventTracker("c", tr, nil)
	for range 3 {
		ctx, s := tr.Start(context.Background(), tracing.SpanEvent, tracing.StartOptions{})
		s.End()
		tk.record(Request{"ns", "a"}, pendingEvent{arrived: time.Now(), enqueued: time.Now(), span: ctx})
	}
	evs := tk.take(Request{"ns", "a"}, time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	rctx, span := tk.startReconcile(ctx, Request{"ns", "a"}, evs, time.Now())
	endReconcile(span, ResultSuccess, nil)
	rs := tr.find(tracing.SpanReconcile, tracing.AttrController, "c")
	if len(rs) != 1 || rs[0].parent != 1 || !slices.Equal(rs[0].links, []int{2, 3}) {
		t.Fatalf("reconcile span %+v, want child of span 1 linked to 2 and 3", rs)
	}
	if n := len(tr.find(tracing.SpanQueue, tracing.AttrController, "c")); n != 3 {
		t.Fatalf("%d queue spans, want one per event", n)
	}
	cancel()
	if rctx.Err() == nil {
		t.Fatal("the reconcile context does not follow the worker's cancellation")
	}
}

type histogram struct{ obs []float64 }

func (h *histogram) Observe(v float64) {
	h.obs = append(h.obs, float64(time.Duration(v*1e9).Round(time.Microsecond))/1e9)
}

// latencyProvider is a MetricsProvider with only the event-latency metric.
type latencyProvider struct{ h *histogram }

func (latencyProvider) NewReconcileTotalMetric(string, string) workqueue.CounterMetric {
	return noopMetric{}
}
func (latencyProvider) NewReconcileErrorsMetric(string) workqueue.CounterMetric { return noopMetric{} }
func (latencyProvider) NewReconcilePanicsMetric(string) workqueue.CounterMetric { return noopMetric{} }
func (latencyProvider) NewReconcileTimeMetric(string) workqueue.HistogramMetric { return noopMetric{} }
func (latencyProvider) NewActiveWorkersMetric(string) workqueue.GaugeMetric     { return noopMetric{} }
func (latencyProvider) NewMaxConcurrentReconcilesMetric(string) workqueue.SettableGaugeMetric {
	return noopMetric{}
}
func (latencyProvider) NewDroppedRequestsMetric(string) workqueue.CounterMetric { return noopMetric{} }
func (p latencyProvider) NewEventToReconcileMetric(string) workqueue.HistogramMetric {
	return p.h
}
