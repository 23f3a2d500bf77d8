package controller_test

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/kinds"
)

// A controller that follows its CustomResourceDefinition (Options.FollowResources): it waits
// while the CRD is missing, starts when the CRD is established, stops when the CRD is
// deleted, and waits again, all without restarting the Manager.
func ExampleOptions_followResources() {
	srv := apitest.NewServer()
	defer srv.Close()
	reg := kinds.NewRegistry()
	_ = reg.Register(reflect.TypeFor[*Widget](), kinds.Info{Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets", Namespaced: true})
	mgr, err := controller.NewManager(srv.Config(), controller.ManagerOptions{Kinds: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	reconciled := make(chan controller.Request, 10)
	ctl, err := controller.NewBuilder(mgr, "widgets").
		For(controller.Primary[*Widget]()).
		WithOptions(controller.Options{FollowResources: true}).
		Build(controller.ReconcilerFunc(func(_ context.Context, req controller.Request) (controller.Result, error) {
			reconciled <- req
			return controller.Result{}, nil
		}))
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	until := func(cond func() bool) {
		for !cond() {
			time.Sleep(10 * time.Millisecond) // polls the controller's state
		}
	}

	until(func() bool { return len(ctl.Waiting()) > 0 })
	fmt.Println("waiting for", ctl.Waiting())

	crd := map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{"group": "example.com", "scope": "Namespaced",
			"names": map[string]any{"kind": "Widget", "plural": "widgets"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}}
	const crds = "customresourcedefinitions.apiextensions.k8s.io"
	if _, err := srv.Create(crds, crd); err != nil {
		panic(err)
	}
	until(ctl.Running)
	if _, err := srv.Create("widgets", map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": "default", "name": "w"}}); err != nil {
		panic(err)
	}
	fmt.Println("reconciled", <-reconciled)

	if err := srv.Delete(crds, "", "widgets.example.com"); err != nil {
		panic(err)
	}
	until(func() bool { return !ctl.Running() && len(ctl.Waiting()) > 0 })
	fmt.Println("stopped; waiting for", ctl.Waiting())

	cancel()
	fmt.Println("Start:", <-done)
	// Output:
	// waiting for [widgets.v1.example.com]
	// reconciled default/w
	// stopped; waiting for [widgets.v1.example.com]
	// Start: <nil>
}
