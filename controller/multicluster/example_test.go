package multicluster_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sync"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/controllerutil"
	"github.com/informerkit/informerkit/controller/multicluster"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// ConfigMap declares the fields the example reads and writes.
type ConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
}

var _ = kinds.MustRegister[*ConfigMap](kinds.ConfigMap)

// A controller that copies the hub's ConfigMaps of namespace default to every cluster of a
// fleet: the hub's ConfigMaps are watched with WatchHub, so that each one is a Request of
// every cluster, and each copy is written with the client of the cluster the Request names.
func Example() {
	hub := apitest.NewServer()
	defer hub.Close()
	_, _ = hub.Create("configmaps", map[string]any{
		"metadata": map[string]any{"namespace": "default", "name": "greeting"},
		"data":     map[string]any{"hello": "world"},
	})
	fleet := multicluster.NewManual()
	var members []*apitest.Server
	for _, name := range []string{"east", "west"} {
		srv := apitest.NewServer()
		defer srv.Close()
		members = append(members, srv)
		_ = fleet.Set(name, srv.Config())
	}

	mgr, err := controller.NewManager(hub.Config(), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	f, err := multicluster.New(mgr, fleet, multicluster.Options{})
	if err != nil {
		panic(err)
	}
	desired := client.TypedFor[*ConfigMap](mgr.Client())
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	copied := map[string]bool{}
	c, err := multicluster.NewController(f, "fleetcopy", multicluster.ReconcilerFunc(
		func(ctx context.Context, cl *multicluster.Cluster, req multicluster.Request) (controller.Result, error) {
			src, err := desired.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
			if meta.IsNotFound(err) {
				return controller.Result{}, nil // deleted: a fuller example deletes the copies
			} else if err != nil {
				return controller.Result{}, err
			}
			copy := &ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: src.Namespace, Name: src.Name}}
			_, _, err = controllerutil.CreateOrUpdate(ctx, client.TypedFor[*ConfigMap](cl.Client()), copy, func(cm *ConfigMap) error {
				cm.Data = maps.Clone(src.Data)
				return nil
			})
			if err != nil {
				return controller.Result{}, err
			}
			mu.Lock()
			defer mu.Unlock()
			if copied[cl.Name()] = true; len(copied) == 2 {
				cancel() // both clusters have their copy: enough for the example
			}
			return controller.Result{}, nil
		}), multicluster.ControllerOptions{})
	if err != nil {
		panic(err)
	}
	if err := multicluster.WatchHubWithOptions(c, controller.EnqueueRequestForObject[*ConfigMap](),
		multicluster.WatchOptions[*ConfigMap]{Informer: controller.InformerOptions{Namespace: "default"}}); err != nil {
		panic(err)
	}
	fmt.Println("Start:", mgr.Start(ctx))
	for i, srv := range members {
		obj, err := srv.Get("configmaps", "default", "greeting")
		fmt.Println([]string{"east", "west"}[i], obj["data"], err)
	}
	// Output:
	// Start: <nil>
	// east map[hello:world] <nil>
	// west map[hello:world] <nil>
}
