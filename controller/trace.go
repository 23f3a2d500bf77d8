package controller

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/tracing"
	"github.com/informerkit/informerkit/workqueue"
)

// A watch event's way through a controller: the informer stamps the event when it arrives
// (informer.EventInfo); the Kind source's handler describes the notification as a Trigger,
// starts the event's span (a watch event, with a tracer) and marks its source queue (an
// eventQueue) as handling it; every Request the user's handler enqueues meanwhile is added
// to the controller's queue with that trigger, which the queue merges with the Request's
// other triggers while it waits (triggers.go); the worker gets the Request with its
// triggers, observes each watch event's event-to-reconcile latency, starts the reconcile
// span as the child of the oldest event's, linked to the others, and hands the triggers to
// the reconcile (TriggersFrom).

// EventLatencyMetricsProvider is implemented by a MetricsProvider that also measures the
// time from a watch event's arrival at the informer to the start of the reconcile that
// handles it (the Manager's Registry does, as
// informerkit_controller_event_to_reconcile_seconds{controller}). Events of initial lists
// and resyncs are not measured; an event whose Request was already waiting is measured to
// that Request's next reconcile, and repeats of one object's event that merged into one
// trigger are measured once, from the oldest.
type EventLatencyMetricsProvider interface {
	NewEventToReconcileMetric(controller string) workqueue.HistogramMetric
}

// eventTracker holds what a controller measures and traces of its triggers.
type eventTracker struct {
	controller string
	tracer     tracing.Tracer
	latency    workqueue.HistogramMetric
	triggers   *triggerMetrics
	// annotation and prop carry trace context across controllers (traceparent.go); "" and
	// nil when off.
	annotation string
	prop       tracing.Propagator

	events                 atomic.Uint64
	latencySum, latencyMax atomic.Int64 // nanoseconds
}

func newEventTracker(controller string, tracer tracing.Tracer, m MetricsProvider) *eventTracker {
	t := &eventTracker{controller: controller, tracer: tracer, latency: noopMetric{}, triggers: newTriggerMetrics(controller, m)}
	if p, ok := m.(EventLatencyMetricsProvider); ok {
		t.latency = p.NewEventToReconcileMetric(controller)
	}
	return t
}

// observe counts the triggers of a reconcile that starts at got and measures the latency of
// its watch events.
func (t *eventTracker) observe(trs *Triggers, got time.Time) {
	t.triggers.count(trs)
	for i := range trs.List {
		tr := &trs.List[i]
		if !tr.watch {
			continue
		}
		d := got.Sub(tr.Time)
		t.latency.Observe(d.Seconds())
		t.events.Add(1)
		t.latencySum.Add(int64(d))
		for old := t.latencyMax.Load(); int64(d) > old && !t.latencyMax.CompareAndSwap(old, int64(d)); old = t.latencyMax.Load() {
		}
	}
}

// startReconcile returns the reconcile's context: ctx with the triggers (TriggersFrom) and,
// with a tracer, the reconcile span (and the queue spans of its events, ended at got), whose
// parent is the oldest event's span and whose links are the other events' spans (of a
// merged trigger, the newest event's). Without triggers or a tracer it returns ctx
// unchanged and a nil span.
func (t *eventTracker) startReconcile(ctx context.Context, req Request, trs Triggers, got time.Time) (context.Context, tracing.Span) {
	if t.tracer == nil {
		if len(trs.List) == 0 && trs.Dropped == 0 {
			return ctx, nil
		}
		return &reconcileContext{Context: ctx, triggers: trs}, nil
	}
	attrs := []tracing.Attribute{
		tracing.String(tracing.AttrController, t.controller),
		tracing.String(tracing.AttrNamespace, req.Namespace),
		tracing.String(tracing.AttrName, req.Name),
	}
	parent := context.Background()
	var links []context.Context
	for i := range trs.List {
		tr := &trs.List[i]
		if tr.remote != nil {
			links = append(links, tr.remote)
		}
		if tr.span == nil {
			continue
		}
		_, q := t.tracer.Start(tr.span, tracing.SpanQueue, tracing.StartOptions{Start: tr.enqueued, Attributes: attrs[:1]})
		q.End()
		if parent == context.Background() {
			parent = tr.span
		} else {
			links = append(links, tr.span)
		}
		if tr.last != nil {
			links = append(links, tr.last)
		}
	}
	if len(trs.List) > 0 {
		attrs = append(attrs, tracing.String(tracing.AttrTriggers, trs.String()))
	}
	// The reconcile span's context carries ctx's cancellation and the span: parent is only
	// where the span hangs in the trace.
	sctx, span := t.tracer.Start(parent, tracing.SpanReconcile, tracing.StartOptions{Start: got, Links: links, Attributes: attrs})
	ctx = t.markWrites(ctx, sctx)
	return &reconcileContext{Context: ctx, span: sctx, triggers: trs}, span
}

// reconcileContext is ctx (its deadline, cancellation and values) that also answers the
// reconcile's triggers (TriggersFrom) and the values of span, the context a Tracer returned
// (nil without a tracer): how the reconcile's context carries its span whatever key the
// tracer uses. ctx's own values win, but for the triggers. One allocation per reconcile that
// has triggers or a span.
type reconcileContext struct {
	context.Context
	span     context.Context
	triggers Triggers
}

func (c *reconcileContext) Value(key any) any {
	if key == (triggersKey{}) {
		return &c.triggers
	}
	if v := c.Context.Value(key); v != nil {
		return v
	}
	if c.span != nil {
		return c.span.Value(key)
	}
	return nil
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
// records the notification being handled as the trigger of every Request enqueued. A
// source's handler marks the notification (beginEvent, endEvent) around each call on its
// delivery goroutine, the only one that calls this source's handlers, so cur needs no lock.
type eventQueue struct {
	Queue
	q      triggerQueue // the same queue, with its trigger methods
	t      *eventTracker
	cur    Trigger
	active bool
}

func newEventQueue(q triggerQueue, t *eventTracker) *eventQueue {
	return &eventQueue{Queue: q, q: q, t: t}
}

// stamp returns the trigger of an add made now.
func (q *eventQueue) stamp() Trigger {
	tr := q.cur
	tr.enqueued = time.Now()
	if !tr.watch {
		tr.Time = tr.enqueued
	}
	return tr
}

// Add implements Queue.
func (q *eventQueue) Add(req Request) { q.AddWithPriority(req, PriorityDefault) }

// AddWithPriority implements Queue.
func (q *eventQueue) AddWithPriority(req Request, p int) {
	if !q.active {
		q.Queue.AddWithPriority(req, p)
		return
	}
	q.q.AddWithCause(req, p, q.stamp())
}

// AddAfter implements Queue.
func (q *eventQueue) AddAfter(req Request, d time.Duration) {
	if !q.active {
		q.Queue.AddAfter(req, d)
		return
	}
	q.q.AddAfterWithCause(req, d, q.stamp())
}

// AddRateLimited implements Queue.
func (q *eventQueue) AddRateLimited(req Request) {
	if !q.active {
		q.Queue.AddRateLimited(req)
		return
	}
	q.q.AddRateLimitedWithCause(req, q.stamp())
}

// beginEvent is called by a source's handler before it dispatches a notification of obj
// (typ: "add", "update", "delete" or "generic"; inf: the source's name): on a controller's
// source queue it makes the notification the trigger of what the handlers enqueue and, for
// a watch event (info.Arrived set) with a tracer, starts the event's span. It returns the
// context handlers get, and what endEvent needs once they returned (nil, nil on another
// queue).
func beginEvent[T meta.Object](ctx context.Context, q Queue, info informer.EventInfo, kind TriggerKind, obj T, inf string) (context.Context, *eventQueue, tracing.Span) {
	eq, ok := q.(*eventQueue)
	if !ok {
		return ctx, nil, nil
	}
	eq.cur = Trigger{Kind: kind, Source: inf, Time: info.Arrived, Count: 1, watch: !info.Arrived.IsZero()}
	if !isNil(obj) {
		eq.cur.Namespace, eq.cur.Name, eq.cur.ResourceVersion = obj.GetNamespace(), obj.GetName(), obj.GetResourceVersion()
		eq.cur.remote = eq.t.remoteOf(obj)
	}
	var span tracing.Span
	if tr := eq.t.tracer; tr != nil && eq.cur.watch {
		var attrs []tracing.Attribute
		if !isNil(obj) {
			attrs = []tracing.Attribute{
				tracing.String(tracing.AttrNamespace, obj.GetNamespace()),
				tracing.String(tracing.AttrName, obj.GetName()),
				tracing.String(tracing.AttrResourceVersion, obj.GetResourceVersion()),
			}
		}
		attrs = append(attrs, tracing.String(tracing.AttrEventType, eventTypeOf(kind)), tracing.String(tracing.AttrInformer, inf),
			tracing.String(tracing.AttrController, eq.t.controller))
		ctx, span = tr.Start(ctx, tracing.SpanEvent, tracing.StartOptions{Start: info.Arrived, Kind: tracing.SpanKindConsumer, Attributes: attrs})
		eq.cur.span = ctx
	}
	eq.active = true
	return ctx, eq, span
}

// eventTypeOf is the event-type attribute of a watch event's span: the informer's
// notification.
func eventTypeOf(k TriggerKind) string {
	switch k {
	case TriggerCreate, TriggerInitialList:
		return "add"
	case TriggerUpdate, TriggerResync:
		return "update"
	case TriggerDelete:
		return "delete"
	}
	return k.String()
}

// endEvent ends what beginEvent began.
func endEvent(eq *eventQueue, span tracing.Span) {
	if eq != nil {
		eq.active, eq.cur = false, Trigger{}
	}
	if span != nil {
		span.End()
	}
}
