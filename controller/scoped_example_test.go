package controller_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/informer"
)

// A controller whose cache holds the ConfigMaps of the namespaces it serves: a namespace
// added while it runs is listed on its own and its objects reconciled; those already cached
// are not reconciled again. Scoped also serves a controller that follows its resources
// (each life starts with the scope last set).
func ExampleScoped() {
	srv := apitest.NewServer()
	defer srv.Close()
	for _, ns := range []string{"team-a", "team-b"} {
		_, _ = srv.Create("namespaces", map[string]any{"metadata": map[string]any{"name": ns}})
		_, _ = srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": ns, "name": "settings"}})
	}
	mgr, err := controller.NewManager(srv.Config(), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	reconciled := make(chan controller.Request, 10)
	c, err := controller.New("settings", controller.ReconcilerFunc(func(_ context.Context, req controller.Request) (controller.Result, error) {
		reconciled <- req
		return controller.Result{}, nil
	}), controller.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	src := controller.Scoped(mgr, informer.Scope{Namespaces: []string{"team-a"}}, controller.EnqueueRequestForObject[*ConfigMap]())
	if err := c.Watch(src); err != nil {
		panic(err)
	}
	if err := mgr.Add(c); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()

	fmt.Println("reconciled", <-reconciled)
	if err := src.SetScope(ctx, informer.Scope{Namespaces: []string{"team-a", "team-b"}}); err != nil {
		panic(err)
	}
	fmt.Println("reconciled", <-reconciled)

	cancel()
	fmt.Println("Start:", <-done)
	// Output:
	// reconciled team-a/settings
	// reconciled team-b/settings
	// Start: <nil>
}
