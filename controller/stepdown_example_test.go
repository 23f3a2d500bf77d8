package controller_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
)

// A leader that loses its Lease steps down instead of exiting: here an intruder takes the
// Lease during the first term; the Manager stops its controller, keeps its caches,
// campaigns again, and when it wins once the intruder's Lease has expired, the controller
// starts anew and reconciles again from the warm cache.
func ExampleManagerOptions_leaderElectionStepDown() {
	srv := apitest.NewServer()
	defer srv.Close()
	_, _ = srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "hello"}})

	mgr, err := controller.NewManager(srv.Config(), controller.ManagerOptions{
		Logger:           slog.New(slog.DiscardHandler),
		LeaderElection:   true,
		LeaderElectionID: "example",
		// Short timings for the example; the defaults are 15 s, 10 s, 2 s.
		LeaseDuration: time.Second, RenewDeadline: 800 * time.Millisecond, RetryPeriod: 200 * time.Millisecond,
		LeaderElectionStepDown: true,
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	reconciles := 0
	err = controller.NewBuilder(mgr, "greeter").
		For(controller.Primary[*ConfigMap]()).
		Complete(controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
			reconciles++
			fmt.Printf("reconcile %d: %s\n", reconciles, req)
			if reconciles == 1 {
				// Someone else takes the Lease: this term ends at the next renewal.
				_, _ = srv.Mutate("leases", "default", "example", func(o apitest.Object) {
					o["spec"].(map[string]any)["holderIdentity"] = "intruder"
				})
			} else {
				cancel()
			}
			return controller.Result{}, nil
		}))
	if err != nil {
		panic(err)
	}
	fmt.Println("Start:", mgr.Start(ctx))
	// Output:
	// reconcile 1: default/hello
	// reconcile 2: default/hello
	// Start: <nil>
}
