package apitest_test

import (
	"encoding/json"
	"testing"
)

// TestDryRunCreateWithResourceVersion: a create whose object carries a resourceVersion (a
// copy of a stored object) is validated first; only storing it is refused (500, as etcd's
// create refuses it), so a dry run of it succeeds and stores nothing, keeping the client's
// resourceVersion in its answer, as the kube-apiserver's dry-run storage does.
func TestDryRunCreateWithResourceVersion(t *testing.T) {
	rc := newRaw(t)
	path := "/apis/apps/v1/namespaces/default/deployments"
	dep := func(name string, containers []any) []byte {
		b, _ := json.Marshal(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": name, "resourceVersion": "42"},
			"spec": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"a": "b"}},
				"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}},
					"spec": map[string]any{"containers": containers}}}})
		return b
	}
	ok := []any{map[string]any{"name": "c", "image": "nginx"}}

	resp, b := rc.do("POST", path+"?dryRun=All", "application/json", "application/json", dep("d", ok))
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	if md, _ := out["metadata"].(map[string]any); resp.StatusCode != 201 || md["resourceVersion"] != "42" || md["uid"] == nil {
		t.Fatalf("dry-run create with a resourceVersion: %d %s, want 201 with resourceVersion 42 and a uid", resp.StatusCode, b)
	}
	if resp, _ := rc.do("GET", path+"/d", "", "", nil); resp.StatusCode != 404 {
		t.Errorf("the dry run stored the object: GET %d", resp.StatusCode)
	}
	if resp, b := rc.do("POST", path+"?dryRun=All", "application/json", "application/json", dep("d", nil)); resp.StatusCode != 422 {
		t.Errorf("dry-run create of an invalid object with a resourceVersion: %d %s, want 422", resp.StatusCode, b)
	}
	if resp, b := rc.do("POST", path, "application/json", "application/json", dep("d", nil)); resp.StatusCode != 422 {
		t.Errorf("create of an invalid object with a resourceVersion: %d %s, want 422 (validation first)", resp.StatusCode, b)
	}
	if resp, b := rc.do("POST", path, "application/json", "application/json", dep("d", ok)); resp.StatusCode != 500 {
		t.Errorf("create with a resourceVersion: %d %s, want 500", resp.StatusCode, b)
	}
}

// TestDeleteCollectionDryRunInBody: deletecollection takes dryRun from the DeleteOptions
// body as well as from the query, as a single delete does.
func TestDeleteCollectionDryRunInBody(t *testing.T) {
	rc := newRaw(t)
	path := "/api/v1/namespaces/default/configmaps"
	for _, name := range []string{"a", "b"} {
		body := []byte(`{"metadata":{"name":"` + name + `","labels":{"gone":"yes"}}}`)
		if resp, b := rc.do("POST", path, "", "application/json", body); resp.StatusCode != 201 {
			t.Fatalf("create %s: %d %s", name, resp.StatusCode, b)
		}
	}
	opts := []byte(`{"apiVersion":"v1","kind":"DeleteOptions","dryRun":["All"]}`)
	resp, b := rc.do("DELETE", path+"?labelSelector=gone%3Dyes", "application/json", "application/json", opts)
	var list struct{ Items []any }
	if err := json.Unmarshal(b, &list); err != nil || resp.StatusCode != 200 || len(list.Items) != 2 {
		t.Fatalf("dry-run deletecollection: %d %s, want 200 and the 2 objects it would delete", resp.StatusCode, b)
	}
	for _, name := range []string{"a", "b"} {
		if resp, _ := rc.do("GET", path+"/"+name, "", "", nil); resp.StatusCode != 200 {
			t.Errorf("the dry run deleted %s: GET %d", name, resp.StatusCode)
		}
	}
	if resp, b := rc.do("DELETE", path+"?labelSelector=gone%3Dyes", "", "application/json", []byte(`{}`)); resp.StatusCode != 200 {
		t.Fatalf("deletecollection: %d %s", resp.StatusCode, b)
	}
	if resp, _ := rc.do("GET", path+"/a", "", "", nil); resp.StatusCode != 404 {
		t.Errorf("deletecollection left a: GET %d", resp.StatusCode)
	}
}
