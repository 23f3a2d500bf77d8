package kuberecord_test

import (
	"fmt"

	"github.com/informerkit/informerkit/internal/kuberecord"
)

// Two recordings are compared line by line, each line naming its resource, and a
// difference names the fields that differ.
func ExampleDiff() {
	want := &kuberecord.Served{Source: "v1.36.3", Resources: []kuberecord.Resource{
		{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true, Singular: "configmap", Verbs: []string{"get", "list"}},
	}}
	got := &kuberecord.Served{Source: "v1.36.3", Resources: []kuberecord.Resource{
		{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true, Singular: "configmap", Verbs: []string{"get"}},
	}}
	for _, d := range kuberecord.Diff(want.Encode(), got.Encode()) {
		fmt.Println(d)
	}
	// Output:
	// /v1/configmaps differs
	//   verbs: want ["get","list"], got ["get"]
}
