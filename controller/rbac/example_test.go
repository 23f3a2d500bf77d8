package rbac_test

import (
	"fmt"

	"github.com/informerkit/informerkit/controller/rbac"
)

// The roles of a controller that reads Widgets, writes their status and owns Pods.
func ExampleManifest() {
	rules := rbac.Merge(
		rbac.Rule{Group: "example.com", Resource: "widgets", Verbs: rbac.ReadVerbs},
		rbac.Rule{Group: "example.com", Resource: "widgets/status", Verbs: rbac.StatusVerbs},
		rbac.Rule{Resource: "pods", Verbs: rbac.ReadVerbs},
		rbac.Rule{Resource: "pods", Verbs: rbac.WriteVerbs},
	)
	for _, r := range rules {
		fmt.Println(r)
	}
	y, _ := rbac.Manifest("widgets", rules, rbac.ManifestOptions{})
	fmt.Print(string(y))
	// Output:
	// get, list, watch, create, update, patch, delete pods in all namespaces
	// get, list, watch widgets.example.com in all namespaces
	// get, update, patch widgets.example.com/status in all namespaces
	// apiVersion: rbac.authorization.k8s.io/v1
	// kind: ClusterRole
	// metadata:
	//   name: widgets
	// rules:
	//   - apiGroups: [""]
	//     resources: [pods]
	//     verbs: [get, list, watch, create, update, patch, delete]
	//   - apiGroups: [example.com]
	//     resources: [widgets]
	//     verbs: [get, list, watch]
	//   - apiGroups: [example.com]
	//     resources: [widgets/status]
	//     verbs: [get, update, patch]
}
