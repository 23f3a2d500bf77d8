package apiclient_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

func newServer(t *testing.T, proto apiclient.WatchProtocol) (*apitest.Server, *apiclient.Client) {
	t.Helper()
	return newServerWithOptions(t, proto, apitest.Options{})
}

func newServerWithOptions(t *testing.T, proto apiclient.WatchProtocol, opts apitest.Options) (*apitest.Server, *apiclient.Client) {
	t.Helper()
	s := apitest.NewServerWithOptions(opts)
	cfg := s.Config()
	cfg.WatchProtocol = proto
	c, err := apiclient.New(cfg)
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		s.Close()
	})
	return s, c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func recv[T any](t *testing.T, w apiclient.Watcher[T]) apiclient.Event[T] {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed; expected an event")
		}
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no event within 30 s")
	}
	panic("unreachable")
}

func waitClosed[T any](t *testing.T, w apiclient.Watcher[T]) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			t.Fatalf("expected the watch to end, got %s (err %v)", ev.Type, ev.Err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("watch still open after 30 s")
	}
}

// recvNamed reads events until one about name arrives (a watch without a resourceVersion
// starts with the existing objects).
func recvNamed(t *testing.T, w apiclient.Watcher[*testobj.ConfigMap], name string) {
	t.Helper()
	for {
		ev := recv(t, w)
		if ev.Type == apiclient.Error {
			t.Fatalf("error event %v", ev.Err)
		}
		if ev.Object.Name == name {
			return
		}
	}
}

var protocols = []struct {
	name  string
	proto apiclient.WatchProtocol
}{{"chunked", apiclient.WatchChunked}, {"websocket", apiclient.WatchWebSocket}}

// The same history seen through a chunked stream and through WebSocket: exactly the events
// after the resourceVersion, in order.
func TestWatchFromResourceVersionBothProtocols(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			s, c := newServerWithOptions(t, p.proto, apitest.Options{Token: "tok", TLS: true})
			ctx := testCtx(t)
			cms := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default").WithKind("ConfigMap")
			a, err := cms.Create(ctx, &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Name: "a"}}, apiclient.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			from := a.ResourceVersion
			if _, err := cms.Create(ctx, &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Name: "b"}}, apiclient.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			a.Data = map[string]string{"k": "v"}
			if _, err := cms.Update(ctx, a, apiclient.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := cms.Delete(ctx, "b", apiclient.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			w, err := cms.Watch(ctx, apiclient.ListOptions{ResourceVersion: from})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			var got []string
			for i := 0; i < 3; i++ {
				ev := recv(t, w)
				got = append(got, fmt.Sprintf("%s %s", ev.Type, ev.Object.Name))
			}
			if fmt.Sprint(got) != "[ADDED b MODIFIED a DELETED b]" {
				t.Fatalf("events %v", got)
			}
			// A live event, then the server ends the stream: a clean close.
			if _, err := cms.Create(ctx, &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Name: "c"}}, apiclient.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if ev := recv(t, w); ev.Type != apiclient.Added || ev.Object.Name != "c" {
				t.Fatalf("live event %+v", ev)
			}
			if _, err := s.Faults().CutWatches("configmaps"); err != nil {
				t.Fatal(err)
			}
			waitClosed(t, w)
			if err := w.(interface{ Err() error }).Err(); err != nil {
				t.Fatalf("clean close reported %v", err)
			}
		})
	}
}

func TestWatchCompactedResourceVersionIsExpired(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			s, c := newServer(t, p.proto)
			ctx := testCtx(t)
			cms := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default")
			a, err := cms.Create(ctx, &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Name: "a"}}, apiclient.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			a.Data = map[string]string{"x": "y"}
			if _, err := cms.Update(ctx, a, apiclient.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := s.Compact("configmaps"); err != nil {
				t.Fatal(err)
			}
			w, err := cms.Watch(ctx, apiclient.ListOptions{ResourceVersion: a.ResourceVersion})
			if err != nil {
				if !meta.IsResourceExpired(err) {
					t.Fatalf("watch refused with %v, want 410 Expired", err)
				}
				return
			}
			defer w.Stop()
			ev := recv(t, w)
			if ev.Type != apiclient.Error || !meta.IsResourceExpired(ev.Err) {
				t.Fatalf("event %s err %v, want a 410 Expired ERROR", ev.Type, ev.Err)
			}
			waitClosed(t, w)
		})
	}
}

func TestWatchInitialEventsAndBookmarks(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			_, c := newServerWithOptions(t, p.proto, apitest.Options{BookmarkInterval: 20 * time.Millisecond})
			ctx := testCtx(t)
			cms := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default")
			for _, n := range []string{"x", "y"} {
				if _, err := cms.Create(ctx, &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Name: n}}, apiclient.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			send := true
			w, err := cms.Watch(ctx, apiclient.ListOptions{SendInitialEvents: &send, AllowWatchBookmarks: true,
				ResourceVersionMatch: apiclient.ResourceVersionMatchNotOlderThan})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			added := map[string]bool{}
			var end apiclient.Event[*testobj.ConfigMap]
			for {
				ev := recv(t, w)
				if ev.Type == apiclient.Added {
					added[ev.Object.Name] = true
					continue
				}
				if ev.Type == apiclient.Bookmark && ev.Object.Annotations[apiclient.InitialEventsEndAnnotation] == "true" {
					end = ev
					break
				}
			}
			if !added["x"] || !added["y"] || end.Object.ResourceVersion == "" {
				t.Fatalf("initial events %v, end bookmark rv %q", added, end.Object.ResourceVersion)
			}
			// Periodic bookmarks follow once the server has progressed past the last event
			// the watch saw (like the watch cache): a write the watch does not match.
			if _, err := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("kube-system").Create(ctx,
				&testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Name: "elsewhere"}}, apiclient.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			for {
				if ev := recv(t, w); ev.Type == apiclient.Bookmark {
					if ev.Object.ResourceVersion == "" {
						t.Fatal("bookmark without a resourceVersion")
					}
					break
				}
			}
		})
	}
}

func TestWatchAutoFallsBackWhenWebSocketIsRefused(t *testing.T) {
	s, c := newServerWithOptions(t, apiclient.WatchAuto, apitest.Options{RefuseWebSocket: true})
	ctx := testCtx(t)
	cms := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default")
	for i := 0; i < 2; i++ {
		w, err := cms.Watch(ctx, apiclient.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cms.Create(ctx, &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Name: fmt.Sprint("cm", i)}}, apiclient.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		recvNamed(t, w, fmt.Sprint("cm", i))
		w.Stop()
	}
	if n := len(s.Faults().RecordsOf(apitest.FaultWebSocketRefused)); n != 1 {
		t.Fatalf("%d refused upgrades, want 1 (the refusal is remembered)", n)
	}
}

func TestWatchCorruptAndOversizedFrames(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			s, _ := newServer(t, p.proto)
			cfg := s.Config()
			cfg.WatchProtocol = p.proto
			cfg.MaxEventSize = 64 << 10
			c, err := apiclient.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := testCtx(t)
			cms := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default")
			for _, tc := range []struct {
				inject func() (int, error)
				want   error
			}{
				{func() (int, error) { return s.Faults().SendCorruptFrame("configmaps") }, apiclient.ErrMalformedEvent},
				{func() (int, error) { return s.Faults().SendOversizedFrame("configmaps", 200<<10) }, apiclient.ErrEventTooLarge},
			} {
				list, err := cms.List(ctx, apiclient.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				w, err := cms.Watch(ctx, apiclient.ListOptions{ResourceVersion: list.ResourceVersion})
				if err != nil {
					t.Fatal(err)
				}
				// An event proves the watch is registered before the fault is injected.
				created, err := cms.Create(ctx, &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{GenerateName: "g-"}}, apiclient.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				recvNamed(t, w, created.Name)
				if n, err := tc.inject(); err != nil || n < 1 {
					t.Fatalf("inject: %d watches, %v", n, err)
				}
				ev := recv(t, w)
				var de *apiclient.DecodeError
				if ev.Type != apiclient.Error || !errors.Is(ev.Err, tc.want) || !errors.As(ev.Err, &de) {
					t.Fatalf("event %s err %v, want %v", ev.Type, ev.Err, tc.want)
				}
				waitClosed(t, w)
				w.Stop()
			}
		})
	}
}

func TestRetriesAgainstServerFaults(t *testing.T) {
	s, c := newServer(t, apiclient.WatchChunked)
	ctx := testCtx(t)
	cms := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default")
	if err := s.Faults().FailRequests(apitest.VerbList, "configmaps", 2, 503, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.List(ctx, apiclient.ListOptions{}); err != nil {
		t.Fatalf("LIST after two 503s: %v", err)
	}
	if n := s.CountRequests(apitest.VerbList, "configmaps"); n != 3 {
		t.Fatalf("%d LIST requests, want 3", n)
	}
	if err := s.Faults().FailRequests(apitest.VerbCreate, "configmaps", 1, 429, time.Second); err != nil {
		t.Fatal(err)
	}
	_, err := cms.Create(ctx, &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Name: "z"}}, apiclient.CreateOptions{})
	if !meta.IsTooManyRequests(err) {
		t.Fatalf("create: %v, want the 429 (writes are not retried)", err)
	}
	if d, ok := meta.RetryAfter(err); !ok || d != time.Second {
		t.Fatalf("RetryAfter = %v %v", d, ok)
	}
}

func TestPagingAndConflicts(t *testing.T) {
	_, c := newServer(t, apiclient.WatchChunked)
	ctx := testCtx(t)
	cms := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default")
	for i := 0; i < 23; i++ {
		if _, err := cms.Create(ctx, &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i), Labels: map[string]string{"set": "p"}}}, apiclient.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := cms.List(ctx, apiclient.ListOptions{Limit: 10, LabelSelector: "set=p"})
	if err != nil || len(page.Items) != 10 || page.Continue == "" {
		t.Fatalf("first page: %d items, continue %q, %v", len(page.Items), page.Continue, err)
	}
	seen := map[string]bool{}
	for cm, err := range cms.All(ctx, apiclient.ListOptions{Limit: 10, LabelSelector: "set=p"}) {
		if err != nil {
			t.Fatal(err)
		}
		seen[cm.Name] = true
	}
	if len(seen) != 23 {
		t.Fatalf("All saw %d objects", len(seen))
	}
	got, err := cms.Get(ctx, "cm-00", apiclient.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stale := *got
	got.Data = map[string]string{"v": "1"}
	if _, err := cms.Update(ctx, got, apiclient.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	stale.Data = map[string]string{"v": "2"}
	if _, err := cms.Update(ctx, &stale, apiclient.UpdateOptions{}); !meta.IsConflict(err) {
		t.Fatalf("stale update: %v, want 409 Conflict", err)
	}
	rv := stale.ResourceVersion
	if err := cms.Delete(ctx, "cm-00", apiclient.DeleteOptions{Preconditions: &apiclient.Preconditions{ResourceVersion: &rv}}); !meta.IsConflict(err) {
		t.Fatalf("delete with a stale precondition: %v", err)
	}
	if _, err := cms.Get(ctx, "nope", apiclient.GetOptions{}); !meta.IsNotFound(err) {
		t.Fatalf("missing object: %v", err)
	}
	// Unstructured sees the same objects.
	u, err := apiclient.NewResource[*meta.Unstructured](c, testobj.ConfigMapGVR).Namespace("default").Get(ctx, "cm-00", apiclient.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := meta.NestedString(u.Object, "data", "v"); v != "1" || u.GetKind() != "ConfigMap" {
		t.Fatalf("unstructured %v", u.Object)
	}
}

func TestKubeconfigAgainstTLSServer(t *testing.T) {
	s := apitest.NewServerWithOptions(apitest.Options{TLS: true, Token: "sekrit"})
	defer s.Close()
	path := filepath.Join(t.TempDir(), "config")
	if err := s.WriteKubeconfig(path); err != nil {
		t.Fatal(err)
	}
	cfg, err := apiclient.LoadConfigWithOptions(apiclient.LoadOptions{Kubeconfig: path})
	if err != nil {
		t.Fatal(err)
	}
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t)
	r, err := c.ResolveResource(ctx, "cm")
	if err != nil || r.GroupVersionResource != testobj.ConfigMapGVR || !r.Namespaced {
		t.Fatalf("discovery: %+v %v", r, err)
	}
	cfg.BearerToken = "wrong"
	c2, _ := apiclient.New(cfg)
	defer c2.Close()
	_, err = apiclient.NewResource[*testobj.ConfigMap](c2, testobj.ConfigMapGVR).List(ctx, apiclient.ListOptions{})
	if !meta.IsUnauthorized(err) {
		t.Fatalf("wrong token: %v", err)
	}
}

// The WebSocket health check: a watch whose connection answers nothing, not even pings (a
// network partition), ends with a timeout error once the read timeout passes, which Err
// reports (a dead connection is not a clean close). A stalled watch on a live server answers
// pings and stays open.
func TestWebSocketHealthCheckEndsAWatchOnADeadConnection(t *testing.T) {
	restore := apiclient.SetWebSocketHealthCheck(20*time.Millisecond, time.Second)
	t.Cleanup(restore) // after the server and client cleanups below: cleanups run last-in first-out
	s, c := newServer(t, apiclient.WatchWebSocket)
	ctx := testCtx(t)
	cms := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default")
	open := func() apiclient.Watcher[*testobj.ConfigMap] {
		t.Helper()
		opened := s.NextWatch("configmaps")
		w, err := cms.Watch(ctx, apiclient.ListOptions{ResourceVersion: s.ResourceVersion()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Stop)
		<-opened
		return w
	}

	stalled := open()
	release, n, err := s.Faults().StallWatches("configmaps", 0)
	if err != nil || n != 1 {
		t.Fatalf("StallWatches = %d, %v", n, err)
	}
	t.Cleanup(release)
	partitioned := open()
	releaseP, n, err := s.Faults().PartitionWatches("configmaps", 0)
	if err != nil || n != 2 { // the stalled watch takes the partition too, once its stall ends
		t.Fatalf("PartitionWatches = %d, %v", n, err)
	}
	t.Cleanup(releaseP)
	waitClosed(t, partitioned)
	var ne net.Error
	err = partitioned.(interface{ Err() error }).Err()
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("a partitioned watch ended with Err() = %v, want a timeout", err)
	}
	// The stalled watch has seen the same second go by (and more) with pongs alone.
	select {
	case ev, ok := <-stalled.ResultChan():
		t.Fatalf("the stalled watch on a live server ended or sent %v (open %v): %v", ev.Type, ok, stalled.(interface{ Err() error }).Err())
	default:
	}
}

// WatchAuto: WebSocket watches to every server, https with HTTP/2 or not; WatchChunked:
// chunked streams, over the HTTP/2 connection they share when the server speaks it.
func TestWatchAutoChoosesWebSocketAndChunkedSharesHTTP2(t *testing.T) {
	for _, tc := range []struct {
		name  string
		proto apiclient.WatchProtocol
		opts  apitest.Options
		wants []string // the protocols of three watches in a row
	}{
		{"auto-https", apiclient.WatchAuto, apitest.Options{TLS: true}, []string{"websocket", "websocket", "websocket"}},
		{"auto-http", apiclient.WatchAuto, apitest.Options{}, []string{"websocket", "websocket", "websocket"}},
		{"auto-https-without-http2", apiclient.WatchAuto, apitest.Options{TLS: true, NoHTTP2: true}, []string{"websocket", "websocket", "websocket"}},
		{"chunked-https", apiclient.WatchChunked, apitest.Options{TLS: true}, []string{"HTTP/2.0", "HTTP/2.0", "HTTP/2.0"}},
		{"chunked-https-without-http2", apiclient.WatchChunked, apitest.Options{TLS: true, NoHTTP2: true}, []string{"HTTP/1.1", "HTTP/1.1", "HTTP/1.1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := newServerWithOptions(t, tc.proto, tc.opts)
			ctx := testCtx(t)
			cms := apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default")
			for i, want := range tc.wants {
				opened := s.NextWatch("configmaps")
				w, err := cms.Watch(ctx, apiclient.ListOptions{ResourceVersion: s.ResourceVersion()})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(w.Stop)
				if info := <-opened; info.Protocol != want {
					t.Fatalf("watch %d over %s, want %s", i+1, info.Protocol, want)
				}
			}
		})
	}
}
