package controller_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/controllerutil"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// Widget is a namespaced custom resource whose controller keeps one ConfigMap per Widget.
type Widget struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            struct {
		Color string `json:"color"`
	} `json:"spec"`
}

// A controller wired with the Builder: Widgets are the primary type, the ConfigMaps they
// control are children (a change to one reconciles its Widget), and the reconciler lists a
// Widget's children with ChildrenOf.
func ExampleBuilder() {
	srv := apitest.NewServer()
	defer srv.Close()
	_ = srv.AddResource(apitest.ResourceType{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true})
	_, _ = srv.Create("widgets", map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": "default", "name": "w"}, "spec": map[string]any{"color": "blue"}})

	// The type registry gives the Builder, owner references, events and the client the kind
	// and resource of each type: stated once.
	_ = kinds.Register[*Widget](kinds.Info{Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets", Namespaced: true})
	mgr, err := controller.NewManager(srv.Config(), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	widgets := client.TypedFor[*Widget](mgr.Client())
	configMaps := client.TypedFor[*ConfigMap](mgr.Client())
	children := controller.Owned[*ConfigMap]()

	ctx, cancel := context.WithCancel(context.Background())
	_, err = controller.NewBuilder(mgr, "widgets").
		For(controller.Primary[*Widget]()).
		Owns(children).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2, MaxRetries: 15}).
		Build(controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
			w, err := widgets.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
			if meta.IsNotFound(err) {
				return controller.Result{}, nil
			} else if err != nil {
				return controller.Result{}, err
			}
			cms, err := children.ChildrenOf(w)
			if err != nil || len(cms) > 0 {
				if len(cms) > 0 {
					fmt.Printf("%s has %d child: %s (color=%s)\n", req, len(cms), cms[0].Name, cms[0].Data["color"])
					cancel()
				}
				return controller.Result{}, err
			}
			cm := &ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: w.Namespace, Name: w.Name + "-config"},
				Data: map[string]string{"color": w.Spec.Color}}
			if err := controllerutil.SetControllerReference(w, cm); err != nil {
				return controller.Result{}, err
			}
			fmt.Println("creating", cm.Name)
			_, err = configMaps.Create(ctx, cm, client.CreateOptions{})
			return controller.Result{}, err // the child's event reconciles w again
		}))
	if err != nil {
		panic(err)
	}
	fmt.Println("Start:", mgr.Start(ctx))
	// Output:
	// creating w-config
	// default/w has 1 child: w-config (color=blue)
	// Start: <nil>
}
