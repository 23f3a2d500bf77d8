package compat

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/informerkit/informerkit/apitest"
)

// TestClientGoProtobufWatchFaults runs a typed pod informer (protobuf list and watch) through
// every kind of fault apitest injects into watches and requests, and checks that its cache
// converges to the server's state.
func TestClientGoProtobufWatchFaults(t *testing.T) {
	e := newEnv(t, apitest.Options{BookmarkInterval: 200 * time.Millisecond})
	captureKlog(t)
	cs := kubernetes.NewForConfigOrDie(e.cfg)
	ctx, stop := context.WithCancel(e.ctx)
	f := informers.NewSharedInformerFactory(cs, 0)
	lister := f.Core().V1().Pods().Lister()
	f.Core().V1().Pods().Informer()
	f.Start(ctx.Done())
	defer func() {
		stop()
		f.Shutdown()
	}()
	f.WaitForCacheSync(ctx.Done())

	pod := func(i int) map[string]any {
		return map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("p%d", i), "labels": map[string]any{"i": fmt.Sprint(i)}},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}}
	}
	// Each fault hits the open watch (or the next requests); the informer must re-list or
	// re-watch and carry on. Writes happen between faults.
	faults := []struct {
		name    string
		inject  func() error
		rewatch bool // the fault ends the watch: wait for the informer's next one
	}{
		{"cut", func() error { _, err := e.s.Faults().CutWatches("pods"); return err }, true},
		{"abort", func() error { _, err := e.s.Faults().AbortWatches("pods"); return err }, true},
		{"expire", func() error { _, err := e.s.Faults().ExpireWatches("pods"); return err }, true},
		{"corrupt", func() error { _, err := e.s.Faults().SendCorruptFrame("pods"); return err }, true},
		{"fail-list", func() error { return e.s.Faults().FailRequests(apitest.VerbList, "pods", 2, 503, time.Second) }, false},
		{"fail-watch", func() error { return e.s.Faults().FailRequests(apitest.VerbWatch, "pods", 1, 429, time.Second) }, false},
		{"compact", func() error { return e.s.Compact("pods") }, false},
	}
	n := 0
	write := func() {
		n++
		if _, err := e.s.Create("pods", pod(n)); err != nil {
			t.Fatal(err)
		}
		if n%3 == 0 {
			e.s.Delete("pods", "default", fmt.Sprintf("p%d", n/2))
		}
	}
	for _, fl := range faults {
		if _, err := e.s.WaitForWatches(ctx, "pods", 1); err != nil {
			t.Fatal(err)
		}
		next := e.s.NextWatch("pods")
		write()
		if err := fl.inject(); err != nil {
			t.Fatalf("%s: %v", fl.name, err)
		}
		write()
		write()
		if fl.rewatch {
			select {
			case <-next:
			case <-ctx.Done():
				t.Fatalf("no watch after the %s fault", fl.name)
			}
		}
	}
	e.waitFor("the pod cache to converge", func() bool {
		objs, _, _ := e.s.List("pods", "default")
		got, _ := lister.Pods("default").List(labels.Everything())
		if len(got) != len(objs) {
			return false
		}
		want := map[string]string{}
		for _, o := range objs {
			want[o.Name()] = o.ResourceVersion()
		}
		for _, p := range got {
			if want[p.Name] != p.ResourceVersion || p.Status.Phase != corev1.PodPending {
				return false
			}
		}
		return true
	})
	for _, k := range []apitest.FaultKind{apitest.FaultCutWatch, apitest.FaultAbortWatch, apitest.FaultWatchError, apitest.FaultCorruptFrame} {
		if len(e.s.Faults().RecordsOf(k)) == 0 {
			t.Errorf("no %v fault was injected", k)
		}
	}
}

// TestClientGoLeaderElection runs two client-go leader electors on a Lease in apitest (the
// lock's writes in protobuf); the leader's renewals fail for a while, and the other takes
// over.
func TestClientGoLeaderElection(t *testing.T) {
	e := newEnv(t, apitest.Options{})
	captureKlog(t)
	cs := kubernetes.NewForConfigOrDie(e.cfg)
	var leaders [2]atomic.Bool
	var stopped [2]atomic.Bool
	ctx, stop := context.WithCancel(e.ctx)
	defer stop()
	done := make(chan struct{}, 2)
	for i := range 2 {
		lock := &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Name: "compat-le", Namespace: "default"},
			Client:     cs.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: fmt.Sprintf("candidate-%d", i)},
		}
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: lock, LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 200 * time.Millisecond,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) { leaders[i].Store(true) },
				OnStoppedLeading: func() { leaders[i].Store(false); stopped[i].Store(true) },
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer func() { done <- struct{}{} }()
			le.Run(ctx)
		}()
		if i == 0 {
			e.waitFor("candidate-0 to lead", leaders[0].Load)
		}
	}
	lease, err := cs.CoordinationV1().Leases("default").Get(ctx, "compat-le", metav1.GetOptions{})
	if err != nil || *lease.Spec.HolderIdentity != "candidate-0" || lease.Spec.RenewTime == nil {
		t.Fatalf("lease %v %+v", err, lease)
	}
	checkLease(t, lease)
	// The leader's renewals fail (the lock is updated with PUT): it steps down and the
	// other candidate acquires the lease.
	if err := e.s.Faults().FailRequests(apitest.VerbUpdate, "leases.coordination.k8s.io", 20, 500, 0); err != nil {
		t.Fatal(err)
	}
	e.waitFor("candidate-0 to step down", stopped[0].Load)
	e.waitFor("candidate-1 to lead", leaders[1].Load)
	stop()
	<-done
	<-done
}

func checkLease(t *testing.T, l *coordinationv1.Lease) {
	t.Helper()
	if l.Spec.LeaseDurationSeconds == nil || *l.Spec.LeaseDurationSeconds != 2 || l.Spec.AcquireTime == nil || l.Spec.LeaseTransitions == nil {
		t.Errorf("lease spec %+v", l.Spec)
	}
}
