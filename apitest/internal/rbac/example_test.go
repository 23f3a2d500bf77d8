package rbac_test

import (
	"fmt"

	"github.com/informerkit/informerkit/apitest/internal/rbac"
)

func Example() {
	p := rbac.Policy{
		ClusterRoles: []map[string]any{{"metadata": map[string]any{"name": "metrics"},
			"rules": []any{map[string]any{"verbs": []any{"get"}, "nonResourceURLs": []any{"/metrics"}}}}},
		ClusterRoleBindings: []map[string]any{{"metadata": map[string]any{"name": "metrics"},
			"roleRef":  map[string]any{"kind": "ClusterRole", "name": "metrics"},
			"subjects": []any{map[string]any{"kind": "User", "name": "prometheus"}}}},
	}
	u := rbac.User{Name: "prometheus", Groups: []string{"system:authenticated"}}
	fmt.Println(rbac.Authorize(p, u, rbac.Attributes{Verb: "get", Path: "/metrics"}).Allowed)
	fmt.Println(rbac.Authorize(p, u, rbac.Attributes{Verb: "get", Path: "/debug"}).Allowed)
	// Output:
	// true
	// false
}
