// Package otel adapts informerkit's tracing hook to OpenTelemetry: New wraps an OpenTelemetry
// trace.Tracer as a tracing.Tracer, to give to controller.ManagerOptions.Tracer (every
// controller and the API client) or controller.Options.Tracer. A watch event becomes a
// consumer span that starts at its arrival at the informer, the reconciles it causes its
// children (with links to the other events a reconcile covers), and the reconcile's API
// requests client spans under the reconcile. It is a tracing.Propagator too (W3C trace
// context): with controller.Options.TraceparentAnnotation, a trace follows an object from
// the controller that wrote it to the one its watch event triggers (demo.RunTwoControllers).
//
// It lives in a module of its own (examples/otel/go.mod) so that the root module does not
// depend on OpenTelemetry; cmd/tracedemo runs a controller against an in-process API server
// and prints the trace of one object.
package otel

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/informerkit/informerkit/tracing"
)

// New returns a tracing.Tracer that starts its spans with t.
func New(t trace.Tracer) tracing.Tracer { return tracer{t} }

type tracer struct{ t trace.Tracer }

var _ tracing.Propagator = tracer{}

// Traceparent implements tracing.Propagator with OpenTelemetry's W3C propagator.
func (tracer) Traceparent(ctx context.Context) string {
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c.Get("traceparent")
}

// Remote implements tracing.Propagator: a context with the remote span context, which
// trace.LinkFromContext turns into a link.
func (tracer) Remote(traceparent string) context.Context {
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": traceparent})
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	return ctx
}

// kinds maps informerkit's span kinds to OpenTelemetry's.
var kinds = map[tracing.SpanKind]trace.SpanKind{
	tracing.SpanKindInternal: trace.SpanKindInternal,
	tracing.SpanKindConsumer: trace.SpanKindConsumer,
	tracing.SpanKindClient:   trace.SpanKindClient,
}

func (t tracer) Start(ctx context.Context, name string, opts tracing.StartOptions) (context.Context, tracing.Span) {
	so := []trace.SpanStartOption{trace.WithSpanKind(kinds[opts.Kind]), trace.WithAttributes(attrs(opts.Attributes)...)}
	if !opts.Start.IsZero() {
		so = append(so, trace.WithTimestamp(opts.Start))
	}
	for _, l := range opts.Links {
		if link := trace.LinkFromContext(l); link.SpanContext.IsValid() {
			so = append(so, trace.WithLinks(link))
		}
	}
	ctx, s := t.t.Start(ctx, name, so...)
	return ctx, span{s}
}

type span struct{ s trace.Span }

func (s span) SetAttributes(a ...tracing.Attribute) { s.s.SetAttributes(attrs(a)...) }

func (s span) RecordError(err error) {
	s.s.RecordError(err)
	s.s.SetStatus(codes.Error, err.Error())
}

func (s span) End() { s.s.End() }

func attrs(a []tracing.Attribute) []attribute.KeyValue {
	kv := make([]attribute.KeyValue, len(a))
	for i, x := range a {
		kv[i] = attribute.String(x.Key, x.Value)
	}
	return kv
}
