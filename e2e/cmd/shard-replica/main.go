// Command shard-replica is a helper of the e2e tests (e2e/sharding): one replica of a sharded
// controller. It holds a member Lease of a sharding ring, caches the ConfigMaps of --namespace
// through a sharded informer, and "reconciles" each cached ConfigMap its ranges hold, again
// and again, for --work each. It prints one line per event on stdout, with the wall clock in
// Unix nanoseconds, so that a test running replicas as separate processes can check that no
// ConfigMap is reconciled by two at once:
//
//	START <id> <namespace/name> <ns>   a reconcile began
//	END <id> <namespace/name> <ns>     it ended
//	EXIT <id> <ns> <error|ok>          the replica stopped (after draining and releasing)
//
// With --controller it is event-driven instead: a controller (--workers workers) reconciles
// each ConfigMap the sharded informer delivers, once per change, and prints
//
//	START <id> <namespace/name> <ns>                 a reconcile began
//	END <id> <namespace/name> <ns> <label round>     it ended, having seen this label "round"
//	CACHE <id> <objects cached> <ns>                 the cache size, when it changed
//
// With --manager the same controller is built the way a user builds one: a controller
// Manager with ManagerOptions.Sharding and a Builder with Options.Sharded (the Manager runs
// the ring and shards the informer). With --cluster-roles too, its primary type is
// cluster-scoped: the ClusterRoles labelled shard-e2e=<value>, in a ring that places
// namespaced objects by namespace (a cluster-scoped type is placed by uid); the keys it
// prints are "/<name>". With --deployment the replica runs examples/deployment's
// sharded MiniDeployment controller (deployment.SetupSharded, ring by namespace) and prints
// START and END around each of its reconciles (from the Manager's Tracer).
//
// SIGUSR1 prints the heap after a garbage collection, the resident set and its peak:
//
//	HEAP <id> <bytes of live heap> <ns> <bytes resident> <peak bytes resident>
//
// SIGTERM or SIGINT shut it down cleanly: it drains its reconciles and releases its Lease.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/informerkit/informerkit/meta"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/sharding/listwatch"
	"github.com/informerkit/informerkit/sharding/ring"
)

type configMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
}

var out sync.Mutex

func emit(format string, args ...any) {
	out.Lock()
	defer out.Unlock()
	fmt.Printf(format+"\n", args...)
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig path")
	id := flag.String("id", "", "identity in the ring")
	ns := flag.String("namespace", "default", "namespace of the Leases and of the ConfigMaps")
	ringName := flag.String("ring", "shard-replica", "name of the ring")
	work := flag.Duration("work", 5*time.Millisecond, "duration of one reconcile")
	leaseDuration := flag.Duration("lease-duration", 3*time.Second, "LeaseDuration")
	renewDeadline := flag.Duration("renew-deadline", 2*time.Second, "RenewDeadline")
	retryPeriod := flag.Duration("retry-period", 200*time.Millisecond, "RetryPeriod")
	ctrl := flag.Bool("controller", false, "reconcile through a controller, once per change")
	viaManager := flag.Bool("manager", false, "like --controller, through a Manager with sharding")
	clusterRoles := flag.String("cluster-roles", "", "with --manager: cache the ClusterRoles labelled shard-e2e=<value>, not ConfigMaps")
	deploy := flag.Bool("deployment", false, "run examples/deployment's sharded controller")
	workers := flag.Int("workers", 1, "the controller's workers (with --controller)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go reportHeap(ctx, *id)
	timing := ring.Options{LeaseDuration: *leaseDuration, RenewDeadline: *renewDeadline, RetryPeriod: *retryPeriod}
	var err error
	switch {
	case *viaManager:
		err = runManager(ctx, *kubeconfig, *id, *ns, *ringName, *work, timing, *workers, *clusterRoles)
	case *deploy:
		err = runDeployment(ctx, *kubeconfig, *id, *ns, *ringName, timing)
	default:
		err = run(ctx, *kubeconfig, *id, *ns, *ringName, *work, *leaseDuration, *renewDeadline, *retryPeriod, *ctrl, *workers)
	}
	result := "ok"
	if err != nil {
		result = err.Error()
	}
	emit("EXIT %s %d %s", *id, time.Now().UnixNano(), result)
	if err != nil {
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, id, ns, ringName string, work, leaseDuration, renewDeadline, retryPeriod time.Duration, ctrl bool, workers int) error {
	cfg, err := apiclient.LoadConfigWithOptions(apiclient.LoadOptions{Kubeconfig: kubeconfig})
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ringCfg := *cfg
	ringCfg.MaxRetries = -1
	ringClient, err := apiclient.New(&ringCfg)
	if err != nil {
		return err
	}
	defer ringClient.Close()
	client, err := apiclient.New(cfg)
	if err != nil {
		return err
	}
	defer client.Close()

	r, err := ring.New(ringClient, ns, ringName, id, ring.Options{
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		Logger: log,
	})
	if err != nil {
		return err
	}
	lw, err := listwatch.New[*configMap](apiclient.NewResource[*configMap](client, meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns), r, listwatch.Options{})
	if err != nil {
		return err
	}
	inf := informer.New(lw, informer.Options[*configMap]{Logger: log})

	var wg sync.WaitGroup
	wg.Go(func() { inf.Run(ctx) })
	wg.Go(func() { _ = r.Run(ctx) })
	if ctrl {
		return runController(ctx, &wg, id, r, inf, work, workers)
	}
	wg.Go(func() {
		for ctx.Err() == nil {
			objs := inf.GetStore().List()
			rand.Shuffle(len(objs), func(i, j int) { objs[i], objs[j] = objs[j], objs[i] })
			for _, o := range objs {
				if ctx.Err() != nil {
					return
				}
				// Begin: the ring waits for this reconcile before it gives the range up.
				if done, ok := r.BeginObject(o.UID, o.Namespace); ok {
					key := o.Namespace + "/" + o.Name
					emit("START %s %s %d", id, key, time.Now().UnixNano())
					t := time.NewTimer(work) // the reconcile's I/O
					<-t.C
					emit("END %s %s %d", id, key, time.Now().UnixNano())
					done()
				}
			}
			t := time.NewTimer(10 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
			case <-t.C:
			}
		}
	})
	wg.Wait()
	return nil
}

// runController reconciles each change the sharded informer delivers, under Ring.BeginObject.
func runController(ctx context.Context, wg *sync.WaitGroup, id string, r *ring.Ring, inf *informer.Informer[*configMap], work time.Duration, workers int) error {
	c, err := controller.New("shard-replica", controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		o, ok, _ := inf.GetStore().GetByKey(req.Namespace + "/" + req.Name)
		if !ok {
			return controller.Result{}, nil
		}
		done, ok := r.BeginObject(o.UID, o.Namespace)
		if !ok {
			return controller.Result{}, nil // another replica's now
		}
		defer done()
		return reconcileRecorded(ctx, id, o, work)
	}), controller.Options{MaxConcurrentReconciles: workers})
	if err != nil {
		return err
	}
	if err := c.Watch(controller.FromInformer[*configMap](inf, controller.EnqueueRequestForObject[*configMap]())); err != nil {
		return err
	}
	wg.Go(func() { reportCache(ctx, id, func() int { return len(inf.GetStore().ListKeys()) }) })
	err = c.Start(ctx)
	wg.Wait()
	return err
}

// reconcileRecorded is the replicas' reconcile: it prints START and END lines around the
// reconcile's simulated I/O (work), for the e2e test's check of overlapping reconciles.
func reconcileRecorded(ctx context.Context, id string, o *configMap, work time.Duration) (controller.Result, error) {
	key := o.Namespace + "/" + o.Name
	emit("START %s %s %d", id, key, time.Now().UnixNano())
	t := time.NewTimer(work) // the reconcile's I/O
	select {
	case <-ctx.Done():
		t.Stop()
	case <-t.C:
	}
	round := o.Labels["round"]
	if round == "" {
		round = "-"
	}
	emit("END %s %s %d %s", id, key, time.Now().UnixNano(), round)
	return controller.Result{}, nil
}
