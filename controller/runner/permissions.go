package runner

import (
	"context"
	"errors"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller/rbac"
	"github.com/informerkit/informerkit/meta"
)

// Permissions sets up every enabled controller as Run would, but without a server: the
// resources the descriptors name count as served, nothing starts and nothing is asked of the
// API server. It returns what the Manager then needs (controller.Manager.Permissions: the
// controllers' informers, owned and status writes, events, the leader election Lease, and
// Descriptor.Permissions), for the controller manager's RBAC (rbac.Manifest). An Init that
// looks up other resources with ControllerContext.IsServed sees them as not served. The
// Runner cannot Run afterwards, nor its Manager start: build new ones to run.
func (r *Runner) Permissions(ctx context.Context) ([]rbac.Rule, error) {
	r.mu.Lock()
	if r.ran {
		r.mu.Unlock()
		return nil, errors.New("runner: Runner already ran")
	}
	r.ran, r.dryRun = true, true
	r.mu.Unlock()
	available := map[meta.GroupVersionResource]apiclient.APIResource{}
	for _, d := range r.descs {
		for _, gvr := range d.Resources {
			available[gvr] = apiclient.APIResource{GroupVersionResource: gvr}
		}
	}
	if err := r.initAll(ctx, available); err != nil {
		return nil, err
	}
	return r.mgr.Permissions(), nil
}
