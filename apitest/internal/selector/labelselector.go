package selector

import (
	"sort"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
)

// LabelSelectorMatches evaluates a LabelSelector (matchLabels and matchExpressions, in
// JSON form) on an object's labels. The empty selector matches everything.
func LabelSelectorMatches(sel, labels map[string]any) bool {
	for k, v := range jsonobj.Map(sel["matchLabels"]) {
		if labels[k] != v {
			return false
		}
	}
	for _, e := range jsonobj.ListAt(sel, "matchExpressions") {
		em := jsonobj.Map(e)
		val, has := labels[jsonobj.Str(em, "key")]
		in := false
		for _, x := range jsonobj.Strings(em["values"]) {
			in = in || val == x
		}
		switch jsonobj.Str(em, "operator") {
		case "In":
			if !has || !in {
				return false
			}
		case "NotIn":
			if has && in {
				return false
			}
		case "Exists":
			if !has {
				return false
			}
		case "DoesNotExist":
			if has {
				return false
			}
		}
	}
	return true
}

// FormatLabelSelector writes a LabelSelector as metav1.FormatLabelSelector does (and
// kubectl prints it): "app=web,tier in (a,b),!legacy", or "<none>" when it is nil or
// selects by nothing.
func FormatLabelSelector(sel map[string]any) string {
	if sel == nil {
		return "<none>"
	}
	var parts []string
	ml := jsonobj.Map(sel["matchLabels"])
	keys := make([]string, 0, len(ml))
	for k := range ml {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, _ := ml[k].(string)
		parts = append(parts, k+"="+v)
	}
	for _, e := range jsonobj.ListAt(sel, "matchExpressions") {
		em := jsonobj.Map(e)
		key, op := jsonobj.Str(em, "key"), jsonobj.Str(em, "operator")
		vals := jsonobj.Strings(em["values"])
		sort.Strings(vals)
		switch op {
		case "In":
			parts = append(parts, key+" in ("+strings.Join(vals, ",")+")")
		case "NotIn":
			parts = append(parts, key+" notin ("+strings.Join(vals, ",")+")")
		case "Exists":
			parts = append(parts, key)
		case "DoesNotExist":
			parts = append(parts, "!"+key)
		}
	}
	if len(parts) == 0 {
		return "<none>"
	}
	return strings.Join(parts, ",")
}
