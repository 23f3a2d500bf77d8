package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/informer"
)

// The demo's informers run with the cache mutation detector in the tests.
func TestMain(m *testing.M) {
	os.Setenv(informer.EnvCacheMutationDetector, "true")
	goleak.VerifyTestMain(m)
}

// TestDemo runs the whole demo against the embedded API server, as `make demo` does.
func TestDemo(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(context.Background(), nil, &out, &errs); code != 0 {
		t.Fatalf("demo exited %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errs.String())
	}
	text := out.String()
	for _, want := range []string{
		"reflector  WATCH configmaps",
		"marks the end of the initial list",
		"caches synced; leading as",
		"handler    OnAdd ConfigMapReplication demo-settings (primary) → workqueue add demo-settings",
		"reconcile  demo-settings: create demo-a/settings, create demo-b/settings, status copies=2",
		"predicate  GenerationChanged drops OnUpdate ConfigMapReplication demo-settings",
		"(source → its replications) → workqueue add demo-settings",
		"(copy → owner) → workqueue add demo-settings",
		"delete demo-a/settings (namespace not selected)",
		`message="source ConfigMap demo-src/settings not found"`,
		`controller_runtime_reconcile_total{controller="configmap-replicator",result="success"}`,
		"informerkit demo: OK — 8 steps converged",
		"event → reconcile latency (a watch event's arrival at the informer to the start of its reconcile)",
		"cleanup: deleted namespaces demo-src, demo-a, demo-b, demo-c",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if n := strings.Count(text, "  ✓ "); n != 8 {
		t.Errorf("%d steps converged, want 8", n)
	}
	if strings.Contains(text, "error:") {
		t.Errorf("a reconcile failed:\n%s", text)
	}
	if t.Failed() {
		t.Logf("output:\n%s", text)
	}
}

func TestDemoReportsAStepThatDoesNotConverge(t *testing.T) {
	var out, errs bytes.Buffer
	p := &printer{w: &out, start: time.Now(), quiet: true}
	// Every status write fails: step 1 cannot reach its status.
	d := &demo{p: p, stepTimeout: time.Second, logOut: &errs, prepare: func(srv *apitest.Server) error {
		return srv.Faults().FailRequests(apitest.VerbUpdate, "configmapreplications", 1<<30, 500, 0)
	}}
	err := d.run(context.Background(), "")
	if err == nil {
		t.Fatalf("the demo passed with failing status writes:\n%s", out.String())
	}
	for _, want := range []string{"step 1 (create ConfigMapReplication demo-settings", "did not converge within 1s",
		"want: copies in demo-a and demo-b (blue); status copies=2", "got:  copies {demo-a=blue demo-b=blue}; status copies=0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if !strings.Contains(out.String(), "cleanup: deleted namespaces") {
		t.Errorf("no cleanup after a failure:\n%s", out.String())
	}
	if strings.Contains(out.String(), "  +") {
		t.Errorf("quiet printed trace lines:\n%s", out.String())
	}
}

func TestDemoFlags(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"--nope"}, &out, &errs); code != 2 {
		t.Fatalf("bad flag: exit %d", code)
	}
	if code := run(context.Background(), []string{"extra"}, &out, &errs); code != 2 {
		t.Fatalf("extra argument: exit %d", code)
	}
	if code := run(context.Background(), []string{"--kubeconfig", "/does/not/exist"}, &out, &errs); code != 1 || !strings.Contains(errs.String(), "/does/not/exist") {
		t.Fatalf("missing kubeconfig: exit %d, %q", code, errs.String())
	}
}
