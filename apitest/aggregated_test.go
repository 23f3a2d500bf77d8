package apitest_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/kubeproto"
)

// clientGoDiscovery is the Accept header of client-go v0.36's discovery client.
const clientGoDiscovery = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"

type aggregatedDoc struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Items      []struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Versions []struct {
			Version   string `json:"version"`
			Freshness string `json:"freshness"`
			Resources []struct {
				Resource     string            `json:"resource"`
				ResponseKind map[string]string `json:"responseKind"`
				Scope        string            `json:"scope"`
				Verbs        []string          `json:"verbs"`
				Subresources []struct {
					Subresource  string            `json:"subresource"`
					ResponseKind map[string]string `json:"responseKind"`
				} `json:"subresources"`
			} `json:"resources"`
		} `json:"versions"`
	} `json:"items"`
}

// TestAggregatedDiscovery: /api and /apis answer the aggregated APIGroupDiscoveryList that
// client-go asks for first, in the kube-apiserver's shape, with custom resources, ETags,
// v2beta1 and protobuf; plain JSON still gets the legacy documents.
func TestAggregatedDiscovery(t *testing.T) {
	rc := newRaw(t)
	if err := rc.s.AddResource(apitest.ResourceType{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true, StatusSubresource: true}); err != nil {
		t.Fatal(err)
	}
	resp, b := rc.do("GET", "/apis", clientGoDiscovery, "", nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" ||
		resp.Header.Get("Etag") == "" || resp.Header.Get("Vary") != "Accept" {
		t.Fatalf("/apis: %d %v", resp.StatusCode, resp.Header)
	}
	var doc aggregatedDoc
	if err := json.Unmarshal(b, &doc); err != nil || doc.Kind != "APIGroupDiscoveryList" || doc.APIVersion != "apidiscovery.k8s.io/v2" {
		t.Fatalf("/apis: %v %s", err, b)
	}
	groups := map[string]int{}
	for i, g := range doc.Items {
		groups[g.Metadata.Name] = i
	}
	if groups["apiregistration.k8s.io"] != 0 || groups["example.com"] != len(doc.Items)-1 {
		t.Errorf("group order %v", groups)
	}
	for _, v := range doc.Items[groups["apps"]].Versions {
		for _, r := range v.Resources {
			if r.Resource != "deployments" {
				continue
			}
			if r.ResponseKind["kind"] != "Deployment" || r.ResponseKind["group"] != "" || r.Scope != "Namespaced" || len(r.Subresources) != 2 ||
				r.Subresources[0].ResponseKind["group"] != "autoscaling" || r.Subresources[0].ResponseKind["kind"] != "Scale" || v.Freshness != "Current" {
				t.Errorf("deployments: %+v", r)
			}
		}
	}
	w := doc.Items[groups["example.com"]].Versions[0].Resources[0]
	if w.Resource != "widgets" || w.ResponseKind["group"] != "example.com" || w.ResponseKind["version"] != "v1" || w.Subresources[0].ResponseKind["group"] != "example.com" {
		t.Errorf("widgets: %+v", w)
	}
	// The ETag answers a repeat with 304.
	req, _ := http.NewRequest("GET", rc.s.URL+"/apis", nil)
	req.Header.Set("Accept", clientGoDiscovery)
	req.Header.Set("If-None-Match", resp.Header.Get("Etag"))
	if r2, err := rc.c.Do(req); err != nil || r2.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %v %v", r2, err)
	} else {
		r2.Body.Close()
	}
	// The core group, v2beta1.
	resp, b = rc.do("GET", "/api", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList", "", nil)
	doc = aggregatedDoc{}
	json.Unmarshal(b, &doc)
	if resp.StatusCode != http.StatusOK || doc.APIVersion != "apidiscovery.k8s.io/v2beta1" || len(doc.Items) != 1 || doc.Items[0].Metadata.Name != "" ||
		len(doc.Items[0].Versions[0].Resources) < 15 {
		t.Errorf("/api v2beta1: %d %s", resp.StatusCode, b)
	}
	// Protobuf.
	resp, b = rc.do("GET", "/apis", "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", "", nil)
	pb, err := kubeproto.DecodeObject(b)
	if resp.StatusCode != http.StatusOK || err != nil || pb["kind"] != "APIGroupDiscoveryList" || len(pb["items"].([]any)) != len(groups) {
		t.Errorf("protobuf: %d %v %v", resp.StatusCode, err, pb["kind"])
	}
	// Plain JSON: the legacy documents.
	resp, b = rc.do("GET", "/apis", "application/json", "", nil)
	var legacy struct {
		Kind string `json:"kind"`
	}
	json.Unmarshal(b, &legacy)
	if resp.StatusCode != http.StatusOK || legacy.Kind != "APIGroupList" {
		t.Errorf("legacy /apis: %d %s", resp.StatusCode, b)
	}
}
