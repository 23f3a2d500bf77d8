package otel_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/informerkit/informerkit/examples/otel"
	"github.com/informerkit/informerkit/examples/otel/demo"
	"github.com/informerkit/informerkit/tracing"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.AsString()
		}
	}
	return ""
}

// TestAdapterMapsEveryOption: start time, kind, links, attributes and errors reach the
// OpenTelemetry span.
func TestAdapterMapsEveryOption(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tr := otel.New(tp.Tracer("test"))
	start := time.Now().Add(-time.Second)
	linked, l := tr.Start(context.Background(), "other", tracing.StartOptions{})
	l.End()
	ctx, s := tr.Start(context.Background(), tracing.SpanEvent, tracing.StartOptions{
		Start: start, Kind: tracing.SpanKindConsumer, Links: []context.Context{linked, context.Background()},
		Attributes: []tracing.Attribute{tracing.String(tracing.AttrName, "a")},
	})
	_, child := tr.Start(ctx, "HTTP GET", tracing.StartOptions{Kind: tracing.SpanKindClient})
	child.RecordError(errors.New("boom"))
	child.End()
	s.SetAttributes(tracing.String(tracing.AttrResult, "success"))
	s.End()
	spans := rec.Ended()
	if len(spans) != 3 {
		t.Fatalf("%d spans", len(spans))
	}
	ev, get := spans[2], spans[1]
	if !ev.StartTime().Equal(start) || ev.SpanKind() != trace.SpanKindConsumer || attr(ev, tracing.AttrName) != "a" ||
		attr(ev, tracing.AttrResult) != "success" || len(ev.Links()) != 1 || ev.Links()[0].SpanContext.SpanID() != spans[0].SpanContext().SpanID() {
		t.Errorf("event span: start %v kind %v attrs %v links %v", ev.StartTime(), ev.SpanKind(), ev.Attributes(), ev.Links())
	}
	if get.Parent().SpanID() != ev.SpanContext().SpanID() || get.SpanKind() != trace.SpanKindClient || get.Status().Code != codes.Error || len(get.Events()) != 1 {
		t.Errorf("client span: parent %v kind %v status %v events %v", get.Parent(), get.SpanKind(), get.Status(), get.Events())
	}
}

// TestDemoTracesAnObjectFromEventToWrite: the trace of the ConfigMap's creation holds the
// watch event, the queue, the reconcile and, under the reconcile, its PUT.
func TestDemoTracesAnObjectFromEventToWrite(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spans, err := demo.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var event sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == tracing.SpanEvent && attr(s, tracing.AttrName) == "hello" && attr(s, tracing.AttrEventType) == "add" {
			event = s
		}
	}
	if event == nil {
		t.Fatalf("no event span for the creation of hello among %d spans", len(spans))
	}
	under := func(parent sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
		t.Helper()
		for _, s := range spans {
			if s.Name() == name && s.Parent().SpanID() == parent.SpanContext().SpanID() {
				return s
			}
		}
		t.Fatalf("no %q span under %q", name, parent.Name())
		return nil
	}
	under(event, tracing.SpanQueue)
	reconcile := under(event, tracing.SpanReconcile)
	put := under(reconcile, "HTTP PUT")
	if attr(reconcile, tracing.AttrResult) != "success" || attr(put, tracing.AttrHTTPStatus) != "200" ||
		put.SpanContext().TraceID() != event.SpanContext().TraceID() {
		t.Fatalf("reconcile %v, put %v", reconcile.Attributes(), put.Attributes())
	}
	if !event.StartTime().Before(reconcile.StartTime()) {
		t.Fatalf("event started at %v, after its reconcile (%v)", event.StartTime(), reconcile.StartTime())
	}
}

// TestATraceThroughTwoControllers: copier's reconcile of hello creates copy-hello, which
// carries the reconcile's traceparent; checker's reconcile of copy-hello links to copier's
// reconcile span, so a trace viewer follows hello's creation through both controllers.
func TestATraceThroughTwoControllers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spans, err := demo.RunTwoControllers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	find := func(controller, name string) sdktrace.ReadOnlySpan {
		t.Helper()
		for _, s := range spans {
			if s.Name() == tracing.SpanReconcile && attr(s, tracing.AttrController) == controller && attr(s, tracing.AttrName) == name {
				return s
			}
		}
		t.Fatalf("no reconcile of %s by %s among %d spans", name, controller, len(spans))
		return nil
	}
	copier := find("copier", "hello")
	var post sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == "HTTP POST" && s.Parent().SpanID() == copier.SpanContext().SpanID() {
			post = s
		}
	}
	if post == nil {
		t.Fatal("no POST under copier's reconcile")
	}
	checker := find("checker", "copy-hello")
	var linked bool
	for _, l := range checker.Links() {
		linked = linked || (l.SpanContext.SpanID() == copier.SpanContext().SpanID() && l.SpanContext.TraceID() == copier.SpanContext().TraceID())
	}
	if !linked || !checker.Parent().IsValid() {
		t.Fatalf("checker's reconcile (parent %v) links %v, want a link to copier's reconcile %v", checker.Parent(), checker.Links(), copier.SpanContext())
	}
}

// New adapts an OpenTelemetry tracer; give the result to controller.ManagerOptions.Tracer.
func Example() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tr := otel.New(tp.Tracer("informerkit")) // controller.ManagerOptions{Tracer: tr}

	ctx, event := tr.Start(context.Background(), tracing.SpanEvent, tracing.StartOptions{Kind: tracing.SpanKindConsumer})
	event.End()
	_, reconcile := tr.Start(ctx, tracing.SpanReconcile, tracing.StartOptions{})
	reconcile.End()
	for _, s := range rec.Ended() {
		fmt.Println(s.Name(), s.SpanKind(), s.Parent().IsValid())
	}
	// Output:
	// watch event consumer false
	// reconcile internal true
}
