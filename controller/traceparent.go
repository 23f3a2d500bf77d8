package controller

import (
	"context"

	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/tracing"
)

// Trace context across controllers (Options.TraceparentAnnotation): the W3C traceparent of
// a reconcile travels in an annotation of the objects it writes, and the reconcile that an
// event of such an object triggers links to it. A link, not a parent: the event's own span
// stays the root of its trace, as the watch event's arrival is where the work starts here,
// and one reconcile may follow from several writers.

// setTraceparentAnnotation turns the propagation on with annotation key (off for "" or a
// Tracer that is not a tracing.Propagator).
func (t *eventTracker) setTraceparentAnnotation(key string) {
	if p, ok := t.tracer.(tracing.Propagator); ok && key != "" {
		t.annotation, t.prop = key, p
	}
}

// remoteOf returns the span context obj's traceparent annotation names, nil if none (or a
// value that is not a valid traceparent: anyone who may write the object writes it).
func (t *eventTracker) remoteOf(obj meta.Object) context.Context {
	if t.prop == nil {
		return nil
	}
	v, ok := obj.GetAnnotations()[t.annotation]
	if !ok {
		return nil
	}
	if _, valid := tracing.ParseTraceparent(v); !valid {
		return nil
	}
	return t.prop.Remote(v)
}

// markWrites returns ctx marked so that the client's writes made with it record the
// traceparent of the reconcile span sctx carries (ctx unchanged when propagation is off).
func (t *eventTracker) markWrites(ctx, sctx context.Context) context.Context {
	if t.prop == nil {
		return ctx
	}
	tp := t.prop.Traceparent(sctx)
	if _, ok := tracing.ParseTraceparent(tp); !ok {
		return ctx
	}
	return tracing.WithTraceparentAnnotation(ctx, t.annotation, tp)
}
