package compat

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// installDropIn builds cmd/apitest and installs it as kube-apiserver and etcd in a
// directory for KUBEBUILDER_ASSETS, as a project following docs/apitest.md would.
func installDropIn(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "build", "apitest")
	build := exec.Command("go", "build", "-o", bin, "./cmd/apitest")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/apitest: %v\n%s", err, out)
	}
	assets := filepath.Join(dir, "assets")
	if out, err := exec.Command(bin, "install", assets).CombinedOutput(); err != nil {
		t.Fatalf("apitest install: %v\n%s", err, out)
	}
	return assets
}

// processesRunning returns the pids of the processes whose executable is exe.
func processesRunning(t *testing.T, exe string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	want, _ := filepath.EvalSymlinks(exe)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if got, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && got == want {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestEnvtestDropIn: an unchanged envtest.Environment{} with KUBEBUILDER_ASSETS at the
// drop-in starts apitest as its kube-apiserver and etcd (every flag envtest passes, its
// serving certificates, its admin user's client certificate), installs a CRD, serves a
// client's creates and lists, and Stop leaves no process behind.
func TestEnvtestDropIn(t *testing.T) {
	assets := installDropIn(t)
	t.Setenv("KUBEBUILDER_ASSETS", assets)
	t.Setenv("USE_EXISTING_CLUSTER", "")
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Gadget", ListKind: "GadgetList", Plural: "gadgets", Singular: "gadget"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: new(true)}}}},
		},
	}
	env := &envtest.Environment{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest Start on the drop-in: %v", err)
	}
	stopped := false
	defer func() {
		if !stopped {
			env.Stop()
		}
	}()
	if n := len(processesRunning(t, filepath.Join(assets, "apitest"))); n != 2 {
		t.Errorf("%d apitest processes while envtest runs, want 2 (kube-apiserver and etcd)", n)
	}
	if len(cfg.CertData) == 0 || len(cfg.CAData) == 0 {
		t.Errorf("envtest's config has no client certificate or CA: it did not go through its own authentication")
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, name := range []string{"a", "b"} {
		if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Data: map[string]string{"k": name}}); err != nil {
			t.Fatalf("create configmap %s: %v", name, err)
		}
	}
	var cms corev1.ConfigMapList
	if err := c.List(ctx, &cms, client.InNamespace("default")); err != nil || len(cms.Items) != 2 {
		t.Fatalf("list configmaps: %d items, %v; want 2", len(cms.Items), err)
	}
	g := &unstructured.Unstructured{}
	g.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gadget"})
	g.SetNamespace("default")
	g.SetName("g")
	if err := c.Create(ctx, g); err != nil {
		t.Fatalf("create a gadget of the CRD envtest installed: %v", err)
	}
	stopped = true
	if err := env.Stop(); err != nil {
		t.Fatalf("envtest Stop: %v", err)
	}
	if pids := processesRunning(t, filepath.Join(assets, "apitest")); len(pids) > 0 {
		t.Errorf("apitest processes %v still run after Stop", pids)
	}
}
