package patchgen

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Normalize returns v without null-valued object fields (at every depth): what the API
// server stores of a JSON document, and what a merge patch can produce.
func Normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if e != nil {
				out[k] = Normalize(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Normalize(e)
		}
		return out
	}
	return v
}

// Equal compares two JSON-shaped values, numbers by their decimal text.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, e := range x {
			f, ok := y[k]
			if !ok || !Equal(e, f) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if an, ok := number(a); ok {
		bn, ok := number(b)
		return ok && an == bn
	}
	return reflect.DeepEqual(a, b)
}

// number is a JSON number's canonical text.
func number(v any) (string, bool) {
	switch n := v.(type) {
	case float64:
		return strconv.FormatFloat(n, 'g', -1, 64), true
	case json.Number:
		if f, err := strconv.ParseFloat(string(n), 64); err == nil {
			return strconv.FormatFloat(f, 'g', -1, 64), true
		}
		return string(n), true
	}
	return "", false
}

// Merge returns the JSON merge patch that turns from into to: to's new and changed fields,
// objects diffed field by field, null for the fields to does not have. Lists are replaced
// whole (a merge patch cannot change one item).
func Merge(from, to map[string]any) map[string]any {
	from, _ = Normalize(from).(map[string]any)
	to, _ = Normalize(to).(map[string]any)
	return mergeDiff(from, to)
}

func mergeDiff(from, to map[string]any) map[string]any {
	p := map[string]any{}
	for k := range from {
		if _, ok := to[k]; !ok {
			p[k] = nil
		}
	}
	for k, b := range to {
		a, ok := from[k]
		switch {
		case !ok:
			p[k] = b
		case Equal(a, b):
		default:
			am, aok := a.(map[string]any)
			bm, bok := b.(map[string]any)
			if aok && bok {
				p[k] = mergeDiff(am, bm)
			} else {
				p[k] = b
			}
		}
	}
	return p
}

// Op is one operation of a JSON patch.
type Op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// JSON returns the JSON patch that turns from into to: remove, add and replace operations
// on object fields, lists of one length diffed item by item, other lists replaced whole.
// Paths are JSON pointers (RFC 6901).
func JSON(from, to map[string]any) []Op {
	from, _ = Normalize(from).(map[string]any)
	to, _ = Normalize(to).(map[string]any)
	var ops []Op
	jsonDiff(from, to, "", &ops)
	return ops
}

func jsonDiff(a, b any, path string, ops *[]Op) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			break
		}
		for _, k := range slices.Sorted(keys(x)) {
			if _, ok := y[k]; !ok {
				*ops = append(*ops, Op{Op: "remove", Path: path + "/" + pointerEscape(k)})
			}
		}
		for _, k := range slices.Sorted(keys(y)) {
			p := path + "/" + pointerEscape(k)
			if e, ok := x[k]; ok {
				jsonDiff(e, y[k], p, ops)
			} else {
				*ops = append(*ops, Op{Op: "add", Path: p, Value: y[k]})
			}
		}
		return
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			break
		}
		for i := range x {
			jsonDiff(x[i], y[i], path+"/"+strconv.Itoa(i), ops)
		}
		return
	}
	if !Equal(a, b) {
		*ops = append(*ops, Op{Op: "replace", Path: path, Value: b})
	}
}

func keys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// pointerEscape escapes a JSON pointer token: "~" is "~0", "/" is "~1".
func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// PointerEscape is pointerEscape, for callers that add operations of their own.
func PointerEscape(s string) string { return pointerEscape(s) }
