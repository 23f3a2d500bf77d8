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

	"github.com/informerkit/informerkit/apiclient"
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
	stop func()
}

// startShardReplica runs one replica: its own API client, Ring and Manager.
func startShardReplica(t *testing.T, srv *apitest.Server, log *reconcileLog, name string) *shardReplica {
	t.Helper()
	cfg := srv.Config()
	cfg.MaxRetries = -1
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rg, err := ring.New(c, "default", Name, name, ring.Options{Field: sharding.FieldNamespace,
		LeaseDuration: 2 * time.Second, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 100 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := controller.NewManager(srv.Config(), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setupSharded(mgr, rg, log.wrap(name)); err != nil {
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
		c.Close()
	}
	t.Cleanup(stop)
	return &shardReplica{name: name, ring: rg, stop: stop}
}

// waitRing waits until every replica sees all of them and each namespace is held by
// exactly one, and returns the holder of each namespace.
func waitRing(t *testing.T, reps []*shardReplica, namespaces []string) map[string]string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		owner, ok := map[string]string{}, true
		for _, r := range reps {
			ok = ok && len(r.ring.Members()) == len(reps)
		}
		for _, ns := range namespaces {
			var holders []string
			for _, r := range reps {
				if r.ring.OwnsObject("", ns) {
					holders = append(holders, r.name)
				}
			}
			if len(holders) != 1 {
				ok = false
				break
			}
			owner[ns] = holders[0]
		}
		if ok {
			return owner
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ring of %d replicas did not settle within %v", len(reps), timeout)
		}
		tm := time.NewTimer(20 * time.Millisecond)
		<-tm.C
	}
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
// namespaces; each is reconciled to its Pods by the replica holding its namespace and by no
// other. One replica leaves: the other two reconcile its MiniDeployments at once (without an
// event from them) and then handle their scaling; no key is ever reconciled by two replicas
// at once.
func TestShardedReplicas(t *testing.T) {
	e := newEnv(t)
	log := &reconcileLog{cur: map[string]string{}, by: map[string]map[string]int{}}
	// Not "team-0".."team-7": FNV-1a hashes of names that differ only in their last byte
	// differ by a multiple of the FNV prime (< 2^48), so they fall in one bucket of 2^56.
	namespaces := []string{"shop", "payments", "search", "billing", "auth", "media", "mail", "ads"}
	var keys []string
	for _, ns := range namespaces {
		if _, err := e.srv.Create("namespaces", map[string]any{"metadata": map[string]any{"name": ns}}); err != nil {
			t.Fatal(err)
		}
	}
	reps := []*shardReplica{startShardReplica(t, e.srv, log, "a"), startShardReplica(t, e.srv, log, "b"), startShardReplica(t, e.srv, log, "c")}
	owner := waitRing(t, reps, namespaces)

	for _, ns := range namespaces {
		for _, name := range []string{"web", "api"} {
			keys = append(keys, ns+"/"+name)
			_, err := e.srv.Create(DeploymentKind.Resource, map[string]any{"apiVersion": DeploymentKind.APIVersion(), "kind": DeploymentKind.Kind,
				"metadata": map[string]any{"namespace": ns, "name": name},
				"spec": map[string]any{"replicas": 2, "template": map[string]any{
					"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}}})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
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
		ns, _, _ := cutKey(k)
		if got := log.replicas(k); !slices.Equal(got, []string{owner[ns]}) {
			t.Errorf("%s reconciled by %v, want only %s", k, got, owner[ns])
		}
		working[owner[ns]] = true
	}
	if len(working) < 2 || !working["a"] {
		t.Fatalf("only %v worked: the namespaces did not spread (a must hold some)", working)
	}

	// "a" leaves cleanly; "b" and "c" take its namespaces.
	log.mu.Lock()
	clear(log.by)
	log.mu.Unlock()
	reps[0].stop()
	reps = reps[1:]
	after := waitRing(t, reps, namespaces)
	e.waitFor(t, "a's MiniDeployments reconciled by their new holders", func() bool {
		for _, k := range keys {
			ns, _, _ := cutKey(k)
			if owner[ns] == "a" && !slices.Contains(log.replicas(k), after[ns]) {
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
		ns, _, _ := cutKey(k)
		// "a" may have finished a reconcile after the log was cleared, before it left.
		if got := slices.DeleteFunc(log.replicas(k), func(r string) bool { return r == "a" }); !slices.Equal(got, []string{after[ns]}) {
			t.Errorf("after the leave %s reconciled by %v, want only %s", k, got, after[ns])
		}
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, c := range log.clash {
		t.Error("double reconcile: " + c)
	}
}

func cutKey(k string) (ns, name string, ok bool) {
	i := strings.IndexByte(k, '/')
	if i < 0 {
		return "", "", false
	}
	return k[:i], k[i+1:], true
}

func TestSetupShardedNeedsNamespaceRing(t *testing.T) {
	e := newEnv(t)
	cfg := e.srv.Config()
	cfg.MaxRetries = -1
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rg, err := ring.New(c, "default", Name, "a", ring.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := controller.NewManager(e.srv.Config(), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SetupSharded(mgr, rg); !errors.Is(err, ErrNotByNamespace) {
		t.Fatalf("SetupSharded with a uid ring: %v, want ErrNotByNamespace", err)
	}
}
