package apitest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/meta"
)

func TestTLSTokenAndHTTP2(t *testing.T) {
	s := apitest.NewServerWithOptions(apitest.Options{TLS: true, Token: "secret"})
	defer s.Close()
	if !strings.HasPrefix(s.URL, "https://") || len(s.CAPEM()) == 0 {
		t.Fatalf("URL %s CA %d bytes", s.URL, len(s.CAPEM()))
	}
	cfg := s.Config()
	if cfg.BearerToken != "secret" || len(cfg.TLS.CAData) == 0 {
		t.Fatalf("config %+v", cfg)
	}
	cfg.WatchProtocol = apiclient.WatchChunked
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cms := apiclient.NewResource[*ConfigMap](c, configmapsGVR).Namespace("default")
	if _, err := cms.Create(ctx, cm("a", nil, nil), apiclient.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(ctx, apiclient.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if ev := next(t, w); ev.Type != apiclient.Added {
		t.Fatalf("got %s", ev.Type)
	}
	for _, r := range s.Requests() {
		if r.Protocol != "HTTP/2.0" {
			t.Fatalf("request over %s, want HTTP/2.0 with TLS", r.Protocol)
		}
	}

	// A wrong or missing token: 401 with a Status body.
	bad := s.Config()
	bad.BearerToken = "wrong"
	bad.MaxRetries = -1
	bc, _ := apiclient.New(bad)
	defer bc.Close()
	_, err = apiclient.NewResource[*ConfigMap](bc, configmapsGVR).List(ctx, apiclient.ListOptions{})
	mustStatus(t, err, 401, meta.StatusReasonUnauthorized)

	hc := s.Client()
	defer hc.CloseIdleConnections()
	resp, err := hc.Get(s.URL + "/api/v1/namespaces/default/configmaps/a")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("Server.Client GET: %d", resp.StatusCode)
	}
}

func TestKubeconfigLoads(t *testing.T) {
	s := apitest.NewServerWithOptions(apitest.Options{TLS: true, Token: "tok"})
	defer s.Close()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := s.WriteKubeconfig(path); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	for _, want := range []string{"server: " + s.URL, "certificate-authority-data: ", `token: "tok"`, "current-context: apitest"} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("kubeconfig lacks %q:\n%s", want, b)
		}
	}
	// apiclient.LoadConfig reads it and the client works with its CA and token.
	cfg, err := apiclient.LoadConfigWithOptions(apiclient.LoadOptions{Kubeconfig: path})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != s.URL || cfg.BearerToken != "tok" || cfg.Namespace != "default" {
		t.Fatalf("loaded config host %s token set %v namespace %q", cfg.Host, cfg.BearerToken != "", cfg.Namespace)
	}
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := apiclient.NewResource[*ConfigMap](c, configmapsGVR).Namespace("default").List(context.Background(), apiclient.ListOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestWebSocketWatch(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		name := "http"
		if tlsOn {
			name = "https"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnvProtoWithOptions(t, apiclient.WatchWebSocket, apitest.Options{Token: "ws-token", TLS: tlsOn})
			e.s.Create("configmaps", cm("a", nil, nil))
			w, err := e.cms.Watch(e.ctx, apiclient.ListOptions{ResourceVersion: "0"})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if ev := next(t, w); ev.Type != apiclient.Added || ev.Object.Name != "a" {
				t.Fatalf("got %s %s", ev.Type, ev.Object.Name)
			}
			e.s.Create("configmaps", cm("b", nil, nil))
			if ev := next(t, w); ev.Type != apiclient.Added || ev.Object.Name != "b" {
				t.Fatalf("got %s %s", ev.Type, ev.Object.Name)
			}
			ws := e.s.Watches("configmaps")
			if len(ws) != 1 || ws[0].Protocol != "websocket" {
				t.Fatalf("watches %+v", ws)
			}
			e.s.Faults().CutWatches("configmaps")
			closed(t, w)
		})
	}
}

// TestWebSocketBearerSubprotocol speaks WebSocket directly: the token travels as the
// base64url bearer subprotocol and every event is one text message.
func TestWebSocketBearerSubprotocol(t *testing.T) {
	s := apitest.NewServerWithOptions(apitest.Options{Token: "sub-token"})
	defer s.Close()
	s.Create("configmaps", cm("a", nil, nil))
	u := "ws" + strings.TrimPrefix(s.URL, "http") + "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0"
	proto := "base64url.bearer.authorization.k8s.io." + base64.RawURLEncoding.EncodeToString([]byte("sub-token"))
	origin := http.Header{"Origin": {s.URL}}
	// The bearer subprotocol alone is refused, as by the kube-apiserver: another subprotocol
	// must come with it (the one the server echoes).
	alone := websocket.Dialer{Subprotocols: []string{proto}}
	if _, resp, err := alone.Dial(u, origin); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("bearer subprotocol alone: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
	// Without an Origin the handshake is refused (403), as by golang.org/x/net/websocket.
	noOrigin := websocket.Dialer{Subprotocols: []string{proto, "watch.example"}}
	if _, resp, err := noOrigin.Dial(u, nil); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("no origin: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
	d := websocket.Dialer{Subprotocols: []string{proto, "watch.example"}}
	conn, resp, err := d.Dial(u, origin)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	defer conn.Close()
	typ, msg, err := conn.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		Type   string          `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	if typ != websocket.TextMessage || json.Unmarshal(msg, &ev) != nil || ev.Type != "ADDED" {
		t.Fatalf("message %d %s", typ, msg)
	}
	if conn.Subprotocol() != "watch.example" {
		t.Fatalf("the server picked subprotocol %q, want the non-token one", conn.Subprotocol())
	}
	conn.Close()
	// Without the token the upgrade is refused with 401.
	_, resp, err = websocket.DefaultDialer.Dial(u, origin)
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("dial without token: %v %v", err, resp)
	}
	resp.Body.Close()
	s.WaitFor(context.Background(), func() bool { return len(s.Watches("")) == 0 })
}

func TestWebSocketRefusedFallsBack(t *testing.T) {
	e := newEnvProtoWithOptions(t, apiclient.WatchAuto, apitest.Options{RefuseWebSocket: true})
	e.s.Create("configmaps", cm("a", nil, nil))
	w, err := e.cms.Watch(e.ctx, apiclient.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if ev := next(t, w); ev.Type != apiclient.Added {
		t.Fatalf("got %s", ev.Type)
	}
	if len(e.s.Faults().RecordsOf(apitest.FaultWebSocketRefused)) != 1 {
		t.Fatalf("faults %+v", e.s.Faults().Records())
	}
	ws := e.s.Watches("configmaps")
	if len(ws) != 1 || ws[0].Protocol == "websocket" {
		t.Fatalf("watches %+v", ws)
	}
}

func TestDiscovery(t *testing.T) {
	s := apitest.NewServer()
	defer s.Close()
	hc := s.Client()
	defer hc.CloseIdleConnections()
	get := func(path string, v any) {
		t.Helper()
		resp, err := hc.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	var version map[string]string
	get("/version", &version)
	if version["major"] != "1" {
		t.Fatalf("version %v", version)
	}
	var groups struct {
		Groups []struct{ Name string } `json:"groups"`
	}
	get("/apis", &groups)
	names := map[string]bool{}
	for _, g := range groups.Groups {
		names[g.Name] = true
	}
	if !names["apps"] || !names["coordination.k8s.io"] {
		t.Fatalf("groups %v", names)
	}
	var rl struct {
		GroupVersion string `json:"groupVersion"`
		Resources    []struct {
			Name       string   `json:"name"`
			Namespaced bool     `json:"namespaced"`
			Kind       string   `json:"kind"`
			Verbs      []string `json:"verbs"`
		} `json:"resources"`
	}
	get("/api/v1", &rl)
	found := map[string]bool{}
	for _, r := range rl.Resources {
		found[r.Name] = true
	}
	for _, want := range []string{"namespaces", "configmaps", "secrets", "pods", "pods/status", "services", "events"} {
		if !found[want] {
			t.Fatalf("/api/v1 lacks %s: %v", want, found)
		}
	}
	get("/apis/apps/v1", &rl)
	// As the kube-apiserver's: every resource of apps/v1 and its subresources, by name.
	if rl.GroupVersion != "apps/v1" || len(rl.Resources) != 12 || rl.Resources[4].Name != "deployments/scale" {
		t.Fatalf("apps/v1 %+v", rl)
	}
	s.AddResource(apitest.ResourceType{Group: "example.com", Version: "v1alpha1", Kind: "Gadget", Plural: "gadgets"})
	get("/apis/example.com/v1alpha1", &rl)
	if len(rl.Resources) != 1 || rl.Resources[0].Namespaced {
		t.Fatalf("custom resource discovery %+v", rl)
	}
}

func newEnvProto(t *testing.T, proto apiclient.WatchProtocol) *env {
	t.Helper()
	return newEnvProtoWithOptions(t, proto, apitest.Options{})
}

func newEnvProtoWithOptions(t *testing.T, proto apiclient.WatchProtocol, opts apitest.Options) *env {
	t.Helper()
	s := apitest.NewServerWithOptions(opts)
	cfg := s.Config()
	cfg.MaxRetries = -1
	cfg.WatchProtocol = proto
	c, err := apiclient.New(cfg)
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(func() {
		cancel()
		c.Close()
		s.Close()
	})
	return &env{s: s, c: c, cms: apiclient.NewResource[*ConfigMap](c, configmapsGVR).Namespace("default"), ctx: ctx}
}

func TestCloseEndsOpenWatches(t *testing.T) {
	s := apitest.NewServer()
	c, _ := apiclient.New(&apiclient.Config{Host: s.URL, WatchProtocol: apiclient.WatchChunked})
	defer c.Close()
	ctx := context.Background()
	opened := s.NextWatch("")
	w, err := apiclient.NewResource[*ConfigMap](c, configmapsGVR).Watch(ctx, apiclient.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	<-opened
	s.Close() // returns only when the watch handler and its connection are gone
	for range w.ResultChan() {
	}
	s.Close() // idempotent
}

func TestHTTP2CutAndAbort(t *testing.T) {
	e := newEnvProtoWithOptions(t, apiclient.WatchChunked, apitest.Options{TLS: true})
	w, info := openWatch(t, e, apiclient.ListOptions{})
	if info.Protocol != "HTTP/2.0" {
		t.Fatalf("protocol %s", info.Protocol)
	}
	e.s.Faults().CutWatches("configmaps")
	closed(t, w)
	w2, _ := openWatch(t, e, apiclient.ListOptions{})
	e.s.Faults().AbortWatches("configmaps")
	for ev := range w2.ResultChan() {
		if ev.Type != apiclient.Error {
			t.Fatalf("unexpected %s", ev.Type)
		}
	}
	// The connection survives a reset stream: the next request works.
	if _, err := e.cms.List(e.ctx, apiclient.ListOptions{}); err != nil {
		t.Fatal(err)
	}
}
