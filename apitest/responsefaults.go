package apitest

import (
	"bytes"
	"errors"
	"net/http"
)

// TruncateResponses serves the next n requests of verb (VerbAny: all) on resource ("" for
// all) as usual, but cuts the response off after afterBytes bytes of body: HTTP/1.1 closes
// the connection mid-body, HTTP/2 resets the stream. A client sees a LIST that breaks
// part-way (an unexpected EOF or a stream error), with the items before the cut already
// read. Meant for LIST and GET; a watch is cut only if its stream is a plain HTTP response.
func (f *Faults) TruncateResponses(verb Verb, resource string, n, afterBytes int) error {
	s := f.s
	return s.addFailRule(resource, &failRule{verb: verb, left: n, cut: &cutRule{after: afterBytes}})
}

// CorruptResponses is TruncateResponses whose responses, instead of breaking off, go on with
// bytes that are no JSON or protobuf after afterBytes bytes and then end normally: a body
// that cannot be decoded, from its middle.
func (f *Faults) CorruptResponses(verb Verb, resource string, n, afterBytes int) error {
	s := f.s
	return s.addFailRule(resource, &failRule{verb: verb, left: n, cut: &cutRule{after: afterBytes, garbage: true}})
}

// cutRule is the rule of TruncateResponses and CorruptResponses.
type cutRule struct {
	after   int
	garbage bool
}

// garbage is what CorruptResponses writes instead of the rest of a body.
var garbage = bytes.Repeat([]byte("\x00\xff}]{[\x01"), 64)

// cutWriter writes the first rule.after bytes of a body, then garbage or nothing, and fails
// every write from then on, so that the handler (a list, a watch stream) stops; finish,
// deferred by serveHTTP once the handler has returned (and holds no lock), breaks the
// connection of a truncated response.
type cutWriter struct {
	http.ResponseWriter
	rule    cutRule
	written int
	cut     bool
}

// errCut stops the handler (a list or a watch stream) once its response is cut.
var errCut = errors.New("apitest: response cut by a fault")

func (c *cutWriter) Write(p []byte) (int, error) {
	if c.cut {
		return 0, errCut
	}
	if room := c.rule.after - c.written; room < len(p) {
		k, _ := c.ResponseWriter.Write(p[:max(room, 0)])
		if c.rule.garbage {
			c.ResponseWriter.Write(garbage)
		}
		c.Flush()
		c.written, c.cut = c.rule.after, true
		return k, errCut
	}
	c.written += len(p)
	return c.ResponseWriter.Write(p)
}

// Flush lets streamed bodies through.
func (c *cutWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// finish breaks the connection of a truncated response (net/http recovers the panic).
func (c *cutWriter) finish() {
	if c.cut && !c.rule.garbage {
		panic(http.ErrAbortHandler)
	}
}
