package apitest_test

import (
	"fmt"
	"net/url"
	"slices"
	"testing"

	"github.com/informerkit/informerkit/apitest"
)

// TestFreshClusterObjects: a new server has what a fresh kube-apiserver creates itself: the
// four system namespaces and the kubernetes Service, written by the manager
// "kube-apiserver"; NoDefaultNamespaces leaves them out.
func TestFreshClusterObjects(t *testing.T) {
	s := apitest.NewServer()
	defer s.Close()
	nss, _, err := s.List("namespaces", "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ns := range nss {
		names = append(names, ns.Name())
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"default", "kube-node-lease", "kube-public", "kube-system"}) {
		t.Errorf("namespaces %v", names)
	}
	svc, err := s.Get("services", "default", "kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(s.URL)
	spec := svc["spec"].(map[string]any)
	port := spec["ports"].([]any)[0].(map[string]any)
	if spec["clusterIP"] != "10.0.0.1" || spec["type"] != "ClusterIP" || port["name"] != "https" || fmt.Sprint(port["port"]) != "443" ||
		fmt.Sprint(port["targetPort"]) != u.Port() || svc.Labels()["component"] != "apiserver" {
		t.Errorf("kubernetes Service %v", svc)
	}
	mf := svc["metadata"].(map[string]any)["managedFields"].([]any)
	if len(mf) != 1 || mf[0].(map[string]any)["manager"] != "kube-apiserver" {
		t.Errorf("managedFields %v", mf)
	}
	bare := apitest.NewServerWithOptions(apitest.Options{NoDefaultNamespaces: true})
	defer bare.Close()
	if nss, _, _ := bare.List("namespaces", ""); len(nss) != 0 {
		t.Errorf("NoDefaultNamespaces: %d namespaces", len(nss))
	}
}
