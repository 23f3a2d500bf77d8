package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// The cluster of the running test binary, set by Main.
var (
	current    *Cluster
	skipReason string
)

// Main is the body of an e2e test package's TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(cluster.Main(m, cluster.Options{})) }
//
// It starts one cluster for the package, runs the tests, and stops the cluster. If the
// binaries have not been built, the tests are skipped with a message saying how to build
// them, unless E2E_REQUIRE=1 (which `make e2e` sets): then Main fails. When a test fails,
// Main prints the tails of both logs and keeps the work directory; otherwise it removes it.
// SIGINT and SIGTERM stop the cluster before the binary exits. If the test binary dies
// without cleanup (a panicking test, -timeout), the kernel kills etcd and kube-apiserver
// (PR_SET_PDEATHSIG) and the logs stay in the work directory printed at start.
func Main(m *testing.M, opts Options) int {
	require := os.Getenv("E2E_REQUIRE") == "1"
	start := time.Now()
	c, err := Start(context.Background(), opts)
	if err != nil {
		if errors.Is(err, ErrNoBinaries) && !require {
			skipReason = fmt.Sprintf("e2e: skipped: %v (or set E2E_REQUIRE=1 to fail instead)", err)
			fmt.Fprintln(os.Stderr, skipReason)
			return m.Run()
		}
		fmt.Fprintf(os.Stderr, "e2e: cannot start the cluster: %v\n", err)
		return 1
	}
	current = c
	fmt.Fprintf(os.Stderr, "e2e: cluster ready in %.1fs: kube-apiserver %s, etcd %s\ne2e: kubeconfig and logs in %s\n",
		time.Since(start).Seconds(), c.URL, c.EtcdEndpoint, c.WorkDir)

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	defer func() {
		signal.Stop(sigs)
		close(done)
	}()
	go func() {
		select {
		case sig := <-sigs:
			fmt.Fprintf(os.Stderr, "e2e: %v: stopping the cluster; logs in %s\n", sig, c.WorkDir)
			_ = c.Stop()
			os.Exit(130)
		case <-done:
		}
	}()

	code := m.Run()
	if err := c.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: stopping the cluster: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	if code != 0 {
		fmt.Fprintf(os.Stderr, "e2e: FAILED; cluster logs kept in %s\n%s", c.WorkDir, c.LogTails(40))
		return code
	}
	if err := c.Cleanup(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: removing %s: %v\n", c.WorkDir, err)
	}
	return code
}

// ForTest returns the cluster that Main started for this test binary. If there is none
// (binaries not built and E2E_REQUIRE unset), it skips the test with the reason.
func ForTest(t testing.TB) *Cluster {
	t.Helper()
	if current == nil {
		if skipReason == "" {
			t.Fatal("cluster.ForTest: no cluster; call cluster.Main from TestMain")
		}
		t.Skip(skipReason)
	}
	return current
}
