package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/e2e/cluster"
)

// pinnedRelease is the kube-apiserver release of e2e/tools/go.mod, the reference of make e2e.
const pinnedRelease = "v1.37.2"

// TestServerVersion checks that the cluster runs the pinned kube-apiserver release (the
// build stamps the version into the binary) and accepts the admin token over verified TLS.
func TestServerVersion(t *testing.T) {
	c := cluster.ForTest(t)
	var v struct {
		GitVersion string `json:"gitVersion"`
		Major      string `json:"major"`
		Minor      string `json:"minor"`
	}
	do(t, c, http.MethodGet, "/version", nil, http.StatusOK, &v)
	want := c.Version // the stamp of the build (v1.36.3 for E2E_RELEASE=1.36)
	if want == "" {
		want = pinnedRelease
	}
	if minor := strings.Split(want, ".")[1]; v.GitVersion != want || v.Major != "1" || v.Minor != minor {
		t.Errorf("/version = %+v, want %s (major 1, minor %s)", v, want, minor)
	}
	var ssr struct {
		Status struct {
			UserInfo struct {
				Username string   `json:"username"`
				Groups   []string `json:"groups"`
			} `json:"userInfo"`
		} `json:"status"`
	}
	do(t, c, http.MethodPost, "/apis/authentication.k8s.io/v1/selfsubjectreviews",
		map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
		http.StatusCreated, &ssr)
	if u := ssr.Status.UserInfo; u.Username != cluster.AdminUser || !strings.Contains(strings.Join(u.Groups, ","), cluster.AdminGroup) {
		t.Errorf("token authenticates as %+v, want %s in %s", u, cluster.AdminUser, cluster.AdminGroup)
	}
}

// TestKubectlSmoke drives the cluster with kubectl through the generated kubeconfig.
func TestKubectlSmoke(t *testing.T) {
	c := cluster.ForTest(t)
	names := strings.Fields(kubectl(t, c, "get", "namespaces", "-o", "jsonpath={.items[*].metadata.name}"))
	for _, want := range []string{"default", "kube-system", "kube-public"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("kubectl get namespaces = %v, want %s among them", names, want)
		}
	}

	ns := newNamespace(t, c)
	kubectl(t, c, "-n", ns, "create", "configmap", "smoke", "--from-literal=greeting=hello")
	if got := kubectl(t, c, "-n", ns, "get", "configmap", "smoke", "-o", "jsonpath={.data.greeting}"); got != "hello" {
		t.Errorf("configmap data greeting = %q, want %q", got, "hello")
	}
	// And the same object through plain HTTP: both clients see one server.
	var cm object
	do(t, c, http.MethodGet, nsPath(ns, "configmaps")+"/smoke", nil, http.StatusOK, &cm)
	if cm.Data["greeting"] != "hello" || cm.Metadata.ResourceVersion == "" {
		t.Errorf("GET configmap = %+v", cm)
	}
}
