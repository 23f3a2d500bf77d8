package multicluster_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/multicluster"
)

// A fleet of the clusters a cluster inventory publishes as ClusterProfiles on the hub. In
// production Access (LoadAccessConfig: the access provider file) says how a profile is
// reached; here a ProfileConfigFunc maps the profile to a test server of its own.
func ExampleNewClusterProfiles() {
	hub := apitest.NewServer()
	defer hub.Close()
	if err := hub.AddCRD(clusterProfileCRD); err != nil {
		panic(err)
	}
	member := apitest.NewServer()
	defer member.Close()
	o, err := hub.Create("clusterprofiles", map[string]any{
		"metadata": map[string]any{"namespace": "default", "name": "east",
			"labels": map[string]any{multicluster.ClusterManagerLabel: "inventory"}},
		"spec": map[string]any{"clusterManager": map[string]any{"name": "inventory"}},
	})
	if err != nil {
		panic(err)
	}
	o["status"] = map[string]any{"conditions": []any{map[string]any{"type": multicluster.ControlPlaneHealthy,
		"status": "True", "reason": "Probed", "lastTransitionTime": "2026-01-01T00:00:00Z"}}}
	if _, err := hub.UpdateStatus("clusterprofiles", o); err != nil {
		panic(err)
	}

	mgr, err := controller.NewManager(hub.Config(), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	profiles, err := multicluster.NewClusterProfiles(mgr.APIClient(), multicluster.ClusterProfilesOptions{
		ClusterManager: "inventory",
		Config: func(_ context.Context, p *multicluster.ClusterProfile) (*apiclient.Config, error) {
			return member.Config(), nil
		},
	})
	if err != nil {
		panic(err)
	}
	fleet, err := multicluster.New(mgr, profiles, multicluster.Options{})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			changed := fleet.Changed()
			if len(fleet.Clusters()) > 0 {
				break
			}
			<-changed
		}
		cancel()
	}()
	_ = mgr.Start(ctx)
	fmt.Println(fleet.Known())
	// Output:
	// [default/east]
}
