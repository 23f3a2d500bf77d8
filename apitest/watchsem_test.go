package apitest_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/meta"
)

func ptr[T any](v T) *T { return &v }

func TestWatchTooOldResourceVersion(t *testing.T) {
	e := newEnvWithOptions(t, apitest.Options{HistorySize: 3})
	first, _ := e.s.Create("configmaps", cm("a", nil, nil))
	for i := range 5 {
		e.s.Create("configmaps", cm("b"+strconv.Itoa(i), nil, nil))
	}
	w, err := e.cms.Watch(e.ctx, apiclient.ListOptions{ResourceVersion: first.ResourceVersion()})
	if err != nil {
		t.Fatalf("a too old RV must still open the stream (200 then ERROR): %v", err)
	}
	defer w.Stop()
	ev := next(t, w)
	if ev.Type != apiclient.Error || !meta.IsResourceExpired(ev.Err) {
		t.Fatalf("expected ERROR 410 Expired, got %s %v", ev.Type, ev.Err)
	}
	st, _ := meta.AsStatus(ev.Err)
	if st.Code != 410 || st.Reason != meta.StatusReasonExpired {
		t.Fatalf("status %+v", st)
	}
	closed(t, w)

	// After Compact, the current RV still works, older ones do not.
	cur := e.s.ResourceVersion()
	e.s.Compact("configmaps")
	w2, err := e.cms.Watch(e.ctx, apiclient.ListOptions{ResourceVersion: cur})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	e.s.Create("configmaps", cm("after", nil, nil))
	if ev := next(t, w2); ev.Type != apiclient.Added || ev.Object.Name != "after" {
		t.Fatalf("watch at the compaction RV: %s %v", ev.Type, ev.Err)
	}
	prev, _ := strconv.Atoi(cur)
	w3, err := e.cms.Watch(e.ctx, apiclient.ListOptions{ResourceVersion: strconv.Itoa(prev - 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer w3.Stop()
	if ev := next(t, w3); ev.Type != apiclient.Error || !meta.IsResourceExpired(ev.Err) {
		t.Fatalf("watch before the compaction: %s %v", ev.Type, ev.Err)
	}
}

func TestWatchTooLargeResourceVersion(t *testing.T) {
	e := newEnvWithOptions(t, apitest.Options{TooLargeResourceVersionWait: -1})
	w, err := e.cms.Watch(e.ctx, apiclient.ListOptions{ResourceVersion: "100000"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := next(t, w)
	if ev.Type != apiclient.Error || !meta.IsTooLargeResourceVersion(ev.Err) {
		t.Fatalf("expected ERROR too large RV, got %s %v", ev.Type, ev.Err)
	}
}

func TestWatchBookmarks(t *testing.T) {
	e := newEnvWithOptions(t, apitest.Options{BookmarkInterval: 20 * time.Millisecond})
	e.s.Create("namespaces", map[string]any{"metadata": map[string]any{"name": "other"}})
	// A watch of namespace default; a change in namespace other moves the resource's RV
	// past what the watch delivered, and the next bookmark carries it.
	w, _ := openWatch(t, e, apiclient.ListOptions{AllowWatchBookmarks: true})
	o, _ := e.s.Create("configmaps", map[string]any{"metadata": map[string]any{"name": "x", "namespace": "other"}})
	ev := next(t, w)
	if ev.Type != apiclient.Bookmark || ev.Object.ResourceVersion != o.ResourceVersion() || ev.Object.Kind != "ConfigMap" {
		t.Fatalf("expected a BOOKMARK at %s, got %s %q", o.ResourceVersion(), ev.Type, ev.Object.ResourceVersion)
	}
	if ev.Object.Annotations[apiclient.InitialEventsEndAnnotation] != "" {
		t.Fatal("periodic bookmark carries the initial-events-end annotation")
	}
	// Nothing new: no more bookmarks (the next event, several intervals later, is the live
	// one). Changes to other resources do not count without ProgressNotify.
	e.s.Create("secrets", map[string]any{"metadata": map[string]any{"name": "s", "namespace": "default"}})
	ticks := e.s.Watches("configmaps")[0].BookmarkTicks
	if err := e.s.WaitFor(e.ctx, func() bool {
		ws := e.s.Watches("configmaps")
		return len(ws) == 1 && ws[0].BookmarkTicks >= ticks+3
	}); err != nil {
		t.Fatal(err)
	}
	if ws := e.s.Watches("configmaps"); ws[0].BookmarksSent != 1 {
		t.Fatalf("bookmarks sent %d, want 1", ws[0].BookmarksSent)
	}
	c, _ := e.s.Create("configmaps", cm("live", nil, nil))
	if ev := next(t, w); ev.Type != apiclient.Added || ev.Object.ResourceVersion != c.ResourceVersion() {
		t.Fatalf("expected the live event and no bookmark before it, got %s %s", ev.Type, ev.Object.ResourceVersion)
	}
}

func TestWatchBookmarksProgressNotify(t *testing.T) {
	e := newEnvWithOptions(t, apitest.Options{BookmarkInterval: 20 * time.Millisecond, ProgressNotify: true})
	w, _ := openWatch(t, e, apiclient.ListOptions{AllowWatchBookmarks: true})
	sec, _ := e.s.Create("secrets", map[string]any{"metadata": map[string]any{"name": "s", "namespace": "default"}})
	ev := next(t, w)
	if ev.Type != apiclient.Bookmark || ev.Object.ResourceVersion != sec.ResourceVersion() {
		t.Fatalf("expected a BOOKMARK at the global RV %s, got %s %q", sec.ResourceVersion(), ev.Type, ev.Object.ResourceVersion)
	}
	// Without allowWatchBookmarks, none come.
	w2, _ := openWatch(t, e, apiclient.ListOptions{})
	e.s.Create("secrets", map[string]any{"metadata": map[string]any{"name": "s2", "namespace": "default"}})
	if ev := next(t, w); ev.Type != apiclient.Bookmark {
		t.Fatalf("got %s", ev.Type)
	}
	e.s.Create("configmaps", cm("b", nil, nil))
	if ev := next(t, w2); ev.Type != apiclient.Added {
		t.Fatalf("watch without bookmarks got %s first", ev.Type)
	}
}

func TestSendInitialEvents(t *testing.T) {
	e := newEnv(t)
	e.s.Create("configmaps", cm("a", nil, nil))
	e.s.Create("configmaps", cm("b", nil, nil))
	listRV := e.s.ResourceVersion()
	w, err := e.cms.Watch(e.ctx, apiclient.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: apiclient.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for _, n := range []string{"a", "b"} {
		if ev := next(t, w); ev.Type != apiclient.Added || ev.Object.Name != n {
			t.Fatalf("initial event %s %s", ev.Type, ev.Object.Name)
		}
	}
	ev := next(t, w)
	if ev.Type != apiclient.Bookmark || ev.Object.Annotations[apiclient.InitialEventsEndAnnotation] != "true" || ev.Object.ResourceVersion != listRV {
		t.Fatalf("expected the initial-events-end bookmark at %s, got %s %+v", listRV, ev.Type, ev.Object.ObjectMeta)
	}
	e.s.Create("configmaps", cm("c", nil, nil))
	if ev := next(t, w); ev.Type != apiclient.Added || ev.Object.Name != "c" {
		t.Fatalf("live event %s %s", ev.Type, ev.Object.Name)
	}
	// Without resourceVersionMatch=NotOlderThan the request is invalid.
	_, err = e.cms.Watch(e.ctx, apiclient.ListOptions{SendInitialEvents: ptr(true), AllowWatchBookmarks: true})
	mustStatus(t, err, 422, meta.StatusReasonInvalid)
}

func TestSendInitialEventsRefusedOrIgnored(t *testing.T) {
	opts := apiclient.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: apiclient.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true}
	t.Run("refused", func(t *testing.T) {
		e := newEnvWithOptions(t, apitest.Options{InitialEvents: apitest.InitialEventsRefused})
		_, err := e.cms.Watch(e.ctx, opts)
		st := mustStatus(t, err, 422, meta.StatusReasonInvalid)
		if st.Details == nil || len(st.Details.Causes) == 0 || st.Details.Causes[0].Field != "sendInitialEvents" {
			t.Fatalf("details %+v", st.Details)
		}
	})
	t.Run("ignored", func(t *testing.T) {
		e := newEnvWithOptions(t, apitest.Options{InitialEvents: apitest.InitialEventsIgnored, BookmarkInterval: time.Hour})
		e.s.Create("configmaps", cm("a", nil, nil))
		w, err := e.cms.Watch(e.ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		// Served as a legacy watch from "": the state as ADDED, and no end bookmark.
		if ev := next(t, w); ev.Type != apiclient.Added {
			t.Fatalf("got %s", ev.Type)
		}
		e.s.Create("configmaps", cm("b", nil, nil))
		if ev := next(t, w); ev.Type != apiclient.Added || ev.Object.Name != "b" {
			t.Fatalf("expected the live ADDED b and no bookmark, got %s %s", ev.Type, ev.Object.Name)
		}
	})
}

func TestWatchSelectorTransitions(t *testing.T) {
	e := newEnv(t)
	e.s.Create("configmaps", cm("a", map[string]string{"app": "web"}, nil))
	rv := e.s.ResourceVersion()
	w, err := e.cms.Watch(e.ctx, apiclient.ListOptions{ResourceVersion: rv, LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	e.s.Create("configmaps", cm("other", map[string]string{"app": "db"}, nil))
	stop, _ := e.s.Mutate("configmaps", "default", "a", func(o apitest.Object) {
		o["metadata"].(map[string]any)["labels"] = map[string]any{"app": "db"}
	})
	ev := next(t, w)
	if ev.Type != apiclient.Deleted || ev.Object.Name != "a" || ev.Object.Labels["app"] != "web" || ev.Object.ResourceVersion != stop.ResourceVersion() {
		t.Fatalf("stop matching: %s %+v (want DELETED with the old labels and the new RV %s)", ev.Type, ev.Object.ObjectMeta, stop.ResourceVersion())
	}
	e.s.Mutate("configmaps", "default", "other", func(o apitest.Object) {
		o["metadata"].(map[string]any)["labels"] = map[string]any{"app": "web"}
	})
	ev = next(t, w)
	if ev.Type != apiclient.Added || ev.Object.Name != "other" {
		t.Fatalf("start matching: %s %s", ev.Type, ev.Object.Name)
	}
	e.s.Mutate("configmaps", "default", "other", func(o apitest.Object) { o["data"] = map[string]any{"k": "v"} })
	if ev = next(t, w); ev.Type != apiclient.Modified {
		t.Fatalf("still matching: %s", ev.Type)
	}
	// Field selector and namespace filter.
	fw, err := e.cms.Watch(e.ctx, apiclient.ListOptions{ResourceVersion: e.s.ResourceVersion(), FieldSelector: "metadata.name=z"})
	if err != nil {
		t.Fatal(err)
	}
	defer fw.Stop()
	e.s.Create("namespaces", map[string]any{"metadata": map[string]any{"name": "other"}})
	e.s.Create("configmaps", map[string]any{"metadata": map[string]any{"name": "z", "namespace": "other"}})
	e.s.Create("configmaps", cm("y", nil, nil))
	e.s.Create("configmaps", cm("z", nil, nil))
	if ev := next(t, fw); ev.Type != apiclient.Added || ev.Object.Name != "z" || ev.Object.Namespace != "default" {
		t.Fatalf("field selector watch in default: %s %s/%s", ev.Type, ev.Object.Namespace, ev.Object.Name)
	}
}

func TestWatchTimeoutSeconds(t *testing.T) {
	e := newEnv(t)
	w, err := e.cms.Watch(e.ctx, apiclient.ListOptions{ResourceVersion: e.s.ResourceVersion(), TimeoutSeconds: ptr(int64(1))})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	closed(t, w) // a clean end, no ERROR
	if n := len(e.s.Watches("configmaps")); n != 0 {
		t.Fatalf("%d watches still open", n)
	}
}

func TestWatchAllNamespacesAndCustomResource(t *testing.T) {
	e := newEnv(t)
	err := e.s.AddResource(apitest.ResourceType{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", ShortNames: []string{"wd"}, Namespaced: true, StatusSubresource: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.s.AddResource(apitest.ResourceType{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets"}); err == nil {
		t.Fatal("duplicate registration accepted")
	}
	type Widget = Deployment
	gvr := meta.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	all := apiclient.NewResource[*Widget](e.c, gvr)
	w, err := all.Watch(e.ctx, apiclient.ListOptions{ResourceVersion: e.s.ResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	e.s.Create("namespaces", map[string]any{"metadata": map[string]any{"name": "ns2"}})
	wd, err := all.Namespace("ns2").Create(e.ctx, &Widget{TypeMeta: meta.TypeMeta{APIVersion: "example.com/v1", Kind: "Widget"}, ObjectMeta: meta.ObjectMeta{Name: "w1"}, Spec: map[string]any{"size": 1}}, apiclient.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if wd.Generation != 1 {
		t.Fatalf("custom resources carry generation: %d", wd.Generation)
	}
	if ev := next(t, w); ev.Type != apiclient.Added || ev.Object.Namespace != "ns2" || ev.Object.Kind != "Widget" {
		t.Fatalf("event %s %+v", ev.Type, ev.Object)
	}
	if _, err := e.s.Get("wd", "ns2", "w1"); err != nil {
		t.Fatalf("short name lookup: %v", err)
	}
}
