package apiclient_test

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gorilla/websocket"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// The tests of this file run the client against hostile servers: handlers of their own,
// served on an apitest.Network inside a synctest bubble, over the two watch transports a
// client may use: chunked streams over one shared HTTP/2 connection (TLS, WatchChunked),
// and WebSocket over HTTP/1.1 (what WatchAuto, the default, opens).

type hostileTransport struct {
	name  string
	tls   bool
	proto apiclient.WatchProtocol
}

var hostileTransports = []hostileTransport{
	{"http2", true, apiclient.WatchChunked},
	{"websocket", false, apiclient.WatchWebSocket},
}

// serveHostile serves h on netw (TLS with HTTP/2, or plain HTTP/1.1) and returns the server
// and a Config for it without credentials. Close the server when done.
func serveHostile(t *testing.T, netw *apitest.Network, tc hostileTransport, h http.Handler) (*httptest.Server, *apiclient.Config) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	ln, err := netw.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = ln
	cfg := &apiclient.Config{QPS: -1, WatchProtocol: tc.proto, Dial: netw.Dial}
	if tc.tls {
		srv.EnableHTTP2 = true
		srv.StartTLS()
		cfg.TLS.CAData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	} else {
		srv.Start()
	}
	cfg.Host = srv.URL
	return srv, cfg
}

// seen records the requests a server received and their credentials.
type seen struct {
	mu    sync.Mutex
	reqs  []string
	authz []string
}

func (s *seen) record(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r.Method+" "+r.URL.Path)
	a := r.Header.Get("Authorization")
	if p := r.Header.Get("Sec-Websocket-Protocol"); p != "" {
		a += " protocol=" + p
	}
	s.authz = append(s.authz, a)
}

func (s *seen) get() (reqs, authz []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...), append([]string(nil), s.authz...)
}

func TestCredentialsNeverOverPlainHTTP(t *testing.T) {
	creds := map[string]func(*apiclient.Config){
		"token":      func(c *apiclient.Config) { c.BearerToken = "SECRET-token" },
		"token file": func(c *apiclient.Config) { c.BearerTokenFile = "/nonexistent/SECRET" },
		"basic":      func(c *apiclient.Config) { c.Username, c.Password = "u", "SECRET-pw" },
		"exec":       func(c *apiclient.Config) { c.Exec = &apiclient.ExecConfig{Command: "/bin/false"} },
	}
	for name, set := range creds {
		cfg := &apiclient.Config{Host: "http://api.example.com:8080"}
		set(cfg)
		_, err := apiclient.New(cfg)
		if !errors.Is(err, apiclient.ErrCredentialsOverHTTP) || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s over http: err = %v, want ErrCredentialsOverHTTP without the secret", name, err)
		}
		cfg.Host = "https://api.example.com"
		if name != "token file" { // the file does not exist: another error
			if _, err := apiclient.New(cfg); err != nil {
				t.Errorf("%s over https: %v", name, err)
			}
		}
	}
	if _, err := apiclient.New(&apiclient.Config{Host: "http://api.example.com"}); err != nil {
		t.Errorf("plain http without credentials: %v", err)
	}

	// Allowed explicitly, the token travels, on both hostileTransports.
	for _, tc := range hostileTransports[1:] {
		synctest.Test(t, func(t *testing.T) {
			netw := apitest.NewNetwork()
			var s seen
			srv, cfg := serveHostile(t, netw, tc, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				s.record(r)
				http.Error(w, "no", http.StatusTeapot)
			}))
			defer srv.Close()
			cfg.BearerToken, cfg.AllowCredentialsOverHTTP = "tok", true
			c, err := apiclient.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Do(context.Background(), apiclient.Request{Path: "/api"})
			if _, authz := s.get(); len(authz) != 1 || authz[0] != "Bearer tok" {
				t.Errorf("Authorization sent: %q", authz)
			}
		})
	}
}

func TestRedirectToAnotherHostIsRefused(t *testing.T) {
	for _, tc := range hostileTransports {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testRedirects(t, tc) })
		})
	}
}

func testRedirects(t *testing.T, tc hostileTransport) {
	netw := apitest.NewNetwork()
	// other is a second host that would answer everything with a valid object.
	var otherSaw seen
	other, _ := serveHostile(t, netw, tc, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherSaw.record(r)
		if strings.HasSuffix(r.URL.Path, "/pods") {
			fmt.Fprint(w, `{"kind":"PodList","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"evil","namespace":"ns"}}]}`)
			return
		}
		fmt.Fprint(w, `{"kind":"Pod","metadata":{"name":"evil","namespace":"ns"}}`)
	}))
	defer other.Close()
	// api redirects everything to other, except /same, which it redirects to itself.
	var apiSaw seen
	api, cfg := serveHostile(t, netw, tc, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apiSaw.record(r)
		switch r.URL.Path {
		case "/api/v1/namespaces/ns/pods/same":
			http.Redirect(w, r, "/api/v1/namespaces/ns/pods/here", http.StatusFound)
		case "/api/v1/namespaces/ns/pods/here":
			fmt.Fprint(w, `{"kind":"Pod","metadata":{"name":"here","namespace":"ns"}}`)
		default:
			http.Redirect(w, r, other.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
		}
	}))
	defer api.Close()
	cfg.BearerToken, cfg.AllowCredentialsOverHTTP, cfg.MaxRetries = "SECRET", true, -1
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	pods := apiclient.NewResource[*testobj.Pod](c, testobj.PodGVR).Namespace("ns")

	wantRedirect := func(op string, err error) {
		t.Helper()
		var re *apiclient.RedirectError
		if !errors.As(err, &re) || !strings.HasPrefix(re.Location, other.URL) {
			t.Errorf("%s: err = %v, want a *RedirectError to %s", op, err, other.URL)
		}
	}
	_, err = pods.Get(ctx, "p", apiclient.GetOptions{})
	wantRedirect("Get", err)
	_, err = pods.List(ctx, apiclient.ListOptions{})
	wantRedirect("List", err)
	_, err = pods.ListEach(ctx, apiclient.ListOptions{}, func(*testobj.Pod) error { return nil })
	wantRedirect("ListEach", err)
	_, err = pods.Create(ctx, testobj.NewPod("ns", "p"), apiclient.CreateOptions{})
	wantRedirect("Create", err)
	w, err := pods.Watch(ctx, apiclient.ListOptions{})
	if err == nil {
		w.Stop()
	}
	wantRedirect("Watch", err)
	if reqs, _ := otherSaw.get(); len(reqs) != 0 {
		t.Fatalf("the other host was contacted: %q", reqs)
	}

	// A redirect within the API server is followed, with the credentials.
	p, err := pods.Get(ctx, "same", apiclient.GetOptions{})
	if err != nil || p.Name != "here" {
		t.Fatalf("same-host redirect: %v, %v", p, err)
	}
	if _, authz := apiSaw.get(); authz[len(authz)-1] != "Bearer SECRET" {
		t.Errorf("same-host redirect sent %q", authz[len(authz)-1])
	}

	// Told to follow other hosts, the client goes there without credentials.
	cfg.FollowCrossHostRedirects = true
	c2, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := apiclient.NewResource[*testobj.Pod](c2, testobj.PodGVR).Namespace("ns").Get(ctx, "p", apiclient.GetOptions{}); err != nil {
		t.Fatalf("followed redirect: %v", err)
	}
	reqs, authz := otherSaw.get()
	if len(reqs) != 1 || authz[0] != "" {
		t.Errorf("other host saw %q with credentials %q, want one request without", reqs, authz)
	}
}

// hangUntilGone reads the request and answers nothing until the client goes away.
func hangUntilGone(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body) // an HTTP/1.1 server notices a client gone only once it read the body
	<-r.Context().Done()
}

func TestEveryWaitHasADeadline(t *testing.T) {
	for _, tc := range hostileTransports {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testDeadlines(t, tc) })
		})
	}
}

func testDeadlines(t *testing.T, tc hostileTransport) {
	netw := apitest.NewNetwork()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/namespaces/ns/pods", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("labelSelector") == "hang" {
			hangUntilGone(w, r)
			return
		}
		// The body starts, then goes silent.
		w.Write([]byte(`{"kind":"PodList","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a"}},`))
		w.(http.Flusher).Flush()
		hangUntilGone(w, r)
	})
	mux.HandleFunc("/", hangUntilGone)
	srv, cfg := serveHostile(t, netw, tc, mux)
	defer srv.Close()
	cfg.MaxRetries = -1
	logs := &logLines{}
	cfg.Logger = logs.logger()
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	pods := apiclient.NewResource[*testobj.Pod](c, testobj.PodGVR).Namespace("ns")

	settings := map[string]string{
		"response headers":       "Config.ResponseHeaderTimeout",
		"watch response headers": "Config.WatchResponseHeaderTimeout",
		"WebSocket handshake":    "Config.WatchResponseHeaderTimeout",
		"response body":          "Config.ResponseBodyIdleTimeout",
	}
	// Every deadline is logged once at Warn when it passes, naming its setting, which its
	// error names too.
	wantTimeout := func(op string, f func() error, wantOp string, want time.Duration) {
		t.Helper()
		setting := settings[wantOp]
		logged := len(logs.matching("level=WARN", "setting="+setting))
		start := time.Now()
		err := f()
		var te *apiclient.TimeoutError
		if !errors.As(err, &te) || te.Op != wantOp || te.Limit != want || !errors.Is(err, apiclient.ErrTimeout) ||
			te.Setting != setting || !strings.Contains(err.Error(), setting) {
			t.Errorf("%s: err = %v, want a *TimeoutError for %s after %v naming %s", op, err, wantOp, want, setting)
		}
		if n := len(logs.matching("level=WARN", "setting="+setting)) - logged; n != 1 {
			t.Errorf("%s: %d Warn lines naming %s, want 1", op, n, setting)
		}
		if d := time.Since(start); d != want {
			t.Errorf("%s: failed after %v, want %v", op, d, want)
		}
		if !apiclient.IsUnreachable(err) {
			t.Errorf("%s: IsUnreachable(%v) = false", op, err)
		}
	}
	header := apiclient.DefaultResponseHeaderTimeout
	wantTimeout("Get", func() error { _, err := pods.Get(ctx, "p", apiclient.GetOptions{}); return err }, "response headers", header)
	wantTimeout("List", func() error {
		_, err := pods.List(ctx, apiclient.ListOptions{LabelSelector: "hang"})
		return err
	}, "response headers", header)
	wantTimeout("Create", func() error {
		_, err := pods.Create(ctx, testobj.NewPod("ns", "p"), apiclient.CreateOptions{})
		return err
	}, "response headers", header)
	wantTimeout("Delete", func() error { return pods.Delete(ctx, "p", apiclient.DeleteOptions{}) }, "response headers", header)
	watchOp := "watch response headers"
	if tc.proto == apiclient.WatchWebSocket {
		watchOp = "WebSocket handshake"
	}
	wantTimeout("Watch", func() error {
		w, err := pods.Watch(ctx, apiclient.ListOptions{})
		if err == nil {
			w.Stop()
		}
		return err
	}, watchOp, apiclient.DefaultWatchResponseHeaderTimeout)
	var items int
	wantTimeout("ListEach, silent body", func() error {
		_, err := pods.ListEach(ctx, apiclient.ListOptions{}, func(*testobj.Pod) error { items++; return nil })
		return err
	}, "response body", apiclient.DefaultResponseBodyIdleTimeout)
	if items != 1 {
		t.Errorf("ListEach saw %d items before the body went silent, want 1", items)
	}
	wantTimeout("List, silent body", func() error { _, err := pods.List(ctx, apiclient.ListOptions{}); return err },
		"response body", apiclient.DefaultResponseBodyIdleTimeout)

	// The deadlines are configurable.
	cfg.ResponseHeaderTimeout, cfg.WatchResponseHeaderTimeout, cfg.ResponseBodyIdleTimeout = 3*time.Second, 2*time.Second, time.Second
	logs = &logLines{}
	cfg.Logger = logs.logger()
	c2, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	pods2 := apiclient.NewResource[*testobj.Pod](c2, testobj.PodGVR).Namespace("ns")
	wantTimeout("Get, 3 s", func() error { _, err := pods2.Get(ctx, "p", apiclient.GetOptions{}); return err }, "response headers", 3*time.Second)
	wantTimeout("Watch, 2 s", func() error {
		w, err := pods2.Watch(ctx, apiclient.ListOptions{})
		if err == nil {
			w.Stop()
		}
		return err
	}, watchOp, 2*time.Second)
	wantTimeout("List, 1 s", func() error { _, err := pods2.List(ctx, apiclient.ListOptions{}); return err }, "response body", time.Second)
}

func TestRetryAfterIsCapped(t *testing.T) {
	for _, tc := range hostileTransports {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testRetryAfterCap(t, tc) })
		})
	}
}

func testRetryAfterCap(t *testing.T, tc hostileTransport) {
	netw := apitest.NewNetwork()
	huge := `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429,"details":{"retryAfterSeconds":100000}}`
	var calls sync.Map
	srv, cfg := serveHostile(t, netw, tc, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := calls.LoadOrStore(r.URL.Path, new(int))
		*n.(*int)++
		switch {
		case r.URL.Query().Get("watch") == "true":
			if tc.proto == apiclient.WatchWebSocket {
				w.Header().Set("Retry-After", "100000")
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintf(w, `{"type":"ERROR","object":%s}`+"\n", huge)
		case strings.HasSuffix(r.URL.Path, "/header") && *n.(*int) == 1:
			w.Header().Set("Retry-After", "100000")
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case *n.(*int) == 1:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, huge)
		default:
			fmt.Fprint(w, `{"kind":"Pod","metadata":{"name":"p","namespace":"ns"}}`)
		}
	}))
	defer srv.Close()
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	pods := apiclient.NewResource[*testobj.Pod](c, testobj.PodGVR).Namespace("ns")
	// Without retries the Status carries the capped delay; with them the client waits it.
	for _, name := range []string{"body", "header"} {
		_, err := pods.Get(ctx, name, apiclient.GetOptions{DisableRetries: true})
		if d, ok := meta.RetryAfter(err); !ok || d != apiclient.MaxRetryAfter {
			t.Errorf("%s: RetryAfter(%v) = %v, want the cap %v", name, err, d, apiclient.MaxRetryAfter)
		}
		calls.Delete("/api/v1/namespaces/ns/pods/" + name)
		start := time.Now()
		if _, err := pods.Get(ctx, name, apiclient.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != apiclient.MaxRetryAfter {
			t.Errorf("%s: retried after %v, want %v", name, d, apiclient.MaxRetryAfter)
		}
	}
	// A watch: the ERROR event's Status (chunked), the refusal's header (WebSocket).
	w, err := pods.Watch(ctx, apiclient.ListOptions{})
	if err == nil {
		ev := <-w.ResultChan()
		w.Stop()
		err = ev.Err
	}
	if d, ok := meta.RetryAfter(err); !ok || d != apiclient.MaxRetryAfter {
		t.Errorf("watch: RetryAfter(%v) = %v, want the cap %v", err, d, apiclient.MaxRetryAfter)
	}
}

func TestAnObjectOfAnotherKindIsSkipped(t *testing.T) {
	for _, tc := range hostileTransports {
		for _, json := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/json=%v", tc.name, json), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) { testWrongKind(t, tc, json) })
			})
		}
	}
}

func testWrongKind(t *testing.T, tc hostileTransport, json bool) {
	netw := apitest.NewNetwork()
	s := apitest.NewServerWithOptions(apitest.Options{Network: netw, TLS: tc.tls})
	defer s.Close()
	if err := s.AddResource(apitest.ResourceType{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	cfg := s.Config()
	cfg.WatchProtocol, cfg.DisableProtobuf = tc.proto, json
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "evil", "namespace": "default"}}
	gadget := map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "evil", "namespace": "default"}}

	// A built-in resource knows its kind; a custom resource learns it from its first list.
	cms := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default")
	widgets := apiclient.NewResource[*testobj.Widget](c, testobj.WidgetGVR).Namespace("default")
	if _, err := widgets.List(ctx, apiclient.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		resource string
		watch    func() (<-chan string, func())
		foreign  map[string]any
		create   func(name string)
	}{
		{"configmaps", func() (<-chan string, func()) { return watchNames(t, cms) }, pod, func(n string) {
			s.Create("configmaps", map[string]any{"metadata": map[string]any{"name": n, "namespace": "default"}})
		}},
		{"widgets", func() (<-chan string, func()) { return watchNames(t, widgets) }, gadget, func(n string) {
			s.Create("widgets", map[string]any{"metadata": map[string]any{"name": n, "namespace": "default"}, "spec": map[string]any{"size": 1}})
		}},
	} {
		got, stop := r.watch()
		r.create("a")
		if n := <-got; n != "a" {
			t.Fatalf("%s: first event %s", r.resource, n)
		}
		if n, err := s.Faults().SendWatchEvent(r.resource, apiclient.Added, r.foreign); err != nil || n != 1 {
			t.Fatalf("SendWatchEvent: %d, %v", n, err)
		}
		r.create("b")
		if n := <-got; n != "skipped: ErrWrongKind" {
			t.Errorf("%s: after the foreign object: %s", r.resource, n)
		}
		if n := <-got; n != "b" {
			t.Errorf("%s: the watch did not go on: %s", r.resource, n)
		}
		stop()
	}
}

// watchNames watches r and sends the name of every object it gets, or a description of a
// Skipped or Error event.
func watchNames[T interface {
	*testobj.ConfigMap | *testobj.Widget
	meta.Object
}](t *testing.T, r *apiclient.Resource[T]) (<-chan string, func()) {
	w, err := r.Watch(context.Background(), apiclient.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan string, 10)
	go func() {
		defer close(out)
		for ev := range w.ResultChan() {
			switch {
			case ev.Type == apiclient.Skipped && errors.Is(ev.Err, apiclient.ErrWrongKind):
				out <- "skipped: ErrWrongKind"
			case ev.Type == apiclient.Skipped || ev.Type == apiclient.Error:
				out <- fmt.Sprintf("%s: %v", ev.Type, ev.Err)
			case ev.Type != apiclient.Bookmark:
				out <- ev.Object.GetName()
			}
		}
	}()
	return out, w.Stop
}

func TestAListOfAnotherKindFails(t *testing.T) {
	for _, tc := range hostileTransports {
		for _, protobuf := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/protobuf=%v", tc.name, protobuf), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					netw := apitest.NewNetwork()
					srv, cfg := serveHostile(t, netw, tc, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						podList := map[string]any{"apiVersion": "v1", "kind": "PodList", "metadata": map[string]any{"resourceVersion": "5"},
							"items": []any{map[string]any{"metadata": map[string]any{"name": "evil", "namespace": "ns"}}}}
						if protobuf {
							b, err := kubeproto.EncodeObject(podList)
							if err != nil {
								t.Error(err)
							}
							w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf")
							w.Write(b)
							return
						}
						// The kind comes first, as the kube-apiserver writes it (a kind after the
						// items fails the list as well, once the items have been read).
						w.Header().Set("Content-Type", "application/json")
						if r.URL.Query().Get("labelSelector") == "item" {
							fmt.Fprint(w, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[{"kind":"Pod","metadata":{"name":"evil"}}]}`)
							return
						}
						fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"evil","namespace":"ns"}}]}`)
					}))
					defer srv.Close()
					c, err := apiclient.New(cfg)
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					cms := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("ns")
					_, err = cms.List(context.Background(), apiclient.ListOptions{})
					if !errors.Is(err, apiclient.ErrWrongKind) {
						t.Errorf("List: %v, want ErrWrongKind", err)
					}
					n := 0
					_, err = cms.ListEach(context.Background(), apiclient.ListOptions{}, func(*testobj.ConfigMap) error { n++; return nil })
					if !errors.Is(err, apiclient.ErrWrongKind) || n != 0 {
						t.Errorf("ListEach: %v after %d items, want ErrWrongKind before any", err, n)
					}
					if !protobuf {
						_, err = cms.ListEach(context.Background(), apiclient.ListOptions{LabelSelector: "item"}, func(*testobj.ConfigMap) error { n++; return nil })
						if !errors.Is(err, apiclient.ErrWrongKind) || n != 0 {
							t.Errorf("ListEach, an item of another kind: %v after %d items, want ErrWrongKind before it", err, n)
						}
					}
				})
			})
		}
	}
}

// garbage is a stream that is not what its Content-Type says.
type garbage struct {
	name        string
	contentType string
	body        []byte
	want        string // in the error's message
}

func garbageStreams() []garbage {
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(i*7919 + i*i*31)
	}
	protoFrames := append([]byte{0, 0, 0, 8, 0x0a, 5}, "ADDED"...)
	jsonEvent := []byte(`{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"ns"}}}` + "\n")
	const jsonType, protoType = "application/json", "application/vnd.kubernetes.protobuf;stream=watch"
	return []garbage{
		{"html", jsonType, []byte("<!DOCTYPE html><html><body>502 Bad Gateway</body></html>"), "an HTML page"},
		{"gzip", jsonType, append([]byte{0x1f, 0x8b, 8, 0}, random...), "gzip-compressed data"},
		{"brace-then-binary", jsonType, append([]byte("{"), random...), "the stream is not JSON"},
		{"protobuf-as-json", jsonType, protoFrames, "protobuf frames"},
		{"event-then-binary", jsonType, append(append([]byte{}, jsonEvent...), random...), "cannot appear there in JSON"},
		{"json-as-protobuf", protoType, jsonEvent, "starts with JSON"},
		{"bad-protobuf-frame", protoType, append([]byte{0, 0, 0x10, 0, 0xff}, random...), "not a protobuf WatchEvent"},
	}
}

func TestGarbageIsRecognisedWithinBytes(t *testing.T) {
	for _, g := range garbageStreams() {
		for _, tc := range hostileTransports {
			t.Run(tc.name+"/"+g.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) { testGarbage(t, tc, g) })
			})
		}
	}
}

// testGarbage serves the start of a garbage stream and then waits for the client to give
// up: a client that needed more of it (up to its 16 MiB size limit) would wait for good.
func testGarbage(t *testing.T, tc hostileTransport, g garbage) {
	netw := apitest.NewNetwork()
	upgrader := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }, WriteBufferSize: 1024}
	srv, cfg := serveHostile(t, netw, tc, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if websocket.IsWebSocketUpgrade(r) {
			conn, err := upgrader.Upgrade(w, r, http.Header{"Content-Type": {g.contentType}})
			if err != nil {
				return
			}
			defer conn.Close()
			mt := websocket.TextMessage
			if strings.Contains(g.contentType, "protobuf") {
				mt = websocket.BinaryMessage
				if g.body[0] == 0 {
					g.body = g.body[4:] // a WebSocket message is a WatchEvent without a length
				}
			}
			mw, err := conn.NextWriter(mt)
			if err != nil {
				return
			}
			// A fragment of a message that never ends (past the write buffer, so that it
			// goes out).
			mw.Write(append(append([]byte{}, g.body...), bytes.Repeat([]byte("x"), 2048)...))
			conn.ReadMessage()
			return
		}
		w.Header().Set("Content-Type", g.contentType)
		w.Write(g.body)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w, err := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("ns").Watch(context.Background(), apiclient.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var last apiclient.Event[*testobj.ConfigMap]
	for ev := range w.ResultChan() {
		last = ev
	}
	var de *apiclient.DecodeError
	if last.Type != apiclient.Error || !errors.As(last.Err, &de) || !errors.Is(last.Err, apiclient.ErrMalformedEvent) {
		t.Fatalf("last event %+v, want an Error event with ErrMalformedEvent", last)
	}
	if !strings.Contains(de.Error(), g.want) {
		t.Errorf("error %q does not say %q", de.Error(), g.want)
	}
	if tc.proto != apiclient.WatchWebSocket && de.Offset > 1024 {
		t.Errorf("recognised at offset %d", de.Offset)
	}
}

// A WebSocket message whose rest never comes, on a connection that answers pings, ends the
// watch after the read deadline: pongs keep a watch alive between messages, not within one.
func TestAWebSocketMessageThatNeverEndsTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		netw := apitest.NewNetwork()
		upgrader := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }, WriteBufferSize: 1024}
		srv, cfg := serveHostile(t, netw, hostileTransports[1], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, err := upgrader.Upgrade(w, r, nil)
			if err != nil {
				return
			}
			defer conn.Close()
			mw, _ := conn.NextWriter(websocket.TextMessage)
			mw.Write([]byte(`{"type":"ADDED","object":{"metadata":{"name":"` + strings.Repeat("x", 2048)))
			conn.ReadMessage() // answers the client's pings until it goes away
		}))
		defer srv.Close()
		c, err := apiclient.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start := time.Now()
		w, err := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("ns").Watch(context.Background(), apiclient.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		for ev := range w.ResultChan() {
			t.Fatalf("event %+v", ev)
		}
		var ne net.Error
		if err := w.(interface{ Err() error }).Err(); !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("watch ended with %v, want a read timeout", err)
		}
		if d := time.Since(start); d < 30*time.Second || d > 31*time.Second {
			t.Errorf("ended after %v, want the 30 s read deadline", d)
		}
	})
}
