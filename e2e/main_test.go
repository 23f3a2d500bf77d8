package e2e

import (
	"os"
	"testing"

	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/informer"
)

// TestMain starts one etcd + kube-apiserver for every test of the package and stops it at
// the end; see cluster.Main. Every informer runs with the cache mutation detector (the
// leader-election processes the tests start inherit it).
func TestMain(m *testing.M) {
	os.Setenv(informer.EnvCacheMutationDetector, "true")
	os.Exit(cluster.Main(m, cluster.Options{}))
}
