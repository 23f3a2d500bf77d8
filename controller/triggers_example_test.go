package controller_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
)

// A reconciler asks why it runs: the first reconcile of an existing object says it came
// from the informer's initial list; the retry after an error names the error.
func ExampleTriggersFrom() {
	srv := apitest.NewServer()
	defer srv.Close()
	_, _ = srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "hello"}})

	mgr, err := controller.NewManager(srv.Config(), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runs := 0
	err = controller.NewBuilder(mgr, "why").
		For(controller.Primary[*ConfigMap]()).
		Complete(controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
			runs++
			for _, t := range controller.TriggersFrom(ctx).List {
				fmt.Printf("reconcile %s: %s from %q of %s/%s (%q)\n", req, t.Kind, t.Source, t.Namespace, t.Name, t.Reason)
			}
			if runs == 1 {
				return controller.Result{}, fmt.Errorf("not yet")
			}
			cancel()
			return controller.Result{}, nil
		}))
	if err != nil {
		panic(err)
	}
	_ = mgr.Start(ctx)
	// Output:
	// reconcile default/hello: initial_list from "configmaps.v1" of default/hello ("")
	// reconcile default/hello: retry from "" of default/hello ("not yet")
}
