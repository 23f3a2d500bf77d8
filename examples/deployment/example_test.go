package deployment_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/conditions"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/examples/deployment"
	"github.com/informerkit/informerkit/sharding"
)

// The controller on an in-process API server with a simulated node: a MiniDeployment of
// two replicas gets two Pods, which run and get Ready, a finalizer, and its Available and
// RolledOut conditions.
func Example() {
	srv := apitest.NewServer()
	defer srv.Close()
	_ = srv.AddCRD(deployment.CRDYAML) // installing the CRD
	if _, err := srv.StartNodes(apitest.NodesOptions{StartDelay: 10 * time.Millisecond}); err != nil {
		panic(err)
	}
	mgr, err := controller.NewManager(srv.Config(), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	if _, err := deployment.Setup(mgr); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()

	_, err = srv.Create(deployment.DeploymentKind.Resource, map[string]any{"apiVersion": deployment.DeploymentKind.APIVersion(), "kind": deployment.DeploymentKind.Kind,
		"metadata": map[string]any{"namespace": "default", "name": "web"},
		"spec": map[string]any{"replicas": 2, "template": map[string]any{
			"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx"}}}}}})
	if err != nil {
		panic(err)
	}
	var d deployment.MiniDeployment
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	_ = srv.WaitFor(wctx, func() bool {
		o, err := srv.Get(deployment.DeploymentKind.Resource, "default", "web")
		return err == nil && o.Into(&d) == nil && conditions.IsTrue(d.Status.Conditions, deployment.ConditionRolledOut)
	})
	fmt.Println("pods:", d.Status.Replicas, "ready:", d.Status.ReadyReplicas)
	fmt.Println("finalizers:", d.Finalizers)
	for _, c := range d.Status.Conditions {
		fmt.Println(c.Type, c.Status, c.Reason, c.Message)
	}
	cancel()
	fmt.Println("Start:", <-done)
	// Output:
	// pods: 2 ready: 2
	// finalizers: [apps.informerkit.io/pods]
	// Available True ReplicasReady 2 of 2 pods
	// RolledOut True PodsUpdatedAndReady 2 of 2 pods updated and ready
	// Start: <nil>
}

// One replica of the controller sharded by namespace: alone in the ring it holds every
// namespace; started the same way with other identities, replicas split the namespaces.
func ExampleSetupSharded() {
	srv := apitest.NewServer()
	defer srv.Close()
	_ = srv.AddCRD(deployment.CRDYAML)
	mgr, err := controller.NewManager(srv.Config(), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler),
		Sharding: controller.ShardingOptions{Ring: deployment.Name, Identity: "replica-a", Field: sharding.FieldNamespace,
			LeaseDuration: 2 * time.Second, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 100 * time.Millisecond}})
	if err != nil {
		panic(err)
	}
	if _, err := deployment.SetupSharded(mgr); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()

	_, err = srv.Create(deployment.DeploymentKind.Resource, map[string]any{"apiVersion": deployment.DeploymentKind.APIVersion(), "kind": deployment.DeploymentKind.Kind,
		"metadata": map[string]any{"namespace": "default", "name": "web"},
		"spec": map[string]any{"replicas": 2, "template": map[string]any{
			"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx"}}}}}})
	if err != nil {
		panic(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	_ = srv.WaitFor(wctx, func() bool {
		pods, _, _ := srv.List("pods", "default")
		return len(pods) == 2
	})
	pods, _, _ := srv.List("pods", "default")
	fmt.Println("pods:", len(pods))
	cancel() // drains the ring's work and releases its Lease
	fmt.Println("Start:", <-done)
	// Output:
	// pods: 2
	// Start: <nil>
}
