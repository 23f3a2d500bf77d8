package multicluster_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/multicluster"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// copier reconciles a ConfigMap of namespace default by creating its copy in namespace out
// of the same cluster, through the cluster's own client (a write to that cluster's server).
func copier(rec *recorder) {
	rec.fn = func(ctx context.Context, cl *multicluster.Cluster, req multicluster.Request) (controller.Result, error) {
		cms := client.TypedFor[*testobj.ConfigMap](cl.Client())
		_, err := cms.Create(ctx, testobj.NewConfigMap("out", req.Name, map[string]string{"from": req.Cluster}), client.CreateOptions{})
		if err != nil && !meta.IsAlreadyExists(err) {
			return controller.Result{}, err
		}
		return controller.Result{}, nil
	}
}

// startCopier starts a fleet whose controller watches namespace default only (its copies in
// out make no Requests) and copies each ConfigMap with copier.
func startCopier(t *testing.T, copts multicluster.ControllerOptions) *fleetEnv {
	t.Helper()
	rec := &recorder{}
	copier(rec)
	e := &fleetEnv{
		env:      newHub(t),
		provider: multicluster.NewManual(),
		rec:      rec,
	}
	e.run = e.env.StartManager(controller.ManagerOptions{Kinds: testobj.NewRegistry()}, func(mgr *controller.Manager) error {
		var err error
		if e.fleet, err = multicluster.New(mgr, e.provider, multicluster.Options{}); err != nil {
			return err
		}
		if e.ctrl, err = multicluster.NewController(e.fleet, "copy", rec, copts); err != nil {
			return err
		}
		return multicluster.WatchWithOptions(e.ctrl, controller.EnqueueRequestForObject[*testobj.ConfigMap](),
			multicluster.WatchOptions[*testobj.ConfigMap]{Informer: controller.InformerOptions{Namespace: "default"}})
	})
	return e
}

// copied returns the names of the ConfigMaps of namespace out of s, sorted.
func copied(t testing.TB, s *apitest.Server) []string {
	t.Helper()
	objs, _, err := s.List("configmaps", "out")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range objs {
		out = append(out, o.Name())
	}
	slices.Sort(out)
	return out
}

// The same namespace and name in two clusters are two Requests, each reconciled with its
// own cluster's client: each copy is written to the cluster its source lives in.
func TestSameNameInTwoClustersIsTwoRequestsWithTheirOwnClients(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := member(t, "a"), member(t, "b")
		for _, s := range []*apitest.Server{a, b} {
			if _, err := s.Create("configmaps", testobj.NewConfigMap("default", "same", nil)); err != nil {
				t.Fatal(err)
			}
		}
		e := startCopier(t, multicluster.ControllerOptions{})
		for name, s := range map[string]*apitest.Server{"a": a, "b": b} {
			if err := e.provider.Set(name, s.Config()); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if got, want := e.rec.requests(), []string{"a:default/a", "a:default/same", "b:default/b", "b:default/same"}; !slices.Equal(got, want) {
			t.Fatalf("reconciled %q, want %q", got, want)
		}
		if got := copied(t, a); !slices.Equal(got, []string{"a", "same"}) {
			t.Errorf("a's copies: %q", got)
		}
		if got := copied(t, b); !slices.Equal(got, []string{"b", "same"}) {
			t.Errorf("b's copies: %q", got)
		}
		o, err := b.Get("configmaps", "out", "same")
		if err != nil {
			t.Fatal(err)
		}
		if from := o["data"].(map[string]any)["from"]; from != "b" {
			t.Errorf("b's copy of same says from=%v", from)
		}
	})
}

// A cluster partitioned from the controller holds at most its own worker: the other
// cluster's reconciles go on at once (no fake time passes), the partitioned cluster's
// request fails at the request deadline, the cluster is marked down and its Requests wait
// aside holding no worker, and once the partition heals they run.
func TestAPartitionedClusterDelaysNoOther(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := member(t, "a")
		bnet := apitest.NewNetwork()
		b := memberOn(t, "b", bnet)
		e := startCopier(t, multicluster.ControllerOptions{MaxConcurrentReconciles: 2})
		for name, s := range map[string]*apitest.Server{"a": a, "b": b} {
			if err := e.provider.Set(name, s.Config()); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if got := copied(t, b); !slices.Equal(got, []string{"b"}) {
			st, _ := e.ctrl.ClusterStats("b")
			t.Fatalf("b's copies before the partition: %q (b: %+v; %+v)", got, st, e.ctrl.Stats())
		}

		// b's network fails, then an object of b is created (its event is held, as the
		// server's side of the watch cannot send it): the create below is the server's own.
		heal := bnet.Partition()
		start := time.Now()
		var want []string
		for i := range 20 {
			name := "a" + string(rune('a'+i))
			want = append(want, name)
			if _, err := a.Create("configmaps", testobj.NewConfigMap("default", name, nil)); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if got := copied(t, a); !slices.Equal(got, append([]string{"a"}, want...)) {
			t.Fatalf("a's copies while b is partitioned: %q", got)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("a's reconciles took %v of fake time while b was partitioned", d)
		}
		if _, err := b.Create("configmaps", testobj.NewConfigMap("default", "x", nil)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()

		// A Request of b made while it is partitioned (a hub-side trigger would do the same):
		// its reconcile waits for b until the request deadline, holding one worker only.
		enqueue(t, e.ctrl, "b", "b2")
		synctest.Wait()
		if st, _ := e.ctrl.ClusterStats("b"); st.InFlight != 1 {
			t.Errorf("b holds %d workers, want 1", st.InFlight)
		}
		if _, err := a.Create("configmaps", testobj.NewConfigMap("default", "during", nil)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if !slices.Contains(copied(t, a), "during") {
			t.Errorf("a's copies while b's reconcile hangs: %q", copied(t, a))
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("a's reconcile took %v of fake time while b's hung", d)
		}

		// The deadline passes: b is down, and its Requests wait aside.
		waitFor(t, e.fleet, "b marked down", func() bool {
			cl, ok := e.fleet.Cluster("b")
			return ok && cl.IsDown()
		})
		enqueue(t, e.ctrl, "b", "b3")
		if _, err := a.Create("configmaps", testobj.NewConfigMap("default", "later", nil)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if !slices.Contains(copied(t, a), "later") {
			t.Errorf("a's copies while b is down: %q", copied(t, a))
		}
		if st, _ := e.ctrl.ClusterStats("b"); st.InFlight != 0 || st.Parked == 0 {
			t.Errorf("b while down: %+v, want no worker held and Requests parked", st)
		}

		// b heals: its Requests run, and its watch delivers x.
		heal()
		waitFor(t, e.fleet, "b's copies of x, b2 and b3", func() bool {
			got := copied(t, b)
			return slices.Contains(got, "x") && slices.Contains(got, "b2") && slices.Contains(got, "b3")
		})
	})
}

// waitFor waits, in fake time, for cond, looking again at each change of the fleet's
// clusters, roles or health (the channel taken before cond is read, so that no change is
// missed), and each second for what the fleet does not signal (a copy written).
func waitFor(t *testing.T, f *multicluster.Fleet, what any, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Minute)
	for {
		changed := f.Changed()
		synctest.Wait()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-time.After(time.Second):
		case <-deadline:
			t.Fatalf("no %v within 10 minutes of fake time", what) // what: a string, or a Stringer read now
		}
	}
}

// enqueue adds a Request of default/name in cluster.
func enqueue(t *testing.T, c *multicluster.Controller, cluster, name string) {
	t.Helper()
	q, ok := c.Queue(cluster)
	if !ok {
		t.Fatalf("cluster %s not engaged", cluster)
	}
	q.Add(controller.Request{Namespace: "default", Name: name})
}
