package ssa

import (
	"fmt"
	"sort"

	"github.com/informerkit/informerkit/apitest/internal/fieldpath"
	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
)

// This file holds the walks over JSON values that apply is made of: the set of fields a
// value sets (FieldSet), what changed between two values (Compare), a configuration merged
// into an object (Merge), fields removed from an object (RemoveFields) and the checks of
// an applied configuration (Validate). Values are what encoding/json decodes into an
// interface{} (maps, lists, strings, json.Number or float64, bools, nil).

// shape is how a walk treats one value.
type shape uint8

const (
	shapeScalar shape = iota
	shapeMap          // a Struct or a Map
	shapeList
	shapeNull // a null in a Deduced place: takes the other side's shape
)

// shapeOf returns how t (nil: deduced from v) makes the walks treat v.
func shapeOf(t mergeschema.Type, v any) shape {
	switch mergeschema.KindOf(t) {
	case mergeschema.Struct, mergeschema.Map:
		return shapeMap
	case mergeschema.List:
		return shapeList
	case mergeschema.Scalar:
		return shapeScalar
	}
	switch v.(type) {
	case map[string]any:
		return shapeMap
	case []any:
		return shapeList
	case nil:
		return shapeNull
	}
	return shapeScalar
}

// atomic reports whether t, a map or list of the given shape, is one value. A Deduced list
// is atomic; a Deduced map is granular.
func atomic(t mergeschema.Type, s shape) bool {
	if t == nil || t.Kind() == mergeschema.Deduced {
		return s == shapeList
	}
	return t.Atomic()
}

// fieldType is the type of the member key of a map-shaped value of type t, and whether it
// is a declared field of a Struct (whose own path is implied by its children's).
func fieldType(t mergeschema.Type, key string) (mergeschema.Type, bool) {
	switch mergeschema.KindOf(t) {
	case mergeschema.Struct:
		if f, ok := t.Field(key); ok {
			return f.Type, true
		}
		return t.Elem(), false
	case mergeschema.Map:
		return t.Elem(), false
	}
	return nil, false
}

func elemType(t mergeschema.Type) mergeschema.Type {
	if mergeschema.KindOf(t) == mergeschema.List {
		return t.Elem()
	}
	return nil
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
func asList(v any) []any         { l, _ := v.([]any); return l }

// itemElement returns the path element of an item of a granular list: its key fields
// for a list-map (a missing key takes its schema default), its value for a set.
func itemElement(t mergeschema.Type, item any) (fieldpath.PathElement, error) {
	keys := t.ListKeys()
	if len(keys) == 0 {
		switch item.(type) {
		case map[string]any:
			return fieldpath.PathElement{}, fmt.Errorf("associative list without keys has an element that's a map type")
		case []any:
			return fieldpath.PathElement{}, fmt.Errorf("not supported: associative list with lists as elements")
		case nil:
			return fieldpath.PathElement{}, fmt.Errorf("associative list without keys has an element that's an explicit null")
		}
		return fieldpath.ValueOf(item), nil
	}
	if item == nil {
		return fieldpath.PathElement{}, fmt.Errorf("associative list with keys may not have a null element")
	}
	m, ok := item.(map[string]any)
	if !ok {
		return fieldpath.PathElement{}, fmt.Errorf("associative list with keys may not have non-map elements")
	}
	var fields []fieldpath.KeyField
	for _, k := range keys {
		if v, ok := m[k]; ok {
			fields = append(fields, fieldpath.KeyField{Name: k, Value: v})
			continue
		}
		if f, ok := fieldOf(t.Elem(), k); ok && f.Default != nil {
			fields = append(fields, fieldpath.KeyField{Name: k, Value: f.Default})
		}
	}
	if len(fields) == 0 {
		return fieldpath.PathElement{}, fmt.Errorf("associative list with keys has an element that omits all key fields %q (and doesn't have default values for any key fields)", keys)
	}
	return fieldpath.KeyOf(fields...), nil
}

func fieldOf(t mergeschema.Type, name string) (mergeschema.Field, bool) {
	if mergeschema.KindOf(t) != mergeschema.Struct {
		return mergeschema.Field{}, false
	}
	return t.Field(name)
}

// sortedKeys returns a map's keys in order: the walks are deterministic.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// appendPath extends a path for a recursive step. The walks never keep a path (sets copy
// the elements they insert), so siblings may share the backing array: append reuses it.
func appendPath(p fieldpath.Path, pe fieldpath.PathElement) fieldpath.Path {
	return append(p, pe)
}

// FieldSet returns the fields v sets: every scalar, every atomic map, struct and list,
// every item of a granular list and every key of a granular map; a declared field of a
// struct is implied by its children unless it is null or an empty object. Items whose key
// repeats are members once, without their fields.
func FieldSet(v any, t mergeschema.Type) *fieldpath.Set {
	s := fieldpath.NewSet()
	fieldSet(v, t, nil, s)
	return s
}

func fieldSet(v any, t mergeschema.Type, path fieldpath.Path, set *fieldpath.Set) {
	sh := shapeOf(t, v)
	switch sh {
	case shapeScalar:
		set.Insert(path)
	case shapeList:
		if atomic(t, sh) {
			set.Insert(path)
			return
		}
		items := asList(v)
		seen := map[string]int{}
		pes := make([]fieldpath.PathElement, len(items))
		for i, it := range items {
			pe, err := itemElement(t, it)
			if err != nil {
				continue
			}
			pes[i] = pe
			seen[fieldpath.SerializeElement(pe)]++
		}
		dup := map[string]bool{}
		for i, it := range items {
			k := fieldpath.SerializeElement(pes[i])
			if _, err := itemElement(t, it); err != nil {
				continue
			}
			p := appendPath(path, pes[i])
			if seen[k] > 1 {
				if !dup[k] {
					set.Insert(p)
					dup[k] = true
				}
				continue
			}
			fieldSet(it, elemType(t), p, set)
			set.Insert(p)
		}
	case shapeMap:
		if atomic(t, sh) {
			set.Insert(path)
			return
		}
		m := asMap(v)
		for _, k := range sortedKeys(m) {
			val := m[k]
			ft, declared := fieldType(t, k)
			p := appendPath(path, fieldpath.Field(k))
			fieldSet(val, ft, p, set)
			if val == nil || (isMap(val) && len(asMap(val)) == 0) || !declared {
				set.Insert(p)
			}
		}
	}
}

func isMap(v any) bool { _, ok := v.(map[string]any); return ok }
