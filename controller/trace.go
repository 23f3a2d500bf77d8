package controller

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/tracing"
	"github.com/informerkit/informerkit/workqueue"
)

// A watch event's way through a controller: the informer stamps the event when it arrives
// (informer.EventInfo); the Kind source's handler starts the event's span and marks its
// source queue (an eventQueue) as handling it; every Request the user's handler enqueues
// meanwhile is recorded with the event in the controller's eventTracker; the worker that
// takes the Request takes the events recorded before its Get, observes each one's
// event-to-reconcile latency, and starts the reconcile span as their child.

// maxPendingEvents bounds the events recorded per waiting Request: the oldest are kept (the
// latency of a Request is decided by its oldest event), later ones are counted only.
const maxPendingEvents = 16

// EventLatencyMetricsProvider is implemented by a MetricsProvider that also measures the
// time from a watch event's arrival at the informer to the start of the reconcile that
// handles it (the Manager's Registry does, as
// informerkit_controller_event_to_reconcile_seconds{controller}). Events of initial lists
// and resyncs are not measured; an event whose Request was already waiting is measured to
// that Request's next reconcile.
type EventLatencyMetricsProvider interface {
	NewEventToReconcileMetric(controller string) workqueue.HistogramMetric
}

// pendingEvents are the events a Request waits with: the first inline, so that the usual
// single event costs no allocation.
type pendingEvents struct {
	n     int
	first pendingEvent
	more  []pendingEvent
}

func (p *pendingEvents) at(i int) pendingEvent {
	if i == 0 {
		return p.first
	}
	return p.more[i-1]
}

// pendingEvent is a watch event whose Request waits for a reconcile.
type pendingEvent struct {
	arrived  time.Time       // at the informer
	enqueued time.Time       // the Request added by the handler
	span     context.Context // carries the event's span; nil without a tracer
}

// eventTracker holds a controller's pending events and its event-latency figures.
type eventTracker struct {
	controller string
	tracer     tracing.Tracer
	latency    workqueue.HistogramMetric

	mu      sync.Mutex
	pending map[Request]pendingEvents

	events                 atomic.Uint64
	latencySum, latencyMax atomic.Int64 // nanoseconds
}

func newEventTracker(controller string, tracer tracing.Tracer, m MetricsProvider) *eventTracker {
	t := &eventTracker{controller: controller, tracer: tracer, pending: map[Request]pendingEvents{}, latency: noopMetric{}}
	if p, ok := m.(EventLatencyMetricsProvider); ok {
		t.latency = p.NewEventToReconcileMetric(controller)
	}
	return t
}

// record notes that ev's Request req was enqueued.
func (t *eventTracker) record(req Request, ev pendingEvent) {
	t.mu.Lock()
	switch p := t.pending[req]; {
	case p.n == 0:
		t.pending[req] = pendingEvents{n: 1, first: ev}
	case p.n < maxPendingEvents:
		p.more = append(p.more, ev)
		p.n++
		t.pending[req] = p
	}
	t.mu.Unlock()
}

// take removes and returns the events of req enqueued before got (the worker's Get), and
// observes their latencies. Events enqueued after it wait for the next reconcile of req.
func (t *eventTracker) take(req Request, got time.Time) pendingEvents {
	t.mu.Lock()
	p, ok := t.pending[req]
	if !ok {
		t.mu.Unlock()
		return pendingEvents{}
	}
	n := 0
	for n < p.n && !p.at(n).enqueued.After(got) {
		n++
	}
	taken := pendingEvents{n: n, first: p.first}
	if n > 1 {
		taken.more = p.more[: n-1 : n-1]
	}
	if n == p.n {
		delete(t.pending, req)
	} else if n > 0 {
		left := pendingEvents{n: p.n - n, first: p.at(n)}
		left.more = append([]pendingEvent(nil), p.more[n:]...)
		t.pending[req] = left
	}
	t.mu.Unlock()
	for i := range taken.n {
		ev := taken.at(i)
		d := got.Sub(ev.arrived)
		t.latency.Observe(d.Seconds())
		t.events.Add(1)
		t.latencySum.Add(int64(d))
		for old := t.latencyMax.Load(); int64(d) > old && !t.latencyMax.CompareAndSwap(old, int64(d)); old = t.latencyMax.Load() {
		}
	}
	return taken
}

// startReconcile starts the reconcile span of req (and the queue spans of its events) when
// the controller has a tracer; it returns ctx unchanged and a nil span otherwise.
func (t *eventTracker) startReconcile(ctx context.Context, req Request, evs pendingEvents, got time.Time) (context.Context, tracing.Span) {
	if t.tracer == nil {
		return ctx, nil
	}
	attrs := []tracing.Attribute{
		tracing.String(tracing.AttrController, t.controller),
		tracing.String(tracing.AttrNamespace, req.Namespace),
		tracing.String(tracing.AttrName, req.Name),
	}
	parent := context.Background()
	var links []context.Context
	for i := range evs.n {
		ev := evs.at(i)
		if ev.span == nil {
			continue
		}
		_, q := t.tracer.Start(ev.span, tracing.SpanQueue, tracing.StartOptions{Start: ev.enqueued, Attributes: attrs[:1]})
		q.End()
		if i == 0 {
			parent = ev.span
		} else {
			links = append(links, ev.span)
		}
	}
	// The reconcile span's context carries ctx's cancellation and the span: parent is only
	// where the span hangs in the trace.
	sctx, span := t.tracer.Start(parent, tracing.SpanReconcile, tracing.StartOptions{Start: got, Links: links, Attributes: attrs})
	return spanContext{Context: ctx, span: sctx}, span
}

// spanContext is ctx (its deadline, cancellation and values) that also answers the values
// of span, the context a Tracer returned: how the reconcile's context carries its span
// whatever key the tracer uses. ctx's own values win.
type spanContext struct {
	context.Context
	span context.Context
}

func (c spanContext) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.span.Value(key)
}

// endReconcile ends the reconcile span with its result.
func endReconcile(span tracing.Span, result string, err error) {
	if span == nil {
		return
	}
	span.SetAttributes(tracing.String(tracing.AttrResult, result))
	if err != nil {
		span.RecordError(err)
	}
	span.End()
}

// eventQueue is the queue a source's handlers see: the controller's queue, which also
// records the event being handled with every Request enqueued. A Kind source's handler
// marks the event (beginEvent, endEvent) around each call on its listener's goroutine, the
// only one that calls this source's handlers, so cur needs no lock.
type eventQueue struct {
	Queue
	t      *eventTracker
	cur    pendingEvent
	active bool
}

func (q *eventQueue) note(req Request) {
	if q.active {
		ev := q.cur
		ev.enqueued = time.Now()
		q.t.record(req, ev)
	}
}

// Add implements Queue.
func (q *eventQueue) Add(req Request) { q.note(req); q.Queue.Add(req) }

// AddWithPriority implements Queue.
func (q *eventQueue) AddWithPriority(req Request, p int) {
	q.note(req)
	q.Queue.AddWithPriority(req, p)
}

// AddAfter implements Queue.
func (q *eventQueue) AddAfter(req Request, d time.Duration) { q.note(req); q.Queue.AddAfter(req, d) }

// AddRateLimited implements Queue.
func (q *eventQueue) AddRateLimited(req Request) { q.note(req); q.Queue.AddRateLimited(req) }

// beginEvent is called by a Kind source's handler before it dispatches a notification of
// obj: for a watch event (info.Arrived set) on a controller's source queue, it starts the
// event's span and marks the queue. It returns the context handlers get, and what endEvent
// needs once they returned (nil, nil for anything else than a tracked watch event).
func beginEvent[T meta.Object](ctx context.Context, q Queue, info informer.EventInfo, typ string, obj T, inf string) (context.Context, *eventQueue, tracing.Span) {
	eq, ok := q.(*eventQueue)
	if !ok || info.Arrived.IsZero() {
		return ctx, nil, nil
	}
	eq.cur = pendingEvent{arrived: info.Arrived}
	var span tracing.Span
	if tr := eq.t.tracer; tr != nil {
		var attrs []tracing.Attribute
		if !isNil(obj) {
			attrs = []tracing.Attribute{
				tracing.String(tracing.AttrNamespace, obj.GetNamespace()),
				tracing.String(tracing.AttrName, obj.GetName()),
				tracing.String(tracing.AttrResourceVersion, obj.GetResourceVersion()),
			}
		}
		attrs = append(attrs, tracing.String(tracing.AttrEventType, typ), tracing.String(tracing.AttrInformer, inf),
			tracing.String(tracing.AttrController, eq.t.controller))
		ctx, span = tr.Start(ctx, tracing.SpanEvent, tracing.StartOptions{Start: info.Arrived, Kind: tracing.SpanKindConsumer, Attributes: attrs})
		eq.cur.span = ctx
	}
	eq.active = true
	return ctx, eq, span
}

// endEvent ends what beginEvent began.
func endEvent(eq *eventQueue, span tracing.Span) {
	if eq != nil {
		eq.active, eq.cur = false, pendingEvent{}
	}
	if span != nil {
		span.End()
	}
}
