package ring_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/sharding/listwatch"
	"github.com/informerkit/informerkit/sharding/ring"
)

// TestReconcilerShardsAController: two replicas, each a controller over a sharded informer
// with ring.Reconciler; every ConfigMap is reconciled, by the replica that holds it, and
// after a third replica joins, changes are reconciled by their new owners; never two at once.
func TestReconcilerShardsAController(t *testing.T) {
	srv := apitest.NewServer()
	t.Cleanup(srv.Close)
	for i := range 40 {
		if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("cm-%02d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	type rec struct {
		mu    sync.Mutex
		cur   map[string]string   // key -> replica reconciling it
		by    map[string][]string // key -> replicas that reconciled it, in order
		clash []string
	}
	log := &rec{cur: map[string]string{}, by: map[string][]string{}}

	start := func(name string) *replica {
		rep := startReplica(t, srv, newChecker(), name)
		cfg := srv.Config()
		cfg.WatchProtocol = apiclient.WatchChunked
		c, err := apiclient.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		lw, err := listwatch.New(apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default"), rep.ring, listwatch.Options{})
		if err != nil {
			t.Fatal(err)
		}
		inf := informer.New(lw, informer.Options[*testobj.ConfigMap]{Logger: slog.New(slog.DiscardHandler)})
		uidOf := func(req controller.Request) (string, bool) {
			o, ok, _ := inf.GetStore().GetByKey(req.Namespace + "/" + req.Name)
			if !ok {
				return "", false
			}
			return o.UID, true
		}
		ctrl, err := controller.New("sharded-"+name, ring.Reconciler(rep.ring, uidOf, controller.ReconcilerFunc(
			func(ctx context.Context, req controller.Request) (controller.Result, error) {
				key := req.Namespace + "/" + req.Name
				log.mu.Lock()
				if other, busy := log.cur[key]; busy {
					log.clash = append(log.clash, fmt.Sprintf("%s: %s while %s", key, name, other))
				}
				log.cur[key] = name
				log.by[key] = append(log.by[key], name)
				log.mu.Unlock()
				tm := time.NewTimer(2 * time.Millisecond)
				<-tm.C
				log.mu.Lock()
				delete(log.cur, key)
				log.mu.Unlock()
				return controller.Result{}, nil
			})), controller.Options{MaxConcurrentReconciles: 2, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		if err := ctrl.Watch(controller.Kind[*testobj.ConfigMap](inf, controller.EnqueueRequestForObject[*testobj.ConfigMap]())); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { inf.Run(ctx) })
		wg.Go(func() { _ = ctrl.Start(ctx) })
		t.Cleanup(func() {
			cancel()
			wg.Wait()
			c.Close()
		})
		return rep
	}
	reps := []*replica{start("a"), start("b")}
	waitBalanced(t, reps)
	owner := func(uid string) string {
		for _, r := range reps {
			if r.ring.OwnsObject(uid, "default") {
				return r.name
			}
		}
		return ""
	}
	// Every object is reconciled, the last time by its owner.
	waitReconciled := func(what string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			objs, _, err := srv.List("configmaps", "default")
			if err != nil {
				t.Fatal(err)
			}
			missing := 0
			log.mu.Lock()
			for _, o := range objs {
				by := log.by["default/"+o.Name()]
				if len(by) == 0 || by[len(by)-1] != owner(o.UID()) {
					missing++
				}
			}
			log.mu.Unlock()
			if missing == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d objects not reconciled by their owner within 30s", what, missing)
			}
			tm := time.NewTimer(20 * time.Millisecond)
			<-tm.C
		}
	}
	waitReconciled("start")

	reps = append(reps, start("c"))
	waitBalanced(t, reps)
	log.mu.Lock()
	clear(log.by)
	log.mu.Unlock()
	for i := range 40 {
		if _, err := srv.Mutate("configmaps", "default", fmt.Sprintf("cm-%02d", i), func(o apitest.Object) {
			o["data"] = map[string]any{"v": "2"}
		}); err != nil {
			t.Fatal(err)
		}
	}
	waitReconciled("after the join")
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, c := range log.clash {
		t.Error("double reconcile: " + c)
	}
}
