package multicluster_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller/multicluster"
)

// Clusters that one server serves (the same host, TLS settings and Dial) share one HTTP
// transport: fifty of them engaged keep one connection open, whose HTTP/2 streams carry their
// fifty lists and watches; with Options.SeparateTransports each opens its own. The cost of
// each idle engaged cluster either way is logged.
func TestClustersOfOneServerShareOneConnection(t *testing.T) {
	const n = 50
	for _, separate := range []bool{false, true} {
		t.Run(fmt.Sprintf("separate=%t", separate), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, err := apitest.Start(apitest.Options{InMemory: true, TLS: true, RequestLogSize: requestLog})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(s.Close)
				seed(t, s, "shared")
				cfg := s.Config()
				var open atomic.Int32 // connections open (concurrent first requests dial a few, of which the spares are closed)
				inner := cfg.Dial
				cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
					c, err := inner(ctx, network, addr)
					if err == nil {
						open.Add(1)
						c = &countedConn{Conn: c, open: &open}
					}
					return c, err
				}
				rec := &recorder{}
				e := startFleet(t, multicluster.Options{SeparateTransports: separate}, multicluster.ControllerOptions{}, rec)
				synctest.Wait()
				g0, h0 := bubbleGoroutines(), heapInUse()
				for i := range n {
					if err := e.provider.Set(fmt.Sprintf("tenant-%02d", i), cfg); err != nil {
						t.Fatal(err)
					}
				}
				synctest.Wait()
				if got := len(rec.requests()); got != n {
					t.Fatalf("%d Requests reconciled, want %d", got, n)
				}
				if w := len(s.Watches("configmaps")); w != n {
					t.Fatalf("%d ConfigMap watches, want %d", w, n)
				}
				g1, h1 := bubbleGoroutines(), heapInUse()
				t.Logf("%d clusters of one server, separate transports %t: %d connections; %.1f goroutines and %.0f KiB of live heap per idle engaged cluster",
					n, separate, open.Load(), float64(g1-g0)/n, float64(int64(h1)-int64(h0))/n/1024)
				want := int32(1)
				if separate {
					want = n
				}
				if got := open.Load(); got != want {
					t.Errorf("%d connections open, want %d", got, want)
				}
				for i := range n {
					e.provider.Remove(fmt.Sprintf("tenant-%02d", i))
				}
				synctest.Wait()
				if w := len(s.Watches("configmaps")); w != 0 {
					t.Errorf("%d watches after every cluster was removed", w)
				}
			})
		})
	}
}

// countedConn counts itself out of open when it is first closed.
type countedConn struct {
	net.Conn
	open *atomic.Int32
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.open.Add(-1) })
	return c.Conn.Close()
}
