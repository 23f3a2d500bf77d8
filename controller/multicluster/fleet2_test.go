package multicluster_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/multicluster"
	"github.com/informerkit/informerkit/internal/promtest"
	"github.com/informerkit/informerkit/internal/testobj"
)

// One cluster's burst does not starve another: with one worker, a Request of b that comes
// after 50 of a is reconciled within the next two, not after the burst.
func TestTheQueueIsFairAcrossClusters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := member(t, "a"), member(t, "b")
		for i := range 50 {
			if _, err := a.Create("configmaps", testobj.NewConfigMap("default", fmt.Sprintf("burst-%02d", i), nil)); err != nil {
				t.Fatal(err)
			}
		}
		gate := make(chan struct{})
		rec := &recorder{}
		first := true
		rec.fn = func(ctx context.Context, cl *multicluster.Cluster, req multicluster.Request) (controller.Result, error) {
			if first {
				first = false // one worker: no other call runs meanwhile
				<-gate
			}
			return controller.Result{}, nil
		}
		e := startFleet(t, multicluster.Options{}, multicluster.ControllerOptions{MaxConcurrentReconciles: 1}, rec)
		if err := e.provider.Set("a", a.Config()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the worker holds a's first Request; 50 more of a wait
		if err := e.provider.Set("b", b.Config()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		close(gate)
		synctest.Wait()
		rec.mu.Lock()
		seen := slices.Clone(rec.seen)
		rec.mu.Unlock()
		if len(seen) != 52 {
			t.Fatalf("%d reconciles, want 52", len(seen))
		}
		i := slices.IndexFunc(seen, func(r multicluster.Request) bool { return r.Cluster == "b" })
		if i < 0 || i > 2 {
			t.Errorf("b's Request was reconciled %dth, after %d of a's burst", i+1, i)
		}
	})
}

// A WatchHub source enqueues each hub object's Request for every cluster reconciled, and
// a cluster engaged later gets the Requests of the objects the hub holds then.
func TestHubObjectsAreRequestsOfEveryCluster(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b, c := member(t, "a"), member(t, "b"), member(t, "c")
		rec := &recorder{}
		e := &fleetEnv{env: newHub(t), provider: multicluster.NewManual(), rec: rec}
		e.env.Create("configmaps", testobj.NewConfigMap("default", "desired", nil))
		e.run = e.env.StartManager(controller.ManagerOptions{Kinds: testobj.NewRegistry()}, func(mgr *controller.Manager) error {
			var err error
			if e.fleet, err = multicluster.New(mgr, e.provider, multicluster.Options{}); err != nil {
				return err
			}
			if e.ctrl, err = multicluster.NewController(e.fleet, "copy", rec, multicluster.ControllerOptions{}); err != nil {
				return err
			}
			return multicluster.WatchHubWithOptions(e.ctrl, controller.EnqueueRequestForObject[*testobj.ConfigMap](),
				multicluster.WatchOptions[*testobj.ConfigMap]{Informer: controller.InformerOptions{Namespace: "default"}})
		})
		for name, s := range map[string]*apitest.Server{"a": a, "b": b} {
			if err := e.provider.Set(name, s.Config()); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if got, want := rec.requests(), []string{"a:default/desired", "b:default/desired"}; !slices.Equal(got, want) {
			t.Fatalf("reconciled %q, want %q", got, want)
		}
		rec.reset()
		e.env.Create("configmaps", testobj.NewConfigMap("default", "more", nil))
		synctest.Wait()
		if got, want := rec.requests(), []string{"a:default/more", "b:default/more"}; !slices.Equal(got, want) {
			t.Fatalf("reconciled %q after a hub create, want %q", got, want)
		}
		rec.reset()
		if err := e.provider.Set("c", c.Config()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got, want := rec.requests(), []string{"c:default/desired", "c:default/more"}; !slices.Equal(got, want) {
			t.Fatalf("reconciled %q after c was engaged, want %q", got, want)
		}
	})
}

// Engaging and disengaging a cluster again and again leaks nothing: after 10,000 cycles
// (in fake time, about 10 s; 200 under -race or -short) the goroutines are those there were
// before, the cluster's server has no watch left, and the heap has grown by less than
// 1 MiB in all (less than 105 bytes a cycle).
func TestEngageDisengageCyclesLeakNothing(t *testing.T) {
	cycles := 10000
	if raceEnabled || testing.Short() {
		cycles = 200
	}
	synctest.Test(t, func(t *testing.T) {
		a, b := member(t, "a"), member(t, "b")
		// The reconciler remembers each distinct Request once, in strings of its own: a
		// Request kept per reconcile would hold the strings of every engagement's cache
		// (and grow the heap by some 200 bytes a cycle, the test's, not the Fleet's).
		var mu sync.Mutex
		distinct := map[string]bool{}
		rec := &recorder{drop: true, fn: func(_ context.Context, _ *multicluster.Cluster, req multicluster.Request) (controller.Result, error) {
			mu.Lock()
			distinct[req.String()] = true
			mu.Unlock()
			return controller.Result{}, nil
		}}
		e := startFleet(t, multicluster.Options{}, multicluster.ControllerOptions{}, rec)
		if err := e.provider.Set("a", a.Config()); err != nil {
			t.Fatal(err)
		}
		cycle := func() {
			if err := e.provider.Set("b", b.Config()); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			e.provider.Remove("b")
			synctest.Wait()
		}
		cycle() // the first engagement's one-time costs (types, pools)
		g0, h0 := bubbleGoroutines(), heapInUse()
		for range cycles {
			cycle()
		}
		g1, h1 := bubbleGoroutines(), heapInUse()
		if g1 != g0 {
			t.Errorf("%d goroutines after %d cycles, %d before", g1, cycles, g0)
		}
		if n := len(b.Watches("configmaps")); n != 0 {
			t.Errorf("b has %d watches left", n)
		}
		if grown := int64(h1) - int64(h0); grown > 1<<20 {
			t.Errorf("heap grew by %d bytes over %d cycles", grown, cycles)
		}
		st := e.ctrl.Stats()
		mu.Lock()
		got := slices.Sorted(maps.Keys(distinct))
		mu.Unlock()
		if !slices.Equal(got, []string{"a:default/a", "b:default/b"}) {
			t.Errorf("reconciled %q", got)
		}
		t.Logf("%d cycles: %d reconciles, %d stale; heap %d -> %d", cycles, st.Reconciles, st.Stale, h0, h1)
		if _, ok := e.ctrl.ClusterStats("b"); ok {
			t.Error("the controller still has a state of b")
		}
	})
}

// A cluster given another Config is engaged again with it: its old informers and clients
// are let go, and its objects reconciled from the new server.
func TestANewConfigEngagesTheClusterAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		old, moved := member(t, "old"), member(t, "moved")
		rec := &recorder{}
		e := startFleet(t, multicluster.Options{}, multicluster.ControllerOptions{}, rec)
		cfg := old.Config()
		if err := e.provider.Set("x", cfg); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if err := e.provider.Set("x", cfg); err != nil { // the same: nothing changes
			t.Fatal(err)
		}
		synctest.Wait()
		if n := len(rec.seen); n != 1 {
			t.Fatalf("%d reconciles after the same Config was set again, want 1", n)
		}
		if err := e.provider.Set("x", moved.Config()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got, want := rec.requests(), []string{"x:default/moved", "x:default/old"}; !slices.Equal(got, want) {
			t.Fatalf("reconciled %q, want %q", got, want)
		}
		if n := len(old.Watches("configmaps")); n != 0 {
			t.Errorf("the old server has %d watches left", n)
		}
		if n := len(moved.Watches("configmaps")); n != 1 {
			t.Errorf("the new server has %d watches, want 1", n)
		}
	})
}

// The cluster label of the metrics is bounded: with a limit of 2, the third cluster is
// counted under OtherClusters, and a disengaged cluster's series go.
func TestMetricsClusterLabelsAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		e := startFleet(t, multicluster.Options{MetricsClusters: multicluster.ClusterLabels{Limit: 2}}, multicluster.ControllerOptions{}, rec)
		for _, name := range []string{"a", "b", "c"} {
			if err := e.provider.Set(name, member(t, name).Config()); err != nil {
				t.Fatal(err)
			}
			synctest.Wait() // engaged in this order
		}
		labels := func() []string {
			var buf bytes.Buffer
			if err := e.run.Manager.Registry().WriteText(&buf); err != nil {
				t.Fatal(err)
			}
			fams, err := promtest.Parse(buf.String())
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, s := range fams["informerkit_multicluster_reconcile_total"].Samples {
				if s.Labels["result"] == controller.ResultSuccess && s.Value > 0 {
					out = append(out, s.Labels["cluster"])
				}
			}
			slices.Sort(out)
			return out
		}
		if got, want := labels(), []string{multicluster.OtherClusters, "a", "b"}; !slices.Equal(got, want) {
			t.Fatalf("cluster labels %q, want %q", got, want)
		}
		e.provider.Remove("a")
		synctest.Wait()
		if got, want := labels(), []string{multicluster.OtherClusters, "b"}; !slices.Equal(got, want) {
			t.Fatalf("cluster labels %q after a was removed, want %q", got, want)
		}
	})
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
