// Package ctltest checks, on apitest (the in-process API server), that a benchctl
// controller process does what both implementations must: it creates and deletes a
// Deployment's Pods to its replica count and writes its status, and keeps each
// Application's ConfigMap in sync with its spec. Tests only.
package ctltest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/bench/internal/ctlbench"
)

// syncBuffer is the Reporter's output, read while it writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Converges runs a controller (run, which reads KUBECONFIG) against apitest and checks
// that it converges: three Pods for a new Deployment, then one once it is scaled down, its
// status, and an Application's ConfigMap created and then updated.
func Converges(t *testing.T, run func(ctx context.Context, rep *ctlbench.Reporter) error) {
	srv := apitest.NewServer()
	defer srv.Close()
	if err := srv.AddResource(apitest.ResourceType{Group: ctlbench.AppGroup, Version: ctlbench.AppVersion, Kind: "Application",
		Plural: "applications", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := srv.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	const ns = "team-00"
	if _, err := srv.Create("namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Create("deployments", map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"namespace": ns, "name": "web"},
		"spec": map[string]any{"replicas": 3, "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "example.com/web:1"}}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Create("applications", map[string]any{"apiVersion": ctlbench.AppGroup + "/" + ctlbench.AppVersion, "kind": "Application",
		"metadata": map[string]any{"namespace": ns, "name": "shop"},
		"spec": map[string]any{"project": "p", "source": map[string]any{"repoURL": "https://git.example.com/shop.git", "targetRevision": "main"},
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": ns}}}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := &syncBuffer{}
	rep := ctlbench.NewReporterTo(2, out)
	runCtx, stop := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- run(runCtx, rep) }()
	defer func() {
		stop()
		if err := <-errc; err != nil {
			t.Errorf("the controller: %v", err)
		}
	}()

	wait := func(what string, cond func() bool) {
		t.Helper()
		if err := srv.WaitFor(ctx, cond); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	pods := func() (n int) {
		list, _, _ := srv.List("pods", ns)
		for _, p := range list {
			refs, _ := p["metadata"].(map[string]any)["ownerReferences"].([]any)
			if len(refs) == 1 && refs[0].(map[string]any)["name"] == "web" && refs[0].(map[string]any)["controller"] == true &&
				p["metadata"].(map[string]any)["deletionTimestamp"] == nil {
				n++
			}
		}
		return n
	}
	status := func(field string) any {
		d, err := srv.Get("deployments", ns, "web")
		if err != nil {
			return nil
		}
		st, _ := d["status"].(map[string]any)
		return st[field]
	}
	manifest := func() string {
		cm, err := srv.Get("configmaps", ns, "shop"+ctlbench.ManifestSuffix)
		if err != nil {
			return ""
		}
		data, _ := cm["data"].(map[string]any)
		rev, _ := data["targetRevision"].(string)
		return rev
	}
	wait("ready", func() bool { return strings.HasPrefix(out.String(), "ready ") })
	wait("three Pods", func() bool { return pods() == 3 })
	wait("the ConfigMap", func() bool { return manifest() == "main" })
	if _, err := srv.Patch("deployments", ns, "web", apiclient.MergePatchType, []byte(`{"spec":{"replicas":1}}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Patch("applications", ns, "shop", apiclient.MergePatchType, []byte(`{"spec":{"source":{"targetRevision":"v2"}}}`)); err != nil {
		t.Fatal(err)
	}
	wait("one Pod", func() bool { return pods() == 1 })
	wait("the status of one Pod, generation 2", func() bool {
		return fmt.Sprint(status("replicas")) == "1" && fmt.Sprint(status("observedGeneration")) == "2"
	})
	wait("the ConfigMap updated", func() bool { return manifest() == "v2" })
}
