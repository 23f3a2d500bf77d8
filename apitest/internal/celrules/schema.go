package celrules

import (
	"encoding/json"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// schema is one node of a CustomResourceDefinition version's structural schema, as JSON
// decodes it (map[string]any with json.Number or float64 numbers).
type schema map[string]any

func asSchema(v any) schema {
	m, _ := v.(map[string]any)
	return m
}

func (s schema) str(k string) string { v, _ := s[k].(string); return v }
func (s schema) flag(k string) bool  { return s[k] == true }
func (s schema) typ() string         { return s.str("type") }
func (s schema) format() string      { return s.str("format") }
func (s schema) nullable() bool      { return s.flag("nullable") }
func (s schema) intOrString() bool   { return s.flag("x-kubernetes-int-or-string") }
func (s schema) embedded() bool      { return s.flag("x-kubernetes-embedded-resource") }
func (s schema) preserveUnknown() bool {
	return s.flag("x-kubernetes-preserve-unknown-fields")
}
func (s schema) listType() string { return s.str("x-kubernetes-list-type") }
func (s schema) mapType() string  { return s.str("x-kubernetes-map-type") }
func (s schema) items() schema    { return asSchema(s["items"]) }

// properties is nil when the schema declares none (an empty "properties" is not nil).
func (s schema) properties() map[string]schema {
	m, ok := s["properties"].(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]schema, len(m))
	for k, v := range m {
		out[k] = asSchema(v)
	}
	return out
}

// propertyNames are the names of the declared properties, sorted, so that every walk of a
// schema visits them in one order.
func (s schema) propertyNames() []string {
	m, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// additional is the additionalProperties schema of a map (nil if it is absent or a bool).
func (s schema) additional() schema { return asSchema(s["additionalProperties"]) }

func (s schema) allOf() []schema {
	list, _ := s["allOf"].([]any)
	out := make([]schema, 0, len(list))
	for _, e := range list {
		if m := asSchema(e); m != nil {
			out = append(out, m)
		}
	}
	return out
}

func (s schema) required() map[string]bool {
	list, _ := s["required"].([]any)
	out := map[string]bool{}
	for _, r := range list {
		if r, ok := r.(string); ok {
			out[r] = true
		}
	}
	return out
}

func (s schema) listMapKeys() []string {
	list, _ := s["x-kubernetes-list-map-keys"].([]any)
	var out []string
	for _, k := range list {
		if k, ok := k.(string); ok {
			out = append(out, k)
		}
	}
	return out
}

// limit reads an integer bound such as maxLength or maxItems.
func (s schema) limit(k string) (int64, bool) {
	v, ok := s[k]
	if !ok || v == nil {
		return 0, false
	}
	if i, ok := toInt64(v); ok {
		return i, true
	}
	if f, ok := toFloat64(v); ok {
		return int64(f), true
	}
	return 0, false
}

func (s schema) enum() []any { e, _ := s["enum"].([]any); return e }

// rules are the node's x-kubernetes-validations.
func (s schema) rules() []Rule {
	list, _ := s["x-kubernetes-validations"].([]any)
	out := make([]Rule, 0, len(list))
	for _, e := range list {
		m, _ := e.(map[string]any)
		r := Rule{Rule: str(m, "rule"), Message: str(m, "message"), MessageExpression: str(m, "messageExpression"),
			FieldPath: str(m, "fieldPath")}
		if v, ok := m["reason"].(string); ok {
			r.Reason = &v
		}
		if v, ok := m["optionalOldSelf"].(bool); ok {
			r.OptionalOldSelf = &v
		}
		out = append(out, r)
	}
	return out
}

func str(m map[string]any, k string) string { v, _ := m[k].(string); return v }

// withTypeAndObjectMeta is the schema of a resource's root (or an embedded resource) as
// rules see it: apiVersion, kind, metadata.name and metadata.generateName are always
// there, and no other field of metadata.
func (s schema) withTypeAndObjectMeta() schema {
	props := s.properties()
	if props != nil && props["kind"].typ() == "string" && props["apiVersion"].typ() == "string" &&
		props["metadata"].typ() == "object" {
		mp := props["metadata"].properties()
		if mp != nil && mp["name"].typ() == "string" && mp["generateName"].typ() == "string" {
			return s
		}
	}
	out := make(schema, len(s)+1)
	for k, v := range s {
		out[k] = v
	}
	p := map[string]any{}
	if m, ok := s["properties"].(map[string]any); ok {
		for k, v := range m {
			p[k] = v
		}
	}
	str := map[string]any{"type": "string"}
	p["kind"], p["apiVersion"] = str, str
	p["metadata"] = map[string]any{"type": "object", "properties": map[string]any{"name": str, "generateName": str}}
	out["properties"] = p
	return out
}

func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		i, err := x.Int64()
		return i, err == nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			return int64(x), true
		}
		return 0, false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if rv.Uint() <= math.MaxInt64 {
			return int64(rv.Uint()), true
		}
	}
	return 0, false
}

func toFloat64(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	case float64:
		return x, true
	case float32:
		return float64(x), true
	}
	if i, ok := toInt64(v); ok {
		return float64(i), true
	}
	return 0, false
}

// isInteger reports whether v is a JSON integer (as the kube-apiserver's decoder makes an
// int64 of a number without fraction or exponent). A float64 (a decoder without
// UseNumber, or a Go value) is one when it is whole: its text is lost.
func isInteger(v any) bool {
	if n, ok := v.(json.Number); ok {
		_, err := n.Int64()
		return !strings.ContainsAny(string(n), ".eE") && err == nil
	}
	_, ok := toInt64(v)
	return ok
}

var reserved = map[string]bool{"true": true, "false": true, "null": true, "in": true, "as": true, "break": true,
	"const": true, "continue": true, "else": true, "for": true, "function": true, "if": true, "import": true,
	"let": true, "loop": true, "package": true, "namespace": true, "return": true, "var": true, "void": true,
	"while": true}

var escapable = regexp.MustCompile(`^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$`)

// escape is the name a property has in a rule: CEL's reserved words become __word__, and
// "__", ".", "-" and "/" are spelt __underscores__, __dot__, __dash__ and __slash__. A
// name with other characters, or starting with a digit, is not accessible (false).
func escape(name string) (string, bool) {
	if reserved[name] {
		return "__" + name + "__", true
	}
	if !escapable.MatchString(name) {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '_' && i+1 < len(name) && name[i+1] == '_':
			b.WriteString("__underscores__")
			i++
		case c == '.':
			b.WriteString("__dot__")
		case c == '-':
			b.WriteString("__dash__")
		case c == '/':
			b.WriteString("__slash__")
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}
