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
		if code := run(context.Background(), args, io.Discard); code != 2 {
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
