package reflector

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// The tests of this file run reflectors against a server that misbehaves, on an in-memory
// network inside a synctest bubble (fake time), over both watch transports: chunked streams
// on one shared HTTP/2 connection, and WebSocket.

type transportCase struct {
	name  string
	tls   bool
	proto apiclient.WatchProtocol
}

var transports = []transportCase{
	{"http2", true, apiclient.WatchChunked},
	{"websocket", false, apiclient.WatchWebSocket},
}

// newNetEnv is newEnvProto on an in-memory network; mutate, if set, edits the client's
// configuration.
func newNetEnv(t *testing.T, tc transportCase, opts apitest.Options, mutate func(*apiclient.Config)) (*env, *apitest.Network) {
	t.Helper()
	netw := apitest.NewNetwork()
	opts.Network, opts.TLS = netw, tc.tls
	srv := apitest.NewServerWithOptions(opts)
	t.Cleanup(srv.Close)
	cfg := srv.Config()
	cfg.WatchProtocol = tc.proto
	if mutate != nil {
		mutate(cfg)
	}
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	res := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR)
	return &env{t: t, srv: srv, res: res, log: &logRecorder{}, errsCh: make(chan struct{})}, netw
}

// waitStores waits, at most limit, until every store holds exactly what the server has in
// the store's namespace, and returns how long that took.
func (e *env) waitStores(limit time.Duration, stores map[string]*recStore) time.Duration {
	e.t.Helper()
	start := time.Now()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		all, _, err := e.srv.List(cms, "")
		if err != nil {
			e.t.Fatal(err)
		}
		cases := []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(deadline.C)}}
		done := true
		for ns, s := range stores {
			want := map[string]string{}
			for _, o := range all {
				if o.Namespace() == ns {
					want[o.Namespace()+"/"+o.Name()] = o.ResourceVersion()
				}
			}
			s.mu.Lock()
			got := make(map[string]string, len(s.objs))
			for k, o := range s.objs {
				got[k] = o.ResourceVersion
			}
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(s.changed)})
			s.mu.Unlock()
			done = done && sameContent(got, want)
		}
		if done {
			return time.Since(start)
		}
		if i, _, _ := reflect.Select(cases); i == 0 {
			e.t.Fatalf("stores not in sync with the server within %v\n%s", limit, e.describeRequests())
		}
	}
}

func TestReflectorRecoversFromHungRequests(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testHungRequests(t, tc) })
		})
	}
}

func testHungRequests(t *testing.T, tc transportCase) {
	e, _ := newNetEnv(t, tc, apitest.Options{}, func(c *apiclient.Config) {
		c.ResponseHeaderTimeout, c.WatchResponseHeaderTimeout = 20*time.Second, 10*time.Second
	})
	e.create("a")
	// The first LIST is read and never answered.
	if err := e.srv.Faults().HangRequests(apitest.VerbList, cms, 1); err != nil {
		t.Fatal(err)
	}
	rec := newRecStore()
	r := e.run(e.options(rec))
	stores := map[string]*recStore{"default": rec}
	if d := e.waitStores(time.Minute, stores); d < 20*time.Second || d > 21*time.Second {
		t.Errorf("synced %v after the start, want the 20 s header deadline and a short backoff", d)
	}
	var te *apiclient.TimeoutError
	if err := e.waitError("list timeout", func(err error) bool { return errors.As(err, &te) }); te.Op != "response headers" {
		t.Errorf("list error %v", err)
	}
	// Then a re-watch is never answered.
	w := e.waitWatch(0)
	e.create("b") // the watch delivers an event: its end is not a "very short watch"
	e.waitStores(time.Minute, stores)
	if err := e.srv.Faults().HangRequests(apitest.VerbWatch, cms, 1); err != nil {
		t.Fatal(err)
	}
	e.must(e.srv.Faults().CutWatches(cms))
	cut := time.Now()
	e.waitWatch(w.ID) // the hung request never became a watch
	if d := time.Since(cut); d < 10*time.Second || d > 11*time.Second {
		t.Errorf("watching again %v after the cut, want the 10 s watch header deadline and a short backoff", d)
	}
	e.create("c")
	e.waitStores(time.Minute, stores)
	if st := r.Stats(); st.Relists != 0 {
		t.Errorf("%d relists: a hung watch should be re-opened, not relisted\n%s\n%s", st.Relists, e.describeRequests(), e.log.all())
	}
	if err := e.waitError("watch timeout", func(err error) bool {
		return errors.As(err, &te) && te.Op != "response headers"
	}); !errors.Is(err, apiclient.ErrTimeout) {
		t.Errorf("watch error %v", err)
	}
	if st := r.Stats(); st.Deadlines != 2 {
		t.Errorf("Stats().Deadlines = %d, want 2 (the list's, the watch's)", st.Deadlines)
	}
}

// TestATransportFallbackIsCounted: a watch that apiclient opened over chunked HTTP because
// the server refused WebSocket is a fallback in the reflector's Stats; the watches after it
// go over chunked HTTP directly and are not.
func TestATransportFallbackIsCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, _ := newNetEnv(t, transportCase{"auto", false, apiclient.WatchAuto}, apitest.Options{RefuseWebSocket: true}, nil)
		e.create("a")
		rec := newRecStore()
		opts := e.options(rec)
		opts.WatchList = WatchListOff
		r := e.run(opts)
		w := e.waitWatch(0)
		e.waitContent(rec)
		synctest.Wait() // the reflector is past the opening of the watch, reading it
		if st := r.Stats(); st.Fallbacks != 1 || w.Protocol == "websocket" {
			t.Errorf("Stats().Fallbacks = %d over %s, want 1 over chunked HTTP", st.Fallbacks, w.Protocol)
		}
		e.must(e.srv.Faults().CutWatches(cms))
		e.waitWatch(w.ID)
		e.create("b")
		e.waitContent(rec)
		synctest.Wait()
		if st := r.Stats(); st.Fallbacks != 1 || st.Watches != 2 {
			t.Errorf("after a re-watch: %d fallbacks, %d watches; want 1, 2", st.Fallbacks, st.Watches)
		}
	})
}

func TestRetryAfterFromAStatusIsCapped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, _ := newNetEnv(t, transports[0], apitest.Options{}, nil)
		e.create("a")
		st := &meta.Status{TypeMeta: meta.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: "Failure", Code: 429,
			Reason: meta.StatusReasonTooManyRequests, Details: &meta.StatusDetails{RetryAfterSeconds: 100000}}
		// A 429 whose Status asks for 100000 s, on a watch stream (ERROR event) and on a LIST.
		if err := e.srv.Faults().FailRequestsWithStatus(apitest.VerbList, cms, 1, st); err != nil {
			t.Fatal(err)
		}
		rec := newRecStore()
		opts := e.options(rec)
		opts.Backoff = Backoff{}
		e.run(opts)
		stores := map[string]*recStore{"default": rec}
		if d := e.waitStores(2*time.Minute, stores); d != apiclient.MaxRetryAfter {
			t.Errorf("listed again after %v, want the cap %v", d, apiclient.MaxRetryAfter)
		}
		w := e.waitWatch(0)
		e.must(e.srv.Faults().SendWatchError(cms, st))
		sent := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := e.srv.WaitFor(ctx, func() bool {
			ws := e.srv.Watches(cms)
			return len(ws) == 1 && ws[0].ID > w.ID
		}); err != nil {
			t.Fatalf("no new watch: %v\n%s", err, e.describeRequests())
		}
		if d := time.Since(sent); d != apiclient.MaxRetryAfter {
			t.Errorf("watched again after %v, want the cap %v", d, apiclient.MaxRetryAfter)
		}
	})
}

// outage is how a test cuts the client off the server.
type outage struct {
	name string
	cut  func(*apitest.Network) (restore func())
}

var outages = []outage{
	{"partition", (*apitest.Network).Partition},
	{"server-down", (*apitest.Network).Disconnect},
}

func TestReflectorsRecoverWithinSecondsOfAnOutage(t *testing.T) {
	for _, tc := range transports {
		for _, o := range outages {
			for _, length := range []time.Duration{20 * time.Second, 2 * time.Minute, 10 * time.Minute} {
				t.Run(fmt.Sprintf("%s/%s/%v", tc.name, o.name, length), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) {
						d := testOutage(t, tc, o, length)
						t.Logf("in sync %v after the outage ended", d)
						if d > 5*time.Second {
							t.Errorf("in sync %v after the outage ended, want at most 5 s", d)
						}
					})
				})
			}
		}
	}
}

// testOutage syncs three reflectors (one per namespace) on one client, cuts the network for
// long, writes and compacts meanwhile (their watches must relist), restores it, and returns
// how long after that every store was in sync.
func testOutage(t *testing.T, tc transportCase, o outage, length time.Duration) time.Duration {
	e, netw := newNetEnv(t, tc, apitest.Options{}, nil)
	namespaces := []string{"default", "ns1", "ns2"}
	stores := map[string]*recStore{}
	var refl []*Reflector[*testobj.ConfigMap]
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(e.describeRequests(), e.log.all())
		}
	})
	for _, ns := range namespaces {
		if ns != "default" {
			if _, err := e.srv.Create("namespaces", map[string]any{"metadata": map[string]any{"name": ns}}); err != nil {
				t.Fatal(err)
			}
		}
		create(t, e.srv, ns, "before")
		rec := newRecStore()
		stores[ns] = rec
		opts := e.options(incrStore{rec})
		opts.Backoff = Backoff{} // client-go's: 800 ms ×2 up to 30 s, jitter 1.0
		opts.lw = e.res.Namespace(ns)
		opts.Name = ns
		refl = append(refl, e.run(opts))
	}
	e.waitStores(time.Minute, stores)

	restore := o.cut(netw)
	for _, ns := range namespaces {
		create(t, e.srv, ns, "during")
	}
	if err := e.srv.Compact(""); err != nil {
		t.Fatal(err)
	}
	time.Sleep(length) // the outage (fake time)
	restore()
	d := e.waitStores(5*time.Minute, stores)
	if length > 2*wsReadTimeoutForTests {
		// The client probed the server during the outage (one probe at a time for the three
		// reflectors): the answered probe is what woke them, or gave the requests already on
		// their way a connection.
		probes := 0
		for _, r := range e.srv.Requests() {
			if r.Path == "/readyz" {
				probes++
			}
		}
		if probes == 0 {
			t.Error("no reachability probe reached the server")
		}
	}
	return d
}

// wsReadTimeoutForTests is apiclient's WebSocket read deadline (30 s), longer than the
// HTTP/2 ping timeout: an outage shorter than it may end before any connection is given up,
// and the held streams simply resume.
const wsReadTimeoutForTests = 30 * time.Second

func create(t *testing.T, srv *apitest.Server, ns, name string) {
	t.Helper()
	if _, err := srv.Create(cms, map[string]any{"metadata": map[string]any{"name": name, "namespace": ns}}); err != nil {
		t.Fatal(fmt.Errorf("create %s/%s: %w", ns, name, err))
	}
}

// A server that ignores sendInitialEvents sends the objects and never the end bookmark:
// the reflector says so, and lists, as soon as the events stop (WatchListGap), not
// WatchListTimeout later.
func TestAStreamingListWithoutItsEndBookmarkFailsWhenTheEventsStop(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e, _ := newNetEnv(t, tc, apitest.Options{InitialEvents: apitest.InitialEventsIgnored}, nil)
				e.create("a")
				e.create("b")
				rec := newRecStore()
				opts := e.options(incrStore{rec})
				opts.WatchList = WatchListAuto
				start := time.Now()
				r := e.run(opts)
				err := e.waitError("unsupported", isErr(ErrWatchListUnsupported))
				if d := time.Since(start); d < DefaultWatchListGap || d > DefaultWatchListGap+time.Millisecond {
					t.Errorf("reported after %v, want the %v gap", d, DefaultWatchListGap)
				}
				if !strings.Contains(err.Error(), "stopped for 5s after 2 of them") {
					t.Errorf("error %q does not say what happened", err)
				}
				e.waitContent(rec)
				synctest.Wait() // the store holds the list before the reflector counts it
				if st := r.Stats(); st.WatchListFallbacks != 1 || st.Lists != 1 {
					t.Errorf("stats %+v", st)
				}
			})
		})
	}
}

// stripUpgrade is a proxy without WebSocket support: it drops the hop-by-hop Upgrade and
// Connection headers before passing a request on, so that the server behind answers a
// WebSocket watch as a chunked stream, a 200.
type stripUpgrade struct{ next http.Handler }

func (p stripUpgrade) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Header.Del("Upgrade")
	r.Header.Del("Connection")
	p.next.ServeHTTP(w, r)
}

// TestAStreamingListBehindAProxyWithoutWebSocketIsJudgedInTime: behind a proxy without
// WebSocket support, a streaming list whose end bookmark never comes (a server that ignores
// sendInitialEvents) is still given up WatchListGap after its last event, and the reflector
// lists: its watch falls back to chunked HTTP at once. Before, the WebSocket handshake held
// the watch for the 30 s watch deadline, and the streaming list failed as a timeout, not
// as the unsupported request it is.
func TestAStreamingListBehindAProxyWithoutWebSocketIsJudgedInTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		netw := apitest.NewNetwork()
		srv := apitest.NewServerWithOptions(apitest.Options{Network: netw, TLS: true, InitialEvents: apitest.InitialEventsIgnored})
		defer srv.Close()
		backend, _ := url.Parse(srv.URL)
		rp := httputil.NewSingleHostReverseProxy(backend)
		rp.FlushInterval = -1
		tr := &http.Transport{DialContext: netw.Dial, TLSClientConfig: &tls.Config{RootCAs: srv.CertPool()}}
		defer tr.CloseIdleConnections()
		rp.Transport = tr
		ps := httptest.NewUnstartedServer(stripUpgrade{rp})
		ps.Listener.Close()
		ln, err := netw.Listen("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ps.Listener = ln
		ps.StartTLS()
		defer ps.Close()
		c, err := apiclient.New(&apiclient.Config{Host: ps.URL, Dial: netw.Dial, WatchProtocol: apiclient.WatchAuto,
			TLS: apiclient.TLSConfig{CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ps.Certificate().Raw})}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		e := &env{t: t, srv: srv, res: apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR), log: &logRecorder{}, errsCh: make(chan struct{})}
		e.create("a")
		e.create("b")
		rec := newRecStore()
		opts := e.options(incrStore{rec})
		opts.WatchList = WatchListAuto
		start := time.Now()
		ctx, cancel := context.WithCancel(context.Background())
		r := opts.new()
		done := make(chan struct{})
		go func() { defer close(done); r.Run(ctx) }()
		defer func() { cancel(); <-done }()
		err = e.waitError("unsupported", isErr(ErrWatchListUnsupported))
		if d := time.Since(start); d < DefaultWatchListGap || d > DefaultWatchListGap+time.Millisecond {
			t.Errorf("reported after %v, want the %v gap", d, DefaultWatchListGap)
		}
		if !strings.Contains(err.Error(), "stopped for 5s after 2 of them") {
			t.Errorf("error %q does not say what happened", err)
		}
		e.waitContent(rec)
	})
}
