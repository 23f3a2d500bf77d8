// Package crschema applies a CustomResourceDefinition version's structural schema to a
// custom resource as the kube-apiserver's apiextensions server does on a write: unknown
// fields are pruned, defaults filled in, and the value validated against the schema's
// types, required fields, bounds, lengths, patterns, enums, item and property counts and
// list-set uniqueness, in the server's words. CEL rules (x-kubernetes-validations) and
// formats are not checked.
package crschema

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// Prune removes from obj, in place, the fields schema does not specify, as a structural
// schema prunes: apiVersion, kind and metadata stay at the root (and in embedded
// resources), and x-kubernetes-preserve-unknown-fields keeps what is under it. It returns
// the paths of the fields it removed, sorted, as the kube-apiserver names them in its
// unknown-field warnings and strict decoding errors ("spec.list[0].extra").
func Prune(obj map[string]any, schema map[string]any) []string {
	var pruned []string
	pruneObject(obj, schema, true, "", &pruned)
	slices.Sort(pruned)
	return pruned
}

func pruneObject(obj map[string]any, s map[string]any, root bool, path string, pruned *[]string) {
	props, _ := s["properties"].(map[string]any)
	addl, _ := s["additionalProperties"].(map[string]any)
	keep := root || s["x-kubernetes-embedded-resource"] == true
	preserve := s["x-kubernetes-preserve-unknown-fields"] == true
	for k, v := range obj {
		if keep && (k == "apiVersion" || k == "kind" || k == "metadata") {
			continue
		}
		sub := k
		if path != "" {
			sub = path + "." + k
		}
		switch ps, ok := props[k].(map[string]any); {
		case ok:
			obj[k] = pruneValue(v, ps, sub, pruned)
		case addl != nil:
			obj[k] = pruneValue(v, addl, sub, pruned)
		case !preserve:
			delete(obj, k)
			*pruned = append(*pruned, sub)
		}
	}
}

func pruneValue(v any, s map[string]any, path string, pruned *[]string) any {
	switch x := v.(type) {
	case map[string]any:
		pruneObject(x, s, false, path, pruned)
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for i := range x {
				x[i] = pruneValue(x[i], items, path+"["+strconv.Itoa(i)+"]", pruned)
			}
		}
	}
	return v
}

// Default fills in, in place, the defaults of schema for the fields obj lacks (and for the
// null ones of fields that are not nullable), inside objects, list items and map values.
func Default(obj map[string]any, schema map[string]any) {
	defaultObject(obj, schema)
}

func defaultObject(obj map[string]any, s map[string]any) {
	props, _ := s["properties"].(map[string]any)
	for k, p := range props {
		ps, _ := p.(map[string]any)
		v, present := obj[k]
		if present && v == nil && ps["nullable"] != true {
			delete(obj, k)
			present = false
		}
		if d, ok := ps["default"]; ok && !present {
			obj[k] = deepCopy(d)
		}
		if v, ok := obj[k]; ok {
			defaultValue(v, ps)
		}
	}
	if addl, ok := s["additionalProperties"].(map[string]any); ok {
		for k, v := range obj {
			if _, known := props[k]; !known {
				defaultValue(v, addl)
			}
		}
	}
}

func defaultValue(v any, s map[string]any) {
	switch x := v.(type) {
	case map[string]any:
		defaultObject(x, s)
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for _, e := range x {
				defaultValue(e, items)
			}
		}
	}
}

func deepCopy(v any) any {
	b, _ := json.Marshal(v)
	var out any
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	_ = d.Decode(&out)
	return out
}
