package informer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
)

// WaitFresh with a lagging watch (apitest stalls it): a write's resourceVersion is not
// reached while the watch lags, IsFresh says so, and the wait ends once the watch delivers.
// Then a write of another resource moves the server on; only a bookmark can tell the
// informer (with progress notifications, as etcd's reach a kube-apiserver's watch cache),
// and WaitFresh of that resourceVersion ends at the next one.
func TestWaitFreshWithALaggingWatch(t *testing.T) {
	s := newServerWithOptions(t, apitest.Options{ProgressNotify: true, BookmarkInterval: 20 * time.Millisecond})
	mkCM(t, s, "default", "a", map[string]string{"k": "0"})
	inf := New[*testobj.ConfigMap](configMaps(newClient(t, s)), fastOptions(t))
	start(t, inf)
	wait(t, inf.Synced(), "sync")
	if _, err := s.WaitForWatches(ctxT(t), "configmaps", 1); err != nil {
		t.Fatal(err)
	}
	release, _, err := s.Faults().StallWatches("configmaps", 0)
	if err != nil {
		t.Fatal(err)
	}
	written := setData(t, s, "default", "a", "k", "1").ResourceVersion()
	if inf.IsFresh(written) {
		t.Fatalf("fresh at %s while the watch lags (applied %s)", written, inf.AppliedResourceVersion())
	}
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := inf.WaitFresh(short, written); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitFresh with a lagging watch = %v, want the deadline", err)
	}
	release()
	if err := inf.WaitFresh(ctxT(t), written); err != nil {
		t.Fatalf("WaitFresh after the stall: %v", err)
	}
	if cm, _, _ := inf.GetIndexer().GetByKey("default/a"); cm == nil || cm.Data["k"] != "1" {
		t.Fatalf("fresh, but the cache holds %+v", cm)
	}

	// No configmap changes: the server's resourceVersion moves with another resource.
	other, err := s.Create("secrets", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "s"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := inf.WaitFresh(ctxT(t), other.ResourceVersion()); err != nil {
		t.Fatalf("WaitFresh of another resource's write (a bookmark's job): %v", err)
	}
	if !inf.IsFresh(other.ResourceVersion()) {
		t.Fatal("IsFresh false after WaitFresh returned")
	}
}

// A resourceVersion the cache cannot compare with is a typed error, at once.
func TestWaitFreshRejectsABadResourceVersion(t *testing.T) {
	inf := New[*testobj.ConfigMap](configMaps(newClient(t, newServer(t))), fastOptions(t))
	for _, rv := range []string{"", "abc", "-1"} {
		if err := inf.WaitFresh(context.Background(), rv); !errors.Is(err, ErrBadResourceVersion) {
			t.Errorf("WaitFresh(%q) = %v, want ErrBadResourceVersion", rv, err)
		}
		if inf.IsFresh(rv) {
			t.Errorf("IsFresh(%q)", rv)
		}
	}
}

// A stopped informer ends the wait with ErrStopped.
func TestWaitFreshEndsWhenTheInformerStops(t *testing.T) {
	s := newServer(t)
	inf := New[*testobj.ConfigMap](configMaps(newClient(t, s)), fastOptions(t))
	ctx, cancel := context.WithCancel(context.Background())
	go inf.Run(ctx)
	wait(t, inf.Synced(), "sync")
	done := make(chan error, 1)
	go func() { done <- inf.WaitFresh(ctxT(t), "999999999") }()
	cancel()
	<-inf.Done()
	if err := <-done; !errors.Is(err, ErrStopped) {
		t.Fatalf("WaitFresh on a stopped informer = %v, want ErrStopped", err)
	}
}
