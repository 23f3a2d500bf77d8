package e2e

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/informerkit/informerkit/e2e/cluster"
)

// TestWatchListStreamsInitialEvents checks that kube-apiserver with etcd 3.6.8 serves the
// WatchList protocol (sendInitialEvents): the current objects as ADDED events, then a
// BOOKMARK annotated k8s.io/initial-events-end at a resourceVersion not older than any of
// them.
func TestWatchListStreamsInitialEvents(t *testing.T) {
	c := cluster.ForTest(t)
	ns := newNamespace(t, c)
	path := nsPath(ns, "configmaps")
	want := map[string]bool{}
	var lastRV int64
	for i := range 3 {
		var cm object
		name := fmt.Sprintf("cm-%d", i)
		do(t, c, http.MethodPost, path, configMap(name, map[string]string{"i": strconv.Itoa(i)}), http.StatusCreated, &cm)
		want[name] = true
		lastRV, _ = strconv.ParseInt(cm.Metadata.ResourceVersion, 10, 64)
	}

	w, status := openWatch(t, c, path+"?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=60")
	if status != nil {
		t.Fatalf("WatchList request refused: %+v", status)
	}
	for {
		e := w.next(t, 30*time.Second)
		switch e.Type {
		case "ADDED":
			if !want[e.Object.Metadata.Name] {
				t.Fatalf("unexpected or repeated ADDED %s", e.Object.Metadata.Name)
			}
			delete(want, e.Object.Metadata.Name)
			continue
		case "BOOKMARK":
			if e.Object.Metadata.Annotations["k8s.io/initial-events-end"] != "true" {
				continue // an ordinary bookmark may come first
			}
			if len(want) != 0 {
				t.Fatalf("initial-events-end bookmark before ADDED of %v", want)
			}
			rv, err := strconv.ParseInt(e.Object.Metadata.ResourceVersion, 10, 64)
			if err != nil || rv < lastRV {
				t.Fatalf("initial-events-end bookmark at resourceVersion %q, want >= %d", e.Object.Metadata.ResourceVersion, lastRV)
			}
			return
		default:
			t.Fatalf("unexpected %s event %+v", e.Type, e.Object)
		}
	}
}
