package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/reflector"
)

// Recovery after a network partition on the real kube-apiserver: informers reach it through
// a TCP proxy of the test's own. The partition drops the connections open at its start (as
// they are once their health checks give up in a long one: HTTP/2 pings after 15 s,
// WebSocket's after 30 s) and then lets nothing through: new connections are accepted and
// held, as a SYN would be retried. Meanwhile objects change and etcd is compacted (the
// kube-apiserver's watch cache still serves the informers' resourceVersions, so they
// re-watch without a relist; relists after a 410 are tested against apitest, in reflector).
// Every informer must be back in sync within 5 s of the heal, over HTTP/2 (one shared
// connection) and over WebSocket (one connection per watch).
//
// What is tested is the recovery after the heal, not the length of the partition, so the
// partition is short and the client's waits are scaled down with it: its deadlines are 5 s
// and its backoff starts at 30 s, as it has grown to 30-60 s after a long outage. An
// informer that waited out its backoff (as before issue 27, and as client-go's does) would
// be back 25 s or more after the heal; one woken by the client's reachability probes is back
// within about a second.

// partitionProxy forwards TCP connections to target. A partition closes the connections
// open at its start; while it lasts, the proxy accepts connections but opens no upstream
// connection for them and holds every byte in both directions (a connection's pumps stop
// after the read they are in); once healed it lets everything through again.
type partitionProxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	cut    bool
	healed chan struct{} // closed when a partition ends
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

func startPartitionProxy(t *testing.T, target string) *partitionProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &partitionProxy{ln: ln, target: target, healed: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	close(p.healed)
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *partitionProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.track(c)
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *partitionProxy) track(c net.Conn) {
	p.mu.Lock()
	p.conns[c] = struct{}{}
	p.mu.Unlock()
}

// gate waits until no partition is in force; it reports false once the proxy is closed.
func (p *partitionProxy) gate(done <-chan struct{}) bool {
	p.mu.Lock()
	ch := p.healed
	p.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-done:
		return false
	}
}

func (p *partitionProxy) serve(client net.Conn) {
	defer p.wg.Done()
	defer client.Close()
	done := make(chan struct{})
	defer close(done)
	if !p.gate(done) {
		return
	}
	upstream, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	p.track(upstream)
	defer upstream.Close()
	pumped := make(chan struct{}, 2)
	pump := func(dst, src net.Conn) {
		defer func() { pumped <- struct{}{} }()
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if !p.gate(done) {
					return
				}
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				if tc, ok := dst.(*net.TCPConn); ok && errors.Is(err, io.EOF) && p.gate(done) {
					tc.CloseWrite()
					continue // wait for the other direction
				}
				return
			}
		}
	}
	go pump(upstream, client)
	go pump(client, upstream)
	<-pumped
	client.Close()
	upstream.Close()
	<-pumped
}

// partition cuts the network until heal is called: the connections open now are dropped,
// and nothing passes, in either direction, on those opened later.
func (p *partitionProxy) partition() (heal func()) {
	p.mu.Lock()
	p.cut = true
	ch := make(chan struct{})
	p.healed = ch
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			p.cut = false
			close(ch)
			p.mu.Unlock()
		})
	}
}

func (p *partitionProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	if p.cut {
		p.cut = false
		close(p.healed)
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// minPartition is the shortest partition; it lasts until every informer waits in a backoff.
const minPartition = 10 * time.Second

func TestInformersRecoverWithinSecondsOfAPartition(t *testing.T) {
	c := cluster.ForTest(t)
	for _, tc := range []struct {
		name  string
		proto apiclient.WatchProtocol
	}{{"http2", apiclient.WatchChunked}, {"websocket", apiclient.WatchAuto}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each has its own proxy and namespaces: the two partitions overlap
			testPartition(t, c, tc.proto)
		})
	}
}

func testPartition(t *testing.T, c *cluster.Cluster, proto apiclient.WatchProtocol) {
	u, err := url.Parse(c.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := startPartitionProxy(t, u.Host)
	ac := acClient(t, c, func(cfg *apiclient.Config) {
		cfg.Host = "https://" + proxy.ln.Addr().String()
		cfg.WatchProtocol = proto
		cfg.ResponseHeaderTimeout = 5 * time.Second
		cfg.WatchResponseHeaderTimeout = 5 * time.Second
		cfg.ResponseBodyIdleTimeout = 5 * time.Second
	})
	namespaces := []string{newNamespace(t, c), newNamespace(t, c), newNamespace(t, c)}
	want := []string{"before"}
	for n := range 5 {
		want = append(want, fmt.Sprintf("during-%d", n))
	}
	var infs []*informer.Informer[*infConfigMap]
	ctx, cancel := context.WithCancel(t.Context())
	for _, ns := range namespaces {
		do(t, c, http.MethodPost, nsPath(ns, "configmaps"), configMap("before", nil), http.StatusCreated, nil)
		inf := informer.New(apiclient.NewResource[*infConfigMap](ac, infConfigMaps).Namespace(ns), informer.Options[*infConfigMap]{
			Backoff: reflector.Backoff{Initial: 30 * time.Second, Factor: 2, Max: time.Minute},
			Logger:  slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo})),
		})
		go inf.Run(ctx)
		infs = append(infs, inf)
	}
	t.Cleanup(func() {
		cancel()
		for _, inf := range infs {
			<-inf.Done()
		}
	})
	for _, inf := range infs {
		waitCached(t, inf, want[:1], time.Minute)
	}
	before := make([]uint64, len(infs))
	for i, inf := range infs {
		before[i] = inf.Stats().Reflector.Backoffs
	}

	heal := proxy.partition()
	start := time.Now()
	for _, ns := range namespaces {
		for _, name := range want[1:] {
			do(t, c, http.MethodPost, nsPath(ns, "configmaps"), configMap(name, nil), http.StatusCreated, nil)
		}
	}
	if _, err := c.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Heal once every informer has failed to reach the server and waits in its backoff,
	// and minPartition has passed (the partition's length is the test's subject: real time).
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for waiting := 0; waiting < len(infs) || time.Since(start) < minPartition; {
		<-tick.C
		waiting = 0
		for i, inf := range infs {
			if inf.Stats().Reflector.Backoffs > before[i] {
				waiting++
			}
		}
		if time.Since(start) > 2*time.Minute {
			t.Fatalf("after 2 min of partition, %d of %d informers wait in a backoff", waiting, len(infs))
		}
	}
	heal()
	healed := time.Now()
	var worst time.Duration
	for i, inf := range infs {
		waitCached(t, inf, want, 2*time.Minute)
		d := time.Since(healed)
		worst = max(worst, d)
		st := inf.Stats().Reflector
		t.Logf("%s: in sync %v after the heal (relists %d, recoveries %d, connections lost %d, backoffs %d)",
			namespaces[i], d.Round(time.Millisecond), st.Relists, st.Recoveries, st.ConnectionsLost, st.Backoffs)
		if st.Recoveries == 0 {
			t.Errorf("%s: no recovery counted: the informer was not woken by the server's return", namespaces[i])
		}
	}
	t.Logf("partition of %v: every informer in sync %v after the heal", healed.Sub(start).Round(time.Millisecond), worst.Round(time.Millisecond))
	if worst > 5*time.Second {
		t.Errorf("in sync %v after the heal, want at most 5 s", worst)
	}
}

// waitCached waits until inf's cache holds exactly the ConfigMaps names.
func waitCached(t *testing.T, inf *informer.Informer[*infConfigMap], names []string, limit time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	have := func() []string {
		var got []string
		for _, o := range inf.GetStore().List() {
			got = append(got, o.Name)
		}
		slices.Sort(got)
		return got
	}
	if err := inf.WaitUntil(ctx, func() bool { return slices.Equal(have(), names) }); err != nil {
		t.Fatalf("cache holds %q, want %q: %v", have(), names, err)
	}
}

// testWriter sends log lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
