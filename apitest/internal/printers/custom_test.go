package printers

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/informerkit/informerkit/meta"
)

func TestJSONPathFirst(t *testing.T) {
	var obj map[string]any
	_ = json.Unmarshal([]byte(`{"spec":{"replicas":3,"tags":["a","b"],"m":{"x":1}},
		"status":{"conditions":[{"type":"Ready","status":"False"},{"type":"Available","status":"True"}]}}`), &obj)
	for path, want := range map[string]any{
		".spec.replicas":  float64(3),
		"{.spec.tags[1]}": "b",
		".spec.tags[-1]":  "b",
		".spec.tags[*]":   "a",
		".spec['m'].x":    float64(1),
		`.status.conditions[?(@.type=="Available")].status`: "True",
		`.status.conditions[?(@.type!="Ready")].type`:       "Available",
		`.status.conditions[?(@.type=='Ready')].status`:     "False",
	} {
		if got, ok := jsonPathFirst(obj, path); !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v (%v), want %v", path, got, ok, want)
		}
	}
	for _, path := range []string{".spec.nothere", ".spec.tags[5]", `.status.conditions[?(@.type=="Gone")].status`, "spec"} {
		if got, ok := jsonPathFirst(obj, path); ok {
			t.Errorf("%s = %v, want nothing", path, got)
		}
	}
}

// A custom resource's Table: Name, then the CRD's columns with their types; Age (a date)
// when it has none.
func TestCustomColumns(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 10, 0, 0, time.UTC)
	obj := map[string]any{"metadata": map[string]any{"name": "w", "creationTimestamp": "2026-01-01T00:00:00Z"},
		"spec":   map[string]any{"replicas": json.Number("3"), "size": json.Number("1.5"), "on": true},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}}
	cols := []CustomColumn{
		{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"},
		{Name: "Size", Type: "number", JSONPath: ".spec.size", Priority: 1, Description: "how big"},
		{Name: "On", Type: "boolean", JSONPath: ".spec.on"},
		{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
		{Name: "Spec", Type: "string", JSONPath: ".spec.replicas"},
		{Name: "Created", Type: "date", JSONPath: ".metadata.creationTimestamp"},
		{Name: "Missing", Type: "string", JSONPath: ".spec.nothere"},
		{Name: "Wrong", Type: "integer", JSONPath: ".spec.on"},
	}
	tbl := Table("example.com", "Widget", []map[string]any{obj}, meta.ListMeta{}, Options{Generic: true, Columns: cols, Now: now})
	cells := tbl["rows"].([]map[string]any)[0]["cells"].([]any)
	want := []any{"w", int64(3), 1.5, true, "True", "3", "10m", nil, nil}
	if !reflect.DeepEqual(cells, want) {
		t.Errorf("cells %#v, want %#v", cells, want)
	}
	defs := tbl["columnDefinitions"].([]map[string]any)
	if defs[2]["description"] != "how big" || defs[2]["priority"] != 1 ||
		defs[1]["description"] != "Custom resource definition column (in JSONPath format): .spec.replicas" {
		t.Errorf("definitions %v", defs)
	}
	plain := Table("example.com", "Widget", []map[string]any{obj}, meta.ListMeta{}, Options{Generic: true, Now: now})
	if d := plain["columnDefinitions"].([]map[string]any); len(d) != 2 || d[1]["name"] != "Age" || d[1]["type"] != "date" {
		t.Errorf("without columns: %v", d)
	}
}
