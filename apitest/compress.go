package apitest

import (
	"compress/gzip"
	"net/http"
	"strings"
)

// Response compression as kube-apiserver 1.37 does it, for a client that sends
// Accept-Encoding: gzip (net/http's transport and client-go send it by default):
//   - a response other than a watch is gzipped when its body is larger than 128 KiB
//     (APIResponseCompression); a smaller one is sent as it is;
//   - a streaming list (a watch with sendInitialEvents=true and allowWatchBookmarks=true,
//     over chunked HTTP) is gzipped whole, one gzip member per flush: each flush ends the
//     member, trailer included, so that a client has every event sent so far
//     (WatchListCompression, beta and on in 1.37: not when answering as 1.36);
//   - other watches, and WebSocket messages, are never compressed.
// Both use gzip level 1, as the kube-apiserver does.

// gzipThreshold is kube-apiserver's defaultGzipThresholdBytes: bodies up to it are not
// compressed.
const gzipThreshold = 128 << 10

// gzipLevel is the kube-apiserver's level: the least CPU for ratios close to the best.
const gzipLevel = gzip.BestSpeed

type compressMode int

const (
	compressOff       compressMode = iota
	compressThreshold              // the whole body, if it is larger than gzipThreshold
	compressPerFlush               // a streaming list: one gzip member per flush
)

// acceptsGzip reports whether the request's Accept-Encoding names gzip (kube-apiserver
// looks for the token, ignoring q-values).
func acceptsGzip(r *http.Request) bool {
	for tok := range strings.SplitSeq(r.Header.Get("Accept-Encoding"), ",") {
		if strings.TrimSpace(tok) == "gzip" {
			return true
		}
	}
	return false
}

// compressWriter sits under a request's codeWriter and compresses what the handler writes
// as its mode says. In compressThreshold mode it holds the status and up to gzipThreshold
// bytes of body until it knows whether the body is larger; finish, deferred by serveHTTP,
// writes what is held or ends the gzip stream.
type compressWriter struct {
	http.ResponseWriter
	mode compressMode

	code    int  // the handler's status, held in compressThreshold mode
	decided bool // the header is written (compressThreshold mode)
	held    []byte
	gw      *gzip.Writer
}

func newCompressWriter(w http.ResponseWriter) *compressWriter {
	return &compressWriter{ResponseWriter: w}
}

// Unwrap lets http.ResponseController reach the connection (a WebSocket upgrade hijacks
// it; compression is off then).
func (c *compressWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func (c *compressWriter) WriteHeader(code int) {
	switch c.mode {
	case compressThreshold:
		if c.code == 0 {
			c.code = code
		}
		return
	case compressPerFlush:
		if code == http.StatusOK {
			h := c.Header()
			h.Set("Content-Encoding", "gzip")
			h.Add("Vary", "Accept-Encoding")
		} else {
			c.mode = compressOff
		}
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *compressWriter) Write(p []byte) (int, error) {
	switch c.mode {
	case compressThreshold:
		if c.decided {
			if c.gw != nil {
				return c.gw.Write(p)
			}
			return c.ResponseWriter.Write(p)
		}
		c.held = append(c.held, p...)
		if len(c.held) > gzipThreshold {
			if err := c.decide(true); err != nil {
				return 0, err
			}
		}
		return len(p), nil
	case compressPerFlush:
		if c.gw == nil {
			c.gw, _ = gzip.NewWriterLevel(c.ResponseWriter, gzipLevel)
		}
		return c.gw.Write(p)
	}
	return c.ResponseWriter.Write(p)
}

// decide writes the held status and body, compressed or not.
func (c *compressWriter) decide(compress bool) error {
	c.decided = true
	if c.code == 0 {
		c.code = http.StatusOK
	}
	held := c.held
	c.held = nil
	if compress {
		h := c.Header()
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
		h.Del("Content-Length")
		c.gw, _ = gzip.NewWriterLevel(c.ResponseWriter, gzipLevel)
	}
	c.ResponseWriter.WriteHeader(c.code)
	if len(held) == 0 {
		return nil
	}
	var err error
	if c.gw != nil {
		_, err = c.gw.Write(held)
	} else {
		_, err = c.ResponseWriter.Write(held)
	}
	return err
}

// Flush sends what has been written: in compressPerFlush mode it ends the gzip member; in
// compressThreshold mode nothing is sent before the size is known.
func (c *compressWriter) Flush() {
	switch c.mode {
	case compressThreshold:
		if !c.decided {
			return
		}
		if c.gw != nil {
			c.gw.Flush()
		}
	case compressPerFlush:
		if c.gw != nil {
			// As the kube-apiserver: a sync flush, then the member's end.
			c.gw.Flush()
			c.gw.Close()
			c.gw = nil
		}
	}
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// finish completes the response once the handler has returned: a body held back (at most
// gzipThreshold bytes) is written as it is, a gzip stream is ended.
func (c *compressWriter) finish() {
	switch c.mode {
	case compressThreshold:
		if !c.decided && (c.code != 0 || len(c.held) > 0) {
			c.decide(false)
		}
	case compressPerFlush:
	default:
		return
	}
	if c.gw != nil {
		c.gw.Close()
		c.gw = nil
	}
}

// compressStream sets the compression of a chunked watch answered on w before it starts:
// per flush for a streaming list whose client accepts gzip, none otherwise.
func compressStream(w http.ResponseWriter, r *http.Request, watchList bool) {
	for {
		switch t := w.(type) {
		case *codeWriter:
			t.cz.mode = compressOff
			if watchList && acceptsGzip(r) {
				t.cz.mode = compressPerFlush
			}
			return
		case *cutWriter:
			w = t.ResponseWriter
		default:
			return
		}
	}
}
