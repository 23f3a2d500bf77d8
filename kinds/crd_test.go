package kinds

import (
	"strings"
	"testing"
)

const twoCRDs = `# two CRDs, the second with two versions
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Cluster
  names: {kind: Gadget, plural: gadgets}
  versions:
  - {name: v1beta1, served: true, storage: false, subresources: {status: {}}}
  - {name: v1, served: true, storage: true}
`

func TestFromCRD(t *testing.T) {
	w, err := FromCRD([]byte(twoCRDs), "Widget")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Info{Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets", Namespaced: true, StatusSubresource: true}); w != want {
		t.Errorf("Widget: %+v, want %+v", w, want)
	}
	g, err := FromCRD([]byte(twoCRDs), "Gadget")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Info{Group: "example.com", Version: "v1", Kind: "Gadget", Resource: "gadgets"}); g != want {
		t.Errorf("Gadget (the storage version, cluster-scoped): %+v, want %+v", g, want)
	}
	json := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{"group":"example.com","scope":"Namespaced",
		"names":{"kind":"Widget","plural":"widgets"},"versions":[{"name":"v2","served":true,"storage":true}]}}`
	if j, err := FromCRD([]byte(json), "Widget"); err != nil || j.Version != "v2" || j.StatusSubresource {
		t.Errorf("from JSON: %+v, %v", j, err)
	}
	if _, err := FromCRD([]byte(twoCRDs), "Gizmo"); err == nil || !strings.Contains(err.Error(), "Widget, Gadget") {
		t.Errorf("a kind the manifest lacks: %v", err)
	}
	if _, err := FromCRD([]byte("kind: [unclosed"), "Widget"); err == nil {
		t.Error("malformed YAML accepted")
	}
	bad := strings.Replace(twoCRDs, "plural: widgets", "plural: Widgets", 1)
	if _, err := FromCRD([]byte(bad), "Widget"); err == nil {
		t.Error("an upper-case plural accepted")
	}
	defer func() {
		if recover() == nil {
			t.Error("MustFromCRD did not panic on a missing kind")
		}
	}()
	MustFromCRD([]byte(twoCRDs), "Gizmo")
}
