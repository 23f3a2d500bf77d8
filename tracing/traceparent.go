package tracing

import (
	"context"
	"encoding/hex"
)

// Propagator is implemented by a Tracer that can carry span contexts between processes as
// W3C trace context (https://www.w3.org/TR/trace-context/). With it, and a controller's
// Options.TraceparentAnnotation set, a trace crosses controllers through the objects they
// write: the reconcile writes its traceparent in an annotation of the objects it creates or
// updates, and a reconcile that a watch event of such an object triggers links to it.
type Propagator interface {
	// Traceparent returns the W3C traceparent of the span ctx carries ("" if none).
	Traceparent(ctx context.Context) string
	// Remote returns a context that carries the remote span context traceparent names, for
	// StartOptions.Links; nil if the tracer cannot use it. informerkit passes only values
	// that ParseTraceparent accepts.
	Remote(traceparent string) context.Context
}

// Traceparent is a parsed W3C traceparent of version 00.
type Traceparent struct {
	TraceID [16]byte
	SpanID  [8]byte
	Flags   byte
}

// String formats t as a traceparent: "00-<trace id>-<span id>-<flags>", lowercase hex.
func (t Traceparent) String() string {
	b := make([]byte, 0, 55)
	b = append(b, "00-"...)
	b = hex.AppendEncode(b, t.TraceID[:])
	b = append(b, '-')
	b = hex.AppendEncode(b, t.SpanID[:])
	b = append(b, '-')
	b = hex.AppendEncode(b, []byte{t.Flags})
	return string(b)
}

// ParseTraceparent parses a W3C traceparent: version 00 exactly (55 characters), or a later
// version, whose first 55 characters are read as 00's and the rest ignored, as the
// specification asks. It refuses upper-case hex, the version ff, and all-zero trace or span
// ids. An annotation is written by anyone who may write the object, so the value is checked
// before a tracer sees it.
func ParseTraceparent(s string) (Traceparent, bool) {
	var t Traceparent
	if len(s) < 55 || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return t, false
	}
	if len(s) > 55 && (s[0:2] == "00" || s[55] != '-') {
		return t, false
	}
	var v [1]byte
	if !lowerHex(s[0:2]) || !lowerHex(s[3:35]) || !lowerHex(s[36:52]) || !lowerHex(s[53:55]) {
		return t, false
	}
	if _, err := hex.Decode(v[:], []byte(s[0:2])); err != nil || v[0] == 0xff {
		return t, false
	}
	if _, err := hex.Decode(t.TraceID[:], []byte(s[3:35])); err != nil {
		return t, false
	}
	if _, err := hex.Decode(t.SpanID[:], []byte(s[36:52])); err != nil {
		return t, false
	}
	if _, err := hex.Decode(v[:], []byte(s[53:55])); err != nil {
		return t, false
	}
	t.Flags = v[0]
	if t.TraceID == ([16]byte{}) || t.SpanID == ([8]byte{}) {
		return t, false
	}
	return t, true
}

func lowerHex(s string) bool {
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// annotationKey is the context key of WithTraceparentAnnotation.
type annotationKey struct{}

type annotation struct{ key, value string }

// WithTraceparentAnnotation returns ctx marked so that the controller client's writes
// (Create, Update, PatchFrom) made with it set annotation key to value, a traceparent, on
// the objects they write. The controller marks its reconciles' contexts so when
// Options.TraceparentAnnotation is set.
func WithTraceparentAnnotation(ctx context.Context, key, value string) context.Context {
	return context.WithValue(ctx, annotationKey{}, annotation{key, value})
}

// TraceparentAnnotation returns the annotation key and traceparent that
// WithTraceparentAnnotation recorded in ctx (ok false if none).
func TraceparentAnnotation(ctx context.Context) (key, value string, ok bool) {
	a, ok := ctx.Value(annotationKey{}).(annotation)
	return a.key, a.value, ok
}
