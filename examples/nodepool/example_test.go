package nodepool_test

import (
	"fmt"

	"github.com/informerkit/informerkit/examples/nodepool"
)

// The NodePool kind, as its generated CRD describes it: cluster-scoped, with a status.
func Example() {
	k := nodepool.NodePoolKind
	fmt.Println(k, k.Resource, k.Namespaced, k.StatusSubresource)
	// Output: NodePool.v1.pools.example.com nodepools false true
}
