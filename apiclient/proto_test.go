package apiclient_test

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// fullPod declares the pod fields these tests read: maps, lists, pointers, timestamps,
// quantities and int-or-strings, nested structs.
type fullPod struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            struct {
		NodeName   string `json:"nodeName,omitempty"`
		Containers []struct {
			Name      string            `json:"name"`
			Image     string            `json:"image"`
			Env       []map[string]any  `json:"env,omitempty"`
			Resources map[string]any    `json:"resources,omitempty"`
			Ports     []map[string]any  `json:"ports,omitempty"`
			Probe     *map[string]any   `json:"readinessProbe,omitempty"`
			Labels    map[string]string `json:"labels,omitempty"`
		} `json:"containers"`
		Priority *int32 `json:"priority,omitempty"`
	} `json:"spec"`
	Status struct {
		Phase      string `json:"phase,omitempty"`
		Conditions []struct {
			Type               string    `json:"type"`
			Status             string    `json:"status"`
			LastTransitionTime meta.Time `json:"lastTransitionTime"`
		} `json:"conditions,omitempty"`
	} `json:"status"`
}

var pods = meta.GroupVersionResource{Version: "v1", Resource: "pods"}

func testPod(name string) map[string]any {
	return map[string]any{
		"metadata": map[string]any{"namespace": "default", "name": name, "labels": map[string]any{"app": "web"},
			"annotations": map[string]any{"a": "b"}},
		"spec": map[string]any{"nodeName": "n1", "priority": 5, "containers": []any{map[string]any{
			"name": "c", "image": "img:1", "env": []any{map[string]any{"name": "E", "value": "v"}},
			"resources":      map[string]any{"requests": map[string]any{"cpu": "500m", "memory": "1Gi"}},
			"ports":          []any{map[string]any{"containerPort": 8080, "protocol": "TCP"}},
			"readinessProbe": map[string]any{"httpGet": map[string]any{"port": "http", "path": "/"}, "periodSeconds": 3},
		}}},
	}
}

// mediaRecorder records the Accept header of every request and the media type of every
// answer that passes through the HTTP transport (WebSocket watches do not).
type mediaRecorder struct {
	mu      sync.Mutex
	asked   []string
	answers []string
	base    http.RoundTripper
	// rewrite, if set, replaces the Accept header of requests (a server that answers JSON).
	rewrite string
}

func (m *mediaRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	if m.rewrite != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Accept", m.rewrite)
	}
	resp, err := m.base.RoundTrip(r)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.asked = append(m.asked, r.Header.Get("Accept"))
	if err == nil {
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		m.answers = append(m.answers, mt)
	}
	return resp, err
}

// media returns the answers' media types recorded since the last call.
func (m *mediaRecorder) media() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.answers
	m.answers, m.asked = nil, nil
	return out
}

func onlyMedia(t *testing.T, what string, got []string, want string) {
	t.Helper()
	if len(got) == 0 {
		t.Fatalf("%s: no answer recorded", what)
	}
	for _, mt := range got {
		if mt != want {
			t.Fatalf("%s: answers %v, want all %s", what, got, want)
		}
	}
}

const protobuf = "application/vnd.kubernetes.protobuf"

// newClients returns a client that reads built-in kinds as protobuf (the default) and one
// that reads JSON only (DisableProtobuf), with their media recorders.
func newClients(t *testing.T, s *apitest.Server, proto apiclient.WatchProtocol) (pb, js *apiclient.Client, pbRec, jsRec *mediaRecorder) {
	t.Helper()
	mk := func(disable bool) (*apiclient.Client, *mediaRecorder) {
		rec := &mediaRecorder{}
		cfg := s.Config()
		cfg.WatchProtocol = proto
		cfg.DisableProtobuf = disable
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { rec.base = rt; return rec }
		c, err := apiclient.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c, rec
	}
	pb, pbRec = mk(false)
	js, jsRec = mk(true)
	return pb, js, pbRec, jsRec
}

var transports = []struct {
	name  string
	proto apiclient.WatchProtocol
	tls   bool
}{{"http2", apiclient.WatchChunked, true}, {"websocket", apiclient.WatchWebSocket, true}, {"http1", apiclient.WatchChunked, false}}

// Every read of a built-in kind goes over protobuf by default and decodes to exactly what
// the JSON path decodes: GET, paged LIST, ListEach, WATCH from a resourceVersion and the
// streaming list (sendInitialEvents), over HTTP/2, WebSocket and HTTP/1.1.
func TestProtobufReadsAgreeWithJSON(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			s := apitest.NewServerWithOptions(apitest.Options{TLS: tr.tls, Token: "tok"})
			t.Cleanup(s.Close)
			pb, js, pbRec, _ := newClients(t, s, tr.proto)
			ctx := testCtx(t)
			for i := range 3 {
				if _, err := s.Create("pods", testPod(fmt.Sprintf("p%d", i))); err != nil {
					t.Fatal(err)
				}
			}
			p1, err := s.Get("pods", "default", "p1")
			if err != nil {
				t.Fatal(err)
			}
			p1["status"] = map[string]any{"phase": "Running", "conditions": []any{map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-02T03:04:05Z"}}}
			if _, err := s.UpdateStatus("pods", p1); err != nil {
				t.Fatal(err)
			}
			pbPods := apiclient.NewResource[*fullPod](pb, pods).Namespace("default")
			jsPods := apiclient.NewResource[*fullPod](js, pods).Namespace("default")

			a, err := pbPods.Get(ctx, "p1", apiclient.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := jsPods.Get(ctx, "p1", apiclient.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			same(t, "Get", a, b)
			if a.Kind != "Pod" || a.APIVersion != "v1" || a.Status.Phase != "Running" || a.Status.Conditions[0].LastTransitionTime.Unix() != 1767323045 ||
				*a.Spec.Priority != 5 || a.Spec.Containers[0].Resources["requests"].(map[string]any)["cpu"] != "500m" {
				t.Fatalf("Get: %+v", a)
			}
			onlyMedia(t, "Get", pbRec.media(), protobuf)

			for _, opts := range []apiclient.ListOptions{{}, {Limit: 2}} {
				for {
					pa, err := pbPods.List(ctx, opts)
					if err != nil {
						t.Fatal(err)
					}
					pj, err := jsPods.List(ctx, opts)
					if err != nil {
						t.Fatal(err)
					}
					pa.Continue, pj.Continue = "", "" // tokens differ per request? compare items
					same(t, "List", pa, pj)
					var each []*fullPod
					lm, err := pbPods.ListEach(ctx, opts, func(p *fullPod) error { each = append(each, p); return nil })
					if err != nil {
						t.Fatal(err)
					}
					if lm.ResourceVersion == "" || !reflect.DeepEqual(each, pj.Items) {
						t.Fatalf("ListEach %+v: %d items, List %d", lm, len(each), len(pj.Items))
					}
					if lm.Continue == "" {
						break
					}
					opts.Continue = lm.Continue
				}
			}
			onlyMedia(t, "List, ListEach", pbRec.media(), protobuf)
			watchAgree(t, s, pbPods, jsPods, tr.proto)
		})
	}
}

func same(t *testing.T, what string, a, b any) {
	t.Helper()
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("%s: protobuf and JSON differ:\nprotobuf %+v\nJSON     %+v", what, a, b)
	}
}

// watchAgree watches from a resourceVersion and as a streaming list with both clients and
// compares the events.
func watchAgree(t *testing.T, s *apitest.Server, pbPods, jsPods *apiclient.Resource[*fullPod], proto apiclient.WatchProtocol) {
	ctx := testCtx(t)
	list, err := jsPods.List(ctx, apiclient.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	send := true
	var lastWatch int64
	for _, opts := range []apiclient.ListOptions{
		{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true},
		{SendInitialEvents: &send, AllowWatchBookmarks: true, ResourceVersionMatch: apiclient.ResourceVersionMatchNotOlderThan, ResourceVersion: list.ResourceVersion},
	} {
		wa, err := pbPods.Watch(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		wb, err := jsPods.Watch(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if media := watchMedia(t, s, &lastWatch, 2); len(media) != 2 || media[0] != protobuf || media[1] != "application/json" {
			t.Fatalf("the watches' media types: %v", media)
		}
		if _, err := s.Mutate("pods", "default", "p0", func(o apitest.Object) { o["metadata"].(map[string]any)["labels"] = map[string]any{"x": "y"} }); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete("pods", "default", "p2"); err != nil {
			t.Fatal(err)
		}
		for {
			ea, eb := recv(t, wa), recv(t, wb)
			if ea.Type == apiclient.Bookmark && eb.Type == apiclient.Bookmark {
				continue // periodic bookmarks need not line up
			}
			if ea.Type != eb.Type || !reflect.DeepEqual(ea.Object, eb.Object) {
				t.Fatalf("event: protobuf %s %+v, JSON %s %+v", ea.Type, ea.Object, eb.Type, eb.Object)
			}
			if ea.Type == apiclient.Deleted {
				break
			}
		}
		wa.Stop()
		wb.Stop()
		// Undo, for the next round.
		if _, err := s.Create("pods", testPod("p2")); err != nil {
			t.Fatal(err)
		}
	}
}

// Errors come back as the same *meta.Status from protobuf as from JSON.
func TestProtobufStatusErrors(t *testing.T) {
	s := apitest.NewServerWithOptions(apitest.Options{TLS: true})
	t.Cleanup(s.Close)
	pb, js, pbRec, _ := newClients(t, s, apiclient.WatchChunked)
	ctx := testCtx(t)
	if _, err := s.Create("pods", testPod("p")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*apiclient.Client{pb, js} {
		r := apiclient.NewResource[*fullPod](c, pods).Namespace("default")
		_, err := r.Get(ctx, "missing", apiclient.GetOptions{})
		if !meta.IsNotFound(err) {
			t.Fatalf("Get missing: %v", err)
		}
		p, err := r.Get(ctx, "p", apiclient.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.ResourceVersion = "1"
		_, err2 := r.Update(ctx, p, apiclient.UpdateOptions{})
		if !meta.IsConflict(err2) {
			t.Fatalf("Update stale: %v", err2)
		}
		if c == pb {
			onlyMedia(t, "errors", pbRec.media(), protobuf)
		}
	}
	var st [2]*meta.Status
	for i, c := range []*apiclient.Client{pb, js} {
		_, err := apiclient.NewResource[*fullPod](c, pods).Namespace("default").Get(ctx, "missing", apiclient.GetOptions{})
		var ok bool
		if st[i], ok = meta.AsStatus(err); !ok {
			t.Fatalf("%T", err)
		}
	}
	same(t, "404 Status", st[0], st[1])
	if st[0].Reason != meta.StatusReasonNotFound || st[0].Code != 404 || st[0].Details == nil || st[0].Details.Name != "missing" || !strings.Contains(st[0].Message, "missing") {
		t.Fatalf("404: %+v", st[0])
	}
}

// Custom resources, Unstructured and DisableProtobuf read JSON.
func TestJSONWhereProtobufIsNot(t *testing.T) {
	s := apitest.NewServerWithOptions(apitest.Options{TLS: true})
	t.Cleanup(s.Close)
	if err := s.AddResource(apitest.ResourceType{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	pb, js, pbRec, jsRec := newClients(t, s, apiclient.WatchChunked)
	ctx := testCtx(t)
	if _, err := s.Create("pods", testPod("p")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create("widgets.example.com", map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"namespace": "default", "name": "w"}}); err != nil {
		t.Fatal(err)
	}
	widgets := meta.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	if _, err := apiclient.NewResource[*testobj.ConfigMap](pb, widgets).Namespace("default").Get(ctx, "w", apiclient.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	onlyMedia(t, "custom resource", pbRec.media(), "application/json")
	u, err := apiclient.NewResource[*meta.Unstructured](pb, pods).Namespace("default").Get(ctx, "p", apiclient.GetOptions{})
	if err != nil || u.GetName() != "p" {
		t.Fatalf("Unstructured: %v %v", u, err)
	}
	onlyMedia(t, "Unstructured", pbRec.media(), "application/json")
	if _, err := apiclient.NewResource[*fullPod](js, pods).Namespace("default").Get(ctx, "p", apiclient.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	onlyMedia(t, "DisableProtobuf", jsRec.media(), "application/json")
}

// The decoder follows the Content-Type of the answer, whatever was asked: a server (or a
// proxy) that answers JSON to a protobuf request is read as JSON.
func TestFollowsTheResponseContentType(t *testing.T) {
	s := apitest.NewServerWithOptions(apitest.Options{TLS: true})
	t.Cleanup(s.Close)
	rec := &mediaRecorder{rewrite: "application/json"}
	cfg := s.Config()
	cfg.WatchProtocol = apiclient.WatchChunked
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { rec.base = rt; return rec }
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t)
	if _, err := s.Create("pods", testPod("p")); err != nil {
		t.Fatal(err)
	}
	r := apiclient.NewResource[*fullPod](c, pods).Namespace("default")
	if p, err := r.Get(ctx, "p", apiclient.GetOptions{}); err != nil || p.Spec.NodeName != "n1" {
		t.Fatalf("Get: %+v %v", p, err)
	}
	if l, err := r.List(ctx, apiclient.ListOptions{}); err != nil || len(l.Items) != 1 {
		t.Fatalf("List: %+v %v", l, err)
	}
	if _, err := r.ListEach(ctx, apiclient.ListOptions{}, func(*fullPod) error { return nil }); err != nil {
		t.Fatal(err)
	}
	w, err := r.Watch(ctx, apiclient.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if ev := recv(t, w); ev.Type != apiclient.Added || ev.Object.Name != "p" {
		t.Fatalf("watch: %s %v", ev.Type, ev.Err)
	}
	var after int64
	if media := watchMedia(t, s, &after, 1); len(media) != 1 || media[0] != "application/json" {
		t.Fatalf("the watch's media type: %v", media)
	}
	w.Stop()
	onlyMedia(t, "rewritten to JSON", rec.media(), "application/json")
}

// A server that refuses the protobuf Accept header (406) or media type (415) is asked again
// for JSON, and the resource is read as JSON from then on.
func TestProtobufRefusedFallsBackToJSON(t *testing.T) {
	for _, code := range []int{http.StatusNotAcceptable, http.StatusUnsupportedMediaType} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			s := apitest.NewServerWithOptions(apitest.Options{TLS: true})
			t.Cleanup(s.Close)
			pb, _, rec, _ := newClients(t, s, apiclient.WatchChunked)
			ctx := testCtx(t)
			if _, err := s.Create("pods", testPod("p")); err != nil {
				t.Fatal(err)
			}
			st := &meta.Status{Status: "Failure", Code: int32(code), Message: "no protobuf here"}
			if err := s.Faults().FailRequestsWithStatus(apitest.VerbWatch, "pods", 1, st); err != nil {
				t.Fatal(err)
			}
			r := apiclient.NewResource[*fullPod](pb, pods).Namespace("default")
			w, err := r.Watch(ctx, apiclient.ListOptions{ResourceVersion: "0"})
			if err != nil {
				t.Fatal(err)
			}
			if ev := recv(t, w); ev.Type != apiclient.Added || ev.Object.Name != "p" {
				t.Fatalf("watch: %s %v", ev.Type, ev.Err)
			}
			w.Stop()
			got := rec.media()
			if len(got) != 2 || got[1] != "application/json" {
				t.Fatalf("answers %v: want the refusal, then JSON", got)
			}
			if _, err := r.Get(ctx, "p", apiclient.GetOptions{}); err != nil {
				t.Fatal(err)
			}
			onlyMedia(t, "after the refusal", rec.media(), "application/json")
			// Other resources still read protobuf.
			cms := apiclient.NewResource[*testobj.ConfigMap](pb, testobj.ConfigMapGVR).Namespace("default")
			if _, err := cms.List(ctx, apiclient.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			onlyMedia(t, "other resource", rec.media(), protobuf)
		})
	}
}

// The size limit holds for protobuf frames and list items: an oversized item ends ListEach
// with ErrListItemTooLarge before the item is read whole.
func TestProtobufListItemTooLarge(t *testing.T) {
	s := apitest.NewServerWithOptions(apitest.Options{TLS: true})
	t.Cleanup(s.Close)
	cfg := s.Config()
	cfg.MaxEventSize = 64 << 10
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t)
	for i, size := range []int{10, 100 << 10} {
		if _, err := s.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": fmt.Sprint("cm", i)},
			"data": map[string]any{"k": strings.Repeat("x", size)}}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	_, err = apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default").ListEach(ctx, apiclient.ListOptions{},
		func(cm *testobj.ConfigMap) error { got = append(got, cm.Name); return nil })
	var de *apiclient.DecodeError
	if !errors.Is(err, apiclient.ErrListItemTooLarge) || !errors.As(err, &de) || !strings.Contains(de.Detail, "items[1]") {
		t.Fatalf("ListEach: %v", err)
	}
	if len(got) != 1 || got[0] != "cm0" {
		t.Fatalf("items before the error: %v", got)
	}
}

// watchMedia waits until n watches of pods newer than watch ID *after are open and returns
// their media types, oldest first, as the server negotiated them; *after moves past them.
func watchMedia(t *testing.T, s *apitest.Server, after *int64, n int) []string {
	t.Helper()
	var out []string
	err := s.WaitFor(testCtx(t), func() bool {
		out = out[:0]
		for _, w := range s.Watches("pods") {
			if w.ID > *after {
				out = append(out, w.MediaType)
				if len(out) == n {
					*after = w.ID
				}
			}
		}
		return len(out) >= n
	})
	if err != nil {
		t.Fatalf("%d watches of pods did not open", n)
	}
	return out
}
