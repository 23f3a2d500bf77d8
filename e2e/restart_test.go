package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/informerkit/informerkit/e2e/cluster"
)

// TestRestartAPIServer checks Cluster.RestartAPIServer: same URL, same data, writes work
// again, and the new watch cache starts after the restart. It disturbs every other test, so
// it must not run in parallel with them.
func TestRestartAPIServer(t *testing.T) {
	c := cluster.ForTest(t)
	ns := newNamespace(t, c)
	path := nsPath(ns, "configmaps")
	var before object
	do(t, c, http.MethodPost, path, configMap("survivor", map[string]string{"k": "v"}), http.StatusCreated, &before)

	url := c.URL
	if err := c.RestartAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	if c.URL != url {
		t.Errorf("URL changed across the restart: %s -> %s", url, c.URL)
	}
	var after object
	do(t, c, http.MethodGet, path+"/survivor", nil, http.StatusOK, &after)
	if after.Metadata.ResourceVersion != before.Metadata.ResourceVersion || after.Data["k"] != "v" {
		t.Errorf("after restart got %+v, want the object written before (rv %s)", after, before.Metadata.ResourceVersion)
	}
	do(t, c, http.MethodPost, path, configMap("after-restart", nil), http.StatusCreated, nil)

	// The new process has a new watch cache that starts after the restart: a watch from an
	// older resourceVersion is too old even for a resource served from the watch cache.
	w, status := openWatch(t, c, path+"?watch=1&timeoutSeconds=10&resourceVersion="+before.Metadata.ResourceVersion)
	if status == nil {
		e := w.next(t, 20*time.Second)
		if e.Type != "ERROR" {
			t.Fatalf("watch from pre-restart rv %s: got %s %+v, want ERROR 410", before.Metadata.ResourceVersion, e.Type, e.Object)
		}
		status = &e.Object
	}
	if status.Code != http.StatusGone || status.Reason != "Expired" {
		t.Errorf("watch from pre-restart rv %s: got %+v, want 410 Expired", before.Metadata.ResourceVersion, status)
	}
}
