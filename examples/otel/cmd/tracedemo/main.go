// Command tracedemo runs a controller traced with OpenTelemetry against an in-process API
// server and prints the trace of one ConfigMap: the watch event that created it, the queue,
// the reconcile, the reconcile's PUT, and the next event and reconcile its own write caused.
// With -json it prints the spans as OpenTelemetry's stdout exporter writes them.
//
//	cd examples/otel && go run ./cmd/tracedemo
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/informerkit/informerkit/examples/otel/demo"
)

func main() {
	asJSON := flag.Bool("json", false, "print the spans as OpenTelemetry's stdout exporter does")
	flag.Parse()
	var extra []sdktrace.SpanProcessor
	if *asJSON {
		exp, err := stdouttrace.New(stdouttrace.WithPrettyPrint())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		extra = append(extra, sdktrace.NewSimpleSpanProcessor(exp))
	}
	spans, err := demo.Run(context.Background(), extra...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if !*asJSON {
		printTree(spans)
	}
}

// printTree prints the traces that concern default/hello, each span under its parent, with its
// start relative to the trace's first span and its duration.
func printTree(spans []sdktrace.ReadOnlySpan) {
	children := map[string][]sdktrace.ReadOnlySpan{}
	byTrace := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		children[s.Parent().SpanID().String()] = append(children[s.Parent().SpanID().String()], s)
		byTrace[s.SpanContext().TraceID().String()] = append(byTrace[s.SpanContext().TraceID().String()], s)
	}
	for _, list := range children {
		sort.Slice(list, func(i, j int) bool { return list[i].StartTime().Before(list[j].StartTime()) })
	}
	var roots []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if !s.Parent().IsValid() && attr(s, "informerkit.object.name") == "hello" {
			roots = append(roots, s)
		}
	}
	sort.Slice(roots, func(i, j int) bool { return roots[i].StartTime().Before(roots[j].StartTime()) })
	for _, root := range roots {
		fmt.Printf("trace %s\n", root.SpanContext().TraceID())
		var walk func(s sdktrace.ReadOnlySpan, depth int)
		walk = func(s sdktrace.ReadOnlySpan, depth int) {
			fmt.Printf("  %s%-*s +%-10v %10v  %s\n", strings.Repeat("  ", depth), 28-2*depth, s.Name(),
				s.StartTime().Sub(root.StartTime()).Round(1000), s.EndTime().Sub(s.StartTime()).Round(1000), describe(s))
			for _, c := range children[s.SpanContext().SpanID().String()] {
				walk(c, depth+1)
			}
		}
		walk(root, 0)
	}
}

// describe lists the attributes that say what a span is about.
func describe(s sdktrace.ReadOnlySpan) string {
	var parts []string
	for _, k := range []string{"informerkit.event.type", "informerkit.object.resource_version", "informerkit.controller",
		"informerkit.reconcile.result", "url.path", "http.response.status_code"} {
		if v := attr(s, k); v != "" {
			parts = append(parts, k[strings.LastIndexByte(k, '.')+1:]+"="+v)
		}
	}
	if n := len(s.Links()); n > 0 {
		parts = append(parts, fmt.Sprintf("links=%d", n))
	}
	return strings.Join(parts, " ")
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.AsString()
		}
	}
	return ""
}
