package main

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/runner"
	"github.com/informerkit/informerkit/examples/deployment"
	"github.com/informerkit/informerkit/informer"
)

func TestMain(m *testing.M) {
	os.Setenv(informer.EnvCacheMutationDetector, "true")
	goleak.VerifyTestMain(m)
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--controllers=nope"}, {"--no-such-flag"}} {
		if code := run(context.Background(), args, io.Discard, io.Discard); code != 2 {
			t.Errorf("run(%q) = %d, want 2", args, code)
		}
	}
}

// The runner starts the MiniDeployment controller on the sample server, and skips the
// replicator, whose CRD is not installed there, saying so in /readyz.
func TestRunnerStartsTheExample(t *testing.T) {
	srv := apitest.NewServer()
	defer srv.Close()
	if err := srv.AddCRD(deployment.CRDYAML); err != nil {
		t.Fatal(err)
	}
	if err := createSample(srv); err != nil {
		t.Fatal(err)
	}
	mgr, err := controller.NewManager(srv.Config(), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(mgr, Descriptors(), runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	readyz := func() string {
		rec := httptest.NewRecorder()
		mgr.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz?verbose", nil))
		return rec.Body.String()
	}
	if err := srv.WaitFor(wctx, func() bool {
		objs, _, _ := srv.List("pods", "default")
		return len(objs) == 3 && strings.Contains(readyz(), "[+]controller-minideployment ok")
	}); err != nil {
		t.Fatalf("waiting for the sample's 3 pods: %v\n%s", err, readyz())
	}
	want := "[-]controller-configmap-replicator failed: resource informerkit.io/v1alpha1/configmapreplications is not served"
	if body := readyz(); !strings.Contains(body, want) {
		t.Errorf("readyz lacks %q:\n%s", want, body)
	}
}

// The RBAC manifests in the repository are what -rbac writes from what the controllers
// declare today (go generate ./cmd/controller-manager ./examples/... rewrites them).
func TestRBACManifestsAreCurrent(t *testing.T) {
	for _, c := range []struct {
		file string
		args []string
	}{
		{"rbac.yaml", nil},
		{"../../examples/deployment/rbac.yaml", []string{"-controllers=minideployment", "-rbac-name", "minideployment", "-service-account", "minideployment"}},
		{"../../examples/configmapreplicator/rbac.yaml", []string{"-controllers=configmap-replicator", "-rbac-name", "configmap-replicator", "-service-account", "configmap-replicator"}},
	} {
		var out, errs strings.Builder
		if code := run(context.Background(), append(c.args, "-rbac", "-"), &out, &errs); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.file, code, errs.String())
		}
		want, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != string(want) {
			t.Errorf("%s is not what -rbac writes now (go generate rewrites it):\n%s", c.file, out.String())
		}
	}
}

// -rbac writes what the MiniDeployment controller does: it reads and updates (finalizer)
// MiniDeployments, writes their status, owns Pods and leads through a Lease. (e2e's
// TestGeneratedRBACOnKubeAPIServer runs it under these roles alone.)
func TestRBACDeclaresTheWrites(t *testing.T) {
	var out, errs strings.Builder
	if code := run(context.Background(), []string{"-controllers=minideployment", "-rbac", "-"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	for _, want := range []string{"resources: [minideployments]\n    verbs: [get, list, watch, update]",
		"resources: [minideployments/status]\n    verbs: [get, update, patch]",
		"resources: [pods]\n    verbs: [get, list, watch, create, update, patch, delete]",
		"resources: [leases]\n    verbs: [get, watch, create, update]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-rbac lacks %q:\n%s", want, out.String())
		}
	}
}
