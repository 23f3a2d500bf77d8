package meta

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestUnstructuredRoundTripAndAccessors(t *testing.T) {
	in := `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"ct","namespace":"ns","uid":"u1",
"resourceVersion":"42","generation":3,"labels":{"a":"b"},"annotations":{"x":"y"},"finalizers":["f"],
"creationTimestamp":"2026-01-02T03:04:05Z","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"o","uid":"ou","controller":true}]},
"spec":{"replicas":9007199254740993,"ratio":0.5,"enabled":true,"tags":["p","q"],"nested":{"deep":{"s":"v"}}}}`
	var u Unstructured
	if err := json.Unmarshal([]byte(in), &u); err != nil {
		t.Fatal(err)
	}
	if u.GetName() != "ct" || u.GetNamespace() != "ns" || u.GetUID() != "u1" || u.GetResourceVersion() != "42" ||
		u.GetGeneration() != 3 || u.GetLabels()["a"] != "b" || u.GetAnnotations()["x"] != "y" || u.GetFinalizers()[0] != "f" {
		t.Fatalf("accessors on %v", u.Object)
	}
	if gvk := u.GroupVersionKind(); gvk != (GroupVersionKind{"stable.example.com", "v1", "CronTab"}) {
		t.Fatalf("gvk %v", gvk)
	}
	if ts := u.GetCreationTimestamp(); ts.UTC().Format("2006-01-02T15:04:05Z") != "2026-01-02T03:04:05Z" || u.GetDeletionTimestamp() != nil {
		t.Fatalf("timestamps %v", ts)
	}
	if refs := u.GetOwnerReferences(); len(refs) != 1 || !refs[0].IsController() || refs[0].Name != "o" {
		t.Fatalf("owner refs %+v", refs)
	}
	// Integers stay exact.
	if n, ok, err := NestedInt64(u.Object, "spec", "replicas"); !ok || err != nil || n != 9007199254740993 {
		t.Fatalf("replicas %d %v %v", n, ok, err)
	}
	if f, _, _ := NestedFloat64(u.Object, "spec", "ratio"); f != 0.5 {
		t.Fatalf("ratio %v", f)
	}
	if b, _, _ := NestedBool(u.Object, "spec", "enabled"); !b {
		t.Fatal("enabled")
	}
	if s, _, _ := NestedStringSlice(u.Object, "spec", "tags"); strings.Join(s, ",") != "p,q" {
		t.Fatalf("tags %v", s)
	}
	if s, _, _ := NestedString(u.Object, "spec", "nested", "deep", "s"); s != "v" {
		t.Fatalf("deep %q", s)
	}
	if _, ok, err := NestedString(u.Object, "spec", "missing"); ok || err != nil {
		t.Fatal("missing field reported found")
	}
	if _, _, err := NestedString(u.Object, "spec", "tags", "x"); err == nil || !strings.Contains(err.Error(), ".spec.tags") {
		t.Fatalf("path through an array: %v", err)
	}
	if _, _, err := NestedInt64(u.Object, "spec", "ratio"); err == nil {
		t.Fatal("float read as an integer")
	}
	lm, err := u.Metadata()
	if err != nil || lm.Name != "ct" || lm.Generation != 3 {
		t.Fatalf("metadata %+v %v", lm, err)
	}

	// Copies are independent.
	cp := u.DeepCopy()
	m, _, _ := NestedMap(cp.Object, "spec")
	m["changed"] = true
	if err := SetNestedField(cp.Object, "w", "spec", "nested", "deep", "s"); err != nil {
		t.Fatal(err)
	}
	if s, _, _ := NestedString(u.Object, "spec", "nested", "deep", "s"); s != "v" {
		t.Fatal("DeepCopy shares maps")
	}
	if _, ok, _ := NestedFieldNoCopy(u.Object, "spec", "changed"); ok {
		t.Fatal("NestedMap returned the original map")
	}

	// Setters.
	u.SetName("renamed")
	u.SetLabels(map[string]string{"k": "v"})
	u.SetAnnotations(nil)
	u.SetFinalizers(nil)
	if err := SetNestedField(u.Object, 5, "spec", "count"); err != nil {
		t.Fatal(err)
	}
	if err := SetNestedField(u.Object, "x", "spec", "tags", "oops"); err == nil {
		t.Fatal("SetNestedField through an array succeeded")
	}
	RemoveNestedField(u.Object, "spec", "nested")
	out, err := json.Marshal(&u)
	if err != nil {
		t.Fatal(err)
	}
	var back Unstructured
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if back.GetName() != "renamed" || back.GetLabels()["k"] != "v" || back.GetAnnotations() != nil || back.GetFinalizers() != nil {
		t.Fatalf("after setters %v", back.Object)
	}
	if n, _, _ := NestedInt64(back.Object, "spec", "count"); n != 5 {
		t.Fatalf("count %d", n)
	}
	if _, ok, _ := NestedFieldNoCopy(back.Object, "spec", "nested"); ok {
		t.Fatal("RemoveNestedField")
	}
	if err := json.Unmarshal([]byte(`null`), &back); err == nil {
		t.Fatal("null accepted")
	}

	// Typed <-> unstructured.
	type podSpec struct {
		NodeName string `json:"nodeName,omitempty"`
	}
	type pod struct {
		TypeMeta
		ObjectMeta `json:"metadata"`
		Spec       podSpec `json:"spec"`
	}
	typed := &pod{ObjectMeta: ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}}}
	typed.Spec.NodeName = "n1"
	tu, err := ToUnstructured(typed)
	if err != nil || tu.GetName() != "p" {
		t.Fatalf("ToUnstructured %v %v", tu, err)
	}
	var again pod
	if err := tu.Into(&again); err != nil || again.Spec.NodeName != "n1" || again.Labels["a"] != "b" {
		t.Fatalf("Into %+v %v", again, err)
	}
	var list UnstructuredList
	if err := json.Unmarshal([]byte(`{"kind":"CronTabList","metadata":{"continue":"c"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 || list.Items[1].GetName() != "b" || list.Continue != "c" {
		t.Fatalf("list %+v", list)
	}
}
