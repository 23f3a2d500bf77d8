package crdgen

import (
	"errors"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/meta"
)

// TestCELRulesEnforcedOnAPITest: the x-kubernetes-validations crdgen writes from a +cel
// marker are enforced when the manifest is installed on apitest (as a cluster enforces
// them): an object breaking the rule is refused with the marker's message.
func TestCELRulesEnforcedOnAPITest(t *testing.T) {
	manifest, err := Manifest(generate(t, "./testdata/api/...").CRDs)
	if err != nil {
		t.Fatal(err)
	}
	s := apitest.NewServer()
	defer s.Close()
	if err := s.AddCRD(manifest); err != nil {
		t.Fatalf("the generated CRDs are refused: %v", err)
	}
	gadget := func(name string, size, maxSize int) map[string]any {
		return map[string]any{"apiVersion": "test.informerkit.io/v1", "kind": "Gadget", "metadata": map[string]any{"name": name},
			"spec": map[string]any{"name": name, "required": "x", "shape": "round", "size": size, "maxSize": maxSize}}
	}
	if _, err := s.Create("gadgets", gadget("fits", 3, 5)); err != nil {
		t.Fatalf("a gadget within its rule: %v", err)
	}
	_, err = s.Create("gadgets", gadget("too-big", 7, 5))
	var st *meta.Status
	if !errors.As(err, &st) || st.Code != 422 || !strings.Contains(st.Message, `Gadget.test.informerkit.io "too-big" is invalid: <nil>: Invalid value: size exceeds maxSize`) {
		t.Fatalf("a gadget breaking its +cel rule: %v", err)
	}
}
