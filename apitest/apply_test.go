package apitest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/meta"
)

// managers renders managedFields as "manager/operation" in order.
func managers(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var entries []struct{ Manager, Operation, Subresource string }
	if err := json.Unmarshal(raw, &entries); err != nil {
		t.Fatalf("managedFields %s: %v", raw, err)
	}
	var out []string
	for _, e := range entries {
		s := e.Manager + "/" + e.Operation
		if e.Subresource != "" {
			s += "/" + e.Subresource
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestServerSideApply(t *testing.T) {
	e := newEnv(t)
	cfg := func(data string) []byte {
		return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":` + data + `}`)
	}
	created, err := e.cms.Apply(e.ctx, "a", cfg(`{"x":"1","y":"2"}`), apiclient.ApplyOptions{FieldManager: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	if created.Data["x"] != "1" || managers(t, created.ManagedFields) != "m1/Apply" {
		t.Fatalf("created %+v %s", created.Data, created.ManagedFields)
	}
	again, err := e.cms.Apply(e.ctx, "a", cfg(`{"x":"1","y":"2"}`), apiclient.ApplyOptions{FieldManager: "m1"})
	if err != nil || again.ResourceVersion != created.ResourceVersion {
		t.Fatalf("a repeated apply changed the object: %v %s -> %s", err, created.ResourceVersion, again.ResourceVersion)
	}
	_, err = e.cms.Apply(e.ctx, "a", cfg(`{"x":"2"}`), apiclient.ApplyOptions{FieldManager: "m2"})
	st := mustStatus(t, err, 409, meta.StatusReasonConflict)
	if st.Message != `Apply failed with 1 conflict: conflict with "m1": .data.x` || len(st.Details.Causes) != 1 ||
		st.Details.Causes[0].Field != ".data.x" || st.Details.Causes[0].Type != "FieldManagerConflict" {
		t.Fatalf("conflict %+v %+v", st, st.Details)
	}
	forced, err := e.cms.Apply(e.ctx, "a", cfg(`{"x":"2"}`), apiclient.ApplyOptions{FieldManager: "m2", Force: true})
	if err != nil || forced.Data["x"] != "2" || forced.Data["y"] != "2" || managers(t, forced.ManagedFields) != "m1/Apply m2/Apply" {
		t.Fatalf("force: %v %+v %s", err, forced, forced.ManagedFields)
	}
	// m1 no longer applies y, which it alone owned: it goes.
	pruned, err := e.cms.Apply(e.ctx, "a", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"l":"1"}}}`), apiclient.ApplyOptions{FieldManager: "m1"})
	if err != nil || len(pruned.Data) != 1 || pruned.Data["x"] != "2" || pruned.Labels["l"] != "1" {
		t.Fatalf("pruned %v %+v", err, pruned)
	}
	// A merge patch records its manager with operation Update.
	patched, err := e.cms.Patch(e.ctx, "a", apiclient.MergePatchType, []byte(`{"data":{"z":"3"}}`), apiclient.PatchOptions{FieldManager: "editor"})
	if err != nil || managers(t, patched.ManagedFields) != "m1/Apply m2/Apply editor/Update" {
		t.Fatalf("patch %v %s", err, patched.ManagedFields)
	}
	_, err = e.cms.Apply(e.ctx, "a", cfg(`{"z":"4"}`), apiclient.ApplyOptions{FieldManager: "m1"})
	st = mustStatus(t, err, 409, meta.StatusReasonConflict)
	if st.Message != `Apply failed with 1 conflict: conflict with "editor" using v1: .data.z` {
		t.Fatalf("conflict with an updater: %s", st.Message)
	}
	_, err = e.cms.Patch(e.ctx, "a", apiclient.ApplyPatchType, cfg(`{}`), apiclient.PatchOptions{})
	if st := mustStatus(t, err, 422, meta.StatusReasonInvalid); !strings.Contains(st.Message, "fieldManager: Required value: is required for apply patch") {
		t.Fatalf("no field manager: %s", st.Message)
	}
}

func TestStrategicMergePatch(t *testing.T) {
	e := newEnv(t)
	dep := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"default"},"spec":{"selector":{"matchLabels":{"app":"d"}},` +
		`"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"a","image":"a:1","env":[{"name":"X","value":"1"}]},{"name":"b","image":"b:1"}]}}}}`
	if _, err := e.s.Create("deployments", json.RawMessage(dep)); err != nil {
		t.Fatal(err)
	}
	out, err := e.s.Patch("deployments", "default", "d", apiclient.StrategicMergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"b"}],"containers":[{"name":"a","image":"a:2"}]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Name, Image string
						Env         []map[string]string
					}
				}
			}
		}
	}
	if err := out.Into(&d); err != nil {
		t.Fatal(err)
	}
	cs := d.Spec.Template.Spec.Containers
	if len(cs) != 2 || cs[0].Image != "a:2" || cs[1].Image != "b:1" || len(cs[0].Env) != 1 {
		t.Fatalf("set image: %+v", cs)
	}

	if err := e.s.AddResource(apitest.ResourceType{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Create("widgets", map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}}); err != nil {
		t.Fatal(err)
	}
	_, err = e.s.Patch("widgets", "default", "w", apiclient.StrategicMergePatchType, []byte(`{"spec":{}}`))
	st, _ := meta.AsStatus(err)
	if st == nil || st.Code != 415 || st.Message != "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml" {
		t.Fatalf("strategic merge patch of a custom resource: %v", err)
	}
}

func TestApplyCustomResourceWithSchema(t *testing.T) {
	e := newEnv(t)
	schema := map[string]any{"type": "object", "properties": map[string]any{"spec": map[string]any{"type": "object", "properties": map[string]any{
		"items": map[string]any{"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"name"},
			"items": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}, "v": map[string]any{"type": "string"}}}},
	}}}}
	if err := e.s.AddResource(apitest.ResourceType{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true, OpenAPIV3Schema: schema}); err != nil {
		t.Fatal(err)
	}
	widgets := apiclient.NewResource[*meta.Unstructured](e.c, meta.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).Namespace("default")
	w := func(items string) []byte {
		return []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"items":` + items + `}}`)
	}
	if _, err := widgets.Apply(e.ctx, "w", w(`[{"name":"a","v":"1"}]`), apiclient.ApplyOptions{FieldManager: "m1"}); err != nil {
		t.Fatal(err)
	}
	out, err := widgets.Apply(e.ctx, "w", w(`[{"name":"b","v":"2"}]`), apiclient.ApplyOptions{FieldManager: "m2"})
	if err != nil {
		t.Fatal(err)
	}
	items, _, _ := meta.NestedSlice(out.Object, "spec", "items")
	if len(items) != 2 {
		t.Fatalf("the list-map merged by name: %v", items)
	}
	if _, err := widgets.Apply(e.ctx, "w", w(`[{"name":"a","v":"9"}]`), apiclient.ApplyOptions{FieldManager: "m2"}); err == nil {
		t.Fatal("m1's item is m1's: no conflict")
	}
}

func TestGoHelpersRecordManagedFields(t *testing.T) {
	e := newEnv(t)
	o, err := e.s.Create("configmaps", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "g"}, "data": map[string]any{"a": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Metadata meta.ObjectMeta }
	if err := o.Into(&got); err != nil || managers(t, got.Metadata.ManagedFields) != "apitest/Update" {
		t.Fatalf("Create: %v %s", err, got.Metadata.ManagedFields)
	}
	o, err = e.s.Patch("configmaps", "default", "g", apiclient.ApplyPatchType, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"g"},"data":{"b":"2"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Into(&got); err != nil || managers(t, got.Metadata.ManagedFields) != "apitest/Apply apitest/Update" {
		t.Fatalf("Patch with apply: %v %s", err, got.Metadata.ManagedFields)
	}
}

func TestScaleTakesReplicas(t *testing.T) {
	e := newEnv(t)
	deps := apiclient.NewResource[*meta.Unstructured](e.c, meta.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace("default")
	cfg := []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"d"}},` +
		`"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"a","image":"a:1"}]}}}}`)
	if _, err := deps.Apply(e.ctx, "d", cfg, apiclient.ApplyOptions{FieldManager: "alice"}); err != nil {
		t.Fatal(err)
	}
	if _, err := deps.Patch(e.ctx, "d", apiclient.MergePatchType, []byte(`{"spec":{"replicas":4}}`), apiclient.PatchOptions{FieldManager: "scaler"}, "scale"); err != nil {
		t.Fatal(err)
	}
	got, err := deps.Get(e.ctx, "d", apiclient.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mf, _ := json.Marshal(got.Object["metadata"].(map[string]any)["managedFields"])
	if managers(t, mf) != "alice/Apply scaler/Update/scale" {
		t.Fatalf("managedFields %s", mf)
	}
	_, err = deps.Apply(e.ctx, "d", cfg, apiclient.ApplyOptions{FieldManager: "alice"})
	if st := mustStatus(t, err, 409, meta.StatusReasonConflict); st.Message != `Apply failed with 1 conflict: conflict with "scaler" with subresource "scale" using apps/v1: .spec.replicas` {
		t.Fatalf("conflict %s", st.Message)
	}
}
