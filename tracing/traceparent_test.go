package tracing

import (
	"context"
	"testing"
)

func TestParseTraceparent(t *testing.T) {
	const good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, c := range []struct {
		in string
		ok bool
	}{
		{good, true},
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-later-fields", true}, // a later version: its 00 prefix
		{good + "-x", false}, // version 00 has nothing after the flags
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", false},
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false},
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", false},
		{"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
		{"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01", false},
		{"", false},
	} {
		tp, ok := ParseTraceparent(c.in)
		if ok != c.ok {
			t.Errorf("ParseTraceparent(%q) ok %v, want %v", c.in, ok, c.ok)
			continue
		}
		if ok && c.in == good && tp.String() != good {
			t.Errorf("round trip: %q", tp.String())
		}
	}
}

func TestTraceparentAnnotationTravelsInTheContext(t *testing.T) {
	if _, _, ok := TraceparentAnnotation(context.Background()); ok {
		t.Fatal("an annotation in an empty context")
	}
	ctx := WithTraceparentAnnotation(context.Background(), "traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	if k, v, ok := TraceparentAnnotation(ctx); !ok || k != "traceparent" || v[:3] != "00-" {
		t.Fatalf("got %q %q %v", k, v, ok)
	}
}
