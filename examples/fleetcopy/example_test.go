package fleetcopy_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/multicluster"
	"github.com/informerkit/informerkit/examples/fleetcopy"
)

// The hub's labelled ConfigMap appears in both clusters of the fleet.
func Example() {
	hub := apitest.NewServer()
	defer hub.Close()
	_, _ = hub.Create("configmaps", map[string]any{
		"metadata": map[string]any{"namespace": "default", "name": "settings", "labels": map[string]any{fleetcopy.LabelCopy: "true"}},
		"data":     map[string]any{"level": "1"},
	})
	provider := multicluster.NewManual()
	east, west := apitest.NewServer(), apitest.NewServer()
	defer east.Close()
	defer west.Close()
	_ = provider.Set("east", east.Config())
	_ = provider.Set("west", west.Config())

	mgr, err := controller.NewManager(hub.Config(), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	if _, err := fleetcopy.Setup(mgr, provider, fleetcopy.Options{}); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- mgr.Start(ctx) }()
	for _, srv := range []*apitest.Server{east, west} {
		wctx, stop := context.WithTimeout(ctx, time.Minute)
		_ = srv.WaitFor(wctx, func() bool { _, err := srv.Get("configmaps", "default", "settings"); return err == nil })
		stop()
		obj, err := srv.Get("configmaps", "default", "settings")
		fmt.Println(obj["data"], err)
	}
	cancel()
	fmt.Println("Start:", <-done)
	// Output:
	// map[level:1] <nil>
	// map[level:1] <nil>
	// Start: <nil>
}
