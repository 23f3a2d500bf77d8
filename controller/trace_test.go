package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
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

// TestTriggersSplitAtTheGet: a reconcile gets the triggers recorded before its Get; one
// recorded while the Request is being reconciled waits for its next reconcile. Their
// latencies are observed when they reach a reconcile.
func TestTriggersSplitAtTheGet(t *testing.T) {
	h := &histogram{}
	tk := newEventTracker("c", nil, latencyProvider{h})
	wq := newTriggerQueue("c", Options{})
	defer wq.ShutDown()
	q := newEventQueue(wq, tk)
	t0 := time.Now()
	obj := func(name, rv string) *testobj.ConfigMap {
		return &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
	}
	handle := func(kind TriggerKind, o *testobj.ConfigMap, arrived time.Time) {
		_, eq, span := beginEvent(context.Background(), q, informer.EventInfo{Arrived: arrived}, kind, o, "configmaps.v1")
		q.Add(Request{"ns", "a"})
		endEvent(eq, span)
	}
	handle(TriggerUpdate, obj("a", "10"), t0)
	handle(TriggerUpdate, obj("a", "11"), t0.Add(time.Millisecond)) // merges with the first
	handle(TriggerUpdate, obj("child", "12"), t0.Add(2*time.Millisecond))
	req, got, _, _ := wq.GetWithCauses(context.Background(), nil)
	trs := Triggers{List: got.List, Dropped: got.Dropped}
	handle(TriggerDelete, obj("a", "13"), t0.Add(3*time.Millisecond)) // while reconciling
	if req != (Request{"ns", "a"}) || len(trs.List) != 2 {
		t.Fatalf("first reconcile of %v: %s", req, trs)
	}
	if a := trs.List[0]; a.Kind != TriggerUpdate || a.Name != "a" || a.Count != 2 || a.ResourceVersion != "11" || !a.Time.Equal(t0) || a.Source != "configmaps.v1" {
		t.Fatalf("merged trigger %s (time %v), want update of a ×2 at rv 11 from t0", a, a.Time.Sub(t0))
	}
	if got := trs.String(); got != "update configmaps.v1 ns/a@11 ×2; update configmaps.v1 ns/child@12" {
		t.Fatalf("String %q", got)
	}
	tk.observe(&trs, t0.Add(5*time.Millisecond))
	if want := []float64{0.005, 0.003}; !slices.Equal(h.obs, want) {
		t.Fatalf("observed %v, want %v", h.obs, want)
	}
	wq.Done(req)
	_, got, _, _ = wq.GetWithCauses(context.Background(), nil)
	if len(got.List) != 1 || got.List[0].Kind != TriggerDelete || got.List[0].ResourceVersion != "13" {
		t.Fatalf("second reconcile: %v", got.List)
	}
	wq.Done(req)
	if tk.events.Load() != 2 || time.Duration(tk.latencyMax.Load()) != 5*time.Millisecond {
		t.Fatalf("%d events, max %v", tk.events.Load(), time.Duration(tk.latencyMax.Load()))
	}
	for i := range 2 * MaxTriggers {
		handle(TriggerUpdate, obj(fmt.Sprint("c", i), "1"), t0)
	}
	_, got, _, _ = wq.GetWithCauses(context.Background(), nil)
	if len(got.List) != MaxTriggers || got.Dropped != MaxTriggers {
		t.Fatalf("%d triggers kept and %d dropped of %d distinct, want %d and %d", len(got.List), got.Dropped, 2*MaxTriggers, MaxTriggers, MaxTriggers)
	}
}

// TestEventQueueRecordsTheNotificationBeingHandled: the source queue records the
// notification being handled as the trigger of every kind of add; outside a notification,
// nothing. Only watch events (an arrival time) get a span.
func TestEventQueueRecordsTheNotificationBeingHandled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tk := newEventTracker("c", &spanRecorder{}, nil)
		wq := newTriggerQueue("c", Options{})
		defer wq.ShutDown()
		q := newEventQueue(wq, tk)
		obj := &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Name: "o"}}
		q.Add(Request{"", "outside"})
		_, eq, span := beginEvent[*testobj.ConfigMap](context.Background(), q, informer.EventInfo{}, TriggerInitialList, obj, "i")
		q.Add(Request{"", "listed"})
		endEvent(eq, span)
		_, eq, span = beginEvent[*testobj.ConfigMap](context.Background(), q, informer.EventInfo{Arrived: time.Now()}, TriggerUpdate, obj, "i")
		q.Add(Request{"", "add"})
		q.AddWithPriority(Request{"", "prio"}, -1)
		q.AddAfter(Request{"", "after"}, time.Hour)
		q.AddRateLimited(Request{"", "limited"})
		endEvent(eq, span)
		q.Add(Request{"", "after-end"})
		time.Sleep(time.Hour)
		synctest.Wait()
		got := map[string]Triggers{}
		for wq.Len() > 0 {
			req, trs, _, _ := wq.GetWithCauses(context.Background(), nil)
			got[req.Name] = Triggers{List: trs.List, Dropped: trs.Dropped}
		}
		for _, name := range []string{"outside", "after-end"} {
			if trs, ok := got[name]; !ok || len(trs.List) != 0 {
				t.Errorf("%s: %v, %s", name, ok, trs)
			}
		}
		if trs := got["listed"]; len(trs.List) != 1 || trs.List[0].Kind != TriggerInitialList || trs.List[0].span != nil || trs.List[0].watch {
			t.Errorf("listed: %+v, want an initial-list trigger without a span", trs.List)
		}
		for _, name := range []string{"add", "prio", "after", "limited"} {
			if trs := got[name]; len(trs.List) != 1 || trs.List[0].Kind != TriggerUpdate || trs.List[0].span == nil || trs.List[0].Name != "o" {
				t.Errorf("%s: %+v, want the update with its span", name, trs.List)
			}
		}
	})
}

// TestReconcileSpanLinksTheOtherEvents: a reconcile that handles several events is the child
// of the oldest and linked to the others; its context answers TriggersFrom.
func TestReconcileSpanLinksTheOtherEvents(t *testing.T) {
	tr := &spanRecorder{}
	tk := newEventTracker("c", tr, nil)
	var trs Triggers
	for i := range 3 {
		ctx, s := tr.Start(context.Background(), tracing.SpanEvent, tracing.StartOptions{})
		s.End()
		trs.List = append(trs.List, Trigger{Kind: TriggerUpdate, Name: fmt.Sprint(i), Count: 1, Time: time.Now(), enqueued: time.Now(), watch: true, span: ctx})
	}
	ctx, cancel := context.WithCancel(context.Background())
	rctx, span := tk.startReconcile(ctx, Request{"ns", "a"}, trs, time.Now())
	endReconcile(span, ResultSuccess, nil)
	rs := tr.find(tracing.SpanReconcile, tracing.AttrController, "c")
	if len(rs) != 1 || rs[0].parent != 1 || !slices.Equal(rs[0].links, []int{2, 3}) {
		t.Fatalf("reconcile span %+v, want child of span 1 linked to 2 and 3", rs)
	}
	if got := rs[0].attrs[tracing.AttrTriggers]; got != "update 0; update 1; update 2" {
		t.Fatalf("triggers attribute %q", got)
	}
	if n := len(tr.find(tracing.SpanQueue, tracing.AttrController, "c")); n != 3 {
		t.Fatalf("%d queue spans, want one per event", n)
	}
	if got := TriggersFrom(rctx); len(got.List) != 3 || got.List[2].Name != "2" {
		t.Fatalf("TriggersFrom: %s", got)
	}
	cancel()
	if rctx.Err() == nil {
		t.Fatal("the reconcile context does not follow the worker's cancellation")
	}
}

// TestAMergedTriggerLinksItsNewestEvent: three updates of one object merge into one trigger
// ×3 (mergeTrigger, as the queue does); its reconcile is the child of the first event's span
// and linked to the newest's only: two spans kept however many events merged.
func TestAMergedTriggerLinksItsNewestEvent(t *testing.T) {
	tr := &spanRecorder{}
	tk := newEventTracker("c", tr, nil)
	var kept Trigger
	for i := range 3 {
		ctx, s := tr.Start(context.Background(), tracing.SpanEvent, tracing.StartOptions{})
		s.End()
		c := Trigger{Kind: TriggerUpdate, Source: "configmaps.v1", Namespace: "ns", Name: "a", ResourceVersion: fmt.Sprint(10 + i),
			Count: 1, Time: time.Now(), enqueued: time.Now(), watch: true, span: ctx}
		if i == 0 {
			kept = c
		} else if !mergeTrigger(&kept, c) {
			t.Fatalf("update %d did not merge", i)
		}
	}
	_, span := tk.startReconcile(context.Background(), Request{"ns", "a"}, Triggers{List: []Trigger{kept}}, time.Now())
	endReconcile(span, ResultSuccess, nil)
	rs := tr.find(tracing.SpanReconcile, tracing.AttrController, "c")
	if len(rs) != 1 || rs[0].parent != 1 || !slices.Equal(rs[0].links, []int{3}) {
		t.Fatalf("reconcile span %+v, want child of span 1 linked to 3", rs)
	}
	if got := rs[0].attrs[tracing.AttrTriggers]; got != "update configmaps.v1 ns/a@12 ×3" {
		t.Fatalf("triggers attribute %q", got)
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
