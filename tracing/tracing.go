// Package tracing is the hook through which a trace follows an object through informerkit,
// from the watch event that reached an informer, through a controller's work queue, to the
// reconcile and the API requests it makes. It has no dependency: an adapter maps Tracer to a
// tracing library (examples/otel, a module of its own, does it for OpenTelemetry). A nil
// Tracer, the default everywhere, traces nothing and costs nothing.
//
// The spans informerkit starts, with the attributes named by the constants below:
//
//   - SpanEvent, "watch event": from the event's arrival at the informer to the Request
//     its controller's handler enqueued (a root span: the trace starts there);
//   - SpanQueue, "workqueue": from that enqueue to the worker's Get, child of the event;
//   - SpanReconcile, "reconcile": the Reconcile call, child of the oldest event it handles
//     and linked to the others (events that arrived while the Request waited), or a root
//     span when no event caused it (a requeue);
//   - "HTTP <method>" (SpanKindClient): each API request of an apiclient.Client configured
//     with a Tracer, child of the span in the request's context: a reconcile's writes are
//     children of its reconcile span.
//
// A Tracer that is also a Propagator carries a reconcile's W3C traceparent to the next
// controller through an annotation of the objects it writes (docs/triggers.md).
package tracing

import (
	"context"
	"time"
)

// Tracer starts spans. Implementations must be safe for concurrent use.
type Tracer interface {
	// Start starts a span named name, child of the span ctx carries (if any), and returns a
	// context that carries the new span, for its children and for links.
	Start(ctx context.Context, name string, opts StartOptions) (context.Context, Span)
}

// StartOptions are the optional settings of Tracer.Start.
type StartOptions struct {
	// Start is when the span started (default: now). A watch event's span starts when the
	// event arrived, before informerkit knows which controller it concerns.
	Start time.Time
	// Kind says what the span is (default SpanKindInternal).
	Kind SpanKind
	// Links are the contexts (returned by Start) of spans this one follows from without
	// being their child: the other events a reconcile handles.
	Links []context.Context
	// Attributes describe the span.
	Attributes []Attribute
}

// Span is a started span.
type Span interface {
	// SetAttributes adds attributes, or replaces those with the same keys.
	SetAttributes(attrs ...Attribute)
	// RecordError records that the operation failed with err and marks the span failed.
	RecordError(err error)
	// End ends the span now. Calls after the first do nothing.
	End()
}

// SpanKind says what a span is, as OpenTelemetry's SpanKind does.
type SpanKind int

// The kinds of span.
const (
	// SpanKindInternal is work inside the process (the default): the queue, the reconcile.
	SpanKindInternal SpanKind = iota
	// SpanKindConsumer is the handling of a message from elsewhere: a watch event.
	SpanKindConsumer
	// SpanKindClient is a request to a server: an API request.
	SpanKindClient
)

// Attribute is a key and a value.
type Attribute struct {
	Key, Value string
}

// String returns an Attribute.
func String(key, value string) Attribute { return Attribute{Key: key, Value: value} }

// The names of the spans informerkit starts.
const (
	SpanEvent     = "watch event"
	SpanQueue     = "workqueue"
	SpanReconcile = "reconcile"
)

// The attribute keys informerkit sets. Those of OpenTelemetry's semantic conventions keep
// their names; the others are prefixed informerkit.
const (
	// AttrController is the controller's name.
	AttrController = "informerkit.controller"
	// AttrInformer is the informer's name ("configmaps.v1").
	AttrInformer = "informerkit.informer"
	// AttrNamespace is the object's namespace.
	AttrNamespace = "k8s.namespace.name"
	// AttrName is the object's name.
	AttrName = "informerkit.object.name"
	// AttrResourceVersion is the object's resourceVersion in the event.
	AttrResourceVersion = "informerkit.object.resource_version"
	// AttrEventType is "add", "update" or "delete": the informer's notification.
	AttrEventType = "informerkit.event.type"
	// AttrResult is how a reconcile ended: "success", "error", "requeue", "requeue_after".
	AttrResult = "informerkit.reconcile.result"
	// AttrTriggers lists what caused a reconcile (controller.Triggers' String): "update
	// configmaps.v1 default/a@42 ×3; retry default/a: ...".
	AttrTriggers = "informerkit.reconcile.triggers"
	// AttrHTTPMethod, AttrURLPath, AttrServerAddress and AttrHTTPStatus describe an API
	// request.
	AttrHTTPMethod    = "http.request.method"
	AttrURLPath       = "url.path"
	AttrServerAddress = "server.address"
	AttrHTTPStatus    = "http.response.status_code"
)
