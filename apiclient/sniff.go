package apiclient

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// Early recognition of a stream that is not what it should be (a watch stream of JSON
// events or of protobuf frames, a list body): the decoders check the bytes as they arrive,
// so that garbage is reported within bytes, not after the size limit's worth of it has been
// buffered, and the error says what came instead.

// jsonOutside[c] is whether byte c may appear in JSON outside a string: whitespace,
// punctuation, and the characters of numbers and of true, false and null.
var jsonOutside = func() (t [256]bool) {
	for _, c := range []byte(" \t\r\n{}[]:,-+.0123456789eEtrufalsn\"") {
		t[c] = true
	}
	return t
}()

// notJSON is the detail of a byte that cannot appear where it is: the stream is not JSON.
// At the start of a stream the first bytes are described (what a server sent instead: an
// HTML page, gzip, protobuf...); further on only the byte is named, since the stream's
// earlier content, objects of the cluster, is none of an error message's business.
func notJSON(f *frameReader, at int) string {
	if f.base+int64(at) < 64 && f.base == 0 && f.frames == 0 {
		start := f.buf[:f.end]
		if t := bytes.TrimLeft(start, " \t\r\n"); len(t) > 0 && (t[0] == '{' || t[0] == '[') && int(f.base)+at > len(start)-len(t) {
			return fmt.Sprintf("byte 0x%02x cannot appear there in JSON: the stream is not JSON (%s)", f.buf[at], describeStart(start))
		}
		return "the stream is not JSON: it starts with " + describeStart(start)
	}
	return fmt.Sprintf("byte 0x%02x cannot appear there in JSON: the stream is not JSON from here on", f.buf[at])
}

// describeStart says what the first bytes of a stream look like.
func describeStart(b []byte) string {
	b = b[:min(len(b), 64)]
	t := bytes.TrimLeft(b, " \t\r\n")
	switch {
	case len(t) == 0:
		return "nothing"
	case len(t) >= 2 && t[0] == 0x1f && t[1] == 0x8b:
		return "gzip-compressed data (1f 8b)"
	case bytes.HasPrefix(t, []byte("k8s\x00")):
		return "a Kubernetes protobuf object (k8s\\x00), not a stream of events"
	case t[0] == '<':
		if bytes.Contains(bytes.ToLower(t), []byte("html")) {
			return fmt.Sprintf("an HTML page: %q", printable(t, 32))
		}
		return fmt.Sprintf("markup: %q", printable(t, 32))
	case (t[0] == '{' || t[0] == '[') && isText(t):
		return fmt.Sprintf("JSON: %q", printable(t, 32))
	case len(b) >= 5 && b[0] == 0 && b[4] == 0x0a:
		return "protobuf frames (a length, then a message)"
	case isText(t):
		return fmt.Sprintf("text: %q", printable(t, 32))
	}
	return fmt.Sprintf("binary data: % x", b[:min(len(b), 8)])
}

func isText(b []byte) bool {
	for _, c := range b[:min(len(b), 32)] {
		if c < 0x20 && c != '\t' && c != '\r' && c != '\n' || c == 0x7f {
			return false
		}
	}
	return utf8.Valid(b[:min(len(b), 32)]) || len(b) > 32
}

// printable returns at most n bytes of b, cut at a rune boundary.
func printable(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n]) + "..."
}
