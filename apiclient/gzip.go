package apiclient

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Compressed responses. kube-apiserver gzips a response body larger than 128 KiB when the
// client sends Accept-Encoding: gzip (APIResponseCompression, on since 1.16), and since 1.37
// (WatchListCompression) the whole stream of a streaming list, one gzip member per flush:
// each member ends, trailer and all, before the server waits for its next events. The
// client therefore reads members one at a time and hands a member's bytes to the decoder as
// soon as its deflate stream ends, without waiting for the header of the next one (which
// may come minutes later, with the next event). docs/apiclient.md, "Compression", has the
// policy and the figures behind it.

var (
	// ErrMalformedGzip: a response announced as gzip (Content-Encoding: gzip) is not a valid
	// sequence of gzip members: a bad header, corrupt deflate data, a wrong checksum or
	// length, or bytes after a member that do not start another.
	ErrMalformedGzip = errors.New("malformed gzip stream")
	// ErrGzipBomb: a gzip response expands to more than GzipRatioLimit times its compressed
	// size (past its first MiB). Kubernetes objects compress 2 to 20 times at the level
	// kube-apiserver uses; a body that expands by hundreds is made to exhaust the client.
	ErrGzipBomb = errors.New("gzip stream expands beyond the ratio limit")
)

// GzipRatioLimit bounds how much a gzip response may expand: past the first MiB of output,
// a stream that has produced more than GzipRatioLimit bytes for each compressed byte read is
// refused with ErrGzipBomb. Real bodies stay far below it (a list of 500 pods as JSON: 17,
// as protobuf: 11; DEFLATE itself can reach about 1,030).
const GzipRatioLimit = 256

// gzipSlack is the output a stream may produce before its ratio is checked, so that a small
// very compressible body (an empty list padded by a proxy...) is never refused.
const gzipSlack = 1 << 20

// askGzip reports whether requests to base ask for gzip under policy c.
func askGzip(c Compression, base *url.URL) bool {
	switch c {
	case CompressionGzip:
		return true
	case CompressionNone:
		return false
	}
	return !isLoopback(base.Hostname())
}

// decodedBody is body as the decoders read it: decompressed when h says it is gzip.
func decodedBody(h http.Header, body io.Reader) io.Reader {
	if gzipped(h) {
		return newGzipStream(body, GzipRatioLimit)
	}
	return body
}

// gzipped reports whether resp's body is gzip-compressed. Other codings are not asked for
// and left to the decoders, which name what they find.
func gzipped(h http.Header) bool {
	return strings.EqualFold(strings.TrimSpace(h.Get("Content-Encoding")), "gzip")
}

// gzipStream reads a body of one or more gzip members as their concatenated contents, as
// gzip.Reader in its multistream mode does, except that a member's end is reported as soon
// as its trailer is read, and memory is fixed (the deflate window and one read buffer)
// whatever the stream holds. Errors: the source's own (a transport error, passed on
// unchanged), io.ErrUnexpectedEOF for a body cut inside a member, else a *DecodeError
// wrapping ErrMalformedGzip or ErrGzipBomb.
type gzipStream struct {
	src   countingReader
	zr    gzip.Reader
	open  bool  // inside a member
	ratio int64 // GzipRatioLimit, or 0 for none (the fuzz target's reference comparison)
	out   int64 // decompressed bytes returned
	err   error // sticky
}

// newGzipStream reads r (the compressed body).
func newGzipStream(r io.Reader, ratio int64) *gzipStream {
	return &gzipStream{src: countingReader{br: bufio.NewReaderSize(r, 32<<10)}, ratio: ratio}
}

// countingReader gives flate the io.ByteReader it reads through without buffering of its
// own, so that n is exactly the compressed bytes consumed; err keeps the source's error, so
// that a transport error is told from corrupt data.
type countingReader struct {
	br  *bufio.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.br.Read(p)
	c.n += int64(n)
	if err != nil {
		c.err = err
	}
	return n, err
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.br.ReadByte()
	if err == nil {
		c.n++
	} else {
		c.err = err
	}
	return b, err
}

func (g *gzipStream) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if !g.open {
			// A member boundary: the end of the body here is its clean end.
			at := g.src.n
			if err := g.zr.Reset(&g.src); err != nil {
				return 0, g.fail(at, err, "reading the header of a gzip member")
			}
			g.zr.Multistream(false)
			g.open = true
		}
		n, err := g.zr.Read(p)
		g.out += int64(n)
		if g.ratio > 0 && g.out > gzipSlack && g.out > g.ratio*g.src.n {
			g.err = &DecodeError{Err: ErrGzipBomb, Offset: g.src.n,
				Detail: fmt.Sprintf("%d compressed bytes expanded to %d (limit %d×)", g.src.n, g.out, g.ratio)}
			return 0, g.err
		}
		switch {
		case err == io.EOF:
			// The member's trailer is read and checked; the next header waits for the
			// next Read, so these bytes reach the decoder now.
			g.open = false
			if n > 0 {
				return n, nil
			}
		case err != nil:
			return n, g.fail(g.src.n, err, "inside a gzip member")
		case n > 0:
			return n, nil
		}
	}
}

// fail records and returns the error that ends the stream: io.EOF at a member boundary, the
// source's own error if it failed, io.ErrUnexpectedEOF for a body cut inside a member or a
// header, else the malformed data as a *DecodeError.
func (g *gzipStream) fail(at int64, err error, where string) error {
	switch {
	case err == io.EOF && !g.open:
		g.err = io.EOF
	case g.src.err != nil && g.src.err != io.EOF:
		g.err = g.src.err
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		g.err = io.ErrUnexpectedEOF
	default:
		var ce flate.CorruptInputError
		if errors.As(err, &ce) {
			where = "corrupt deflate data"
		}
		g.err = &DecodeError{Err: ErrMalformedGzip, Offset: at, Detail: where, Cause: err}
	}
	return g.err
}
