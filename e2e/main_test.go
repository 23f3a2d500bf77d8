package e2e

import (
	"os"
	"testing"

	"github.com/informerkit/informerkit/e2e/cluster"
)

// TestMain starts one etcd + kube-apiserver for every test of the package and stops it at
// the end; see cluster.Main.
func TestMain(m *testing.M) { os.Exit(cluster.Main(m, cluster.Options{})) }
