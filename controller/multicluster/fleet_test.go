package multicluster_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/controllertest"
	"github.com/informerkit/informerkit/controller/multicluster"
	"github.com/informerkit/informerkit/internal/testobj"
)

// recorder is a Reconciler that remembers what it reconciled.
type recorder struct {
	mu   sync.Mutex
	seen []multicluster.Request
	fn   func(ctx context.Context, cl *multicluster.Cluster, req multicluster.Request) (controller.Result, error)
	// drop: remember nothing (a benchmark's reconciler, whose memory is measured).
	drop bool
}

func (r *recorder) Reconcile(ctx context.Context, cl *multicluster.Cluster, req multicluster.Request) (controller.Result, error) {
	if cl.Name() != req.Cluster {
		panic(fmt.Sprintf("reconcile of %s given cluster %s", req, cl.Name()))
	}
	r.mu.Lock()
	if !r.drop {
		r.seen = append(r.seen, req)
	}
	fn := r.fn
	r.mu.Unlock()
	if fn != nil {
		return fn(ctx, cl, req)
	}
	return controller.Result{}, nil
}

// requests returns the distinct Requests reconciled so far, sorted.
func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, q := range r.seen {
		if s := q.String(); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

func (r *recorder) reset() {
	r.mu.Lock()
	r.seen = nil
	r.mu.Unlock()
}

// member starts an in-memory apitest server holding ConfigMap default/<name>.
func member(t testing.TB, name string) *apitest.Server {
	t.Helper()
	s, err := apitest.Start(apitest.Options{InMemory: true, RequestLogSize: requestLog})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	seed(t, s, name)
	return s
}

// fleetEnv is a hub with a Fleet of a Manual provider and one controller watching ConfigMaps.
type fleetEnv struct {
	env      *controllertest.Env
	run      *controllertest.Running
	provider *multicluster.Manual
	fleet    *multicluster.Fleet
	ctrl     *multicluster.Controller
	rec      *recorder
}

func startFleet(t *testing.T, fopts multicluster.Options, copts multicluster.ControllerOptions, rec *recorder) *fleetEnv {
	t.Helper()
	e := &fleetEnv{
		env:      controllertest.New(t, controllertest.Options{Server: apitest.Options{InMemory: true}}),
		provider: multicluster.NewManual(),
		rec:      rec,
	}
	e.run = e.env.StartManager(controller.ManagerOptions{Kinds: testobj.NewRegistry()}, func(mgr *controller.Manager) error {
		var err error
		if e.fleet, err = multicluster.New(mgr, e.provider, fopts); err != nil {
			return err
		}
		if e.ctrl, err = multicluster.NewController(e.fleet, "copy", rec, copts); err != nil {
			return err
		}
		return multicluster.Watch(e.ctrl, controller.EnqueueRequestForObject[*testobj.ConfigMap]())
	})
	return e
}

func TestFleetReconcilesEveryClusterAndLetsGoOfARemovedOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := member(t, "a"), member(t, "b")
		rec := &recorder{}
		e := startFleet(t, multicluster.Options{}, multicluster.ControllerOptions{}, rec)
		if err := e.provider.Set("a", a.Config()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		before := bubbleGoroutines()
		if err := e.provider.Set("b", b.Config()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got, want := rec.requests(), []string{"a:default/a", "b:default/b"}; !slices.Equal(got, want) {
			t.Fatalf("reconciled %q, want %q", got, want)
		}
		if got := e.fleet.Clusters(); !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("engaged %q", got)
		}
		if n := len(b.Watches("configmaps")); n != 1 {
			t.Fatalf("b has %d ConfigMap watches, want 1", n)
		}
		st, ok := e.ctrl.ClusterStats("b")
		if !ok || !st.Active || !st.Synced || st.Succeeded != 1 {
			t.Fatalf("stats of b: %+v %v", st, ok)
		}

		e.provider.Remove("b")
		synctest.Wait()
		if got := e.fleet.Clusters(); !slices.Equal(got, []string{"a"}) {
			t.Fatalf("engaged %q after removing b", got)
		}
		if n := len(b.Watches("configmaps")); n != 0 {
			t.Errorf("b still has %d ConfigMap watches", n)
		}
		if n := bubbleGoroutines(); n != before {
			t.Errorf("%d goroutines after b was removed, %d before it was added", n, before)
		}
		rec.reset()
		if _, err := b.Create("configmaps", testobj.NewConfigMap("default", "late", nil)); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Create("configmaps", testobj.NewConfigMap("default", "new", nil)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got, want := rec.requests(), []string{"a:default/new"}; !slices.Equal(got, want) {
			t.Errorf("reconciled %q after b was removed, want %q", got, want)
		}
	})
}

// memberOn is member on network n (for its Partition and Disconnect).
func memberOn(t testing.TB, name string, n *apitest.Network) *apitest.Server {
	t.Helper()
	s, err := apitest.Start(apitest.Options{Network: n, RequestLogSize: requestLog})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	seed(t, s, name)
	return s
}

// newHub is the hub's workbench: an in-memory apitest server.
func newHub(t *testing.T) *controllertest.Env {
	return controllertest.New(t, controllertest.Options{Server: apitest.Options{InMemory: true}})
}

// seed creates ConfigMap default/<name> and the namespace out (where copies go) in s.
func seed(t testing.TB, s *apitest.Server, name string) {
	t.Helper()
	if _, err := s.Create("namespaces", map[string]any{"metadata": map[string]any{"name": "out"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create("configmaps", testobj.NewConfigMap("default", name, map[string]string{"k": "v"})); err != nil {
		t.Fatal(err)
	}
}

// requestLog bounds the member servers' request logs, which would otherwise grow with each
// engagement (and blur what the cycle test measures).
const requestLog = 64

// bubbleGoroutines counts the goroutines of the test's synctest bubble: those the test
// made. (runtime.NumGoroutine counts the runtime's own too, such as the one that runs
// cleanups, which come and go.)
func bubbleGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), ", synctest bubble ")
		}
		buf = make([]byte, 2*len(buf))
	}
}
