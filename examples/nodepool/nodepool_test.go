package nodepool

import (
	"fmt"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/controllertest"
)

// newEnv is an apitest server in the test's synctest bubble with the NodePool CRD and three
// simulated nodes; node-1 and node-2 carry the label pool=gpu, and each node runs Pods.
func newEnv(t *testing.T) *controllertest.Env {
	env := controllertest.New(t, controllertest.Options{
		CRDs:    [][]byte{CRD},
		Server:  apitest.Options{InMemory: true},
		Nodes:   &apitest.NodesOptions{Count: 3},
		Timeout: time.Hour, // on the fake clock
	})
	for _, n := range []string{"node-1", "node-2"} {
		env.Mutate("nodes", "", n, func(o apitest.Object) {
			md := o["metadata"].(map[string]any)
			labels, _ := md["labels"].(map[string]any)
			if labels == nil {
				labels = map[string]any{}
			}
			labels["pool"] = "gpu"
			md["labels"] = labels
		})
	}
	for i, node := range []string{"node-1", "node-1", "node-2", "node-3"} {
		env.Create("pods", map[string]any{"metadata": map[string]any{"namespace": "default", "name": fmt.Sprintf("p-%d", i)},
			"spec": map[string]any{"nodeName": node, "terminationGracePeriodSeconds": 30,
				"containers": []any{map[string]any{"name": "app", "image": "app:1"}}}})
	}
	return env
}

func gpuPool(spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": "pools.example.com/v1", "kind": "NodePool", "metadata": map[string]any{"name": "gpu"}, "spec": spec}
}

func hasTaint(n *Node, key string) bool {
	return slices.ContainsFunc(n.Spec.Taints, func(t Taint) bool { return t.Key == key })
}

// The pool's Nodes get its labels and taints (the others do not), its status counts them,
// and it leads through its Lease. When two Nodes go NotReady, the first is drained once
// the grace period has passed (its Pods deleted, then, past their own grace period, deleted
// at once: no kubelet confirms them), and the second only once the first is done, since
// MaxUnavailable is 50% of two Nodes. The Pod on a Node outside the pool is never touched.
func TestNodePool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newEnv(t)
		run := env.StartManager(controller.ManagerOptions{LeaderElection: true, LeaderElectionID: Name,
			LeaderElectionNamespace: "kube-system", LeaderElectionIdentity: "replica-a"}, Setup)
		env.WaitForLeaseHolder("kube-system", Name, "replica-a")
		env.Create("nodepools", gpuPool(map[string]any{
			"selector":         map[string]any{"matchLabels": map[string]any{"pool": "gpu"}},
			"labels":           map[string]any{"pools.example.com/pool": "gpu"},
			"taints":           []any{map[string]any{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}},
			"drainGracePeriod": "2m", "maxUnavailable": "50%",
		}))
		for _, name := range []string{"node-1", "node-2"} {
			controllertest.WaitFor(env, "nodes", "", name, func(n *Node) bool {
				return n.Labels["pools.example.com/pool"] == "gpu" && hasTaint(n, "dedicated")
			})
		}
		controllertest.WaitFor(env, "nodepools", "", "gpu", func(p *NodePool) bool { return p.Status.Nodes == 2 && p.Status.Ready == 2 })
		env.WaitForEvent("", "NodePool", "gpu", "NodeConfigured")
		if n3, _ := controllertest.Get[*Node](env, "nodes", "", "node-3"); hasTaint(n3, "dedicated") || n3.Labels["pools.example.com/pool"] != "" {
			t.Fatalf("node-3 is not in the pool but was configured: %+v", n3.ObjectMeta)
		}

		notReady := time.Now()
		for _, name := range []string{"node-1", "node-2"} {
			if err := env.Nodes.SetNodeReady(name, false); err != nil {
				t.Fatal(err)
			}
		}
		controllertest.WaitFor(env, "nodepools", "", "gpu", func(p *NodePool) bool { return p.Status.Ready == 0 })
		// Nothing is drained within the grace period.
		time.Sleep(2*time.Minute - 2*time.Second)
		synctest.Wait()
		if p, _ := controllertest.Get[*Pod](env, "pods", "default", "p-0"); p.DeletionTimestamp != nil {
			t.Fatalf("p-0 deleted %v after its Node went NotReady, within the grace period", time.Since(notReady))
		}
		// node-1 drains first (it went NotReady first), node-2 waits.
		pool := controllertest.WaitFor(env, "nodepools", "", "gpu", func(p *NodePool) bool { return len(p.Status.Draining) == 1 })
		if took := time.Since(notReady); took > 2*time.Minute || !slices.Equal(pool.Status.Draining, []string{"node-1"}) || !slices.Equal(pool.Status.Waiting, []string{"node-2"}) {
			t.Fatalf("after %v: draining %v, waiting %v; want node-1 at 2m, node-2 waiting", took, pool.Status.Draining, pool.Status.Waiting)
		}
		env.WaitGone("pods", "default", "p-0")
		env.WaitGone("pods", "default", "p-1")
		if took := time.Since(notReady); took < 2*time.Minute+29*time.Second || took > 2*time.Minute+31*time.Second {
			t.Errorf("node-1 drained %v after it went NotReady, want 2m (grace) + 30s (its Pods')", took)
		}
		node1Done := time.Now()
		p2, ok := controllertest.Get[*Pod](env, "pods", "default", "p-2")
		// Its deletion, if it has begun, set a deadline 30s ahead (to the second).
		if !ok || p2.DeletionTimestamp != nil && p2.DeletionTimestamp.Add(-30*time.Second).Before(node1Done.Add(-time.Second)) {
			t.Fatalf("p-2 (node-2) deleted before node-1 was drained: %+v", p2.ObjectMeta)
		}
		env.WaitGone("pods", "default", "p-2")
		if took := time.Since(notReady); took < 3*time.Minute-time.Second || took > 3*time.Minute+2*time.Second {
			t.Errorf("node-2 drained %v after it went NotReady, want 3m (after node-1's drain, 30s of its own)", took)
		}
		pool = controllertest.WaitFor(env, "nodepools", "", "gpu", func(p *NodePool) bool { return len(p.Status.Draining)+len(p.Status.Waiting) == 0 })
		if _, ok := controllertest.Get[*Pod](env, "pods", "default", "p-3"); !ok {
			t.Fatal("p-3 on node-3, outside the pool, was deleted")
		}
		for _, reason := range []string{"Draining", "Drained"} {
			env.WaitForEvent("", "NodePool", "gpu", reason)
		}
		// The only errors allowed are the optimistic lock's 409s (the kubelets write the
		// Nodes too), retried.
		if st := run.Stats(Name); st.Errors != st.Conflicts || st.Panics != 0 || st.Dropped != 0 {
			t.Errorf("reconcile errors other than conflicts: %+v", st)
		}
	})
}

// A selector the API server would refuse in a built-in object is reported in its words,
// and no Node is touched.
func TestInvalidSelector(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := newEnv(t)
		env.StartManager(controller.ManagerOptions{}, Setup)
		env.Create("nodepools", gpuPool(map[string]any{
			"selector": map[string]any{"matchExpressions": []any{map[string]any{"key": "pool", "operator": "In"}}},
			"labels":   map[string]any{"pools.example.com/pool": "gpu"},
		}))
		ev := env.WaitForEvent("", "NodePool", "gpu", "InvalidSelector")
		if want := "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"; ev.Message != want || ev.Type != controller.EventTypeWarning {
			t.Fatalf("event %s %q, want Warning %q", ev.Type, ev.Message, want)
		}
		synctest.Wait()
		if n, _ := controllertest.Get[*Node](env, "nodes", "", "node-1"); n.Labels["pools.example.com/pool"] != "" {
			t.Fatal("a pool with an invalid selector configured node-1")
		}
	})
}

// The reconciler needs nothing of informerkit but the controller kit: controller, its
// client (reads, writes, patches and every option they take) and the object model.
func TestReconcilerImportsOnlyTheKit(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "controller.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if strings.HasPrefix(path, "github.com/informerkit/") && !slices.Contains([]string{
			"github.com/informerkit/informerkit/controller",
			"github.com/informerkit/informerkit/controller/client",
			"github.com/informerkit/informerkit/meta"}, path) {
			t.Errorf("controller.go imports %s", path)
		}
	}
}
