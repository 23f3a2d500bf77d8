package apitest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/sharding"
)

type fieldReq struct {
	field string
	value string
	neg   bool
}

// fieldSelector is a parsed fieldSelector; the empty selector matches everything.
type fieldSelector []fieldReq

// parseFieldSelector parses "f=v", "f==v", "f!=v" terms joined by commas; fields other than
// metadata.name, metadata.namespace and the resource's extra fields are refused as the
// kube-apiserver refuses them.
func parseFieldSelector(s string, t *ResourceType) (fieldSelector, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var sel fieldSelector
	for _, term := range splitUnescaped(s, ',') {
		var r fieldReq
		var ok bool
		if r.field, r.value, ok = strings.Cut(term, "!="); ok {
			r.neg = true
		} else if r.field, r.value, ok = strings.Cut(term, "=="); ok {
		} else if r.field, r.value, ok = strings.Cut(term, "="); ok {
		} else {
			return nil, fmt.Errorf("invalid selector: '%s'; can't understand '%s'", s, term)
		}
		r.field = strings.TrimSpace(r.field)
		r.value = unescapeField(r.value)
		if r.field != "metadata.name" && r.field != "metadata.namespace" && !contains(t.extraFields, r.field) {
			if t.fieldLabels {
				// Kinds with their own field label conversion (pods, secrets, events, ...).
				return nil, fmt.Errorf("field label not supported: %s", r.field)
			}
			known := []string{`"metadata.name"`, `"metadata.namespace"`}
			for _, f := range t.extraFields {
				known = append(known, strconv.Quote(f))
			}
			return nil, fmt.Errorf("%q is not a known field selector: only %s", r.field, strings.Join(known, ", "))
		}
		sel = append(sel, r)
	}
	return sel, nil
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

func unescapeField(v string) string {
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

// needsObject reports whether matching needs fields beyond name and namespace.
func (s fieldSelector) needsObject() bool {
	for _, r := range s {
		if r.field != "metadata.name" && r.field != "metadata.namespace" {
			return true
		}
	}
	return false
}

func (s fieldSelector) matches(o *storedObj) bool {
	if len(s) == 0 {
		return true
	}
	var obj map[string]any
	for _, r := range s {
		var v string
		switch r.field {
		case "metadata.name":
			v = o.name
		case "metadata.namespace":
			v = o.namespace
		default:
			if obj == nil {
				obj = mustDecode(o.raw)
			}
			v = fieldValue(obj, r.field)
		}
		if (v == r.value) == r.neg {
			return false
		}
	}
	return true
}

func fieldValue(obj map[string]any, path string) string {
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
		// events' "source" selects source.component.
		if c, ok := v["component"].(string); ok {
			return c
		}
		return ""
	default:
		return fmt.Sprint(v)
	}
}

// filter is the namespace and selectors of a list or watch.
type filter struct {
	namespace string
	labels    labels.Selector
	fields    fieldSelector
	shard     *sharding.Selector // nil: no shardSelector (or the server ignores it)
}

func (f *filter) empty() bool { return f.labels.Empty() && len(f.fields) == 0 && f.shard == nil }

func (f *filter) matches(o *storedObj) bool {
	if o == nil {
		return false
	}
	if f.namespace != "" && o.namespace != f.namespace {
		return false
	}
	if f.shard != nil && !f.shard.MatchesObject(o.uid, o.namespace) {
		return false
	}
	return f.labels.Matches(o.labels) && f.fields.matches(o)
}
