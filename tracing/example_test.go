package tracing_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/informerkit/informerkit/tracing"
)

// printTracer is a Tracer that prints each span when it ends, indented under its parent.
type printTracer struct{}

type spanKey struct{}

type printSpan struct {
	name  string
	depth int
	attrs []tracing.Attribute
	err   error
}

func (printTracer) Start(ctx context.Context, name string, opts tracing.StartOptions) (context.Context, tracing.Span) {
	depth := 0
	if parent, ok := ctx.Value(spanKey{}).(*printSpan); ok {
		depth = parent.depth + 1
	}
	s := &printSpan{name: name, depth: depth, attrs: opts.Attributes}
	return context.WithValue(ctx, spanKey{}, s), s
}

func (s *printSpan) SetAttributes(attrs ...tracing.Attribute) { s.attrs = append(s.attrs, attrs...) }
func (s *printSpan) RecordError(err error)                    { s.err = err }
func (s *printSpan) End() {
	var kv []string
	for _, a := range s.attrs {
		kv = append(kv, a.Key+"="+a.Value)
	}
	fmt.Printf("%s%s %s\n", strings.Repeat("  ", s.depth), s.name, strings.Join(kv, " "))
}

// A Tracer adapts informerkit's spans to a tracing library; this one prints them. Give it to
// a controller (controller.Options.Tracer, or ManagerOptions.Tracer for every controller and
// the API client): here the spans of one event are started by hand, as the controller does.
func Example() {
	var tr tracing.Tracer = printTracer{}
	ctx, event := tr.Start(context.Background(), tracing.SpanEvent, tracing.StartOptions{
		Kind: tracing.SpanKindConsumer,
		Attributes: []tracing.Attribute{
			tracing.String(tracing.AttrNamespace, "default"),
			tracing.String(tracing.AttrName, "web"),
			tracing.String(tracing.AttrResourceVersion, "42"),
		},
	})
	event.End()
	rctx, reconcile := tr.Start(ctx, tracing.SpanReconcile, tracing.StartOptions{
		Attributes: []tracing.Attribute{tracing.String(tracing.AttrController, "web-controller")},
	})
	_, write := tr.Start(rctx, "HTTP PUT", tracing.StartOptions{Kind: tracing.SpanKindClient})
	write.SetAttributes(tracing.String(tracing.AttrHTTPStatus, "200"))
	write.End()
	reconcile.SetAttributes(tracing.String(tracing.AttrResult, "success"))
	reconcile.End()
	// Output:
	// watch event k8s.namespace.name=default informerkit.object.name=web informerkit.object.resource_version=42
	//     HTTP PUT http.response.status_code=200
	//   reconcile informerkit.controller=web-controller informerkit.reconcile.result=success
}

// A traceparent read from an object's annotation is checked before a tracer sees it.
func ExampleParseTraceparent() {
	tp, ok := tracing.ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	fmt.Println(ok, tp.Flags, tp)
	_, ok = tracing.ParseTraceparent("00-not-a-trace")
	fmt.Println(ok)
	// Output:
	// true 1 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
	// false
}
