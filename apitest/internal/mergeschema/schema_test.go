package mergeschema

import (
	"reflect"
	"testing"

	"github.com/informerkit/informerkit/internal/kubeschema"
)

// path walks struct fields and list items of t.
func path(t *testing.T, typ Type, names ...string) (Type, Field) {
	t.Helper()
	var f Field
	for _, n := range names {
		if n == "[]" {
			typ = typ.Elem()
			continue
		}
		var ok bool
		if f, ok = Lookup(typ, n); !ok {
			t.Fatalf("no field %s", n)
		}
		typ = f.Type
	}
	return typ, f
}

func TestKubeTypes(t *testing.T) {
	k, _ := kubeschema.ForKind("apps", "v1", "Deployment")
	dep := ForKubeType(k.Type)
	if dep.Kind() != Struct || dep.Atomic() {
		t.Fatalf("Deployment: %v atomic=%v", dep.Kind(), dep.Atomic())
	}
	for _, c := range []struct {
		path               []string
		kind               Kind
		atomic             bool
		keys               []string
		strategy, mergeKey string
		scalar             ScalarKind
		elemKind           Kind
	}{
		{path: []string{"apiVersion"}, kind: Scalar, scalar: String},
		{path: []string{"metadata", "labels"}, kind: Map, elemKind: Scalar},
		{path: []string{"metadata", "finalizers"}, kind: List, strategy: "merge", elemKind: Scalar},
		{path: []string{"metadata", "ownerReferences"}, kind: List, keys: []string{"uid"}, strategy: "merge", mergeKey: "uid", elemKind: Struct},
		{path: []string{"spec", "replicas"}, kind: Scalar, scalar: Numeric},
		{path: []string{"spec", "selector"}, kind: Struct, atomic: true},
		{path: []string{"spec", "strategy"}, kind: Struct, strategy: "retainKeys"},
		{path: []string{"spec", "template", "spec", "containers"}, kind: List, keys: []string{"name"}, strategy: "merge", mergeKey: "name", elemKind: Struct},
		{path: []string{"spec", "template", "spec", "containers", "[]", "ports"}, kind: List, keys: []string{"containerPort", "protocol"}, strategy: "merge", mergeKey: "containerPort", elemKind: Struct},
		{path: []string{"spec", "template", "spec", "containers", "[]", "args"}, kind: List, atomic: true, elemKind: Scalar},
		{path: []string{"spec", "template", "spec", "volumes"}, kind: List, keys: []string{"name"}, strategy: "merge,retainKeys", mergeKey: "name", elemKind: Struct},
		{path: []string{"spec", "template", "spec", "tolerations"}, kind: List, atomic: true, elemKind: Struct},
		{path: []string{"spec", "template", "spec", "containers", "[]", "resources", "limits", "cpu"}, kind: Scalar, scalar: AnyScalar},
		{path: []string{"spec", "template", "metadata", "creationTimestamp"}, kind: Scalar, scalar: String},
		{path: []string{"spec", "template", "spec", "containers", "[]", "env", "[]", "valueFrom", "configMapKeyRef"}, kind: Struct, atomic: true},
	} {
		typ, f := path(t, dep, c.path...)
		if typ.Kind() != c.kind || typ.Atomic() != c.atomic || !reflect.DeepEqual(typ.ListKeys(), c.keys) ||
			f.PatchStrategy != c.strategy || f.PatchMergeKey != c.mergeKey || (c.kind == Scalar && typ.ScalarKind() != c.scalar) {
			t.Errorf("%v: kind %v atomic %v keys %v strategy %q key %q scalar %v", c.path, typ.Kind(), typ.Atomic(), typ.ListKeys(), f.PatchStrategy, f.PatchMergeKey, typ.ScalarKind())
		}
		if c.elemKind != Deduced && KindOf(typ.Elem()) != c.elemKind {
			t.Errorf("%v: element kind %v, want %v", c.path, KindOf(typ.Elem()), c.elemKind)
		}
	}
	_, proto := path(t, dep, "spec", "template", "spec", "containers", "[]", "ports", "[]", "protocol")
	if proto.Default != "TCP" {
		t.Errorf("a container port's protocol defaults to TCP, got %v", proto.Default)
	}
	if _, ok := Lookup(dep, "nosuchfield"); ok {
		t.Error("a built-in kind takes no undeclared field")
	}
}

func TestFromOpenAPI(t *testing.T) {
	s := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"spec": map[string]any{"type": "object", "properties": map[string]any{
				"items": map[string]any{"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"name", "port"},
					"items": map[string]any{"type": "object", "properties": map[string]any{
						"name": map[string]any{"type": "string"}, "port": map[string]any{"type": "integer", "default": float64(80)}}}},
				"tags":   map[string]any{"type": "array", "x-kubernetes-list-type": "set", "items": map[string]any{"type": "string"}},
				"list":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
				"labels": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
				"ref":    map[string]any{"type": "object", "x-kubernetes-map-type": "atomic", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
				"count":  map[string]any{"x-kubernetes-int-or-string": true},
				"free":   map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
			}},
		},
	}
	cr := FromOpenAPI(s)
	for _, c := range []struct {
		path   []string
		kind   Kind
		atomic bool
		keys   []string
	}{
		{[]string{"spec", "items"}, List, false, []string{"name", "port"}},
		{[]string{"spec", "tags"}, List, false, nil},
		{[]string{"spec", "list"}, List, true, nil},
		{[]string{"spec", "labels"}, Map, false, nil},
		{[]string{"spec", "ref"}, Struct, true, nil},
		{[]string{"spec", "count"}, Scalar, false, nil},
		{[]string{"spec", "free"}, Map, false, nil},
		{[]string{"spec", "free", "anything"}, Deduced, false, nil},
		{[]string{"metadata", "ownerReferences"}, List, false, []string{"uid"}},
		{[]string{"kind"}, Scalar, false, nil},
	} {
		typ, _ := path(t, cr, c.path...)
		if KindOf(typ) != c.kind || (typ != nil && (typ.Atomic() != c.atomic || !reflect.DeepEqual(typ.ListKeys(), c.keys))) {
			t.Errorf("%v: %v", c.path, KindOf(typ))
		}
	}
	if _, ok := Lookup(cr, "undeclared"); ok {
		t.Error("a structural schema takes no undeclared top-level field")
	}
	if _, f := path(t, cr, "spec", "items", "[]", "port"); f.Default != float64(80) {
		t.Errorf("key default %v", f.Default)
	}
	none := FromOpenAPI(nil)
	if typ, _ := path(t, none, "spec", "x"); KindOf(typ) != Deduced {
		t.Errorf("no schema: %v", KindOf(typ))
	}
	if typ, _ := path(t, none, "metadata", "labels"); KindOf(typ) != Map {
		t.Errorf("no schema keeps ObjectMeta: %v", KindOf(typ))
	}
}
