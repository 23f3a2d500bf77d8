package apitest_test

import (
	"encoding/json"
	"testing"
)

// TestStatusPatchKeepsMetadataAsTheStrategy: a patch of /status changing metadata keeps
// what the kind's status strategy in the kube-apiserver keeps: a Deployment's annotation
// changes but not its label changes, a Namespace's both, a custom resource's neither.
func TestStatusPatchKeepsMetadataAsTheStrategy(t *testing.T) {
	rc := newRaw(t)
	if err := rc.s.AddCRD([]byte(partsCRD + "    subresources: {status: {}}\n")); err != nil {
		t.Fatal(err)
	}
	create := func(path, body string) {
		t.Helper()
		if resp, b := rc.do("POST", path, "", "application/json", []byte(body)); resp.StatusCode != 201 {
			t.Fatalf("create %s: %d %s", path, resp.StatusCode, b)
		}
	}
	create("/apis/apps/v1/namespaces/default/deployments", `{"metadata":{"name":"d","labels":{"l":"1"}},"spec":{
		"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`)
	create("/api/v1/namespaces", `{"metadata":{"name":"n","labels":{"l":"1"}}}`)
	create("/apis/example.com/v1/namespaces/default/parts", `{"apiVersion":"example.com/v1","kind":"Part","metadata":{"name":"p","labels":{"l":"1"}}}`)
	patch := []byte(`{"metadata":{"labels":{"l":"2"},"annotations":{"a":"new"}},"status":{}}`)
	for _, c := range []struct {
		path             string
		label, annotated string // want
	}{
		{"/apis/apps/v1/namespaces/default/deployments/d", "1", "new"},
		{"/api/v1/namespaces/n", "2", "new"},
		{"/apis/example.com/v1/namespaces/default/parts/p", "1", ""},
	} {
		resp, b := rc.do("PATCH", c.path+"/status", "", "application/merge-patch+json", patch)
		if resp.StatusCode != 200 {
			t.Fatalf("patch %s/status: %d %s", c.path, resp.StatusCode, b)
		}
		_, b = rc.do("GET", c.path, "", "", nil)
		var got struct {
			Metadata struct {
				Labels      map[string]string
				Annotations map[string]string
				Generation  int
			}
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got.Metadata.Labels["l"] != c.label || got.Metadata.Annotations["a"] != c.annotated {
			t.Errorf("%s after the /status patch: labels %v annotations %v, want l=%q a=%q",
				c.path, got.Metadata.Labels, got.Metadata.Annotations, c.label, c.annotated)
		}
		if c.path[1:5] == "apis" && got.Metadata.Generation != 1 {
			t.Errorf("%s: generation %d after a /status patch, want 1", c.path, got.Metadata.Generation)
		}
	}
}
