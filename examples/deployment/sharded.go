package deployment

import (
	"context"
	"errors"

	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/sharding"
	"github.com/informerkit/informerkit/sharding/ring"
)

// ErrNotByNamespace: SetupSharded needs a ring that shards by namespace.
var ErrNotByNamespace = errors.New("deployment: a sharded MiniDeployment controller needs a ring on sharding.FieldNamespace")

// SetupSharded is Setup for one replica of a controller sharded across replicas by rg, which
// must hash sharding.FieldNamespace so that a MiniDeployment and its Pods are one replica's.
// The Manager runs rg (without leader election: every replica works); each MiniDeployment
// is reconciled only by the replica holding its namespace, never by two at once, and the
// MiniDeployments of ranges a replica gains are reconciled when it gains them.
func SetupSharded(mgr *controller.Manager, rg *ring.Ring) (*controller.Controller, error) {
	return setupSharded(mgr, rg, nil)
}

// setupSharded is SetupSharded; wrap, if set, wraps the Reconciler inside the ring's gate
// (tests record the reconciles that run).
func setupSharded(mgr *controller.Manager, rg *ring.Ring, wrap func(controller.Reconciler) controller.Reconciler) (*controller.Controller, error) {
	if rg.Field() != sharding.FieldNamespace {
		return nil, ErrNotByNamespace
	}
	c, err := setup(mgr, func(r controller.Reconciler) controller.Reconciler {
		if wrap != nil {
			r = wrap(r)
		}
		return ring.Reconciler(rg, nil, r)
	})
	if err != nil {
		return nil, err
	}
	if err := c.Watch(&gainedRanges{ring: rg, mgr: mgr}); err != nil {
		return nil, err
	}
	return c, mgr.Add(controller.WithoutLeaderElection(controller.RunnableFunc(rg.Run)))
}

// gainedRanges enqueues the cached MiniDeployments a replica holds whenever its held ranges
// change: the informers are not sharded, so a gained range brings no event of its own.
type gainedRanges struct {
	ring *ring.Ring
	mgr  *controller.Manager
}

func (g *gainedRanges) Run(ctx context.Context, q controller.Queue) error {
	store := controller.InformerFor[*MiniDeployment](g.mgr, DeploymentGVR).GetStore()
	changed := g.ring.Changed()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
		changed = g.ring.Changed() // before listing: a change while we list wakes us again
		for _, d := range store.List() {
			if g.ring.OwnsObject(d.UID, d.Namespace) {
				q.Add(controller.RequestFor(d))
			}
		}
	}
}

func (g *gainedRanges) HasSynced() bool { return true }
