package apitest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
)

// kubectlEnv starts a TLS server with a token and writes its kubeconfig.
func kubectlEnv(t *testing.T) (*apitest.Server, func(args ...string) (string, error)) {
	t.Helper()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH; skipping the kubectl compatibility test")
	}
	s := apitest.NewServerWithOptions(apitest.Options{TLS: true, Token: "kubectl-token"})
	t.Cleanup(s.Close)
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := s.WriteKubeconfig(kc); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", kc, "--cache-dir", filepath.Join(dir, "cache")}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	return s, run
}

func TestKubectl(t *testing.T) {
	s, kubectl := kubectlEnv(t)
	must := func(args ...string) string {
		t.Helper()
		out, err := kubectl(args...)
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	dir := t.TempDir()
	manifest := filepath.Join(dir, "cm.yaml")
	os.WriteFile(manifest, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\n  labels:\n    app: demo\ndata:\n  k: v\n"), 0o600)

	out := must("create", "-f", manifest)
	if !strings.Contains(out, "configmap/demo created") {
		t.Fatalf("create output %q", out)
	}
	out = must("get", "configmaps")
	if !strings.Contains(out, "NAME") || !strings.Contains(out, "demo") {
		t.Fatalf("get output %q", out)
	}
	out = must("get", "cm", "demo", "-o", "json")
	var obj map[string]any
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("get -o json: %v\n%s", err, out)
	}
	if obj["data"].(map[string]any)["k"] != "v" {
		t.Fatalf("get -o json data %v", obj["data"])
	}

	os.WriteFile(manifest, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  k: replaced\n"), 0o600)
	out = must("replace", "-f", manifest)
	if !strings.Contains(out, "configmap/demo replaced") {
		t.Fatalf("replace output %q", out)
	}
	if o, _ := s.Get("configmaps", "default", "demo"); o["data"].(map[string]any)["k"] != "replaced" {
		t.Fatalf("replace did not store: %v", o)
	}
	out = must("patch", "configmap", "demo", "--type=merge", "-p", `{"data":{"p":"q"}}`)
	if !strings.Contains(out, "patched") {
		t.Fatalf("patch output %q", out)
	}
	out = must("label", "configmap", "demo", "tier=web")
	if !strings.Contains(out, "labeled") {
		t.Fatalf("label output %q", out)
	}
	o, _ := s.Get("configmaps", "default", "demo")
	if o["data"].(map[string]any)["p"] != "q" || o.Labels()["tier"] != "web" {
		t.Fatalf("patch/label not stored: %v", o)
	}
	out = must("get", "cm", "-l", "tier=web", "-o", "name")
	if strings.TrimSpace(out) != "configmap/demo" {
		t.Fatalf("get -l output %q", out)
	}
	out = must("delete", "configmap", "demo")
	if !strings.Contains(out, `configmap "demo" deleted`) {
		t.Fatalf("delete output %q", out)
	}
	if _, err := s.Get("configmaps", "default", "demo"); err == nil {
		t.Fatal("delete did not delete")
	}
	must("get", "namespaces")
	must("api-resources")
}

func TestKubectlWatch(t *testing.T) {
	s, _ := kubectlEnv(t)
	bin, _ := exec.LookPath("kubectl")
	dir := t.TempDir()
	kc := filepath.Join(dir, "kc")
	s.WriteKubeconfig(kc)
	s.Create("configmaps", cm("first", nil, nil))

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--kubeconfig", kc, "--cache-dir", filepath.Join(dir, "cache"), "get", "configmaps", "-w")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	want := func(substr string) {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("kubectl get -w ended before printing %q", substr)
				}
				if strings.Contains(l, substr) {
					return
				}
			case <-ctx.Done():
				t.Fatalf("kubectl get -w did not print %q", substr)
			}
		}
	}
	want("first")
	if _, err := s.WaitForWatches(ctx, "configmaps", 1); err != nil {
		t.Fatal(err)
	}
	s.Create("configmaps", cm("second", nil, nil))
	want("second")
	cmd.Process.Kill()
	for range lines {
	}
}
