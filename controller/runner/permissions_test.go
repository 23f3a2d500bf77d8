package runner

import (
	"context"
	"log/slog"
	"reflect"
	"testing"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/rbac"
	"github.com/informerkit/informerkit/internal/testobj"
)

// Permissions sets the enabled controllers up without a server (the config points nowhere)
// and lists what they need; a disabled controller adds nothing.
func TestPermissions(t *testing.T) {
	mgr, err := controller.NewManager(&apiclient.Config{Host: "http://127.0.0.1:1"},
		controller.ManagerOptions{Kinds: testobj.NewRegistry(), Logger: slog.New(slog.DiscardHandler), LeaderElection: true, LeaderElectionID: "cm", LeaderElectionNamespace: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	descs := []Descriptor{
		{Name: "pods", Init: func(_ context.Context, cc ControllerContext) (bool, error) {
			return true, controller.NewBuilder(cc.Manager, "pods").
				For(controller.Primary[*testobj.Pod]()).
				Owns(controller.Owned[*testobj.ConfigMap]()).
				Complete(controller.ReconcilerFunc(func(context.Context, controller.Request) (controller.Result, error) {
					return controller.Result{}, nil
				}))
		}},
		{Name: "by-hand", Permissions: []rbac.Rule{{Resource: "secrets", Verbs: []string{"get"}}},
			Init: func(context.Context, ControllerContext) (bool, error) { return true, nil }},
		{Name: "off", Permissions: []rbac.Rule{{Resource: "nodes", Verbs: []string{"delete"}}},
			Init: func(context.Context, ControllerContext) (bool, error) { return true, nil }},
	}
	r, err := New(mgr, descs, Options{Controllers: []string{"*", "-off"}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Permissions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []rbac.Rule{
		{Resource: "configmaps", Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{Resource: "events", Verbs: []string{"create", "patch"}},
		{Resource: "pods", Verbs: rbac.ReadVerbs},
		{Resource: "pods/finalizers", Verbs: []string{"update"}},
		{Resource: "pods/status", Verbs: rbac.StatusVerbs},
		{Resource: "secrets", Verbs: []string{"get"}},
		{Group: "coordination.k8s.io", Resource: "leases", Verbs: []string{"get", "watch", "create", "update"}, Namespace: "ops"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Permissions:\n got %v\nwant %v", got, want)
	}
	if err := r.Run(context.Background()); err == nil {
		t.Error("Run after Permissions: no error")
	}
}
