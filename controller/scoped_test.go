package controller

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/labels"
)

// A controller whose cache's namespaces and selector change while it runs: what enters is
// reconciled, what leaves is reconciled once (the delete), what stays is not reconciled
// again.
func TestControllerScopeChangesWithoutARestart(t *testing.T) {
	srv := newTestServer(t)
	for _, ns := range []string{"a", "b"} {
		if _, err := srv.Create("namespaces", map[string]any{"metadata": map[string]any{"name": ns}}); err != nil {
			t.Fatal(err)
		}
	}
	cm := func(ns, name string, lbls map[string]any) {
		t.Helper()
		if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": ns, "name": name, "labels": lbls}}); err != nil {
			t.Fatal(err)
		}
	}
	cm("a", "x", map[string]any{"team": "blue"})
	cm("a", "old", map[string]any{"team": "red"})
	cm("b", "y", map[string]any{"team": "blue"})
	m := newManager(t, srv, ManagerOptions{})
	scoped := Scoped[*testobj.ConfigMap](m, informer.Scope{Namespaces: []string{"a"}, LabelSelector: labels.MustParse("team=blue")},
		EnqueueRequestForObject[*testobj.ConfigMap]())
	got := make(chan Request, 100)
	c, err := New("scoped", recordingReconciler(got), Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Watch(scoped); err != nil {
		t.Fatal(err)
	}
	if err := m.Add(c); err != nil {
		t.Fatal(err)
	}
	startManager(t, m)
	expect(t, got, Request{Namespace: "a", Name: "x"}, "the initial list")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	settled := func(why string) {
		t.Helper()
		waitFor(t, why, func() bool { return c.Queue().Len() == 0 })
		if len(got) > 0 {
			t.Fatalf("%s: a reconcile too many: %v", why, <-got)
		}
	}
	takeAll := func(n int) []Request {
		t.Helper()
		var out []Request
		for range n {
			out = append(out, next(t, got))
		}
		slices.SortFunc(out, func(a, b Request) int { return strings.Compare(a.String(), b.String()) })
		return out
	}

	// Namespace b added: only y is reconciled.
	if err := scoped.SetScope(ctx, informer.Scope{Namespaces: []string{"a", "b"}, LabelSelector: labels.MustParse("team=blue")}); err != nil {
		t.Fatal(err)
	}
	expect(t, got, Request{Namespace: "b", Name: "y"}, "the namespace added")
	settled("after adding b")

	// The selector widened: only a/old enters.
	if err := scoped.SetScope(ctx, informer.Scope{Namespaces: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	expect(t, got, Request{Namespace: "a", Name: "old"}, "the object the selector now selects")
	settled("after widening the selector")

	// Namespace a removed: x and old leave (one reconcile each, of objects now out of the
	// cache); y stays.
	if err := scoped.SetScope(ctx, informer.Scope{Namespaces: []string{"b"}}); err != nil {
		t.Fatal(err)
	}
	if reqs := takeAll(2); !slices.Equal(reqs, []Request{{Namespace: "a", Name: "old"}, {Namespace: "a", Name: "x"}}) {
		t.Fatalf("reconciles after removing a: %v", reqs)
	}
	settled("after removing a")
	if _, err := scoped.Informer().Lister().Get("a", "x"); err == nil {
		t.Fatal("an object of the removed namespace is still cached")
	}
}

// A controller that follows its CRD watches a ScopedKind: each life lists the scope last
// set, SetScope moves the running informer, and a scope set while the controller waits is
// the next life's.
func TestScopedKindFollowsItsCRD(t *testing.T) {
	srv := newTestServerWithOptions(t, apitest.Options{CRDWatchTeardownDelay: -1})
	for _, ns := range []string{"a", "b"} {
		if _, err := srv.Create("namespaces", map[string]any{"metadata": map[string]any{"name": ns}}); err != nil {
			t.Fatal(err)
		}
	}
	reg := testobj.NewRegistry()
	log := &levelLog{}
	m := newManager(t, srv, ManagerOptions{Kinds: reg, Logger: slog.New(log), HTTPAddress: "127.0.0.1:0"})
	src := Scoped[*testobj.Widget](m, informer.Scope{Namespaces: []string{"a"}},
		EnqueueRequestForObject[*testobj.Widget]())
	got := make(chan Request, 100)
	c, err := New("scoped-widgets", recordingReconciler(got), Options{FollowResources: true, Logger: slog.New(log)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Watch(src); err != nil {
		t.Fatal(err)
	}
	if err := m.Add(c); err != nil {
		t.Fatal(err)
	}
	startManager(t, m)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	waitFor(t, "the controller to wait for its CRD", func() bool { return len(c.Waiting()) == 1 })
	if src.Informer() != nil {
		t.Fatal("an informer while the CRD is missing")
	}
	createWidgets := func() {
		t.Helper()
		for _, ns := range []string{"a", "b"} {
			if _, err := srv.Create("widgets", widget(ns, "w")); err != nil {
				t.Fatal(err)
			}
		}
	}

	// First life, scope {a}: only a/w; then b added while it runs: b/w, and a/w not again.
	if _, err := srv.Create(crdsName, widgetCRD(false, false)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the controller to start", c.Running)
	createWidgets()
	expect(t, got, Request{Namespace: "a", Name: "w"}, "the widget in scope")
	if r := scrape(t, m.Registry()); !strings.Contains(r, "widgets.v1.example.com (scoped)") {
		t.Fatalf("the metrics do not cover the running life's informer:\n%s", r)
	}
	if err := src.SetScope(ctx, informer.Scope{Namespaces: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	expect(t, got, Request{Namespace: "b", Name: "w"}, "the namespace added")
	waitFor(t, "the queue to drain", func() bool { return c.Queue().Len() == 0 })
	if len(got) > 0 {
		t.Fatalf("a reconcile too many: %v", <-got)
	}

	// The CRD goes: the life ends, its informer with it; the scope set while it waits is the
	// next life's.
	if err := srv.Delete(crdsName, "", "widgets.example.com"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the controller to stop", func() bool { return !c.Running() && len(c.Waiting()) == 1 })
	if src.Informer() != nil {
		t.Fatal("the stopped life's informer is still the source's")
	}
	// The metrics are computed at each scrape (the Stats are reused for 100 ms).
	waitFor(t, "the stopped life's informer to leave the metrics", func() bool {
		return !strings.Contains(scrape(t, m.Registry()), "widgets.v1.example.com (scoped)")
	})
	if err := src.SetScope(ctx, informer.Scope{Namespaces: []string{"b"}}); err != nil {
		t.Fatal(err)
	}
	for len(got) > 0 {
		<-got // the deletions' reconciles
	}

	// Second life, scope {b}: only b/w.
	if _, err := srv.Create(crdsName, widgetCRD(false, false)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the controller to start again", c.Running)
	createWidgets()
	expect(t, got, Request{Namespace: "b", Name: "w"}, "the widget of the new scope")
	waitFor(t, "the queue to drain", func() bool { return c.Queue().Len() == 0 })
	if len(got) > 0 {
		t.Fatalf("a reconcile of a namespace out of scope: %v", <-got)
	}
	if inf := src.Informer(); inf == nil || !slices.Equal(inf.Scope().Namespaces, []string{"b"}) {
		t.Fatalf("the running informer's scope: %+v", inf)
	}
	if bad := log.above(slog.LevelWarn); len(bad) > 0 {
		t.Fatalf("warnings or errors logged:\n%s", strings.Join(bad, "\n"))
	}
}
