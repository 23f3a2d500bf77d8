package apitest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/apitest"
)

const partsCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: parts.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Part, listKind: PartList, plural: parts, singular: part}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              parts: {type: array, items: {type: object, properties: {name: {type: string}}}}
`

// TestCustomResourceUnknownFields: the fields pruning removes from a custom resource are
// warned about (fieldValidation Warn, the default), refused (Strict) or dropped silently
// (Ignore), in the kube-apiserver's words.
func TestCustomResourceUnknownFields(t *testing.T) {
	s := apitest.NewServer()
	defer s.Close()
	if err := s.AddCRD([]byte(partsCRD)); err != nil {
		t.Fatal(err)
	}
	c := s.Client()
	defer c.CloseIdleConnections()
	body := func(name string) map[string]any {
		return map[string]any{"apiVersion": "example.com/v1", "kind": "Part", "metadata": map[string]any{"name": name},
			"spec":   map[string]any{"size": 1, "color": "red", "parts": []any{map[string]any{"name": "a", "weight": 2}}},
			"status": map[string]any{"ok": true}}
	}
	url := s.URL + "/apis/example.com/v1/namespaces/default/parts"
	post := func(query, name string) (*http.Response, map[string]any) {
		t.Helper()
		resp, out := callResp(t, c, "POST", url+query, body(name))
		return resp, out
	}
	resp, out := post("", "w1")
	warnings := strings.Join(resp.Header.Values("Warning"), "\n")
	for _, want := range []string{`299 - "unknown field \"spec.color\""`, `299 - "unknown field \"spec.parts[0].weight\""`, `299 - "unknown field \"status\""`} {
		if !strings.Contains(warnings, want) {
			t.Errorf("default create: Warning headers %q lack %s", warnings, want)
		}
	}
	if resp.StatusCode != 201 || str(out, "spec", "color") != nil || out["status"] != nil {
		t.Errorf("default create: %d %v (unknown fields kept?)", resp.StatusCode, out)
	}
	resp, out = post("?fieldValidation=Strict", "w2")
	want := `Part in version "v1" cannot be handled as a Part: strict decoding error: unknown field "spec.color", unknown field "spec.parts[0].weight", unknown field "status"`
	if resp.StatusCode != 400 || out["message"] != want || out["reason"] != "BadRequest" {
		t.Errorf("strict create: %d %v, want 400 %q", resp.StatusCode, out["message"], want)
	}
	if resp, _ := post("?fieldValidation=Ignore", "w3"); resp.StatusCode != 201 || len(resp.Header.Values("Warning")) != 0 {
		t.Errorf("ignore create: %d, warnings %q", resp.StatusCode, resp.Header.Values("Warning"))
	}
}
