package apitest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"

	"github.com/informerkit/informerkit/apiclient"
)

// memoryHost is the URL of a server with Options.InMemory: a name that resolves nowhere,
// since only the server's own transports reach it.
const memoryHost = "http://apitest.invalid"

// memListener is the listener of a server with Options.InMemory: each connection is a
// net.Pipe whose client end a dial returns. Both ends wait on channels, so that a
// goroutine blocked on one is durably blocked in a testing/synctest bubble.
type memListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr{} }

// dial connects to the server.
func (l *memListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
	case <-ctx.Done():
	}
	server.Close()
	client.Close()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("apitest: the in-memory server is closed")
}

type memAddr struct{}

func (memAddr) Network() string { return "memory" }
func (memAddr) String() string  { return "apitest.invalid:80" }

// memTransport returns a transport that reaches the in-memory server.
func (s *Server) memTransport() *http.Transport {
	return &http.Transport{DialContext: s.mem.dial, ForceAttemptHTTP2: false}
}

// configureMemory makes c reach the in-memory server: its transport dials the server's
// pipe listener, and watches are chunked streams (no WebSocket over a pipe).
func (s *Server) configureMemory(c *apiclient.Config) {
	c.WatchProtocol = apiclient.WatchChunked
	c.WrapTransport = func(http.RoundTripper) http.RoundTripper { return s.memTransport() }
}
