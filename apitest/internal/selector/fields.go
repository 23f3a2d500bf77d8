// Package selector evaluates the selectors of the Kubernetes API on objects in their JSON
// form (jsonobj): field selectors as the kube-apiserver parses and matches them for lists,
// watches and deletecollection, and the LabelSelector objects of workloads' specs (matched
// against labels by validation, formatted as kubectl prints them).
//
// Label selectors of requests (the labelSelector parameter) are the root labels package's.
package selector

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Requirement is one term of a field selector: Field = Value, or Field != Value (Not).
type Requirement struct {
	Field, Value string
	Not          bool
	// Path is the JSON path the field selects (Field unless the kind maps it).
	Path string
}

// Fields is a parsed field selector, its terms ANDed; the empty selector matches
// everything.
type Fields []Requirement

// Labels are the field selectors a kind takes beyond metadata.name and metadata.namespace.
type Labels struct {
	// Extra are the labels.
	Extra []string
	// Paths maps a label that is not the JSON path it selects to that path.
	Paths map[string]string
	// Refusal words the refusal of another label by a kind with a field label conversion
	// of its own ("{label}" is the label: "field label not supported: {label}"); empty for
	// the generic "is not a known field selector: only ...".
	Refusal string
}

// RefusalNotSupported is the refusal of the core kinds' and custom resources' field label
// conversions.
const RefusalNotSupported = "field label not supported: {label}"

// ParseFields parses "f=v", "f==v" and "f!=v" terms joined by commas (a backslash escapes
// the next character). Fields other than metadata.name, metadata.namespace and l.Extra are
// refused as the kube-apiserver refuses them.
func ParseFields(s string, l Labels) (Fields, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var sel Fields
	for _, term := range splitUnescaped(s, ',') {
		var r Requirement
		var ok bool
		if r.Field, r.Value, ok = strings.Cut(term, "!="); ok {
			r.Not = true
		} else if r.Field, r.Value, ok = strings.Cut(term, "=="); ok {
		} else if r.Field, r.Value, ok = strings.Cut(term, "="); ok {
		} else {
			return nil, fmt.Errorf("invalid selector: '%s'; can't understand '%s'", s, term)
		}
		r.Field = strings.TrimSpace(r.Field)
		r.Value = unescape(r.Value)
		if r.Field != "metadata.name" && r.Field != "metadata.namespace" && !contains(l.Extra, r.Field) {
			if l.Refusal != "" {
				return nil, errors.New(strings.ReplaceAll(l.Refusal, "{label}", r.Field))
			}
			known := []string{`"metadata.name"`, `"metadata.namespace"`}
			for _, f := range l.Extra {
				known = append(known, strconv.Quote(f))
			}
			return nil, fmt.Errorf("%q is not a known field selector: only %s", r.Field, strings.Join(known, ", "))
		}
		r.Path = r.Field
		if p, ok := l.Paths[r.Field]; ok {
			r.Path = p
		}
		sel = append(sel, r)
	}
	return sel, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func splitUnescaped(s string, sep byte) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == sep {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func unescape(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// Matches reports whether the object name/namespace matches every term. object returns
// the object's JSON form; it is called (once) only when a term selects another field, so
// that selecting by name and namespace decodes nothing.
func (s Fields) Matches(name, namespace string, object func() map[string]any) bool {
	var obj map[string]any
	for _, r := range s {
		var v string
		switch r.Field {
		case "metadata.name":
			v = name
		case "metadata.namespace":
			v = namespace
		default:
			if obj == nil {
				obj = object()
			}
			path := r.Path
			if path == "" {
				path = r.Field
			}
			v = FieldValue(obj, path)
		}
		if (v == r.Value) == r.Not {
			return false
		}
	}
	return true
}

// FieldValue is the value a field selector compares at path ("spec.nodeName"): strings
// as they are, other scalars as fmt prints them, "" when absent. An object selects its
// "component" (events' "source" selects source.component).
func FieldValue(obj map[string]any, path string) string {
	var cur any = obj
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[p]
	}
	switch v := cur.(type) {
	case string:
		return v
	case nil:
		return ""
	case map[string]any:
		if c, ok := v["component"].(string); ok {
			return c
		}
		return ""
	default:
		return fmt.Sprint(v)
	}
}
