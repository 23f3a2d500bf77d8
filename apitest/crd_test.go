package apitest

import (
	"strings"
	"testing"
)

const gadgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Cluster
  names: {kind: Gadget, listKind: GadgetList, plural: gadgets, singular: gadget, shortNames: [gd], categories: [all]}
  versions:
  - {name: v1beta1, served: true, storage: false}
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer, minimum: 1}}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: not-a-crd}
`

func TestAddCRD(t *testing.T) {
	s := NewServer()
	defer s.Close()
	if err := s.AddCRD([]byte(gadgetCRD)); err != nil {
		t.Fatal(err)
	}
	var got *ResourceType
	for _, r := range s.Resources() {
		if r.Kind == "Gadget" {
			got = &r
		}
	}
	if got == nil {
		t.Fatal("Gadget not served")
	}
	if got.Group != "example.com" || got.Version != "v1" || got.Plural != "gadgets" || got.Namespaced || !got.StatusSubresource ||
		len(got.ShortNames) != 1 || got.ShortNames[0] != "gd" || len(got.Categories) != 1 {
		t.Errorf("resource type %+v", *got)
	}
	spec, _ := got.OpenAPIV3Schema["properties"].(map[string]any)["spec"].(map[string]any)
	if size := spec["properties"].(map[string]any)["size"].(map[string]any); size["minimum"] != float64(1) {
		t.Errorf("schema not carried as JSON decodes it: %#v", size)
	}
	if _, err := s.Create("gd", map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddCRD([]byte(gadgetCRD)); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Errorf("second install: %v", err)
	}
	for _, bad := range []string{
		"kind: ConfigMap\n",
		strings.Replace(gadgetCRD, "name: gadgets.example.com", "name: wrong", 1),
		strings.Replace(gadgetCRD, "storage: true", "storage: false", 1),
		"kind: [",
	} {
		fresh := NewServer()
		if err := fresh.AddCRD([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
		fresh.Close()
	}
}
