package apiclient_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
)

// Clients of one Transports that reach one server the same way (their tokens differ) open
// one connection between them; a Client with another CA gets a transport of its own; the
// shared one lives until its last Client closes.
func TestTransportsShareOneConnectionPerServer(t *testing.T) {
	srv, err := apitest.Start(apitest.Options{TLS: true, Tokens: map[string]apitest.UserInfo{
		"tok-1": {Name: "one", Groups: []string{"system:masters"}}, "tok-2": {Name: "two", Groups: []string{"system:masters"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var dials atomic.Int32
	var d net.Dialer
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return d.DialContext(ctx, network, addr)
	}
	config := func(token string) *apiclient.Config {
		c := srv.Config()
		c.BearerToken, c.Dial = token, dial
		return c
	}
	get := func(c *apiclient.Client) {
		t.Helper()
		if _, err := c.Do(t.Context(), apiclient.Request{Path: "/api/v1/namespaces/default"}); err != nil {
			t.Fatal(err)
		}
	}
	ts := apiclient.NewTransports()
	var clients []*apiclient.Client
	for _, tok := range []string{"tok-1", "tok-2", "tok-1"} {
		c, err := ts.New(config(tok))
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		get(c)
	}
	if n := dials.Load(); n != 1 || ts.Len() != 1 {
		t.Fatalf("3 clients of one server: %d dials, %d transports; want 1 and 1", n, ts.Len())
	}

	other := config("tok-1")
	other.TLS.Insecure, other.TLS.CAData = true, nil
	c, err := ts.New(other)
	if err != nil {
		t.Fatal(err)
	}
	get(c)
	if n := dials.Load(); n != 2 || ts.Len() != 2 {
		t.Errorf("a client that verifies otherwise: %d dials, %d transports; want 2 and 2", n, ts.Len())
	}
	c.Close()
	c.Close() // twice: one reference given back
	if ts.Len() != 1 {
		t.Errorf("%d transports after the other client closed, want 1", ts.Len())
	}

	clients[0].Close()
	get(clients[1]) // the shared transport is still open, its connection too
	if n := dials.Load(); n != 2 {
		t.Errorf("%d dials after one sharing client closed, want 2", n)
	}
	clients[1].Close()
	clients[2].Close()
	if ts.Len() != 0 {
		t.Errorf("%d transports after every client closed", ts.Len())
	}

	// Separate clients (the package's New) dial one connection each.
	dials.Store(0)
	for range 2 {
		c, err := apiclient.New(config("tok-2"))
		if err != nil {
			t.Fatal(err)
		}
		get(c)
		c.Close()
	}
	if n := dials.Load(); n != 2 {
		t.Errorf("2 unshared clients: %d dials, want 2", n)
	}
}
