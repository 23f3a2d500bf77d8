package controller

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/sharding"
	"github.com/informerkit/informerkit/sharding/ring"
)

// shardLog records every reconcile of every key by every replica, and any reconcile that
// began while another replica's of the same key was in flight.
type shardLog struct {
	mu    sync.Mutex
	cur   map[string]string   // key -> replica reconciling it now
	by    map[string][]string // key -> replicas that reconciled it, in order
	size  map[string]int      // key -> the spec.size its last reconcile read from the cache
	gone  map[string][]string // key -> replicas that reconciled it while it was not cached
	clash []string
}

func newShardLog() *shardLog {
	return &shardLog{cur: map[string]string{}, by: map[string][]string{}, size: map[string]int{}, gone: map[string][]string{}}
}

// reconciler records the reconciles of replica; cached returns a key's Widget from its
// cache, if there.
func (l *shardLog) reconciler(replica string, cached func(key string) (*testobj.Widget, bool)) Reconciler {
	return ReconcilerFunc(func(ctx context.Context, req Request) (Result, error) {
		key := req.String()
		w, inCache := cached(key)
		l.mu.Lock()
		if !inCache {
			l.gone[key] = append(l.gone[key], replica)
		} else {
			l.size[key] = w.Spec.Size
		}
		if other, busy := l.cur[key]; busy {
			l.clash = append(l.clash, fmt.Sprintf("%s: %s while %s", key, replica, other))
		}
		l.cur[key] = replica
		l.by[key] = append(l.by[key], replica)
		l.mu.Unlock()
		tm := time.NewTimer(2 * time.Millisecond) // a reconcile's I/O: overlaps would show
		<-tm.C
		l.mu.Lock()
		delete(l.cur, key)
		l.mu.Unlock()
		return Result{}, nil
	})
}

func (l *shardLog) last(key string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if by := l.by[key]; len(by) > 0 {
		return by[len(by)-1]
	}
	return ""
}

// lastSize returns the spec.size the last reconcile of key read.
func (l *shardLog) lastSize(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.size[key]
}

func (l *shardLog) check(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.clash {
		t.Error("double reconcile: " + c)
	}
}

// shardedReplica is one replica: a Manager in the ring "widgets" with a sharded controller
// of primary type Widget (through gvr) that owns ConfigMaps.
type shardedReplica struct {
	name     string
	mgr      *Manager
	ctl      *Controller
	children *OwnedType[*testobj.ConfigMap]
	stop     func() error
}

func startShardedReplica(t *testing.T, srv *apitest.Server, reg *kinds.Registry, gvr meta.GroupVersionResource, field sharding.Field, log *shardLog, name string) *shardedReplica {
	t.Helper()
	m := newManager(t, srv, ManagerOptions{Kinds: reg, Sharding: ShardingOptions{Ring: "widgets", Identity: name, Field: field,
		LeaseDuration: 2 * time.Second, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 100 * time.Millisecond}})
	children := Owned[*testobj.ConfigMap]()
	primary := Primary[*testobj.Widget]()
	cached := func(key string) (*testobj.Widget, bool) {
		w, ok, _ := primary.Informer().GetStore().GetByKey(key)
		return w, ok
	}
	ctl, err := NewBuilder(m, "widgets").
		For(primary).
		Owns(children).
		WithOptions(Options{Logger: quiet, Sharded: true, MaxConcurrentReconciles: 2}).
		Build(log.reconciler(name, cached))
	if err != nil {
		t.Fatal(err)
	}
	if ctl.NeedLeaderElection() {
		t.Error("a sharded controller needs leader election")
	}
	stop, _ := startManager(t, m)
	return &shardedReplica{name: name, mgr: m, ctl: ctl, children: children, stop: stop}
}

// waitShares waits until every replica sees all of them and holds its share of their
// assignment.
func waitShares(t *testing.T, reps []*shardedReplica) {
	t.Helper()
	var names []string
	for _, r := range reps {
		names = append(names, r.name)
	}
	a, err := ring.Assign(names, 0)
	if err != nil {
		t.Fatal(err)
	}
	pollUntil(t, fmt.Sprintf("the ring of %v settled", names), func() bool {
		for _, r := range reps {
			if len(r.mgr.Ring().Members()) != len(reps) || !slices.Equal(r.mgr.Ring().Held(), a.Ranges(r.name)) {
				return false
			}
		}
		return true
	})
}

// holder returns the replica holding hash h.
func holder(reps []*shardedReplica, h uint64) string {
	for _, r := range reps {
		if r.mgr.Ring().Owns(h) {
			return r.name
		}
	}
	return ""
}

// Sharded controllers on three Managers: every Widget is reconciled by the replica holding
// it (by uid, or by namespace), each replica caches only its Widgets and their ConfigMaps,
// a join moves work and cache to the new replica (which reconciles what it gains at once), a
// deleted Widget's last reconcile runs on its holder, and no Widget is ever reconciled by two
// replicas at once.
func TestShardedControllersSplitWorkAndCaches(t *testing.T) {
	for _, field := range []sharding.Field{sharding.FieldUID, sharding.FieldNamespace} {
		t.Run(string(field), func(t *testing.T) { testShardedControllers(t, field) })
	}
}

func testShardedControllers(t *testing.T, field sharding.Field) {
	srv, _ := newWidgetServer(t)
	reg := testobj.NewRegistry()
	namespaces := []string{"shop", "payments", "search", "billing", "auth", "media", "mail", "ads"}
	hash := map[string]uint64{} // widget key -> the hash that places it
	var keys []string
	for i, ns := range namespaces {
		if _, err := srv.Create("namespaces", map[string]any{"metadata": map[string]any{"name": ns}}); err != nil {
			t.Fatal(err)
		}
		for j := range 4 {
			w, err := srv.Create("widgets", widget(ns, fmt.Sprintf("w-%d-%d", i, j)))
			if err != nil {
				t.Fatal(err)
			}
			key := ns + "/" + w.Name()
			keys = append(keys, key)
			hash[key] = sharding.Hash(w.UID())
			if field == sharding.FieldNamespace {
				hash[key] = sharding.Hash(ns)
			}
			for k := range 2 {
				if _, err := srv.Create("configmaps", ownedConfigMap(ns, fmt.Sprintf("%s-%d", w.Name(), k), w, true)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	log := newShardLog()
	gvr := testobj.WidgetGVR
	reps := []*shardedReplica{
		startShardedReplica(t, srv, reg, gvr, field, log, "a"),
		startShardedReplica(t, srv, reg, gvr, field, log, "b"),
	}
	waitShares(t, reps)
	// settled waits until every Widget's last reconcile ran on its holder and read the
	// Widget's current size, and every cache holds its replica's share.
	settled := func(what string, size int) {
		t.Helper()
		pollUntil(t, what, func() bool {
			for _, k := range keys {
				if log.last(k) != holder(reps, hash[k]) || log.lastSize(k) != size {
					return false
				}
			}
			return true
		})
		pollUntil(t, what+": caches of the shares", func() bool {
			for _, r := range reps {
				var want, got, gotChildren []string
				for _, k := range keys {
					if holder(reps, hash[k]) == r.name {
						want = append(want, k)
					}
				}
				for _, w := range mustInformer[*testobj.Widget](t, r.mgr).GetStore().List() {
					got = append(got, w.Namespace+"/"+w.Name)
				}
				for _, c := range r.children.Informer().GetStore().List() {
					owner := c.OwnerReferences[0]
					gotChildren = append(gotChildren, c.Namespace+"/"+owner.Name)
				}
				slices.Sort(want)
				slices.Sort(got)
				slices.Sort(gotChildren)
				if !slices.Equal(want, got) || !slices.Equal(want, slices.Compact(gotChildren)) || len(gotChildren) != 2*len(want) {
					return false
				}
			}
			return true
		})
	}
	settled("the start", 1)
	working := map[string]bool{}
	for _, k := range keys {
		working[log.last(k)] = true
	}
	if len(working) != 2 {
		t.Fatalf("only %v worked", working)
	}

	// A join: the third replica takes its share, reconciles it at once, and changes are
	// reconciled by their new holders.
	reps = append(reps, startShardedReplica(t, srv, reg, gvr, field, log, "c"))
	all := slices.Clone(reps)
	waitShares(t, reps)
	settled("after the join", 1)
	for _, k := range keys {
		ns, name := splitKey(k)
		if _, err := srv.Mutate("widgets", ns, name, func(o apitest.Object) { o["spec"] = map[string]any{"size": 2} }); err != nil {
			t.Fatal(err)
		}
	}
	settled("after the changes", 2)

	// A deletion is reconciled by the holder, though the object has left its cache.
	victim := keys[0]
	ns, name := splitKey(victim)
	if err := srv.Delete("widgets", ns, name); err != nil {
		t.Fatal(err)
	}
	var by []string
	pollUntil(t, "the deletion reconciled", func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		by = slices.Clone(log.gone[victim])
		return len(by) > 0
	})
	if want := holder(reps, hash[victim]); !slices.Equal(by, []string{want}) {
		t.Errorf("the deletion of %s was reconciled by %v, want %s", victim, by, want)
	}
	for k := range 2 { // apitest has no garbage collector
		if err := srv.Delete("configmaps", ns, fmt.Sprintf("%s-%d", name, k)); err != nil {
			t.Fatal(err)
		}
	}

	// A clean leave hands over at once.
	if err := reps[0].stop(); err != nil {
		t.Fatal(err)
	}
	reps = reps[1:]
	keys = keys[1:]
	waitShares(t, reps)
	settled("after the leave", 2)
	log.check(t)

	// Requests a replica did not hold (the synthetic deletions of the ranges it gave up)
	// were dropped uncounted: Stats.Reconciles counts the reconciles that ran.
	for _, r := range all {
		if err := r.stop(); err != nil {
			t.Fatal(err)
		}
	}
	notHeld := uint64(0)
	for _, r := range all {
		st := r.ctl.Stats()
		notHeld += st.NotHeld
		log.mu.Lock()
		ran := 0
		for _, by := range log.by {
			for _, who := range by {
				if who == r.name {
					ran++
				}
			}
		}
		log.mu.Unlock()
		if st.Reconciles != uint64(ran) {
			t.Errorf("%s: Stats.Reconciles %d, but %d reconciles ran", r.name, st.Reconciles, ran)
		}
	}
	if notHeld == 0 {
		t.Error("no Request was dropped as not held, though ranges moved")
	}
}

// A Widget deleted while a reconcile of it runs is reconciled again once that reconcile
// ends, though it has left the cache: the end of the running reconcile does not make the
// gate forget the deletion that arrived meanwhile (it did, and the deletion's Request was
// then dropped as not placeable, never reconciled).
func TestShardedDeletionDuringAReconcileIsReconciled(t *testing.T) {
	srv, _ := newWidgetServer(t)
	reg := testobj.NewRegistry()
	if _, err := srv.Create("namespaces", map[string]any{"metadata": map[string]any{"name": "shop"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Create("widgets", widget("shop", "w")); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, srv, ManagerOptions{Kinds: reg, Sharding: ShardingOptions{Ring: "widgets", Identity: "a",
		LeaseDuration: 2 * time.Second, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 100 * time.Millisecond}})
	primary := Primary[*testobj.Widget]()
	type seen struct{ size, cached int } // cached: 1 if the reconcile found the Widget cached
	got := make(chan seen, 10)
	entered, release := make(chan struct{}), make(chan struct{})
	ctl, err := NewBuilder(m, "widgets").For(primary).WithOptions(Options{Logger: quiet, Sharded: true}).
		Build(ReconcilerFunc(func(ctx context.Context, req Request) (Result, error) {
			w, ok, _ := primary.Informer().GetStore().GetByKey(req.String())
			s := seen{}
			if ok {
				s = seen{size: w.Spec.Size, cached: 1}
			}
			if s.size == 2 { // the change: held until the Widget is deleted
				close(entered)
				<-release
			}
			got <- s
			return Result{}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	startManager(t, m)
	want := func(w seen, why string) {
		t.Helper()
		select {
		case s := <-got:
			if s != w {
				t.Fatalf("%s: the reconcile saw %+v, want %+v", why, s, w)
			}
		case <-time.After(testTimeout):
			t.Fatalf("%s: no reconcile", why)
		}
	}
	want(seen{size: 1, cached: 1}, "the start")
	if _, err := srv.Mutate("widgets", "shop", "w", func(o apitest.Object) { o["spec"] = map[string]any{"size": 2} }); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, entered, "the reconcile of the change")
	if err := srv.Delete("widgets", "shop", "w"); err != nil {
		t.Fatal(err)
	}
	req := Request{Namespace: "shop", Name: "w"}
	pollUntil(t, "the gate told of the deletion", func() bool {
		ctl.shard.mu.Lock()
		defer ctl.shard.mu.Unlock()
		_, ok := ctl.shard.gone[req]
		return ok
	})
	close(release)
	want(seen{size: 2, cached: 1}, "the change")
	want(seen{}, "the deletion")
	pollUntil(t, "the gate forgot the reconciled deletion", func() bool {
		ctl.shard.mu.Lock()
		defer ctl.shard.mu.Unlock()
		return len(ctl.shard.gone) == 0
	})
}

func splitKey(k string) (ns, name string) {
	for i := range len(k) {
		if k[i] == '/' {
			return k[:i], k[i+1:]
		}
	}
	return "", k
}

// A cluster-scoped primary type is placed by uid even in a ring that places namespaced
// objects by namespace (the namespace of them all is "").
func TestShardedClusterScopedByUID(t *testing.T) {
	srv := newTestServer(t)
	info := kinds.Info{Group: "example.com", Version: "v1", Kind: "Gadget", Resource: "gadgets"}
	if err := srv.AddResource(apitest.ResourceType{Group: info.Group, Version: info.Version, Kind: info.Kind, Plural: info.Resource}); err != nil {
		t.Fatal(err)
	}
	reg := kinds.NewRegistry()
	if err := reg.Register(reflect.TypeFor[*testobj.Widget](), info); err != nil {
		t.Fatal(err)
	}
	hash := map[string]uint64{}
	var keys []string
	for i := range 24 {
		g, err := srv.Create("gadgets", map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget",
			"metadata": map[string]any{"name": fmt.Sprintf("g-%02d", i)}, "spec": map[string]any{"size": 1}})
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, g.Name())
		hash[g.Name()] = sharding.Hash(g.UID())
	}
	log := newShardLog()
	gvr := info.GroupVersionResource()
	reps := []*shardedReplica{
		startShardedReplica(t, srv, reg, gvr, sharding.FieldNamespace, log, "a"),
		startShardedReplica(t, srv, reg, gvr, sharding.FieldNamespace, log, "b"),
	}
	waitShares(t, reps)
	pollUntil(t, "every gadget reconciled by its holder", func() bool {
		for _, k := range keys {
			if log.last(k) != holder(reps, hash[k]) {
				return false
			}
		}
		return true
	})
	by := map[string]int{}
	for _, k := range keys {
		by[log.last(k)]++
	}
	if len(by) != 2 {
		t.Errorf("gadgets reconciled by %v: not spread by uid", by)
	}
	for _, r := range reps {
		if n := len(mustInformer[*testobj.Widget](t, r.mgr).GetStore().ListKeys()); n != by[r.name] {
			t.Errorf("%s caches %d gadgets, holds %d", r.name, n, by[r.name])
		}
	}
	log.check(t)
}

// The errors of a sharded Builder: no ring, no primary type, a resource another controller
// already watches unsharded; New refuses Options.Sharded.
func TestShardedBuilderErrors(t *testing.T) {
	srv, _ := newWidgetServer(t)
	reg := testobj.NewRegistry()
	plain := newManager(t, srv, ManagerOptions{Kinds: reg})
	_, err := NewBuilder(plain, "w").For(Primary[*testobj.Widget]()).WithOptions(Options{Sharded: true}).Build(forward(nil))
	if !errors.Is(err, ErrNoRing) {
		t.Errorf("without a ring: %v, want ErrNoRing", err)
	}
	m := newManager(t, srv, ManagerOptions{Kinds: reg, Sharding: ShardingOptions{Ring: "r", Identity: "a"}})
	src := FromInformer(mustInformer[*testobj.ConfigMap](t, m), EnqueueRequestForObject[*testobj.ConfigMap]())
	if _, err := NewBuilder(m, "w").WatchesSource(src).WithOptions(Options{Sharded: true}).Build(forward(nil)); !errors.Is(err, ErrNoPrimary) {
		t.Errorf("without For: %v, want ErrNoPrimary", err)
	}
	// ConfigMaps have an unsharded informer already: they cannot be sharded as children.
	_, err = NewBuilder(m, "w2").For(Primary[*testobj.Widget]()).Owns(Owned[*testobj.ConfigMap]()).
		WithOptions(Options{Sharded: true}).Build(forward(nil))
	if !errors.Is(err, informer.ErrShardConflict) {
		t.Errorf("owning a resource watched unsharded: %v, want ErrShardConflict", err)
	} else {
		t.Log(err)
	}
	if _, err := New("x", forward(nil), Options{Sharded: true}); err == nil {
		t.Error("New accepted Options.Sharded")
	}
	if _, err := NewManager(srv.Config(), ManagerOptions{Sharding: ShardingOptions{Ring: "r", Buckets: 3}}); err == nil {
		t.Error("NewManager accepted 3 buckets")
	}
}
