package multicluster_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/controllertest"
	"github.com/informerkit/informerkit/controller/multicluster"
	"github.com/informerkit/informerkit/internal/testobj"
)

// spreadLog records the reconciles of every replica: who reconciled which Request, and
// whether two replicas ever reconciled one Request at once.
type spreadLog struct {
	mu       sync.Mutex
	inflight map[string]string // Request -> replica
	by       map[string]map[string]int
	double   []string
}

func (l *spreadLog) reconciler(replica string) multicluster.Reconciler {
	return multicluster.ReconcilerFunc(func(ctx context.Context, cl *multicluster.Cluster, req multicluster.Request) (controller.Result, error) {
		k := req.String()
		l.mu.Lock()
		if other, ok := l.inflight[k]; ok {
			l.double = append(l.double, fmt.Sprintf("%s on %s and %s", k, other, replica))
		}
		l.inflight[k] = replica
		if l.by[replica] == nil {
			l.by[replica] = map[string]int{}
		}
		l.by[replica][req.Cluster]++
		l.mu.Unlock()
		time.Sleep(10 * time.Millisecond) // a reconcile that takes time: a hand-over meets it in flight
		l.mu.Lock()
		delete(l.inflight, k)
		l.mu.Unlock()
		return controller.Result{}, nil
	})
}

type spreadReplica struct {
	name  string
	run   *controllertest.Running
	fleet *multicluster.Fleet
	ctrl  *multicluster.Controller
}

func startSpreadReplica(t *testing.T, env *controllertest.Env, clusters map[string]*apitest.Server, log *spreadLog, name string) *spreadReplica {
	t.Helper()
	r := &spreadReplica{name: name}
	p := multicluster.NewManual()
	for n, s := range clusters {
		if err := p.Set(n, s.Config()); err != nil {
			t.Fatal(err)
		}
	}
	opts := controller.ManagerOptions{Kinds: testobj.NewRegistry(), Sharding: controller.ShardingOptions{
		Ring: "fleet", Identity: name, LeaseDuration: 2 * time.Second, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 100 * time.Millisecond}}
	r.run = env.StartManager(opts, func(mgr *controller.Manager) error {
		var err error
		if r.fleet, err = multicluster.New(mgr, p, multicluster.Options{Spread: true}); err != nil {
			return err
		}
		if r.ctrl, err = multicluster.NewController(r.fleet, "copy", log.reconciler(name), multicluster.ControllerOptions{}); err != nil {
			return err
		}
		return multicluster.Watch(r.ctrl, controller.EnqueueRequestForObject[*testobj.ConfigMap]())
	})
	return r
}

// active returns the clusters r reconciles.
func (r *spreadReplica) active(names []string) []string {
	var out []string
	for _, n := range names {
		if r.fleet.Active(n) {
			out = append(out, n)
		}
	}
	return out
}

// A spread fleet places each cluster on one replica of the ring, and when a replica leaves
// its clusters pass to the one left, without a Request ever reconciled by two replicas at
// once; a replica keeps the clusters it would take over engaged on standby.
func TestSpreadFleetPlacesEachClusterOnOneReplica(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clusters := map[string]*apitest.Server{}
		var names []string
		for i := range 8 {
			n := fmt.Sprintf("cluster-%d", i)
			clusters[n] = member(t, n)
			names = append(names, n)
		}
		env := newHub(t)
		log := &spreadLog{inflight: map[string]string{}, by: map[string]map[string]int{}}
		r1 := startSpreadReplica(t, env, clusters, log, "r1")
		r2 := startSpreadReplica(t, env, clusters, log, "r2")
		split := func() bool {
			a1, a2 := r1.active(names), r2.active(names)
			return len(a1) > 0 && len(a2) > 0 && len(a1)+len(a2) == len(names) &&
				!slices.ContainsFunc(a1, func(n string) bool { return slices.Contains(a2, n) })
		}
		waitFor(t, r1.fleet, "the clusters split over r1 and r2", split)
		waitFor(t, r2.fleet, "the clusters split over r1 and r2", split)
		// Each replica's standby clusters are the other's (the next holder of each).
		if got := r1.fleet.Clusters(); !slices.Equal(got, names) {
			t.Errorf("r1 engages %q, want all (its own and its standbys)", got)
		}
		waitFor(t, r1.fleet, "every cluster reconciled", func() bool {
			log.mu.Lock()
			defer log.mu.Unlock()
			n := 0
			for _, m := range log.by {
				n += len(m)
			}
			return n >= len(names)
		})

		if err := r2.run.Stop(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, r1.fleet, "r1 holding every cluster", func() bool { return len(r1.active(names)) == len(names) })
		waitFor(t, r1.fleet, &debug{"r1 reconciling every cluster", r1, names, log}, func() bool {
			log.mu.Lock()
			defer log.mu.Unlock()
			return len(log.by["r1"]) == len(names)
		})
		log.mu.Lock()
		defer log.mu.Unlock()
		if len(log.double) > 0 {
			t.Errorf("double reconciles: %q", log.double)
		}
	})
}

// debug names what a wait waits for, and the replica's state when the wait fails.
type debug struct {
	what  string
	r     *spreadReplica
	names []string
	log   *spreadLog
}

func (d *debug) String() string {
	out := fmt.Sprintf("%s (%+v; ", d.what, d.r.ctrl.Stats())
	for _, n := range d.names {
		st, ok := d.r.ctrl.ClusterStats(n)
		out += fmt.Sprintf("%s active=%v %v %+v; ", n, d.r.fleet.Active(n), ok, st)
	}
	d.log.mu.Lock()
	out += fmt.Sprint(d.log.by) + ")"
	d.log.mu.Unlock()
	return out
}
