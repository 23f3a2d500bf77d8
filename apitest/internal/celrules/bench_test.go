package celrules

import (
	"context"
	"testing"
)

// BenchmarkCompile: compiling the rules of a schema (the server does it when a CRD is
// written; apitest on the first write of its resources).
func BenchmarkCompile(b *testing.B) {
	s := schema(mustDecode(widgetSchema))
	base() // the environment is built once per process
	b.ReportAllocs()
	for b.Loop() {
		New(s)
	}
}

// BenchmarkValidate: evaluating the rules on one object.
func BenchmarkValidate(b *testing.B) {
	v := New(mustDecode(widgetSchema))
	obj := mustDecode(`{"apiVersion":"x/v1","kind":"W","metadata":{"name":"w-1"},"spec":{"min":1,"max":2,"mode":"a",
		"name":"abc","ports":[{"port":1}],"labels":{"a":"xyz"},"size":"5%","tags":["a","b"]}}`)
	b.ReportAllocs()
	for b.Loop() {
		v.Validate(context.Background(), obj, obj)
	}
}
