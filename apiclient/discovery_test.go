package apiclient

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/informerkit/informerkit/meta"
)

func discoveryHandler(withCRD *atomic.Bool, calls *atomic.Int32) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		switch r.URL.Path {
		case "/api":
			writeJSON(w, 200, map[string]any{"kind": "APIVersions", "versions": []string{"v1"}})
		case "/api/v1":
			writeJSON(w, 200, map[string]any{"groupVersion": "v1", "resources": []any{
				map[string]any{"name": "configmaps", "singularName": "configmap", "namespaced": true, "kind": "ConfigMap", "shortNames": []string{"cm"}},
				map[string]any{"name": "events", "singularName": "event", "namespaced": true, "kind": "Event", "shortNames": []string{"ev"}},
				map[string]any{"name": "namespaces", "singularName": "namespace", "namespaced": false, "kind": "Namespace", "shortNames": []string{"ns"}},
				map[string]any{"name": "pods/status", "namespaced": true, "kind": "Pod"},
			}})
		case "/apis":
			groups := []any{
				map[string]any{"name": "apps", "versions": []any{map[string]any{"groupVersion": "apps/v1", "version": "v1"}}, "preferredVersion": map[string]any{"groupVersion": "apps/v1", "version": "v1"}},
				map[string]any{"name": "events.k8s.io", "versions": []any{map[string]any{"groupVersion": "events.k8s.io/v1", "version": "v1"}}, "preferredVersion": map[string]any{"version": "v1"}},
				map[string]any{"name": "broken.example.com", "versions": []any{map[string]any{"version": "v1"}}, "preferredVersion": map[string]any{"version": "v1"}},
			}
			if withCRD.Load() {
				groups = append(groups, map[string]any{"name": "stable.example.com", "versions": []any{
					map[string]any{"version": "v1"}, map[string]any{"version": "v1beta1"}}, "preferredVersion": map[string]any{"version": "v1"}})
			}
			writeJSON(w, 200, map[string]any{"kind": "APIGroupList", "groups": groups})
		case "/apis/apps/v1":
			writeJSON(w, 200, map[string]any{"groupVersion": "apps/v1", "resources": []any{
				map[string]any{"name": "deployments", "singularName": "deployment", "namespaced": true, "kind": "Deployment", "shortNames": []string{"deploy"}},
			}})
		case "/apis/events.k8s.io/v1":
			writeJSON(w, 200, map[string]any{"groupVersion": "events.k8s.io/v1", "resources": []any{
				map[string]any{"name": "events", "singularName": "event", "namespaced": true, "kind": "Event", "shortNames": []string{"ev"}},
			}})
		case "/apis/stable.example.com/v1", "/apis/stable.example.com/v1beta1":
			writeJSON(w, 200, map[string]any{"resources": []any{
				map[string]any{"name": "crontabs", "singularName": "crontab", "namespaced": false, "kind": "CronTab", "shortNames": []string{"ct"}},
			}})
		default:
			http.Error(w, "unavailable", 503)
		}
	}
}

func TestDiscoveryResolve(t *testing.T) {
	var withCRD atomic.Bool
	var calls atomic.Int32
	c, err := New(&Config{Host: "http://api", QPS: -1, MaxRetries: -1, WrapTransport: handlerTransport(discoveryHandler(&withCRD, &calls))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cases := []struct {
		name string
		want meta.GroupVersionResource
		ns   bool
	}{
		{"configmaps", meta.GroupVersionResource{Group: "", Version: "v1", Resource: "configmaps"}, true},
		{"cm", meta.GroupVersionResource{Group: "", Version: "v1", Resource: "configmaps"}, true},
		{"ConfigMap", meta.GroupVersionResource{Group: "", Version: "v1", Resource: "configmaps"}, true},
		{"deploy", meta.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, true},
		{"deployments.apps", meta.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, true},
		{"deployment.v1.apps", meta.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, true},
		{"events", meta.GroupVersionResource{Group: "", Version: "v1", Resource: "events"}, true},
		{"events.events.k8s.io", meta.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}, true},
		{"ns", meta.GroupVersionResource{Group: "", Version: "v1", Resource: "namespaces"}, false},
	}
	for _, c2 := range cases {
		r, err := c.ResolveResource(ctx, c2.name)
		if err != nil || r.GroupVersionResource != c2.want || r.Namespaced != c2.ns {
			t.Errorf("%s: %+v, %v", c2.name, r, err)
		}
	}
	before := calls.Load()
	if _, err := c.ResolveResource(ctx, "cm"); err != nil || calls.Load() != before {
		t.Errorf("cached resolution made %d requests", calls.Load()-before)
	}
	// A CRD created after the cache was filled: the miss refreshes the cache.
	withCRD.Store(true)
	r, err := c.ResolveResource(ctx, "crontabs.stable.example.com")
	if err != nil || r.Kind != "CronTab" || r.Namespaced || r.Version != "v1" || !r.Preferred {
		t.Fatalf("CRD: %+v, %v", r, err)
	}
	if r, err := c.ResolveResource(ctx, "ct.v1beta1.stable.example.com"); err != nil || r.Version != "v1beta1" || r.Preferred {
		t.Fatalf("CRD v1beta1: %+v, %v", r, err)
	}
	if r, err := c.ResolveKind(ctx, meta.GroupVersionKind{Kind: "Event"}); err != nil || r.Group != "" {
		t.Fatalf("kind Event: %+v %v", r, err)
	}
	if r, err := c.ResolveKind(ctx, meta.GroupVersionKind{Group: "events.k8s.io", Kind: "Event"}); err != nil || r.Group != "events.k8s.io" {
		t.Fatalf("kind events.k8s.io Event: %+v %v", r, err)
	}
	_, err = c.ResolveResource(ctx, "nothings")
	if !errors.Is(err, ErrUnknownResource) {
		t.Fatalf("unknown: %v", err)
	}
	res, _, err := ResourceFor[*meta.Unstructured](ctx, c, "deploy")
	if err != nil || res.GroupVersionResource().Resource != "deployments" || res.kind != "Deployment" {
		t.Fatalf("ResourceFor: %v", err)
	}
}
