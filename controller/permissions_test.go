package controller

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller/rbac"
	"github.com/informerkit/informerkit/internal/testobj"
)

// widgetController builds a controller that is For Widgets, Owns ConfigMaps, Watches Pods,
// records events and declares an update of Widgets of its own.
func widgetController(t *testing.T, m *Manager) *Controller {
	t.Helper()
	m.EventRecorderFor("widgets")
	ctl, err := NewBuilder(m, "widgets").
		For(Primary[*testobj.Widget]()).
		Owns(Owned[*testobj.ConfigMap]()).
		Watches(Watched(EnqueueRequestForObject[*testobj.Pod]())).
		WithOptions(Options{Logger: quiet, Permissions: []rbac.Rule{{Group: "example.com", Resource: "widgets", Verbs: []string{"update"}}}}).
		Build(recordingReconciler(make(chan Request, 100)))
	if err != nil {
		t.Fatal(err)
	}
	return ctl
}

func TestPermissions(t *testing.T) {
	srv, _ := newWidgetServer(t)
	reg := testobj.NewRegistry()
	m := newManager(t, srv, ManagerOptions{Kinds: reg, LeaderElection: true, LeaderElectionID: "widgets", LeaderElectionNamespace: "ops"})
	ctl := widgetController(t, m)
	read, write := rbac.ReadVerbs, []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	wantCtl := []rbac.Rule{
		{Resource: "configmaps", Verbs: write},
		{Resource: "pods", Verbs: read},
		{Group: "example.com", Resource: "widgets", Verbs: []string{"get", "list", "watch", "update"}},
		{Group: "example.com", Resource: "widgets/finalizers", Verbs: []string{"update"}},
		{Group: "example.com", Resource: "widgets/status", Verbs: rbac.StatusVerbs},
	}
	if got := ctl.Permissions(); !reflect.DeepEqual(got, wantCtl) {
		t.Errorf("Controller.Permissions:\n got %v\nwant %v", got, wantCtl)
	}
	// An informer made for a cached read only, in one namespace.
	if _, err := InformerForWithOptions[*testobj.ConfigMap](m, InformerOptions{Namespace: "cache-only"}); err != nil {
		t.Fatal(err)
	}
	want := []rbac.Rule{
		{Resource: "configmaps", Verbs: write},
		{Resource: "events", Verbs: []string{"create", "patch"}},
		{Resource: "pods", Verbs: read},
		{Group: "example.com", Resource: "widgets", Verbs: []string{"get", "list", "watch", "update"}},
		{Group: "example.com", Resource: "widgets/finalizers", Verbs: []string{"update"}},
		{Group: "example.com", Resource: "widgets/status", Verbs: rbac.StatusVerbs},
		{Group: "coordination.k8s.io", Resource: "leases", Verbs: []string{"get", "watch", "create", "update"}, Namespace: "ops"},
	}
	m.AddPermissions(rbac.Rule{Resource: "configmaps", Verbs: []string{"get"}, Namespace: "cache-only"}) // covered
	if got := m.Permissions(); !reflect.DeepEqual(got, want) {
		t.Errorf("Manager.Permissions:\n got %v\nwant %v", got, want)
	}
}

// A permission the server does not grant stops Start at once with one error naming it,
// before any informer lists (no stream of 403s); SkipPermissionCheck starts anyway.
func TestStartChecksPermissions(t *testing.T) {
	srv, _ := newWidgetServer(t)
	reg := testobj.NewRegistry()
	if _, err := srv.Deny(apitest.AccessRule{Verb: apitest.VerbDelete, Resource: "configmaps"}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Deny(apitest.AccessRule{Verb: apitest.VerbPatch, Resource: "widgets/status"}); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, srv, ManagerOptions{Kinds: reg})
	widgetController(t, m)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	err := m.Start(ctx)
	var missing *rbac.MissingPermissionsError
	if !errors.As(err, &missing) || len(missing.Denied) != 2 {
		t.Fatalf("Start: %v, want a *MissingPermissionsError of 2", err)
	}
	for _, want := range []string{"delete configmaps in all namespaces", "patch widgets.example.com/status in all namespaces"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if n := srv.CountRequests(apitest.VerbList, "") + srv.CountRequests(apitest.VerbWatch, ""); n != 0 {
		t.Errorf("%d lists and watches before the check failed, want none", n)
	}

	skip := newManager(t, srv, ManagerOptions{Kinds: reg, SkipPermissionCheck: true})
	ctl := widgetController(t, skip)
	before := srv.CountRequests(apitest.VerbCreate, "selfsubjectaccessreviews")
	startManager(t, skip)
	select {
	case <-ctl.Started():
	case <-time.After(testTimeout):
		t.Fatal("the controller did not start without the check")
	}
	if n := srv.CountRequests(apitest.VerbCreate, "selfsubjectaccessreviews"); n != before {
		t.Errorf("%d reviews with SkipPermissionCheck", n-before)
	}
}

// A standby that may not watch the Lease would fall back to polling it, silently: Start
// refuses at once instead, naming the verb.
func TestStartChecksTheLeaseWatch(t *testing.T) {
	srv := newTestServer(t)
	if _, err := srv.Deny(apitest.AccessRule{Verb: apitest.VerbWatch, Resource: "leases", Namespace: "kube-system"}); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, srv, ManagerOptions{LeaderElection: true, LeaderElectionID: "cm", LeaderElectionNamespace: "kube-system"})
	configMapController(t, m, "cm", forward(nil))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	err := m.Start(ctx)
	var missing *rbac.MissingPermissionsError
	if !errors.As(err, &missing) || len(missing.Denied) != 1 ||
		missing.Denied[0].String() != "watch leases.coordination.k8s.io in namespace kube-system" {
		t.Fatalf("Start: %v, want a *MissingPermissionsError of the Lease's watch", err)
	}
}

// Roles writes what Permissions lists, without a server: the ClusterRole of the informers
// and the Role of the Lease, watch included.
func TestManagerRoles(t *testing.T) {
	srv := newTestServer(t)
	m := newManager(t, srv, ManagerOptions{LeaderElection: true, LeaderElectionID: "cm", LeaderElectionNamespace: "ops"})
	configMapController(t, m, "cm", forward(nil))
	y, err := m.Roles("cm", rbac.ManifestOptions{ServiceAccount: "cm", ServiceAccountNamespace: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: ClusterRole\nmetadata:\n  name: cm\n", "resources: [configmaps]\n    verbs: [get, list, watch]",
		"kind: Role\nmetadata:\n  name: cm\n  namespace: ops", "resources: [leases]\n    verbs: [get, watch, create, update]",
		"kind: ServiceAccount\n    name: cm\n    namespace: ops"} {
		if !strings.Contains(string(y), want) {
			t.Errorf("Roles lacks %q:\n%s", want, y)
		}
	}
	if n := srv.CountRequests(apitest.VerbAny, ""); n != 0 {
		t.Errorf("%d requests: Roles needs no server", n)
	}
}
