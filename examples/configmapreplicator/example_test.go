package configmapreplicator_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	cmr "github.com/informerkit/informerkit/examples/configmapreplicator"
)

// Run the replicator in a Manager against apitest and watch it copy a ConfigMap.
func Example() {
	srv := apitest.NewServer()
	defer srv.Close()
	_ = srv.AddCRD(cmr.CRDYAML)
	_, _ = srv.Create("namespaces", map[string]any{"metadata": map[string]any{"name": "platform"}})
	_, _ = srv.Create("namespaces", map[string]any{"metadata": map[string]any{"name": "team-a",
		"labels": map[string]any{cmr.LabelReplicateInto: "true"}}})
	_, _ = srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "platform", "name": "settings"},
		"data": map[string]any{"color": "blue"}})
	_, _ = srv.Create(cmr.ReplicationKind.Resource, map[string]any{"apiVersion": cmr.ReplicationKind.APIVersion(), "kind": cmr.ReplicationKind.Kind,
		"metadata": map[string]any{"name": "team-settings"},
		"spec": map[string]any{"source": map[string]any{"namespace": "platform", "name": "settings"},
			"namespaceSelector": map[string]any{"matchLabels": map[string]any{cmr.LabelReplicateInto: "true"}}}})

	mgr, _ := controller.NewManager(srv.Config(), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	if _, err := cmr.Setup(mgr, cmr.Options{}); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- mgr.Start(ctx) }()

	wctx, wcancel := context.WithTimeout(ctx, 60*time.Second)
	defer wcancel()
	_ = srv.WaitFor(wctx, func() bool {
		o, err := srv.Get(cmr.ReplicationKind.Resource, "", "team-settings")
		return err == nil && o["status"] != nil && o["status"].(map[string]any)["copies"] != nil &&
			fmt.Sprint(o["status"].(map[string]any)["copies"]) == "1"
	})
	cp, _ := srv.Get("configmaps", "team-a", "settings")
	fmt.Println("copy:", cp.Namespace()+"/"+cp.Name(), cp["data"], "replication:", cp.Labels()[cmr.LabelReplication])
	cancel()
	fmt.Println("Start:", <-done)
	// Output:
	// copy: team-a/settings map[color:blue] replication: team-settings
	// Start: <nil>
}
