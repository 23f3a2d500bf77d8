package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// recorder is an httptest handler that records requests and answers with canned responses.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
	h    http.HandlerFunc
}

type recorded struct {
	Method, Path, Query, Body, ContentType, Authorization, UserAgent string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.reqs = append(r.reqs, recorded{req.Method, req.URL.EscapedPath(), req.URL.RawQuery, string(body),
		req.Header.Get("Content-Type"), req.Header.Get("Authorization"), req.Header.Get("User-Agent")})
	r.mu.Unlock()
	r.h(w, req)
}

func (r *recorder) last() recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reqs[len(r.reqs)-1]
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

func newTestServer(t *testing.T, h http.HandlerFunc) (*recorder, *Client) {
	t.Helper()
	rec := &recorder{h: h}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	c, err := New(&Config{Host: srv.URL, BearerToken: "s3cret-token", AllowCredentialsOverHTTP: true, WatchProtocol: WatchChunked, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return rec, c
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func TestVerbsRequests(t *testing.T) {
	pod := map[string]any{"kind": "Pod", "apiVersion": "v1", "metadata": map[string]any{"name": "p", "namespace": "ns", "resourceVersion": "7"}}
	rec, c := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/pods") {
			writeJSON(w, 200, map[string]any{"kind": "PodList", "metadata": map[string]any{"resourceVersion": "9", "continue": "tok"}, "items": []any{pod}})
			return
		}
		writeJSON(w, 200, pod)
	})
	ctx := context.Background()
	pods := NewResource[*testobj.Pod](c, testobj.PodGVR).Namespace("ns")

	got, err := pods.Get(ctx, "p", GetOptions{ResourceVersion: "0"})
	if err != nil || got.Name != "p" || got.ResourceVersion != "7" {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if r := rec.last(); r.Path != "/api/v1/namespaces/ns/pods/p" || r.Query != "resourceVersion=0" ||
		r.Authorization != "Bearer s3cret-token" || r.UserAgent != DefaultUserAgent() {
		t.Errorf("Get request = %+v", r)
	}

	list, err := pods.List(ctx, ListOptions{Limit: 2, LabelSelector: "a=b"})
	if err != nil || len(list.Items) != 1 || list.Continue != "tok" || list.ResourceVersion != "9" {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if r := rec.last(); r.Query != "labelSelector=a%3Db&limit=2" {
		t.Errorf("List query = %q", r.Query)
	}

	in := &testobj.Pod{ObjectMeta: meta.ObjectMeta{Name: "p", Namespace: "other"}}
	if _, err := NewResource[*testobj.Pod](c, testobj.PodGVR).Create(ctx, in, CreateOptions{FieldManager: "me", DryRun: []string{"All"}}); err != nil {
		t.Fatal(err)
	}
	if r := rec.last(); r.Method != "POST" || r.Path != "/api/v1/namespaces/other/pods" || r.Query != "dryRun=All&fieldManager=me" ||
		!strings.Contains(r.Body, `"name":"p"`) || r.ContentType != "application/json" {
		t.Errorf("Create request = %+v", r)
	}

	if _, err := pods.Update(ctx, in, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if r := rec.last(); r.Method != "PUT" || r.Path != "/api/v1/namespaces/ns/pods/p" {
		t.Errorf("Update request = %+v", r)
	}
	if _, err := pods.UpdateStatus(ctx, in, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if r := rec.last(); r.Method != "PUT" || r.Path != "/api/v1/namespaces/ns/pods/p/status" {
		t.Errorf("UpdateStatus request = %+v", r)
	}

	if _, err := pods.Patch(ctx, "p", MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`), PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if r := rec.last(); r.Method != "PATCH" || r.ContentType != string(MergePatchType) {
		t.Errorf("Patch request = %+v", r)
	}
	if _, err := pods.Apply(ctx, "p", map[string]any{"apiVersion": "v1", "kind": "Pod"}, ApplyOptions{FieldManager: "ctl", Force: true}); err != nil {
		t.Fatal(err)
	}
	if r := rec.last(); r.ContentType != string(ApplyPatchType) || r.Query != "fieldManager=ctl&force=true" {
		t.Errorf("Apply request = %+v", r)
	}
	if _, err := pods.Apply(ctx, "p", nil, ApplyOptions{}); err == nil {
		t.Error("Apply without a field manager succeeded")
	}

	uid, rv, grace, bg := "u1", "7", int64(0), DeletePropagationBackground
	if err := pods.Delete(ctx, "p", DeleteOptions{Preconditions: &Preconditions{UID: &uid, ResourceVersion: &rv}, GracePeriodSeconds: &grace, PropagationPolicy: &bg}); err != nil {
		t.Fatal(err)
	}
	r := rec.last()
	var body map[string]any
	json.Unmarshal([]byte(r.Body), &body)
	if r.Method != "DELETE" || body["kind"] != "DeleteOptions" || body["gracePeriodSeconds"] != 0.0 || body["propagationPolicy"] != "Background" ||
		body["preconditions"].(map[string]any)["uid"] != "u1" {
		t.Errorf("Delete request = %+v", r)
	}
}

func TestErrorsDecodeIntoStatus(t *testing.T) {
	_, c := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/namespaces/ns/pods/missing":
			writeJSON(w, 404, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404, "message": `pods "missing" not found`})
		case "/api/v1/namespaces/ns/pods/conflict":
			writeJSON(w, 409, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Conflict", "code": 409})
		default:
			http.Error(w, "<html>bad gateway</html>", http.StatusForbidden)
		}
	})
	pods := NewResource[*testobj.Pod](c, testobj.PodGVR).Namespace("ns")
	ctx := context.Background()
	_, err := pods.Get(ctx, "missing", GetOptions{})
	if !meta.IsNotFound(err) || !strings.Contains(err.Error(), "not found") {
		t.Errorf("Get missing: %v", err)
	}
	_, err = pods.Update(ctx, &testobj.Pod{ObjectMeta: meta.ObjectMeta{Name: "conflict"}}, UpdateOptions{})
	if !meta.IsConflict(err) {
		t.Errorf("Update conflict: %v", err)
	}
	_, err = pods.Get(ctx, "other", GetOptions{})
	st, ok := meta.AsStatus(err)
	if !ok || !meta.IsForbidden(err) || st.Code != 403 || st.Kind != "Status" {
		t.Errorf("non-JSON error: %#v", err)
	}
}

func TestAllPages(t *testing.T) {
	rec, c := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		page := r.URL.Query().Get("continue")
		item := func(n string) any { return map[string]any{"metadata": map[string]any{"name": n}} }
		switch page {
		case "":
			writeJSON(w, 200, map[string]any{"metadata": map[string]any{"continue": "p2"}, "items": []any{item("a"), item("b")}})
		case "p2":
			writeJSON(w, 200, map[string]any{"metadata": map[string]any{"continue": "p3"}, "items": []any{item("c")}})
		default:
			writeJSON(w, 410, map[string]any{"kind": "Status", "reason": "Expired", "code": 410, "message": "continue expired"})
		}
	})
	var names []string
	var gotErr error
	for p, err := range NewResource[*testobj.Pod](c, testobj.PodGVR).All(context.Background(), ListOptions{ResourceVersion: "0"}) {
		if err != nil {
			gotErr = err
			break
		}
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "a,b,c" || !meta.IsResourceExpired(gotErr) {
		t.Fatalf("names %v err %v", names, gotErr)
	}
	if rec.count() != 3 || !strings.Contains(rec.reqs[0].Query, "limit=500") || strings.Contains(rec.reqs[1].Query, "resourceVersion") {
		t.Fatalf("requests %+v", rec.reqs)
	}
	// Breaking out of the loop stops paging.
	for range NewResource[*testobj.Pod](c, testobj.PodGVR).All(context.Background(), ListOptions{}) {
		break
	}
	if rec.count() != 4 {
		t.Fatalf("break did not stop paging: %d requests", rec.count())
	}
}

// watchServer streams the given lines, then blocks until the request ends or release is
// closed.
func watchServer(t *testing.T, lines []string, release <-chan struct{}) (*recorder, *Client) {
	return newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") != "true" {
			http.Error(w, "not a watch", 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		for _, l := range lines {
			io.WriteString(w, l+"\n")
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
}

func TestWatchChunked(t *testing.T) {
	release := make(chan struct{})
	lines := strings.Split(strings.TrimSpace(goodStream), "\n")
	rec, c := watchServer(t, lines, release)
	send := true
	timeout := int64(300)
	w, err := NewResource[*testobj.Pod](c, testobj.PodGVR).Namespace("ns").WithKind("Pod").Watch(context.Background(), ListOptions{
		ResourceVersion: "5", AllowWatchBookmarks: true, SendInitialEvents: &send,
		ResourceVersionMatch: ResourceVersionMatchNotOlderThan, TimeoutSeconds: &timeout, LabelSelector: "app=x", FieldSelector: "spec.nodeName=n"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var types []EventType
	for i := 0; i < 4; i++ {
		ev := <-w.ResultChan()
		types = append(types, ev.Type)
	}
	if got := rec.last().Query; got != "allowWatchBookmarks=true&fieldSelector=spec.nodeName%3Dn&labelSelector=app%3Dx&resourceVersion=5&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeoutSeconds=300&watch=true" {
		t.Errorf("query = %s", got)
	}
	if want := []EventType{Added, Modified, Bookmark, Deleted}; !equalTypes(types, want) {
		t.Fatalf("types = %v", types)
	}
	close(release) // the server ends the stream: a clean close, no Error event
	if ev, ok := <-w.ResultChan(); ok {
		t.Fatalf("got %+v after a clean close", ev)
	}
	if err := w.(interface{ Err() error }).Err(); err != nil {
		t.Fatalf("Err() after a clean close = %v", err)
	}
}

func equalTypes(a, b []EventType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestWatchStopAndCancel(t *testing.T) {
	lines := []string{`{"type":"ADDED","object":{"metadata":{"name":"a"}}}`, `{"type":"ADDED","object":{"metadata":{"name":"b"}}}`}
	_, c := watchServer(t, lines, nil)
	pods := NewResource[*testobj.Pod](c, testobj.PodGVR)

	// Stop while the goroutine is blocked sending an undelivered event.
	w, err := pods.Watch(context.Background(), ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	w.Stop()
	for range w.ResultChan() {
	}

	// Cancel the context while the stream is idle.
	ctx, cancel := context.WithCancel(context.Background())
	w, err = pods.Watch(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	<-w.ResultChan()
	<-w.ResultChan()
	cancel()
	select {
	case _, ok := <-w.ResultChan():
		if ok {
			t.Fatal("event after cancel")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("watch did not end after cancel")
	}
	if err := w.(interface{ Err() error }).Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Err() = %v", err)
	}
}

func TestWatchErrorEventAndBadStream(t *testing.T) {
	lines := []string{
		`{"type":"ADDED","object":{"metadata":{"name":"a"}}}`,
		`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410,"message":"too old"}}`,
	}
	_, c := watchServer(t, lines, nil)
	w, err := NewResource[*testobj.Pod](c, testobj.PodGVR).Watch(context.Background(), ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if ev := <-w.ResultChan(); ev.Type != Added {
		t.Fatalf("first = %+v", ev)
	}
	ev := <-w.ResultChan()
	if ev.Type != Error || !meta.IsResourceExpired(ev.Err) {
		t.Fatalf("second = %+v", ev)
	}
	if _, ok := <-w.ResultChan(); ok {
		t.Fatal("channel open after an Error event")
	}

	_, c2 := watchServer(t, []string{`{"type":"ADDED","object":{"metadata":{"name":"a"}}}`, `{"type":"WAT","object":{}}`}, nil)
	w2, err := NewResource[*testobj.Pod](c2, testobj.PodGVR).Watch(context.Background(), ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	<-w2.ResultChan()
	if ev := <-w2.ResultChan(); ev.Type != Error || !errors.Is(ev.Err, ErrUnknownEventType) {
		t.Fatalf("bad event = %+v", ev)
	}
	if _, ok := <-w2.ResultChan(); ok {
		t.Fatal("channel open after a decode error")
	}
}

func TestWatchRefusedBeforeStream(t *testing.T) {
	_, c := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3")
		writeJSON(w, 429, map[string]any{"kind": "Status", "reason": "TooManyRequests", "code": 429})
	})
	_, err := NewResource[*testobj.Pod](c, testobj.PodGVR).Watch(context.Background(), ListOptions{})
	if !meta.IsTooManyRequests(err) {
		t.Fatalf("err = %v", err)
	}
	if d, ok := meta.RetryAfter(err); !ok || d != 3*time.Second {
		t.Fatalf("RetryAfter = %v %v", d, ok)
	}
}
