package apitest_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestApplyToScale: server-side apply to deployments/scale sets spec.replicas, conflicts
// with the other owner of spec.replicas when it changes the value (unless forced), shares
// it when it does not, and records the applier as an Apply through "scale".
func TestApplyToScale(t *testing.T) {
	rc := newRaw(t)
	path := "/apis/apps/v1/namespaces/default/deployments"
	dep := []byte(`{"metadata":{"name":"d"},"spec":{"replicas":1,"selector":{"matchLabels":{"a":"b"}},
		"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`)
	if resp, b := rc.do("POST", path+"?fieldManager=creator", "", "application/json", dep); resp.StatusCode != 201 {
		t.Fatalf("create: %d %s", resp.StatusCode, b)
	}
	apply := func(query string, replicas int) (int, map[string]any) {
		t.Helper()
		body := []byte(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d","namespace":"default"},"spec":{"replicas":` + strconv.Itoa(replicas) + `}}`)
		resp, b := rc.do("PATCH", path+"/d/scale"+query, "application/json", "application/apply-patch+yaml", body)
		var out map[string]any
		_ = json.Unmarshal(b, &out)
		return resp.StatusCode, out
	}
	managers := func() map[string]string {
		t.Helper()
		_, b := rc.do("GET", path+"/d", "", "", nil)
		var d struct {
			Metadata struct {
				ManagedFields []struct {
					Manager, Operation, Subresource string
					FieldsV1                        map[string]any
				}
			}
			Spec struct{ Replicas int }
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{"replicas": strconv.Itoa(d.Spec.Replicas)}
		for _, m := range d.Metadata.ManagedFields {
			spec, _ := m.FieldsV1["f:spec"].(map[string]any)
			_, owns := spec["f:replicas"]
			out[m.Manager] = m.Operation + "/" + m.Subresource + "/" + map[bool]string{true: "replicas", false: "-"}[owns]
		}
		return out
	}

	if code, out := apply("", 2); code != 422 {
		t.Errorf("apply without fieldManager: %d %v, want 422", code, out["message"])
	}
	want := `Apply failed with 1 conflict: conflict with "creator" using apps/v1: .spec.replicas`
	if code, out := apply("?fieldManager=foo", 2); code != 409 || out["message"] != want {
		t.Errorf("apply changing replicas: %d %v, want 409 %q", code, out["message"], want)
	}
	if code, out := apply("?fieldManager=foo", 1); code != 200 {
		t.Fatalf("apply of the same replicas: %d %v", code, out)
	}
	if m := managers(); m["creator"] != "Update//replicas" || m["foo"] != "Apply/scale/replicas" {
		t.Errorf("after applying the same value: %v, want both owning spec.replicas", m)
	}
	code, out := apply("?fieldManager=foo&force=true", 3)
	if code != 200 || str(out, "kind") != "Scale" || str(out, "spec", "replicas") != float64(3) {
		t.Fatalf("forced apply: %d %v", code, out)
	}
	if m := managers(); m["replicas"] != "3" || m["foo"] != "Apply/scale/replicas" || strings.HasSuffix(m["creator"], "/replicas") {
		t.Errorf("after the forced apply: %v, want 3 replicas owned by foo alone", m)
	}
}
