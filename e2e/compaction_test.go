package e2e

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/informerkit/informerkit/e2e/cluster"
)

// TestCompactionGivesGone proves that Cluster.Compact compacts etcd: a watch of the
// uncached resource (served straight from etcd) from a resourceVersion that was still
// watchable before the compaction gets 410 Expired afterwards.
func TestCompactionGivesGone(t *testing.T) {
	c := cluster.ForTest(t)
	ns := newNamespace(t, c)
	path := nsPath(ns, cluster.UncachedResource)

	var created, updated object
	do(t, c, http.MethodPost, path, podTemplate("pt", map[string]string{"v": "1"}), http.StatusCreated, &created)
	do(t, c, http.MethodPatch, path+"/pt",
		map[string]any{"metadata": map[string]any{"labels": map[string]string{"updated": "yes"}}},
		http.StatusOK, &updated)
	oldRV := created.Metadata.ResourceVersion
	watchFromOld := path + "?watch=1&timeoutSeconds=30&resourceVersion=" + oldRV

	// Before compaction the watch from oldRV replays the update.
	w, status := openWatch(t, c, watchFromOld)
	if status != nil {
		t.Fatalf("watch from %s before compaction: %+v", oldRV, status)
	}
	if e := w.next(t, 30*time.Second); e.Type != "MODIFIED" || e.Object.Metadata.ResourceVersion != updated.Metadata.ResourceVersion {
		t.Fatalf("watch from %s before compaction: got %s rv=%s, want MODIFIED rv=%s",
			oldRV, e.Type, e.Object.Metadata.ResourceVersion, updated.Metadata.ResourceVersion)
	}

	rev, err := c.Compact(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if updatedRV, _ := strconv.ParseInt(updated.Metadata.ResourceVersion, 10, 64); rev <= updatedRV {
		t.Fatalf("compacted at %d, not after the update at %d", rev, updatedRV)
	}

	// After: 410 Expired, either as the response status or as an ERROR event.
	w, status = openWatch(t, c, watchFromOld)
	if status == nil {
		e := w.next(t, 30*time.Second)
		if e.Type != "ERROR" {
			t.Fatalf("watch from compacted %s: got %s event %+v, want ERROR", oldRV, e.Type, e.Object)
		}
		status = &e.Object
	}
	if status.Code != http.StatusGone || status.Reason != "Expired" {
		t.Errorf("watch from compacted %s: got %+v, want code 410 reason Expired", oldRV, status)
	}
	t.Logf("watch from compacted resourceVersion %s (compacted at %d): %d %s: %s", oldRV, rev, status.Code, status.Reason, status.Message)

	// Compaction is at the current revision: watching from "now" is still fine.
	w, status = openWatch(t, c, path+"?watch=1&timeoutSeconds=5&resourceVersion="+strconv.FormatInt(rev, 10))
	if status != nil {
		t.Fatalf("watch from the compaction revision %d: %+v", rev, status)
	}
	do(t, c, http.MethodDelete, path+"/pt", nil, http.StatusOK, nil)
	if e := w.next(t, 30*time.Second); e.Type != "DELETED" {
		t.Errorf("watch from the compaction revision: got %s, want DELETED", e.Type)
	}
}

// TestCompactionAndWatchCache documents what test writers must know: configmaps (like every
// resource but cluster.UncachedResource) are watched through kube-apiserver's watch cache,
// which keeps its own event window; a watch from a resourceVersion that etcd has compacted
// is still served from that window.
func TestCompactionAndWatchCache(t *testing.T) {
	c := cluster.ForTest(t)
	ns := newNamespace(t, c)
	path := nsPath(ns, "configmaps")

	var created, updated object
	do(t, c, http.MethodPost, path, configMap("cm", map[string]string{"v": "1"}), http.StatusCreated, &created)
	do(t, c, http.MethodPatch, path+"/cm", map[string]any{"data": map[string]string{"v": "2"}}, http.StatusOK, &updated)
	if _, err := c.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	w, status := openWatch(t, c, path+"?watch=1&timeoutSeconds=30&resourceVersion="+created.Metadata.ResourceVersion)
	if status != nil {
		t.Fatalf("watch of configmaps from compacted %s: %+v; the watch cache should still serve it",
			created.Metadata.ResourceVersion, status)
	}
	if e := w.next(t, 30*time.Second); e.Type != "MODIFIED" || e.Object.Data["v"] != "2" {
		t.Errorf("watch of configmaps from compacted %s: got %s %+v, want MODIFIED v=2",
			created.Metadata.ResourceVersion, e.Type, e.Object)
	}
}
