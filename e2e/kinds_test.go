package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/kinds"
)

// TestBuiltinKindsMatchDiscovery checks kinds' table of built-in kinds against the real
// kube-apiserver's discovery: every preferred-version resource that can be watched is in the
// table with its kind, scope and status subresource, and nothing else is (the groups of
// custom resources other tests installed aside).
func TestBuiltinKindsMatchDiscovery(t *testing.T) {
	c := cluster.ForTest(t)
	type resourceDoc struct {
		Name       string   `json:"name"`
		Kind       string   `json:"kind"`
		Namespaced bool     `json:"namespaced"`
		Verbs      []string `json:"verbs"`
	}
	type listDoc struct {
		Resources []resourceDoc `json:"resources"`
	}
	// Custom resources other tests installed are not built in.
	var crds struct {
		Items []struct {
			Spec struct {
				Group string `json:"group"`
			} `json:"spec"`
		} `json:"items"`
	}
	do(t, c, http.MethodGet, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", nil, http.StatusOK, &crds)
	custom := map[string]bool{}
	for _, crd := range crds.Items {
		custom[crd.Spec.Group] = true
	}
	served := map[string]kinds.Info{}
	collect := func(group, version, path string) {
		if custom[group] {
			return
		}
		var doc listDoc
		do(t, c, http.MethodGet, path, nil, http.StatusOK, &doc)
		names := map[string]bool{}
		for _, r := range doc.Resources {
			names[r.Name] = true
		}
		for _, r := range doc.Resources {
			if strings.Contains(r.Name, "/") || !strings.Contains(","+strings.Join(r.Verbs, ",")+",", ",watch,") {
				continue
			}
			i := kinds.Info{Group: group, Version: version, Kind: r.Kind, Resource: r.Name, Namespaced: r.Namespaced, StatusSubresource: names[r.Name+"/status"]}
			served[i.GroupVersionResource().String()] = i
		}
	}
	collect("", "v1", "/api/v1")
	var groups struct {
		Groups []struct {
			Name             string `json:"name"`
			PreferredVersion struct {
				Version string `json:"version"`
			} `json:"preferredVersion"`
		} `json:"groups"`
	}
	do(t, c, http.MethodGet, "/apis", nil, http.StatusOK, &groups)
	for _, g := range groups.Groups {
		collect(g.Name, g.PreferredVersion.Version, "/apis/"+g.Name+"/"+g.PreferredVersion.Version)
	}
	table := map[string]kinds.Info{}
	for _, i := range kinds.Builtin() {
		table[i.GroupVersionResource().String()] = i
	}
	if c.Minor() == 36 {
		// The table is 1.37's: 1.36 serves four kinds fewer and CSINode without status.
		for _, i := range []kinds.Info{kinds.ClusterTrustBundle, kinds.PodCertificateRequest, kinds.DeviceTaintRule, kinds.StorageVersionMigration} {
			delete(table, i.GroupVersionResource().String())
		}
		csiNode := kinds.CSINode
		csiNode.StatusSubresource = false
		table[csiNode.GroupVersionResource().String()] = csiNode
	}
	for k, s := range served {
		if got, ok := table[k]; !ok {
			t.Errorf("served but not in kinds' table: %+v", s)
		} else if got != s {
			t.Errorf("%s: table has %+v, server serves %+v", k, got, s)
		}
	}
	for k, i := range table {
		if _, ok := served[k]; !ok {
			t.Errorf("in kinds' table but not served: %+v", i)
		}
	}
}
