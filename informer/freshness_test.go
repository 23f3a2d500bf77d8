package informer

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
)

func rvNum(t *testing.T, rv string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", rv, err)
	}
	return n
}

// AppliedResourceVersion follows the list and every event, and WaitUntil wakes when the cache
// changes; a stalled watch holds it back.
func TestAppliedResourceVersionAndWaitUntil(t *testing.T) {
	s := newServer(t)
	mkCM(t, s, "default", "a", map[string]string{"k": "0"})
	inf := New[*testobj.ConfigMap](configMaps(newClient(t, s)), fastOptions(t))
	if inf.AppliedResourceVersion() != "" {
		t.Fatal("applied resourceVersion before Run")
	}
	start(t, inf)
	wait(t, inf.Synced(), "sync")
	if rvNum(t, inf.AppliedResourceVersion()) < rvNum(t, s.ResourceVersion()) {
		t.Fatalf("after the list: applied %s, server at %s", inf.AppliedResourceVersion(), s.ResourceVersion())
	}
	if _, err := s.WaitForWatches(ctxT(t), "configmaps", 1); err != nil {
		t.Fatal(err)
	}

	// A write the watch has not delivered yet: the wait times out.
	release, _, err := s.Faults().StallWatches("configmaps", 0)
	if err != nil {
		t.Fatal(err)
	}
	written := rvNum(t, setData(t, s, "default", "a", "k", "1").ResourceVersion())
	seen := func() bool {
		cm, ok, _ := inf.GetIndexer().GetByKey("default/a")
		return rvNum(t, inf.AppliedResourceVersion()) >= written && ok && rvNum(t, cm.ResourceVersion) >= written
	}
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := inf.WaitUntil(short, seen); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitUntil with a stalled watch = %v", err)
	}
	release()
	if err := inf.WaitUntil(ctxT(t), seen); err != nil {
		t.Fatalf("WaitUntil after the stall: %v", err)
	}
	// A delete advances it too.
	if err := s.Delete("configmaps", "default", "a"); err != nil {
		t.Fatal(err)
	}
	after := rvNum(t, s.ResourceVersion())
	if err := inf.WaitUntil(ctxT(t), func() bool { return rvNum(t, inf.AppliedResourceVersion()) >= after }); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := inf.GetIndexer().GetByKey("default/a"); ok {
		t.Fatal("deleted object still cached once its delete was applied")
	}
}

func TestWaitUntilEndsWhenTheInformerStops(t *testing.T) {
	s := newServer(t)
	inf := New[*testobj.ConfigMap](configMaps(newClient(t, s)), fastOptions(t))
	ctx, cancel := context.WithCancel(context.Background())
	go inf.Run(ctx)
	wait(t, inf.Synced(), "sync")
	done := make(chan error)
	go func() { done <- inf.WaitUntil(context.Background(), func() bool { return false }) }()
	cancel()
	<-inf.Done()
	if err := <-done; !errors.Is(err, ErrStopped) {
		t.Fatalf("WaitUntil = %v", err)
	}
}

// A write the informer never sees (its label selector excludes the object): bookmarks
// advance the reflector, and a waiter's marker carries that to the applied resourceVersion,
// with no event in the informer's collection.
func TestWaitUntilAdvancesWithBookmarks(t *testing.T) {
	s := newServerWithOptions(t, apitest.Options{ProgressNotify: true, BookmarkInterval: 20 * time.Millisecond})
	opts := fastOptions(t)
	lw := &selectingLW[*testobj.ConfigMap]{lw: configMaps(newClient(t, s)), labels: "app=web"}
	inf := New[*testobj.ConfigMap](lw, opts)
	start(t, inf)
	wait(t, inf.Synced(), "sync")
	written := rvNum(t, mkCM(t, s, "default", "other", nil).ResourceVersion()) // not app=web
	if err := inf.WaitUntil(ctxT(t), func() bool {
		applied, _ := strconv.ParseUint(inf.AppliedResourceVersion(), 10, 64)
		return applied >= written
	}); err != nil {
		t.Fatalf("the applied resourceVersion did not reach the write: %v (applied %q, written %d)", err, inf.AppliedResourceVersion(), written)
	}
	if n := inf.Stats().Cached; n != 0 {
		t.Fatalf("%d objects cached", n)
	}
}

// LastStoreSyncResourceVersion, client-go's name for AppliedResourceVersion: "" before the
// first list, the list's resourceVersion after it, then the resourceVersion of each applied
// event, a delete included.
func TestLastStoreSyncResourceVersion(t *testing.T) {
	s := newServer(t)
	mkCM(t, s, "default", "a", nil)
	inf := New[*testobj.ConfigMap](configMaps(newClient(t, s)), fastOptions(t))
	if rv := inf.LastStoreSyncResourceVersion(); rv != "" {
		t.Fatalf("before Run: %q", rv)
	}
	listRV := s.ResourceVersion()
	start(t, inf)
	wait(t, inf.Synced(), "sync")
	if rv := inf.LastStoreSyncResourceVersion(); rv != listRV {
		t.Fatalf("after the list: %q, want the list's %s", rv, listRV)
	}
	b := mkCM(t, s, "default", "b", nil).ResourceVersion()
	if err := inf.WaitUntil(ctxT(t), func() bool { return inf.LastStoreSyncResourceVersion() == b }); err != nil {
		t.Fatalf("after an add: %q, want %s (%v)", inf.LastStoreSyncResourceVersion(), b, err)
	}
	if err := s.Delete("configmaps", "default", "a"); err != nil {
		t.Fatal(err)
	}
	del := s.ResourceVersion()
	if err := inf.WaitUntil(ctxT(t), func() bool { return inf.LastStoreSyncResourceVersion() == del }); err != nil {
		t.Fatalf("after a delete: %q, want %s (%v)", inf.LastStoreSyncResourceVersion(), del, err)
	}
	if inf.LastStoreSyncResourceVersion() != inf.AppliedResourceVersion() {
		t.Fatal("LastStoreSyncResourceVersion and AppliedResourceVersion differ")
	}
}
