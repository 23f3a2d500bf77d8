package deployment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/conditions"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/sharding"
	"github.com/informerkit/informerkit/sharding/ring"
)

// reconcileLog records, per MiniDeployment, which replicas reconciled it, and any reconcile
// that began while another replica's was in flight.
type reconcileLog struct {
	mu    sync.Mutex
	cur   map[string]string         // key -> replica reconciling it now
	by    map[string]map[string]int // key -> replica -> reconciles
	clash []string
}

func (l *reconcileLog) wrap(replica string) func(controller.Reconciler) controller.Reconciler {
	return func(inner controller.Reconciler) controller.Reconciler {
		return controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
			key := req.Namespace + "/" + req.Name
			l.mu.Lock()
			if other, busy := l.cur[key]; busy && other != replica {
				l.clash = append(l.clash, fmt.Sprintf("%s: %s while %s", key, replica, other))
			}
			l.cur[key] = replica
			if l.by[key] == nil {
				l.by[key] = map[string]int{}
			}
			l.by[key][replica]++
			l.mu.Unlock()
			defer func() {
				l.mu.Lock()
				delete(l.cur, key)
				l.mu.Unlock()
			}()
			return inner.Reconcile(ctx, req)
		})
	}
}

func (l *reconcileLog) replicas(key string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for r := range l.by[key] {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

type shardReplica struct {
	name string
	ring *ring.Ring
	mgr  *controller.Manager
	stop func()
}

// startShardReplica runs one replica: a Manager, member name of the ring, sharding by field.
func startShardReplica(t *testing.T, srv *apitest.Server, log *reconcileLog, name string, field sharding.Field) *shardReplica {
	t.Helper()
	// A long lease (the replicas leave cleanly, so nothing waits for it to expire): with 2 s
	// and a renew deadline of 1.5 s, a loaded machine's late renewal made a replica drop its
	// share between the ring's settling and the test's reading of the holders.
	mgr, err := controller.NewManager(srv.Config(), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler),
		Sharding: controller.ShardingOptions{Ring: Name, Identity: name, Field: field,
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setup(mgr, true, log.wrap(name)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(stop)
	return &shardReplica{name: name, ring: mgr.Ring(), mgr: mgr, stop: stop}
}

// waitRing waits until every replica sees all of them and holds its share of their
// assignment.
func waitRing(t *testing.T, reps []*shardReplica) {
	t.Helper()
	var names []string
	for _, r := range reps {
		names = append(names, r.name)
	}
	a, err := ring.Assign(names, 0)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(timeout)
	for {
		ok := true
		for _, r := range reps {
			ok = ok && len(r.ring.Members()) == len(reps) && slices.Equal(r.ring.Held(), a.Ranges(r.name))
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ring of %d replicas did not settle within %v", len(reps), timeout)
		}
		tm := time.NewTimer(20 * time.Millisecond)
		<-tm.C
	}
}

// holders returns the replica holding each key, placed by hash.
func holders(t *testing.T, reps []*shardReplica, keys []string, hash map[string]uint64) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range keys {
		for _, r := range reps {
			if r.ring.Owns(hash[k]) {
				if out[k] != "" {
					t.Fatalf("%s held by %s and %s", k, out[k], r.name)
				}
				out[k] = r.name
			}
		}
		if out[k] == "" {
			t.Fatalf("%s held by no replica", k)
		}
	}
	return out
}

// settledIn reports whether ns/name has n live Pods and a status saying so.
func settledIn(t *testing.T, srv *apitest.Server, ns, name string, n int) bool {
	o, err := srv.Get(DeploymentKind.Resource, ns, name)
	if err != nil {
		return false
	}
	var d MiniDeployment
	if err := o.Into(&d); err != nil {
		t.Fatal(err)
	}
	objs, _, err := srv.List("pods", ns)
	if err != nil {
		t.Fatal(err)
	}
	pods := 0
	for _, o := range objs {
		var p Pod
		if err := o.Into(&p); err != nil {
			t.Fatal(err)
		}
		if p.Labels[LabelOwner] == name && p.DeletionTimestamp == nil {
			pods++
		}
	}
	return pods == n && d.Status.Replicas == int32(n) && d.Status.ObservedGeneration == d.Generation &&
		conditions.IsTrue(d.Status.Conditions, ConditionAvailable)
}

// TestShardedReplicas: three replicas of the controller share the MiniDeployments of eight
// namespaces, sharded by namespace or by uid; each is reconciled to its Pods by the replica
// holding it and by no other, and each replica caches only its share of the MiniDeployments
// and of the Pods. One replica leaves: the other two reconcile its MiniDeployments at once
// (they reach them as new objects of their informers) and then handle their scaling; no key
// is ever reconciled by two replicas at once.
func TestShardedReplicas(t *testing.T) {
	for _, field := range []sharding.Field{sharding.FieldNamespace, sharding.FieldUID} {
		t.Run(string(field), func(t *testing.T) { testShardedReplicas(t, field) })
	}
}

func testShardedReplicas(t *testing.T, field sharding.Field) {
	e := newEnv(t)
	log := &reconcileLog{cur: map[string]string{}, by: map[string]map[string]int{}}
	// Not "team-0".."team-7": FNV-1a hashes of names that differ only in their last byte
	// differ by a multiple of the FNV prime (< 2^48), so they fall in one bucket of 2^56.
	namespaces := []string{"shop", "payments", "search", "billing", "auth", "media", "mail", "ads"}
	for _, ns := range namespaces {
		if _, err := e.srv.Create("namespaces", map[string]any{"metadata": map[string]any{"name": ns}}); err != nil {
			t.Fatal(err)
		}
	}
	reps := []*shardReplica{startShardReplica(t, e.srv, log, "a", field), startShardReplica(t, e.srv, log, "b", field), startShardReplica(t, e.srv, log, "c", field)}
	waitRing(t, reps)

	var keys []string
	hash := map[string]uint64{}
	for _, ns := range namespaces {
		for _, name := range []string{"web", "api"} {
			k := ns + "/" + name
			keys = append(keys, k)
			o, err := e.srv.Create(DeploymentKind.Resource, map[string]any{"apiVersion": DeploymentKind.APIVersion(), "kind": DeploymentKind.Kind,
				"metadata": map[string]any{"namespace": ns, "name": name},
				"spec": map[string]any{"replicas": 2, "template": map[string]any{
					"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}}})
			if err != nil {
				t.Fatal(err)
			}
			hash[k] = sharding.Hash(o.UID())
			if field == sharding.FieldNamespace {
				hash[k] = sharding.Hash(ns)
			}
		}
	}
	owner := holders(t, reps, keys, hash)
	allSettled := func(n int) func() bool {
		return func() bool {
			for _, k := range keys {
				ns, name, _ := cutKey(k)
				if !settledIn(t, e.srv, ns, name, n) {
					return false
				}
			}
			return true
		}
	}
	e.waitFor(t, "every MiniDeployment at 2 Pods", allSettled(2))
	working := map[string]bool{}
	for _, k := range keys {
		if got := log.replicas(k); !slices.Equal(got, []string{owner[k]}) {
			t.Errorf("%s reconciled by %v, want only %s", k, got, owner[k])
		}
		working[owner[k]] = true
	}
	if len(working) < 2 || !working["a"] {
		t.Fatalf("only %v worked: the MiniDeployments did not spread (a must hold some)", working)
	}
	checkCaches(t, e, reps, owner)

	// "a" leaves cleanly; "b" and "c" take its MiniDeployments.
	log.mu.Lock()
	clear(log.by)
	log.mu.Unlock()
	reps[0].stop()
	reps = reps[1:]
	waitRing(t, reps)
	after := holders(t, reps, keys, hash)
	e.waitFor(t, "a's MiniDeployments reconciled by their new holders", func() bool {
		for _, k := range keys {
			if owner[k] == "a" && !slices.Contains(log.replicas(k), after[k]) {
				return false
			}
		}
		return true
	})
	for _, k := range keys {
		ns, name, _ := cutKey(k)
		if _, err := e.srv.Mutate(DeploymentKind.Resource, ns, name, func(o apitest.Object) {
			o["spec"].(map[string]any)["replicas"] = 3
		}); err != nil {
			t.Fatal(err)
		}
	}
	e.waitFor(t, "every MiniDeployment at 3 Pods", allSettled(3))
	for _, k := range keys {
		// "a" may have finished a reconcile after the log was cleared, before it left.
		if got := slices.DeleteFunc(log.replicas(k), func(r string) bool { return r == "a" }); !slices.Equal(got, []string{after[k]}) {
			t.Errorf("after the leave %s reconciled by %v, want only %s", k, got, after[k])
		}
	}
	checkCaches(t, e, reps, after)
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, c := range log.clash {
		t.Error("double reconcile: " + c)
	}
}

// checkCaches waits until each replica's caches hold exactly the MiniDeployments it holds
// and their Pods.
func checkCaches(t *testing.T, e *env, reps []*shardReplica, owner map[string]string) {
	t.Helper()
	e.waitFor(t, "caches of the replicas' shares", func() bool {
		for _, r := range reps {
			var want, got, wantPods, gotPods []string
			for k, o := range owner {
				if o == r.name {
					want = append(want, k)
				}
			}
			dinf, err := controller.InformerFor[*MiniDeployment](r.mgr)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range dinf.GetStore().List() {
				got = append(got, d.Namespace+"/"+d.Name)
			}
			pinf, err := controller.InformerFor[*Pod](r.mgr)
			if err != nil {
				t.Fatal(err)
			}
			pods := pinf.GetStore().List()
			for _, p := range pods {
				gotPods = append(gotPods, p.Namespace+"/"+p.Labels[LabelOwner])
			}
			for _, k := range want {
				ns, name, _ := cutKey(k)
				for range 3 {
					wantPods = append(wantPods, ns+"/"+name)
				}
			}
			slices.Sort(want)
			slices.Sort(got)
			slices.Sort(wantPods)
			slices.Sort(gotPods)
			if !slices.Equal(want, got) || !slices.Equal(slices.Compact(wantPods), slices.Compact(gotPods)) {
				return false
			}
		}
		return true
	})
}

func cutKey(k string) (ns, name string, ok bool) {
	i := strings.IndexByte(k, '/')
	if i < 0 {
		return "", "", false
	}
	return k[:i], k[i+1:], true
}

// SetupSharded on a Manager without a ring fails with ErrNoRing.
func TestSetupShardedNeedsARing(t *testing.T) {
	e := newEnv(t)
	mgr, err := controller.NewManager(e.srv.Config(), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SetupSharded(mgr); !errors.Is(err, controller.ErrNoRing) {
		t.Fatalf("SetupSharded without a ring: %v, want ErrNoRing", err)
	}
}
