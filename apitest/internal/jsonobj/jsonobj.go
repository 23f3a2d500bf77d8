// Package jsonobj reads Kubernetes objects in their JSON form: the map[string]any that
// encoding/json decodes with UseNumber, so that numbers stay exact (json.Number). apitest
// stores, patches, defaults, validates and prints objects in this form, without Go types.
//
// The readers never fail: a missing or mistyped value reads as the zero value (Map returns
// nil, Str "", Num 0), as the kube-apiserver's printers and validators treat an unset
// field. Meta is the one writer: it adds an empty metadata to an object that has none.
package jsonobj

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
)

// Decode decodes a JSON object keeping numbers exact (json.Number). JSON null decodes to
// a nil map and no error.
func Decode(b []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// Map returns v as an object (nil if it is not one).
func Map(v any) map[string]any { m, _ := v.(map[string]any); return m }

// Str returns m[key] as a string ("" if absent or not a string).
func Str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// StrAt returns the string at path below o: StrAt(pod, "status", "phase").
func StrAt(o map[string]any, path ...string) string {
	for _, p := range path[:len(path)-1] {
		o = Map(o[p])
	}
	return Str(o, path[len(path)-1])
}

// ListAt returns the list at path below o (nil if absent or not a list).
func ListAt(o map[string]any, path ...string) []any {
	for _, p := range path[:len(path)-1] {
		o = Map(o[p])
	}
	l, _ := o[path[len(path)-1]].([]any)
	return l
}

// Num returns v as an integer: a json.Number, float64, int64 or int (0 otherwise, and for
// a json.Number that is not an integer).
func Num(v any) int64 {
	switch x := v.(type) {
	case json.Number:
		n, _ := x.Int64()
		return n
	case float64:
		return int64(x)
	case int64:
		return x
	case int:
		return int64(x)
	}
	return 0
}

// NumString is Num in decimal.
func NumString(v any) string { return strconv.FormatInt(Num(v), 10) }

// Meta returns obj's metadata, adding an empty one to obj if it has none.
func Meta(obj map[string]any) map[string]any {
	m, _ := obj["metadata"].(map[string]any)
	if m == nil {
		m = map[string]any{}
		obj["metadata"] = m
	}
	return m
}

// Strings returns the strings of a list (other items and non-lists are skipped).
func Strings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Equal reports whether a and b encode to the same JSON value (so json.Number("1") equals
// float64(1), and key order does not matter).
func Equal(a, b any) bool {
	ab, _ := json.Marshal(a)
	bb, _ := json.Marshal(b)
	var x, y any
	json.Unmarshal(ab, &x)
	json.Unmarshal(bb, &y)
	return reflect.DeepEqual(x, y)
}

// DeepCopy copies a JSON value: maps and lists are copied, scalars shared.
func DeepCopy(m map[string]any) map[string]any {
	out, _ := deepCopy(m).(map[string]any)
	return out
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
