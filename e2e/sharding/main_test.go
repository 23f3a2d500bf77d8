// Package sharding_test runs shard-selector tests against a kube-apiserver started with the
// alpha feature gate ShardedListAndWatch (a cluster of its own: the package e2e's cluster
// runs with the gate off, as a default 1.36 server).
package sharding_test

import (
	"os"
	"testing"

	"github.com/informerkit/informerkit/e2e/cluster"
)

func TestMain(m *testing.M) {
	os.Exit(cluster.Main(m, cluster.Options{
		ExtraAPIServerArgs: []string{"--feature-gates=ShardedListAndWatch=true"},
	}))
}
