package apiclient_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// encodings records the Content-Encoding of every HTTP answer by request ("LIST ns",
// "WATCH ns", "WATCHLIST ns"), beneath the client's own decoding.
type encodings struct {
	mu  sync.Mutex
	got map[string]string
}

// rtFunc is a func as an http.RoundTripper.
type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (e *encodings) wrap(rt http.RoundTripper) http.RoundTripper {
	return rtFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err != nil || r.Method != http.MethodGet || !strings.Contains(r.URL.Path, "/configmaps") {
			return resp, err
		}
		q := r.URL.Query()
		verb := "LIST"
		if q.Get("watch") == "true" {
			verb = "WATCH"
			if q.Get("sendInitialEvents") == "true" {
				verb = "WATCHLIST"
			}
		}
		ns := strings.Split(strings.TrimPrefix(r.URL.Path, "/api/v1/namespaces/"), "/")[0]
		e.mu.Lock()
		e.got[verb+" "+ns] = resp.Header.Get("Content-Encoding")
		e.mu.Unlock()
		return resp, nil
	})
}

func (e *encodings) of(key string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.got[key]
}

// TestGzipListsAndStreamingListsAgainstAPITest reads lists and streaming lists from apitest
// with and without Accept-Encoding: gzip, over both watch transports and both wire formats.
// The server compresses as kube-apiserver 1.37 does (a list over 128 KiB, a streaming list
// over chunked HTTP one member per flush, never a WebSocket), and the client reads the same
// objects either way, the events after the initial list as they come.
func TestGzipListsAndStreamingListsAgainstAPITest(t *testing.T) {
	s := apitest.NewServerWithOptions(apitest.Options{KubernetesVersion: "v1.37.2"})
	defer s.Close()
	value := strings.Repeat("v", 1000)
	// seed makes namespaces big-N, 200 ConfigMaps of about 1 KB (a list of about 230 KB
	// in either format), and small-N with one.
	seed := func(n int) {
		for _, ns := range []string{"big", "small"} {
			if _, err := s.Create("namespaces", map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("%s-%d", ns, n)}}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 200 {
			if _, err := s.Create("configmaps", &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i), Namespace: fmt.Sprintf("big-%d", n)},
				Data: map[string]string{"k": fmt.Sprintf("%d-%s", i, value)}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Create("configmaps", &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Name: "one", Namespace: fmt.Sprintf("small-%d", n)}}); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, tc := range []struct {
		name        string
		compression apiclient.Compression
		proto       apiclient.WatchProtocol
		json        bool
	}{
		{"gzip/chunked/protobuf", apiclient.CompressionGzip, apiclient.WatchChunked, false},
		{"gzip/chunked/json", apiclient.CompressionGzip, apiclient.WatchChunked, true},
		{"gzip/websocket/protobuf", apiclient.CompressionGzip, apiclient.WatchWebSocket, false},
		{"none/chunked/protobuf", apiclient.CompressionNone, apiclient.WatchChunked, false},
		{"none/chunked/json", apiclient.CompressionNone, apiclient.WatchChunked, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seed(n)
			big, small := fmt.Sprintf("big-%d", n), fmt.Sprintf("small-%d", n)
			n++
			ctx := testCtx(t)
			enc := &encodings{got: map[string]string{}}
			cfg := s.Config()
			cfg.Compression, cfg.WatchProtocol, cfg.DisableProtobuf, cfg.WrapTransport = tc.compression, tc.proto, tc.json, enc.wrap
			c, err := apiclient.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			cms := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR)

			l, err := cms.Namespace(big).List(ctx, apiclient.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Items) != 200 || l.Items[7].Data["k"] != "7-"+value {
				t.Fatalf("listed %d items (want 200) with the wrong data", len(l.Items))
			}
			if _, err := cms.Namespace(small).List(ctx, apiclient.ListOptions{}); err != nil {
				t.Fatal(err)
			}

			send := true
			w, err := cms.Namespace(big).Watch(ctx, apiclient.ListOptions{SendInitialEvents: &send, AllowWatchBookmarks: true,
				ResourceVersionMatch: apiclient.ResourceVersionMatchNotOlderThan})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			added := 0
			for done := false; !done; {
				switch ev := recv(t, w); ev.Type {
				case apiclient.Added:
					added++
				case apiclient.Bookmark:
					done = ev.Object.Annotations[apiclient.InitialEventsEndAnnotation] == "true"
				default:
					t.Fatalf("event %s (%v) in the initial events", ev.Type, ev.Err)
				}
			}
			if added != 200 {
				t.Fatalf("%d initial events, want 200", added)
			}
			// An event after the initial ones comes in its own gzip member: it must arrive
			// without a further event behind it.
			name := "late-" + strings.ReplaceAll(tc.name, "/", "-")
			if _, err := cms.Namespace(big).Create(ctx, &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Name: name}}, apiclient.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if ev := recv(t, w); ev.Type != apiclient.Added || ev.Object.Name != name {
				t.Fatalf("event %s %v after the initial events, want ADDED %s", ev.Type, ev.Err, name)
			}
			w.Stop()
			if err := w.(interface{ Err() error }).Err(); err != nil {
				t.Fatalf("watch ended with %v", err)
			}
			pw, err := cms.Namespace(small).Watch(ctx, apiclient.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			recvNamed(t, pw, "one")
			pw.Stop()

			gz := map[bool]string{true: "gzip", false: ""}[tc.compression == apiclient.CompressionGzip]
			want := map[string]string{"LIST " + big: gz, "LIST " + small: ""}
			if tc.proto == apiclient.WatchChunked {
				want["WATCHLIST "+big], want["WATCH "+small] = gz, ""
			}
			for k, v := range want {
				if got := enc.of(k); got != v {
					t.Errorf("%s: Content-Encoding %q, want %q", k, got, v)
				}
			}
		})
	}
}

// TestWatchAutoSendsStreamingListsWhereGzipGoes: with WatchAuto, a streaming list goes over
// a chunked stream when the client asks for gzip (WebSocket messages are never compressed),
// over WebSocket otherwise; any other watch goes over WebSocket either way.
func TestWatchAutoSendsStreamingListsWhereGzipGoes(t *testing.T) {
	s := apitest.NewServer()
	defer s.Close()
	send := true
	for _, tc := range []struct {
		compression apiclient.Compression
		opts        apiclient.ListOptions
		want        string
	}{
		{apiclient.CompressionGzip, apiclient.ListOptions{SendInitialEvents: &send, AllowWatchBookmarks: true, ResourceVersionMatch: apiclient.ResourceVersionMatchNotOlderThan}, "HTTP/1.1"},
		{apiclient.CompressionNone, apiclient.ListOptions{SendInitialEvents: &send, AllowWatchBookmarks: true, ResourceVersionMatch: apiclient.ResourceVersionMatchNotOlderThan}, "websocket"},
		{apiclient.CompressionGzip, apiclient.ListOptions{ResourceVersion: s.ResourceVersion()}, "websocket"},
	} {
		cfg := s.Config()
		cfg.Compression = tc.compression
		c, err := apiclient.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		opened := s.NextWatch("configmaps")
		w, err := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default").Watch(testCtx(t), tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if info := <-opened; info.Protocol != tc.want {
			t.Errorf("Compression %d, sendInitialEvents %v: the watch went over %s, want %s", tc.compression, tc.opts.SendInitialEvents != nil, info.Protocol, tc.want)
		}
		w.Stop()
		c.Close()
	}
}
