package apiclient

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
)

// readConn is a net.Conn that reads r in chunks of at most chunk bytes (the way answers
// arrive over a network), and tells whether everything was read.
type readConn struct {
	net.Conn
	r     io.Reader
	chunk int
}

func (c *readConn) Read(p []byte) (int, error) {
	if len(p) > c.chunk {
		p = p[:c.chunk]
	}
	return c.r.Read(p)
}

// TestAnswerConnDecidesAtTheHeaders: what gorilla/websocket can read of a handshake's
// answer, for every kind of answer and however it is cut into reads: everything after a
// 101; the head only of a 2xx, of an answer whose body has no declared length (chunked, or
// until the connection closes: a stream that never ends must not be waited for); the head
// and the declared body of an error (a Status). Headers larger than maxAnswerHead are an
// error, not memory.
func TestAnswerConnDecidesAtTheHeaders(t *testing.T) {
	const body = `{"kind":"Status","code":403}`
	endless := strings.Repeat("4\r\nabcd\r\n", 1000)
	cases := []struct {
		name, answer, want string
	}{
		{"101 and frames", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n\x81\x02hi", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n\x81\x02hi"},
		{"200 streaming", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + endless, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"},
		{"200 with a length", "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd", "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n"},
		{"200 until close, LF only", "HTTP/1.0 200 OK\nContent-Type: application/json\n\n" + endless, "HTTP/1.0 200 OK\nContent-Type: application/json\n\n"},
		{"403 Status", "HTTP/1.1 403 Forbidden\r\nContent-Length: 28\r\n\r\n" + body + "trailing", "HTTP/1.1 403 Forbidden\r\nContent-Length: 28\r\n\r\n" + body},
		{"503 streaming", "HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n" + endless, "HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n"},
	}
	for _, tc := range cases {
		for _, chunk := range []int{1, 3, 7, 64, 1 << 16} {
			c := &answerConn{Conn: &readConn{r: strings.NewReader(tc.answer), chunk: chunk}}
			got, err := io.ReadAll(c)
			if err != nil {
				t.Errorf("%s, reads of %d: %v", tc.name, chunk, err)
			}
			if string(got) != tc.want {
				t.Errorf("%s, reads of %d: read %q, want %q", tc.name, chunk, got, tc.want)
			}
		}
	}
	big := "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-Pad: "+strings.Repeat("p", 1000)+"\r\n", maxAnswerHead/1000+2)
	c := &answerConn{Conn: &readConn{r: strings.NewReader(big), chunk: 32 << 10}}
	if _, err := io.Copy(io.Discard, c); !errors.Is(err, errAnswerHeadTooLarge) {
		t.Errorf("headers past %d bytes: err = %v", maxAnswerHead, err)
	}
	if headEnd([]byte("HTTP/1.1 200 OK\r\n"), 0) != -1 || headEnd([]byte("\n\n"), 0) != 2 || !bytes.Equal([]byte("a\r\n\r\n")[:headEnd([]byte("a\r\n\r\n"), 0)], []byte("a\r\n\r\n")) {
		t.Error("headEnd")
	}
}
