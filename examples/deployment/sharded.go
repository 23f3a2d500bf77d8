package deployment

import (
	"github.com/informerkit/informerkit/controller"
)

// SetupSharded is Setup for one replica of a controller sharded across its replicas: mgr
// must be a Manager with ManagerOptions.Sharding (ErrNoRing otherwise). Every replica runs
// the controller at once, without leader election; each MiniDeployment is reconciled only by
// the replica whose share holds it, never by two at once, and each replica caches only the
// MiniDeployments of its share and their Pods. ShardingOptions.Field sharding.FieldNamespace
// suits this controller best: a MiniDeployment and its Pods share a namespace, so the server
// selects both; by uid (the default) the Pods follow their owner's uid, filtered on the
// client. The MiniDeployments of a range a replica gains reach it as new objects of its
// informers and are reconciled then.
func SetupSharded(mgr *controller.Manager) (*controller.Controller, error) {
	return setup(mgr, true, nil)
}
