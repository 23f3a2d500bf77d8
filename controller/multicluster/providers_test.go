package multicluster_test

import (
	"context"
	"slices"
	"testing"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/controllertest"
	"github.com/informerkit/informerkit/controller/multicluster"
	"github.com/informerkit/informerkit/internal/testobj"
)

// startProviderFleet starts on env a Manager with a Fleet of the provider newProvider
// makes (from the Manager) and a controller watching each cluster's ConfigMaps.
func startProviderFleet(t *testing.T, env *controllertest.Env, newProvider func(*controller.Manager) (multicluster.Provider, error)) *multicluster.Fleet {
	t.Helper()
	var fleet *multicluster.Fleet
	env.StartManager(controller.ManagerOptions{Kinds: testobj.NewRegistry()}, func(mgr *controller.Manager) error {
		p, err := newProvider(mgr)
		if err != nil {
			return err
		}
		if fleet, err = multicluster.New(mgr, p, multicluster.Options{}); err != nil {
			return err
		}
		c, err := multicluster.NewController(fleet, "copy", &recorder{}, multicluster.ControllerOptions{})
		if err != nil {
			return err
		}
		return multicluster.Watch(c, controller.EnqueueRequestForObject[*testobj.ConfigMap]())
	})
	return fleet
}

// waitClusters waits until the fleet's engaged clusters are want.
func waitClusters(t *testing.T, ctx context.Context, fleet *multicluster.Fleet, want ...string) {
	t.Helper()
	for {
		changed := fleet.Changed()
		if got := fleet.Clusters(); slices.Equal(got, want) {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("engaged %q, want %q", fleet.Clusters(), want)
		}
	}
}

// waitWatches waits until s serves n ConfigMap watches.
func waitWatches(t *testing.T, ctx context.Context, s *apitest.Server, n int) {
	t.Helper()
	if err := s.WaitFor(ctx, func() bool { return len(s.Watches("configmaps")) == n }); err != nil {
		t.Fatalf("%d ConfigMap watches on a server, want %d", len(s.Watches("configmaps")), n)
	}
}
