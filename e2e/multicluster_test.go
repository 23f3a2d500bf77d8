package e2e

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/multicluster"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/examples/fleetcopy"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// fleetcopy over two real kube-apiservers (the package's cluster, east, and one the test
// starts, west), from an apitest hub: a labelled hub ConfigMap is copied to both; while
// west's kube-apiserver is stopped a change of the source reaches east; when west is back
// its copy catches up.
func TestFleetcopyOverTwoKubeAPIServers(t *testing.T) {
	east := cluster.ForTest(t)
	start := time.Now()
	west, err := cluster.Start(t.Context(), cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = west.Stop()
		_ = west.Cleanup()
	})
	t.Logf("second cluster started in %v", time.Since(start).Round(time.Millisecond))
	hub, err := apitest.Start(apitest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	ns := newNamespace(t, east)
	do(t, west, http.MethodPost, "/api/v1/namespaces",
		map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}, http.StatusCreated, nil)
	if _, err := hub.Create("namespaces", map[string]any{"metadata": map[string]any{"name": ns}}); err != nil {
		t.Fatal(err)
	}

	provider := multicluster.NewManual()
	for name, c := range map[string]*cluster.Cluster{"east": east, "west": west} {
		if err := provider.Set(name, mustConfig(t, c)); err != nil {
			t.Fatal(err)
		}
	}
	mgr, err := controller.NewManager(hub.Config(), controller.ManagerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), SkipPermissionCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fleetcopy.Setup(mgr, provider, fleetcopy.Options{Namespace: ns}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	source := func(v string) {
		t.Helper()
		cm := map[string]any{"metadata": map[string]any{"namespace": ns, "name": "settings",
			"labels": map[string]any{fleetcopy.LabelCopy: "true"}}, "data": map[string]any{"v": v}}
		if _, err := hub.Get("configmaps", ns, "settings"); err == nil {
			_, err = hub.Mutate("configmaps", ns, "settings", func(o apitest.Object) { o["data"] = cm["data"] })
			if err != nil {
				t.Fatal(err)
			}
			return
		}
		if _, err := hub.Create("configmaps", cm); err != nil {
			t.Fatal(err)
		}
	}
	// copied waits until c's copy holds v, and returns how long that took.
	copied := func(name string, c *cluster.Cluster, v string) time.Duration {
		t.Helper()
		api, err := apiclient.New(mustConfig(t, c))
		if err != nil {
			t.Fatal(err)
		}
		defer api.Close()
		copies := apiclient.NewResource[*fleetcopy.ConfigMap](api, kinds.ConfigMap.GroupVersionResource()).Namespace(ns)
		begin := time.Now()
		for {
			cm, err := copies.Get(ctx, "settings", apiclient.GetOptions{})
			if err == nil && maps.Equal(cm.Data, map[string]string{"v": v}) && cm.Labels[fleetcopy.LabelManaged] == "true" {
				return time.Since(begin)
			}
			if err != nil && !meta.IsNotFound(err) {
				t.Logf("reading %s's copy: %v", name, err)
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s's copy is not %q: %v %v", name, v, cm, err)
			case <-time.After(50 * time.Millisecond): // the next read: the state is waited for
			}
		}
	}

	source("1")
	t.Logf("v1 copied to east in %v, then found in west after %v more", copied("east", east, "1").Round(time.Millisecond), copied("west", west, "1").Round(time.Millisecond))

	if err := west.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	source("2")
	t.Logf("v2 copied to east in %v with west down", copied("east", east, "2").Round(time.Millisecond))

	if err := west.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("west caught up in %v after its kube-apiserver was ready again", copied("west", west, "2").Round(time.Millisecond))
}
