package compat

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
)

// kubectls are the kubectl binaries to test: the one on PATH (v1.32 on the project's
// machines) and v1.36, which make compat builds into bin/kubectl from k8s.io/kubectl.
func kubectls(t *testing.T) map[string]string {
	out := map[string]string{}
	if bin, err := exec.LookPath("kubectl"); err == nil {
		out["path"] = bin
	}
	if abs, err := filepath.Abs(filepath.Join("bin", "kubectl")); err == nil {
		if _, err := os.Stat(abs); err == nil {
			out["v1.36"] = abs
		}
	}
	if len(out) == 0 {
		t.Skip("no kubectl on PATH and no bin/kubectl (make compat builds it)")
	}
	if out["v1.36"] == "" {
		t.Log("bin/kubectl is missing (make compat builds it): only the kubectl on PATH runs")
	}
	return out
}

// kubectlRunner runs kubectl bin against an apitest server with a kubeconfig of its own
// (and a cache directory of its own, so discovery and OpenAPI come from this server).
func kubectlRunner(t *testing.T, s *apitest.Server, bin string) func(args ...string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := s.WriteKubeconfig(kc); err != nil {
		t.Fatal(err)
	}
	return func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", kc, "--cache-dir", filepath.Join(dir, "cache")}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+dir)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}

// TestKubectlEverydayCommands runs kubectl's everyday commands with their defaults against
// apitest: what they print must be what they print against a kube-apiserver.
func TestKubectlEverydayCommands(t *testing.T) {
	for name, bin := range kubectls(t) {
		t.Run(name, func(t *testing.T) { testKubectl(t, bin) })
	}
}

func testKubectl(t *testing.T, bin string) {
	e := newEnv(t, apitest.Options{})
	kubectl := kubectlRunner(t, e.s, bin)
	must := func(args ...string) string {
		t.Helper()
		out, err := kubectl(args...)
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	expect := func(out string, res ...string) {
		t.Helper()
		for _, re := range res {
			if !regexp.MustCompile(re).MatchString(out) {
				t.Errorf("output lacks /%s/:\n%s", re, out)
			}
		}
	}
	expect(must("api-versions"), `(?m)^apps/v1$`, `(?m)^v1$`, `(?m)^coordination.k8s.io/v1$`, `(?m)^events.k8s.io/v1$`, `(?m)^authorization.k8s.io/v1$`)
	expect(must("api-resources"), `(?m)^pods\s+po\s+v1\s+true\s+Pod$`, `(?m)^deployments\s+deploy\s+apps/v1\s+true\s+Deployment$`)

	// Creation commands send protobuf bodies for built-in kinds.
	expect(must("create", "namespace", "shop"), `namespace/shop created`)
	expect(must("create", "configmap", "settings", "-n", "shop", "--from-literal=mode=fast", "--from-literal=size=3"), `configmap/settings created`)
	expect(must("create", "secret", "generic", "pw", "-n", "shop", "--from-literal=password=hunter2"), `secret/pw created`)
	expect(must("create", "deployment", "web", "-n", "shop", "--image=nginx:1.27", "--replicas=2"), `deployment.apps/web created`)

	pb := 0
	for _, r := range e.s.RequestsFor(apitest.VerbCreate, "") {
		if strings.HasPrefix(r.ContentType, "application/vnd.kubernetes.protobuf") && r.Code == 201 {
			pb++
		}
	}
	if pb < 4 {
		t.Errorf("%d creations in protobuf, want the 4 of kubectl create namespace/configmap/secret/deployment", pb)
	}

	// Tables with the kube-apiserver's columns.
	expect(must("get", "namespaces"), `(?m)^NAME\s+STATUS\s+AGE$`, `(?m)^shop\s+Active\s+\d+s$`)
	expect(must("get", "configmaps", "-n", "shop"), `(?m)^NAME\s+DATA\s+AGE$`, `(?m)^settings\s+2\s+`)
	expect(must("get", "secrets", "-n", "shop"), `(?m)^NAME\s+TYPE\s+DATA\s+AGE$`, `(?m)^pw\s+Opaque\s+1\s+`)
	expect(must("get", "deployments", "-n", "shop"), `(?m)^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE$`, `(?m)^web\s+0/2\s+0\s+0\s+`)
	expect(must("get", "deployments", "-n", "shop", "-o", "wide"), `(?m)^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$`, `nginx:1.27\s+app=web`)

	// Defaults are visible.
	expect(must("get", "deployment", "web", "-n", "shop", "-o", "jsonpath={.spec.strategy.type} {.spec.revisionHistoryLimit} {.spec.template.spec.containers[0].imagePullPolicy}"),
		`^RollingUpdate 10 IfNotPresent$`)

	// Scale through the scale subresource; patches of the two JSON kinds.
	expect(must("scale", "deployment", "web", "-n", "shop", "--replicas=3"), `deployment.apps/web scaled`)
	expect(must("get", "deployment", "web", "-n", "shop", "-o", "jsonpath={.spec.replicas} {.metadata.generation}"), `^3 2$`)
	expect(must("patch", "configmap", "settings", "-n", "shop", "--type=merge", "-p", `{"data":{"mode":"slow"}}`), `configmap/settings patched`)
	expect(must("patch", "configmap", "settings", "-n", "shop", "--type=json", "-p", `[{"op":"remove","path":"/data/size"}]`), `configmap/settings patched`)
	expect(must("get", "configmap", "settings", "-n", "shop", "-o", "jsonpath={.data}"), `^\{"mode":"slow"\}$`)
	expect(must("label", "configmap", "settings", "-n", "shop", "tier=gold"), `configmap/settings labeled`)

	// Client-side apply: create, then update.
	dir := t.TempDir()
	manifest := filepath.Join(dir, "cm.yaml")
	os.WriteFile(manifest, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: shop\ndata:\n  a: \"1\"\n"), 0o600)
	expect(must("apply", "-f", manifest), `configmap/applied created`)
	os.WriteFile(manifest, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: shop\ndata:\n  a: \"2\"\n"), 0o600)
	expect(must("apply", "-f", manifest), `configmap/applied configured`)
	expect(must("get", "configmap", "applied", "-n", "shop", "-o", "jsonpath={.data.a}"), `^2$`)

	// Pods: columns, describe, explain, auth.
	podManifest := filepath.Join(dir, "pod.yaml")
	os.WriteFile(podManifest, []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: shop\nspec:\n  containers:\n  - name: c\n    image: busybox\n"), 0o600)
	expect(must("create", "-f", podManifest), `pod/p created`)
	expect(must("get", "pods", "-n", "shop"), `(?m)^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$`, `(?m)^p\s+0/1\s+Pending\s+0\s+`)
	expect(must("describe", "pod", "p", "-n", "shop"), `(?m)^Name:\s+p$`, `(?m)^Status:\s+Pending$`, `(?m)^QoS Class:\s+BestEffort$`)
	expect(must("describe", "deployment", "web", "-n", "shop"), `(?m)^StrategyType:\s+RollingUpdate$`, `(?m)^Replicas:\s+3 desired`)
	expect(must("explain", "pods.spec.containers.image"), `(?m)^KIND:\s+Pod$`, `Container image name`)
	expect(must("explain", "deployment.spec.strategy"), `(?m)^KIND:\s+Deployment$`, `(?m)^FIELD: strategy <DeploymentStrategy>`)
	expect(must("auth", "can-i", "create", "pods"), `^yes\n$`)

	// Errors as the kube-apiserver gives them.
	out, err := kubectl("create", "-f", podManifest)
	if err == nil || !strings.Contains(out, `pods "p" already exists`) {
		t.Errorf("second create: %v\n%s", err, out)
	}
	out, err = kubectl("get", "pods", "-n", "shop", "--field-selector=spec.bogus=1")
	if err == nil || !strings.Contains(out, "field label not supported: spec.bogus") {
		t.Errorf("bad field selector: %v\n%s", err, out)
	}
	expect(must("delete", "deployment", "web", "-n", "shop"), `deployment.apps "web" deleted`)
	expect(must("delete", "namespace", "shop"), `namespace "shop" deleted`)
}
