package compat

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/e2e/cluster"
)

var (
	realOnce    sync.Once
	realCluster *cluster.Cluster
	realErr     error
)

// startRealCluster starts (once for the package) the e2e cluster, etcd v3.7.3 and
// kube-apiserver v1.37.2 built by make e2e-build ($E2E_BIN_DIR or the repository's bin/),
// and returns its kubeconfig. Without the binaries the test is skipped unless
// COMPAT_REQUIRE_CLUSTER is set (CI sets it after building them).
func startRealCluster(t *testing.T) []byte {
	t.Helper()
	realOnce.Do(func() {
		if os.Getenv("E2E_BIN_DIR") == "" {
			os.Setenv("E2E_BIN_DIR", "../bin")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		realCluster, realErr = cluster.Start(ctx, cluster.Options{})
	})
	if realErr != nil {
		if os.Getenv("COMPAT_REQUIRE_CLUSTER") != "" {
			t.Fatalf("starting the e2e cluster: %v", realErr)
		}
		t.Skipf("no e2e cluster (make e2e-build builds the binaries): %v", realErr)
	}
	kc, err := os.ReadFile(realCluster.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	return kc
}

// stopRealCluster stops the cluster if a test started it (TestMain).
func stopRealCluster() {
	if realCluster != nil {
		realCluster.Stop()
		realCluster.Cleanup()
	}
}
