package rbac_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller/rbac"
	"github.com/informerkit/informerkit/meta"
)

func TestMerge(t *testing.T) {
	got := rbac.Merge(
		rbac.Rule{Resource: "pods", Verbs: []string{"watch", "get"}},
		rbac.Rule{Resource: "pods", Verbs: []string{"list", "create", "get"}},
		rbac.Rule{Group: "coordination.k8s.io", Resource: "leases", Verbs: []string{"update", "get"}, Namespace: "ns"},
		rbac.Rule{Resource: "pods", Verbs: []string{"get", "delete"}, Namespace: "ns"}, // covered but for delete
		rbac.Rule{Resource: "configmaps", Verbs: []string{"get"}, Namespace: "ns"},
		rbac.Rule{Resource: "configmaps", Verbs: []string{"*"}},
	)
	want := []rbac.Rule{
		{Resource: "configmaps", Verbs: []string{"*"}},
		{Resource: "pods", Verbs: []string{"get", "list", "watch", "create"}},
		{Resource: "pods", Verbs: []string{"delete"}, Namespace: "ns"},
		{Group: "coordination.k8s.io", Resource: "leases", Verbs: []string{"get", "update"}, Namespace: "ns"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Merge:\n got %+v\nwant %+v", got, want)
	}
	if s := want[3].String(); s != "get, update leases.coordination.k8s.io in namespace ns" {
		t.Errorf("String: %q", s)
	}
}

func TestManifest(t *testing.T) {
	rules := []rbac.Rule{
		{Group: "apps.example.com", Resource: "widgets", Verbs: rbac.ReadVerbs},
		{Group: "apps.example.com", Resource: "widgets/status", Verbs: rbac.StatusVerbs},
		{Group: "apps.example.com", Resource: "gadgets", Verbs: rbac.ReadVerbs},
		{Resource: "pods", Verbs: append(append([]string{}, rbac.ReadVerbs...), rbac.WriteVerbs...)},
		{Group: "coordination.k8s.io", Resource: "leases", Verbs: []string{"get", "create", "update"}, Namespace: "kube-system"},
	}
	got, err := rbac.Manifest("widget-controller", rules, rbac.ManifestOptions{ServiceAccount: "widgets", ServiceAccountNamespace: "kube-system"})
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: widget-controller
rules:
  - apiGroups: [""]
    resources: [pods]
    verbs: [get, list, watch, create, update, patch, delete]
  - apiGroups: [apps.example.com]
    resources: [gadgets, widgets]
    verbs: [get, list, watch]
  - apiGroups: [apps.example.com]
    resources: [widgets/status]
    verbs: [get, update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: widget-controller
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: widget-controller
subjects:
  - kind: ServiceAccount
    name: widgets
    namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: widget-controller
  namespace: kube-system
rules:
  - apiGroups: [coordination.k8s.io]
    resources: [leases]
    verbs: [get, create, update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: widget-controller
  namespace: kube-system
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: widget-controller
subjects:
  - kind: ServiceAccount
    name: widgets
    namespace: kube-system
`
	if string(got) != want {
		t.Errorf("Manifest:\n%s\nwant:\n%s", got, want)
	}
	if _, err := rbac.Manifest("x", []rbac.Rule{{Resource: "pods"}}, rbac.ManifestOptions{}); err == nil {
		t.Error("a rule without verbs accepted")
	}
	if _, err := rbac.Manifest("", rules, rbac.ManifestOptions{}); err == nil {
		t.Error("no name accepted")
	}
}

func newClient(t *testing.T, srv *apitest.Server) *apiclient.Client {
	t.Helper()
	c, err := apiclient.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// Check asks one SelfSubjectAccessReview per verb and lists every denial in one error.
func TestCheck(t *testing.T) {
	srv := apitest.NewServer()
	defer srv.Close()
	c := newClient(t, srv)
	rules := []rbac.Rule{
		{Resource: "pods", Verbs: append(append([]string{}, rbac.ReadVerbs...), rbac.WriteVerbs...)},
		{Resource: "pods/status", Verbs: rbac.StatusVerbs},
		{Group: "coordination.k8s.io", Resource: "leases", Verbs: []string{"get", "create", "update"}, Namespace: "ns"},
	}
	ctx := context.Background()
	if err := rbac.Check(ctx, c, rules, rbac.CheckOptions{}); err != nil {
		t.Fatalf("everything allowed: %v", err)
	}
	if n := srv.CountRequests(apitest.VerbCreate, "selfsubjectaccessreviews"); n != 13 {
		t.Errorf("%d reviews, want 13 (one per verb)", n)
	}
	for _, d := range []apitest.AccessRule{{Verb: apitest.VerbWatch, Resource: "pods"}, {Verb: apitest.VerbUpdate, Resource: "pods/status"},
		{Verb: apitest.VerbCreate, Resource: "leases", Namespace: "ns"}} {
		if _, err := srv.Deny(d); err != nil {
			t.Fatal(err)
		}
	}
	err := rbac.Check(ctx, c, rules, rbac.CheckOptions{Parallel: 2})
	var missing *rbac.MissingPermissionsError
	if !errors.As(err, &missing) || !errors.Is(err, rbac.ErrMissingPermissions) {
		t.Fatalf("Check: %v, want a *MissingPermissionsError", err)
	}
	msg := err.Error()
	for _, want := range []string{"create leases.coordination.k8s.io in namespace ns", "update pods/status in all namespaces", "watch pods in all namespaces"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q: %s", want, msg)
		}
	}
	if len(missing.Denied) != 3 || missing.Denied[2].Verb != "watch" || missing.Denied[1].Subresource != "status" {
		t.Errorf("denied %+v", missing.Denied)
	}
	// A server that does not let the client review: the check cannot say.
	if err := srv.Faults().FailRequestsWithStatus(apitest.VerbCreate, "selfsubjectaccessreviews", 100,
		&meta.Status{Status: "Failure", Code: http.StatusForbidden, Reason: meta.StatusReasonForbidden, Message: "no"}); err != nil {
		t.Fatal(err)
	}
	if err := rbac.Check(ctx, c, rules, rbac.CheckOptions{}); !errors.Is(err, rbac.ErrCannotCheck) {
		t.Errorf("reviews forbidden: %v, want ErrCannotCheck", err)
	}
}

func TestAllows(t *testing.T) {
	rules := []rbac.Rule{
		{Resource: "pods", Verbs: rbac.ReadVerbs},
		{Resource: "pods/status", Verbs: []string{"patch"}},
		{Group: "coordination.k8s.io", Resource: "leases", Verbs: []string{"get", "watch"}, Namespace: "ops"},
		{Resource: "configmaps", Verbs: []string{"*"}},
	}
	for _, c := range []struct {
		verb, group, resource, ns string
		want                      bool
	}{
		{"watch", "", "pods", "", true},
		{"get", "", "pods", "shop", true}, // every namespace covers one
		{"delete", "", "pods", "shop", false},
		{"patch", "", "pods/status", "shop", true},
		{"patch", "", "pods", "shop", false}, // a subresource's rule is not the resource's
		{"watch", "coordination.k8s.io", "leases", "ops", true},
		{"watch", "coordination.k8s.io", "leases", "other", false},
		{"watch", "coordination.k8s.io", "leases", "", false}, // one namespace does not cover all
		{"get", "", "leases", "ops", false},                   // another group
		{"deletecollection", "", "configmaps", "x", true},
	} {
		if got := rbac.Allows(rules, c.verb, c.group, c.resource, c.ns); got != c.want {
			t.Errorf("Allows(%s %s %s in %q) = %v, want %v", c.verb, c.group, c.resource, c.ns, got, c.want)
		}
	}
}
