package rbac

import (
	"encoding/json"
	"testing"
)

func objs(t *testing.T, js ...string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, j := range js {
		var m map[string]any
		if err := json.Unmarshal([]byte(j), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func TestAuthorize(t *testing.T) {
	p := Policy{
		ClusterRoles: objs(t,
			`{"metadata":{"name":"metrics"},"rules":[{"verbs":["get","put"],"nonResourceURLs":["/metrics"]}]}`,
			`{"metadata":{"name":"pod-reader"},"rules":[{"verbs":["get","list"],"apiGroups":[""],"resources":["pods","pods/log"]}]}`,
			`{"metadata":{"name":"debug"},"rules":[{"verbs":["get"],"nonResourceURLs":["/debug/*"]}]}`,
			`{"metadata":{"name":"scaler"},"rules":[{"verbs":["*"],"apiGroups":["apps"],"resources":["*/scale"],"resourceNames":["web"]}]}`),
		ClusterRoleBindings: objs(t,
			`{"metadata":{"name":"metrics"},"roleRef":{"kind":"ClusterRole","name":"metrics"},"subjects":[{"kind":"ServiceAccount","name":"prom","namespace":"mon"}]}`,
			`{"metadata":{"name":"debug"},"roleRef":{"kind":"ClusterRole","name":"debug"},"subjects":[{"kind":"Group","name":"devs"}]}`,
			`{"metadata":{"name":"no-ns"},"roleRef":{"kind":"ClusterRole","name":"pod-reader"},"subjects":[{"kind":"ServiceAccount","name":"prom"}]}`),
		Roles: objs(t,
			`{"metadata":{"name":"cm","namespace":"a"},"rules":[{"verbs":["create"],"apiGroups":[""],"resources":["configmaps"]}]}`),
		RoleBindings: objs(t,
			`{"metadata":{"name":"cm","namespace":"a"},"roleRef":{"kind":"Role","name":"cm"},"subjects":[{"kind":"User","name":"alice"}]}`,
			`{"metadata":{"name":"pods","namespace":"a"},"roleRef":{"kind":"ClusterRole","name":"pod-reader"},"subjects":[{"kind":"ServiceAccount","name":"prom"}]}`,
			`{"metadata":{"name":"scale","namespace":"a"},"roleRef":{"kind":"ClusterRole","name":"scaler"},"subjects":[{"kind":"User","name":"alice"}]}`),
	}
	prom := User{Name: "system:serviceaccount:mon:prom", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:mon", "system:authenticated"}}
	promA := User{Name: "system:serviceaccount:a:prom", Groups: []string{"system:serviceaccounts", "system:authenticated"}}
	alice := User{Name: "alice", Groups: []string{"devs", "system:authenticated"}}
	anon := User{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}
	cases := []struct {
		name   string
		user   User
		attrs  Attributes
		want   bool
		reason string
	}{
		{"masters", User{Name: "x", Groups: []string{"system:masters"}}, Attributes{Verb: "delete", Resource: "nodes"}, true, ""},
		{"non-resource granted", prom, Attributes{Verb: "get", Path: "/metrics"}, true,
			`RBAC: allowed by ClusterRoleBinding "metrics" of ClusterRole "metrics" to ServiceAccount "prom/mon"`},
		{"non-resource other verb", prom, Attributes{Verb: "post", Path: "/metrics"}, false, ""},
		{"non-resource other path", prom, Attributes{Verb: "get", Path: "/debug"}, false, ""},
		{"url prefix", alice, Attributes{Verb: "get", Path: "/debug/pprof"}, true, ""},
		{"url prefix needs the prefix", alice, Attributes{Verb: "get", Path: "/debugx"}, false, ""},
		{"public info for anonymous", anon, Attributes{Verb: "get", Path: "/healthz"}, true,
			`RBAC: allowed by ClusterRoleBinding "system:public-info-viewer" of ClusterRole "system:public-info-viewer" to Group "system:unauthenticated"`},
		{"no discovery for anonymous", anon, Attributes{Verb: "get", Path: "/apis"}, false, ""},
		{"discovery for the authenticated", alice, Attributes{Verb: "get", Path: "/apis/apps/v1"}, true, ""},
		{"self review", alice, Attributes{Verb: "create", Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}, true, ""},
		{"role in its namespace", alice, Attributes{Verb: "create", Namespace: "a", Resource: "configmaps"}, true,
			`RBAC: allowed by RoleBinding "cm/a" of Role "cm" to User "alice"`},
		{"role not elsewhere", alice, Attributes{Verb: "create", Namespace: "b", Resource: "configmaps"}, false, ""},
		{"role not at cluster scope", alice, Attributes{Verb: "create", Resource: "configmaps"}, false, ""},
		{"cluster role by role binding, sa of the binding's namespace", promA, Attributes{Verb: "list", Namespace: "a", Resource: "pods"}, true,
			`RBAC: allowed by RoleBinding "pods/a" of ClusterRole "pod-reader" to ServiceAccount "prom/a"`},
		{"sa subject without namespace binds nothing cluster-wide", promA, Attributes{Verb: "list", Namespace: "b", Resource: "pods"}, false, ""},
		{"subresource listed", promA, Attributes{Verb: "get", Namespace: "a", Resource: "pods", Subresource: "log"}, true, ""},
		{"subresource not listed", promA, Attributes{Verb: "get", Namespace: "a", Resource: "pods", Subresource: "exec"}, false, ""},
		{"other group", promA, Attributes{Verb: "get", Namespace: "a", Group: "apps", Resource: "pods"}, false, ""},
		{"star subresource and name", alice, Attributes{Verb: "update", Namespace: "a", Group: "apps", Resource: "deployments", Subresource: "scale", Name: "web"}, true, ""},
		{"star subresource other name", alice, Attributes{Verb: "update", Namespace: "a", Group: "apps", Resource: "deployments", Subresource: "scale", Name: "db"}, false, ""},
		{"star subresource not the resource", alice, Attributes{Verb: "update", Namespace: "a", Group: "apps", Resource: "deployments", Name: "web"}, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Authorize(p, c.user, c.attrs)
			if d.Allowed != c.want {
				t.Fatalf("Authorize = %+v, want allowed %v", d, c.want)
			}
			if c.reason != "" && d.Reason != c.reason {
				t.Errorf("reason %q, want %q", d.Reason, c.reason)
			}
		})
	}
}
