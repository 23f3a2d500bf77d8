package apiclient_test

import (
	"compress/gzip"
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
)

// The tests of this file hold the WebSocket handshake to what the HTTP transport does: an
// answer judged at its status line and headers, the transport's deadlines and proxies.

// logLines records a client's log lines (text handler, Info and up).
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.lines = append(l.lines, string(p))
	l.mu.Unlock()
	return len(p), nil
}

// matching returns the lines that hold every one of substrs.
func (l *logLines) matching(substrs ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
next:
	for _, line := range l.lines {
		for _, s := range substrs {
			if !strings.Contains(line, s) {
				continue next
			}
		}
		out = append(out, line)
	}
	return out
}

// streamingAnswer answers every watch as the kube-apiserver does behind a proxy without
// WebSocket support, which drops the hop-by-hop Upgrade header: a 200 and a chunked stream of
// events, which never ends. Lists get an empty PodList.
func streamingAnswer(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") != "true" {
			io.WriteString(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[]}`)
			return
		}
		w.WriteHeader(http.StatusOK)
		for _, e := range events {
			io.WriteString(w, e+"\n")
		}
		w.(http.Flusher).Flush()
		hangUntilGone(w, r)
	}
}

// upgradeTransports are the watch transports of these tests: chunked streams over HTTP/2,
// and WatchAuto's WebSocket over plain HTTP and over TLS.
var upgradeTransports = []hostileTransport{
	{"http2", true, apiclient.WatchChunked},
	{"websocket", false, apiclient.WatchAuto},
	{"websocket-tls", true, apiclient.WatchAuto},
}

// TestAStreamingAnswerToAnUpgradeIsAWatchAtOnce: a 200 answer to a WebSocket upgrade (what
// every proxy without WebSocket support makes of a watch) is recognised at its headers and
// the watch goes over chunked HTTP at once, for every resource of the client: what the
// server sends is seen within a second (in fake time: at once), where the handshake used
// to wait for the first KiB of the body and gave up only at the 30 s watch deadline. The
// fallback is logged once at Info, naming Config.WatchProtocol. Over HTTP/2 the same events
// are seen as they come. client-go's watches never try WebSocket: it sees them too.
func TestAStreamingAnswerToAnUpgradeIsAWatchAtOnce(t *testing.T) {
	cases := []struct {
		name  string
		event string
		check func(apiclient.Event[*testobj.Pod]) bool
	}{
		{"unknown event type", `{"type":"RENAMED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}}}`,
			func(ev apiclient.Event[*testobj.Pod]) bool {
				return ev.Type == apiclient.Error && errors.Is(ev.Err, apiclient.ErrUnknownEventType)
			}},
		{"object of another kind", `{"type":"ADDED","object":{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s"}}}`,
			func(ev apiclient.Event[*testobj.Pod]) bool {
				return ev.Type == apiclient.Skipped && errors.Is(ev.Err, apiclient.ErrWrongKind)
			}},
		{"null object", `{"type":"ADDED","object":null}`,
			func(ev apiclient.Event[*testobj.Pod]) bool {
				return ev.Type == apiclient.Error && errors.Is(ev.Err, apiclient.ErrMalformedEvent)
			}},
		{"an object", `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns"}}}`,
			func(ev apiclient.Event[*testobj.Pod]) bool {
				return ev.Type == apiclient.Added && ev.Object.Name == "a"
			}},
	}
	for _, tc := range upgradeTransports {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				netw := apitest.NewNetwork()
				var events []string
				for _, c := range cases {
					events = append(events, c.event)
				}
				var upgrades sync.Map // path → whether an upgrade was asked for
				h := streamingAnswer(events...)
				srv, cfg := serveHostile(t, netw, tc, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
						upgrades.Store(r.URL.Path, true)
					}
					h(w, r)
				}))
				defer srv.Close()
				logs := &logLines{}
				cfg.Logger = logs.logger()
				c, err := apiclient.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				ctx := context.Background()
				// Several resources of the client: each sees its events at once.
				for _, ns := range []string{"ns", "other", "third"} {
					pods := apiclient.NewResource[*testobj.Pod](c, testobj.PodGVR).Namespace(ns)
					start := time.Now()
					w, err := pods.Watch(ctx, apiclient.ListOptions{})
					if err != nil {
						t.Fatalf("%s: watch: %v", ns, err)
					}
					for _, want := range cases {
						ev, ok := <-w.ResultChan()
						if !ok {
							t.Fatalf("%s: the watch ended before the %s", ns, want.name)
						}
						if !want.check(ev) {
							t.Errorf("%s: %s: got event %s (err %v)", ns, want.name, ev.Type, ev.Err)
						}
						if d := time.Since(start); d > time.Second {
							t.Errorf("%s: %s seen %v after the watch was asked for, want within a second", ns, want.name, d)
						}
						if ev.Type == apiclient.Error {
							break // the watch ends with an Error event; the next cases need a new one
						}
					}
					w.Stop()
				}
				if tc.proto == apiclient.WatchAuto {
					if _, ok := upgrades.Load("/api/v1/namespaces/ns/pods"); !ok {
						t.Error("the first watch never tried WebSocket")
					}
					if lines := logs.matching("level=INFO", "setting=Config.WatchProtocol"); len(lines) != 1 {
						t.Errorf("%d Info lines naming Config.WatchProtocol, want 1 (the fallback, once per client):\n%s", len(lines), strings.Join(lines, ""))
					}
				}
				if _, ok := upgrades.Load("/api/v1/namespaces/other/pods"); ok {
					t.Error("a watch after the refusal tried WebSocket again")
				}
			})
		})
	}
}

// TestAStreamingAnswerToAnUpgradeFailsAWebSocketOnlyWatchAtOnce: with WatchWebSocket there
// is no chunked fallback; the 200 is an error at once, which says so.
func TestAStreamingAnswerToAnUpgradeFailsAWebSocketOnlyWatchAtOnce(t *testing.T) {
	for _, secure := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", secure), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				netw := apitest.NewNetwork()
				srv, cfg := serveHostile(t, netw, hostileTransport{"websocket", secure, apiclient.WatchWebSocket},
					streamingAnswer(`{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}}}`))
				defer srv.Close()
				c, err := apiclient.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				start := time.Now()
				w, err := apiclient.NewResource[*testobj.Pod](c, testobj.PodGVR).Watch(context.Background(), apiclient.ListOptions{})
				if err == nil {
					w.Stop()
					t.Fatal("a WebSocket-only watch answered 200 opened")
				}
				if d := time.Since(start); d > 0 {
					t.Errorf("failed %v after the watch was asked for, want at once", d)
				}
				if !errors.Is(err, apiclient.ErrWebSocketRefused) || !strings.Contains(err.Error(), "Config.WatchProtocol") {
					t.Errorf("err = %v, want ErrWebSocketRefused naming Config.WatchProtocol", err)
				}
			})
		})
	}
}

// silentTLS listens on netw and accepts connections that never answer a TLS handshake (a
// load balancer whose back end is gone, a port that is not TLS); close it when done.
func silentTLS(t *testing.T, netw *apitest.Network) (addr string, closeAll func()) {
	t.Helper()
	ln, err := netw.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []io.Closer
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			wg.Go(func() { io.Copy(io.Discard, conn) })
		}
	})
	return ln.Addr().String(), func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}
}

// TestATLSHandshakeThatNeverEndsTimesOut: a server that accepts TCP and never answers the
// TLS handshake fails a watch and a list after the TLS handshake timeout (10 s, as
// net/http's and client-go's transport), over WebSocket as over HTTP/2, where a WebSocket
// watch used to wait for its 30 s handshake deadline. Each is a *TimeoutError naming
// Config.TLSHandshakeTimeout, logged once at Warn.
func TestATLSHandshakeThatNeverEndsTimesOut(t *testing.T) {
	for _, tc := range []hostileTransport{{"http2", true, apiclient.WatchChunked}, {"websocket", true, apiclient.WatchAuto}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				netw := apitest.NewNetwork()
				addr, closeAll := silentTLS(t, netw)
				defer closeAll()
				for _, limit := range []time.Duration{0, 3 * time.Second} {
					logs := &logLines{}
					cfg := &apiclient.Config{Host: "https://" + addr, QPS: -1, MaxRetries: -1, WatchProtocol: tc.proto,
						Dial: netw.Dial, TLS: apiclient.TLSConfig{Insecure: true}, TLSHandshakeTimeout: limit, Logger: logs.logger()}
					want := limit
					if want == 0 {
						want = apiclient.DefaultTLSHandshakeTimeout
					}
					c, err := apiclient.New(cfg)
					if err != nil {
						t.Fatal(err)
					}
					pods := apiclient.NewResource[*testobj.Pod](c, testobj.PodGVR)
					for _, op := range []string{"watch", "list"} {
						start := time.Now()
						if op == "watch" {
							var w apiclient.Watcher[*testobj.Pod]
							if w, err = pods.Watch(context.Background(), apiclient.ListOptions{}); err == nil {
								w.Stop()
							}
						} else {
							_, err = pods.List(context.Background(), apiclient.ListOptions{})
						}
						var te *apiclient.TimeoutError
						if !errors.As(err, &te) || te.Op != "TLS handshake" || te.Limit != want || te.Setting != "Config.TLSHandshakeTimeout" ||
							!strings.Contains(err.Error(), "Config.TLSHandshakeTimeout") {
							t.Errorf("%s, limit %v: err = %v, want a *TimeoutError of the TLS handshake after %v naming its setting", op, limit, err, want)
						}
						if d := time.Since(start); d != want {
							t.Errorf("%s, limit %v: failed after %v, want %v", op, limit, d, want)
						}
					}
					if lines := logs.matching("level=WARN", "setting=Config.TLSHandshakeTimeout"); len(lines) != 2 {
						t.Errorf("limit %v: %d Warn lines naming Config.TLSHandshakeTimeout, want 2 (one per request):\n%s", limit, len(lines), strings.Join(lines, ""))
					}
					c.Close()
				}
			})
		})
	}
}

// TestADialThatNeverEndsTimesOut: a dial whose SYN is lost (a partition) fails after
// Config.DialTimeout, over WebSocket as over HTTP/2.
func TestADialThatNeverEndsTimesOut(t *testing.T) {
	for _, tc := range []hostileTransport{{"http2", true, apiclient.WatchChunked}, {"websocket", true, apiclient.WatchAuto}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				netw := apitest.NewNetwork()
				srv := apitest.NewServerWithOptions(apitest.Options{Network: netw, TLS: tc.tls})
				defer srv.Close()
				logs := &logLines{}
				cfg := srv.Config()
				cfg.WatchProtocol, cfg.DialTimeout, cfg.MaxRetries, cfg.Logger = tc.proto, 5*time.Second, -1, logs.logger()
				c, err := apiclient.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				heal := netw.Partition()
				defer func() {
					heal()
					time.Sleep(10 * time.Second) // the dials lost in the partition (probes) time out
				}()
				start := time.Now()
				w, err := apiclient.NewResource[*testobj.Pod](c, testobj.PodGVR).Watch(context.Background(), apiclient.ListOptions{})
				if err == nil {
					w.Stop()
				}
				var te *apiclient.TimeoutError
				if !errors.As(err, &te) || te.Op != "dial" || te.Limit != 5*time.Second || te.Setting != "Config.DialTimeout" {
					t.Errorf("err = %v, want a *TimeoutError of the dial after 5s", err)
				}
				if d := time.Since(start); d != 5*time.Second {
					t.Errorf("failed after %v, want 5s", d)
				}
				if lines := logs.matching("level=WARN", "setting=Config.DialTimeout"); len(lines) != 1 {
					t.Errorf("%d Warn lines naming Config.DialTimeout, want 1:\n%s", len(lines), strings.Join(lines, ""))
				}
			})
		})
	}
}

// connectProxy is an HTTP proxy on netw that tunnels CONNECT requests (and refuses them
// without the credentials user:pw); it records the tunnels' targets.
type connectProxy struct {
	netw    *apitest.Network
	mu      sync.Mutex
	targets []string
	wg      sync.WaitGroup
}

func (p *connectProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
		return
	}
	if r.Header.Get("Proxy-Authorization") != "Basic dXNlcjpwdw==" { // user:pw
		http.Error(w, "who are you", http.StatusProxyAuthRequired)
		return
	}
	up, err := p.netw.Dial(r.Context(), "tcp", r.Host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	p.mu.Lock()
	p.targets = append(p.targets, r.Host)
	p.mu.Unlock()
	w.WriteHeader(http.StatusOK)
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		up.Close()
		return
	}
	brw.Flush()
	p.pipe(conn, up)
}

// pipe copies both ways until either side ends.
func (p *connectProxy) pipe(a, b io.ReadWriteCloser) {
	done := make(chan struct{}, 2)
	p.wg.Go(func() { io.Copy(a, b); done <- struct{}{} })
	p.wg.Go(func() { io.Copy(b, a); done <- struct{}{} })
	<-done
	a.Close()
	b.Close()
}

func (p *connectProxy) tunnels() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.targets...)
}

// serveSOCKS5 serves SOCKS5 (user:pw) on ln, tunnelling through p, until ln is closed.
func (p *connectProxy) serveSOCKS5(ln io.Closer, accept func() (io.ReadWriteCloser, error)) {
	for {
		conn, err := accept()
		if err != nil {
			return
		}
		p.wg.Go(func() {
			defer conn.Close()
			var b [262]byte
			read := func(n int) []byte {
				if _, err := io.ReadFull(conn, b[:n]); err != nil {
					return nil
				}
				return b[:n]
			}
			h := read(2)
			if h == nil || h[0] != 5 || read(int(h[1])) == nil {
				return
			}
			conn.Write([]byte{5, 2}) // username/password
			h = read(2)
			if h == nil {
				return
			}
			user := string(read(int(h[1])))
			pl := read(1)
			if pl == nil {
				return
			}
			pw := string(read(int(pl[0])))
			if user != "user" || pw != "pw" {
				conn.Write([]byte{1, 1})
				return
			}
			conn.Write([]byte{1, 0})
			req := read(4)
			if req == nil || req[1] != 1 || req[3] != 3 { // CONNECT to a domain name
				conn.Write([]byte{5, 7, 0, 1, 0, 0, 0, 0, 0, 0})
				return
			}
			host := string(read(int(read(1)[0])))
			port := read(2)
			target := fmt.Sprintf("%s:%d", host, int(port[0])<<8|int(port[1]))
			up, err := p.netw.Dial(context.Background(), "tcp", target)
			if err != nil {
				conn.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0})
				return
			}
			p.mu.Lock()
			p.targets = append(p.targets, target)
			p.mu.Unlock()
			conn.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0})
			p.pipe(conn, up)
		})
	}
}

// TestWebSocketWatchesGoThroughTheProxy: a WebSocket watch goes through the proxy the HTTP
// transport uses (Config.ProxyURL here), an http://, https:// or socks5:// one, with its
// credentials; before, an https:// proxy was not supported for WebSocket. A proxy that
// refuses the tunnel fails the watch with its answer.
func TestWebSocketWatchesGoThroughTheProxy(t *testing.T) {
	for _, scheme := range []string{"http", "https", "socks5"} {
		t.Run(scheme, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				netw := apitest.NewNetwork()
				srv := apitest.NewServerWithOptions(apitest.Options{Network: netw, TLS: true})
				defer srv.Close()
				if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "a"}}); err != nil {
					t.Fatal(err)
				}
				p := &connectProxy{netw: netw}
				defer p.wg.Wait()
				var proxyURL string
				var proxyCA []byte
				switch scheme {
				case "socks5":
					ln, err := netw.Listen("127.0.0.1:0")
					if err != nil {
						t.Fatal(err)
					}
					p.wg.Go(func() {
						p.serveSOCKS5(ln, func() (io.ReadWriteCloser, error) { return ln.Accept() })
					})
					defer ln.Close()
					proxyURL = "socks5://user:pw@" + ln.Addr().String()
				default:
					ps, _ := serveHostile(t, netw, hostileTransport{tls: scheme == "https"}, p)
					defer ps.Close()
					if scheme == "https" {
						proxyCA = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ps.Certificate().Raw})
					}
					proxyURL = strings.Replace(ps.URL, "://", "://user:pw@", 1)
				}
				cfg := srv.Config()
				cfg.WatchProtocol, cfg.MaxRetries, cfg.ProxyURL = apiclient.WatchWebSocket, -1, proxyURL
				// An https:// proxy is verified with the client's CA, as net/http does it.
				cfg.TLS.CAData = append(cfg.TLS.CAData, proxyCA...)
				c, err := apiclient.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				cms := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default")
				w, err := cms.Watch(context.Background(), apiclient.ListOptions{ResourceVersion: "0"})
				if err != nil {
					t.Fatalf("watch through the %s proxy: %v", scheme, err)
				}
				if ev := <-w.ResultChan(); ev.Type != apiclient.Added || ev.Object.Name != "a" {
					t.Errorf("first event %s %v", ev.Type, ev.Err)
				}
				w.Stop()
				host := strings.TrimPrefix(srv.URL, "https://")
				if !strings.Contains(host, ":") {
					host += ":443"
				}
				if got := p.tunnels(); len(got) != 1 || got[0] != host {
					t.Errorf("the proxy tunnelled to %v, want one tunnel to %s", got, host)
				}
				if ws := srv.RequestsMatching(apitest.RequestFilter{Verb: apitest.VerbWatch}); len(ws) != 1 || ws[0].Protocol != "websocket" {
					t.Errorf("the server saw watches %+v, want one over WebSocket", ws)
				}
				// Wrong credentials: the proxy's refusal is the watch's error.
				cfg.ProxyURL = strings.Replace(proxyURL, "user:pw", "user:nope", 1)
				c2, err := apiclient.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer c2.Close()
				if w, err := apiclient.NewResource[*testobj.ConfigMap](c2, testobj.ConfigMapGVR).Watch(context.Background(), apiclient.ListOptions{}); err == nil {
					w.Stop()
					t.Error("a watch through a proxy that refused the tunnel opened")
				} else if !strings.Contains(err.Error(), "proxy") || strings.Contains(err.Error(), "nope") {
					t.Errorf("err = %v, want the proxy's refusal, without the credentials", err)
				}
			})
		})
	}
}

// TestACompressedStreamingListBehindAProxyWithoutWebSocket: kube-apiserver 1.37 compresses
// a streaming list answered over HTTP with gzip, flushed at every event, when the client
// accepts it (Config.Compression). Behind a proxy without WebSocket
// support a WatchAuto client now reads it at once over chunked HTTP: the initial events and
// the end bookmark arrive as each flush does. Before, the 200 to the upgrade (uncompressed:
// the handshake accepts no encoding) held the handshake for the 30 s watch deadline, and the
// streaming list never recovered.
func TestACompressedStreamingListBehindAProxyWithoutWebSocket(t *testing.T) {
	events := []string{
		`{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"3"}}}`,
		`{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"b","namespace":"ns","resourceVersion":"4"}}}`,
		`{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"9","annotations":{"k8s.io/initial-events-end":"true"}}}}`,
	}
	for _, tc := range upgradeTransports {
		for _, comp := range []apiclient.Compression{apiclient.CompressionGzip, apiclient.CompressionNone} {
			t.Run(fmt.Sprintf("%s/compression-%d", tc.name, comp), func(t *testing.T) {
				testCompressedStreamingListBehindAProxy(t, tc, comp, events)
			})
		}
	}
}

// testCompressedStreamingListBehindAProxy: asked for gzip (which the loopback default does
// not), WatchAuto sends the streaming list over chunked HTTP at once and reads it gzipped;
// not asked, it tries WebSocket, gets the proxy's 200 and reads the plain stream.
func testCompressedStreamingListBehindAProxy(t *testing.T, tc hostileTransport, comp apiclient.Compression, events []string) {
	synctest.Test(t, func(t *testing.T) {
		netw := apitest.NewNetwork()
		var gzipped sync.Map
		srv, cfg := serveHostile(t, netw, tc, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
				streamingAnswer(events...)(w, r)
				return
			}
			gzipped.Store(r.URL.Path, true)
			w.Header().Set("Content-Encoding", "gzip")
			w.WriteHeader(http.StatusOK)
			zw := gzip.NewWriter(w)
			for _, e := range events {
				io.WriteString(zw, e+"\n")
				zw.Flush()
				w.(http.Flusher).Flush()
			}
			hangUntilGone(w, r)
		}))
		defer srv.Close()
		cfg.Compression = comp
		c, err := apiclient.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start := time.Now()
		yes := true
		w, err := apiclient.NewResource[*testobj.Pod](c, testobj.PodGVR).Namespace("ns").Watch(context.Background(),
			apiclient.ListOptions{SendInitialEvents: &yes, ResourceVersionMatch: apiclient.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		defer w.Stop()
		var got []string
		for range events {
			ev := <-w.ResultChan()
			got = append(got, string(ev.Type)+" "+ev.Object.ResourceVersion)
		}
		if want := "ADDED 3,ADDED 4,BOOKMARK 9"; strings.Join(got, ",") != want {
			t.Errorf("events %v, want %s", got, want)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("the initial events and their end bookmark came %v after the watch was asked for, want within a second", d)
		}
		if _, ok := gzipped.Load("/api/v1/namespaces/ns/pods"); ok != (comp == apiclient.CompressionGzip) {
			t.Errorf("the streaming list was read compressed: %v, want %v", ok, comp == apiclient.CompressionGzip)
		}
	})
}
