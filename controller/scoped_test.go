package controller

import (
	"context"
	"slices"
	"strings"
	"testing"

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
	scoped := ScopedInformerFor[*testobj.ConfigMap](m, testobj.ConfigMapGVR,
		informer.Scope{Namespaces: []string{"a"}, LabelSelector: labels.MustParse("team=blue")})
	got := make(chan Request, 100)
	c, err := New("scoped", recordingReconciler(got), Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Watch(Kind[*testobj.ConfigMap](scoped, EnqueueRequestForObject[*testobj.ConfigMap]())); err != nil {
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
	if _, err := scoped.Lister().Get("a", "x"); err == nil {
		t.Fatal("an object of the removed namespace is still cached")
	}
}
