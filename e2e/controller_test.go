package e2e

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/meta"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/e2e/cluster"
)

// Controller tests against the real kube-apiserver: the demo (the configmap-replicator example
// with its scripted workload and state checks) converges, as `make demo KUBECONFIG=...` does;
// and two or three manager processes elect one leader on a real Lease (controller_le_test.go).
//
// The cluster has no kube-controller-manager: no garbage collector and no namespace
// controller. The replicator deletes its copies itself, and deleted namespaces stay
// Terminating, so the demo can run once per cluster.

// buildBinary builds a main package of the root module (or of e2e) into a temporary
// directory and returns its path.
func buildBinary(t *testing.T, pkg string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	out := filepath.Join(t.TempDir(), filepath.Base(pkg))
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

func TestControllerDemoConvergesOnKubeAPIServer(t *testing.T) {
	c := cluster.ForTest(t)
	demo := buildBinary(t, "github.com/informerkit/informerkit/cmd/demo")
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, demo, "--kubeconfig", c.KubeconfigPath, "--timeout", "3m")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("demo against kube-apiserver: %v, exit %v", time.Since(start).Round(time.Millisecond), err)
	if err != nil {
		t.Fatalf("demo failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	text := stdout.String()
	for _, want := range []string{
		"installed CustomResourceDefinition configmapreplications.informerkit.io",
		"caches synced; leading as",
		"reconcile  demo-settings: create demo-a/settings, create demo-b/settings, status copies=2",
		"informerkit demo: OK — 8 steps converged",
		"cleanup: deleted namespaces demo-src, demo-a, demo-b, demo-c and the CRD",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if strings.Count(text, "  ✓ ") != 8 {
		t.Errorf("not every step converged")
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", text, stderr.String())
	}

	// What the demo created is gone or going: namespaces are Terminating (no namespace
	// controller here), the replication is deleted.
	client, err := apiclient.New(mustConfig(t, c))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	type ns struct {
		meta.TypeMeta
		meta.ObjectMeta `json:"metadata"`
	}
	nss := apiclient.NewResource[*ns](client, meta.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	for _, name := range []string{"demo-src", "demo-a", "demo-b", "demo-c"} {
		n, err := nss.Get(ctx, name, apiclient.GetOptions{})
		if err == nil && n.DeletionTimestamp == nil {
			t.Errorf("namespace %s was not deleted", name)
		} else if err != nil && !meta.IsNotFound(err) {
			t.Error(err)
		}
	}
}

func mustConfig(t *testing.T, c *cluster.Cluster) *apiclient.Config {
	t.Helper()
	cfg, err := apiclient.LoadConfigWithOptions(apiclient.LoadOptions{Kubeconfig: c.KubeconfigPath})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// replica is one leader-manager process.
type replica struct {
	id    string
	cmd   *exec.Cmd
	lines chan string
	mu    sync.Mutex
	err   bytes.Buffer // stderr
	done  chan struct{}
}

func startReplica(t *testing.T, bin string, c *cluster.Cluster, id string, args ...string) *replica {
	t.Helper()
	r := &replica{id: id, lines: make(chan string, 1000), done: make(chan struct{})}
	r.cmd = exec.Command(bin, append([]string{"--kubeconfig", c.KubeconfigPath, "--id", id}, args...)...)
	r.cmd.Stderr = &lockedWriter{mu: &r.mu, w: &r.err}
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		_ = r.cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		<-r.done
		if t.Failed() {
			r.mu.Lock()
			t.Logf("%s stderr:\n%s", id, r.err.String())
			r.mu.Unlock()
		}
	})
	return r
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
