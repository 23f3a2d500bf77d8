// Package fieldpath names the fields of a Kubernetes object and holds sets of them, as
// server-side apply records them in metadata.managedFields.
//
// A Path is a list of PathElements from the object's root: a field name (".spec"), the
// key of an item of a list-map (`[name="nginx"]`), the value of an item of a set
// (`[="a"]`) or the index of an item of an atomic list (`[0]`). A Set is a tree of paths;
// it serialises to the "FieldsV1" form the kube-apiserver writes, byte for byte: one JSON
// object per level whose keys are "f:<name>", "k:<key as JSON>", "v:<value as JSON>" or
// "i:<index>", with "." for a path that is itself a member when it also has children:
//
//	{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{}}}}}
//
// Values inside keys are JSON values with numbers normalised (json.Number, int and float
// become int64 when integral, float64 otherwise).
package fieldpath

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ElementKind says what a PathElement names.
type ElementKind uint8

// The kinds of path elements, in their sort order.
const (
	FieldName ElementKind = iota
	Key
	Value
	Index
)

// KeyField is one field of a list-map item's key.
type KeyField struct {
	Name  string
	Value any
}

// PathElement is one step of a Path.
type PathElement struct {
	Kind ElementKind
	// Name is a FieldName's name.
	Name string
	// Key is a Key's fields, sorted by name.
	Key []KeyField
	// Value is a Value's value (normalised, see Normalize).
	Value any
	// Index is an Index's index.
	Index int
}

// Field returns the element naming a field.
func Field(name string) PathElement { return PathElement{Kind: FieldName, Name: name} }

// KeyOf returns the element naming the list-map item with these key fields (in any order;
// values are normalised).
func KeyOf(fields ...KeyField) PathElement {
	k := make([]KeyField, len(fields))
	for i, f := range fields {
		k[i] = KeyField{Name: f.Name, Value: Normalize(f.Value)}
	}
	sort.SliceStable(k, func(i, j int) bool { return k[i].Name < k[j].Name })
	return PathElement{Kind: Key, Key: k}
}

// ValueOf returns the element naming the set item v.
func ValueOf(v any) PathElement { return PathElement{Kind: Value, Value: Normalize(v)} }

// IndexOf returns the element naming the i-th item of an atomic list.
func IndexOf(i int) PathElement { return PathElement{Kind: Index, Index: i} }

// Compare orders elements: field names before keys before values before indexes, each
// kind by its content.
func (e PathElement) Compare(o PathElement) int {
	if e.Kind != o.Kind {
		if e.Kind < o.Kind {
			return -1
		}
		return 1
	}
	switch e.Kind {
	case FieldName:
		return strings.Compare(e.Name, o.Name)
	case Key:
		for i := 0; ; i++ {
			switch {
			case i >= len(e.Key) && i >= len(o.Key):
				return 0
			case i >= len(e.Key):
				return -1
			case i >= len(o.Key):
				return 1
			}
			if c := strings.Compare(e.Key[i].Name, o.Key[i].Name); c != 0 {
				return c
			}
			if c := CompareValues(e.Key[i].Value, o.Key[i].Value); c != 0 {
				return c
			}
		}
	case Value:
		return CompareValues(e.Value, o.Value)
	}
	switch {
	case e.Index < o.Index:
		return -1
	case e.Index > o.Index:
		return 1
	}
	return 0
}

// Equal reports whether two elements name the same thing.
func (e PathElement) Equal(o PathElement) bool { return e.Compare(o) == 0 }

// String renders the element as in apply's conflict messages: ".name", `[name="c"]`,
// `[="v"]`, "[0]".
func (e PathElement) String() string {
	switch e.Kind {
	case FieldName:
		return "." + e.Name
	case Key:
		parts := make([]string, len(e.Key))
		for i, k := range e.Key {
			parts[i] = k.Name + "=" + ValueString(k.Value)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case Value:
		return "[=" + ValueString(e.Value) + "]"
	}
	return "[" + strconv.Itoa(e.Index) + "]"
}

// Path is a list of elements from an object's root.
type Path []PathElement

// String renders the path as apply's conflict messages do: ".spec.containers[name="c"].image".
func (p Path) String() string {
	var b strings.Builder
	for _, e := range p {
		b.WriteString(e.String())
	}
	return b.String()
}

// Compare orders paths element by element, a prefix first.
func (p Path) Compare(o Path) int {
	for i := 0; i < len(p) && i < len(o); i++ {
		if c := p[i].Compare(o[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(p) < len(o):
		return -1
	case len(p) > len(o):
		return 1
	}
	return 0
}

// Copy returns a copy of p that shares nothing with it (appending to one never changes
// the other).
func (p Path) Copy() Path { return append(Path(nil), p...) }

// MakePath builds a path from field names (strings), indexes (ints) and elements.
func MakePath(parts ...any) Path {
	p := make(Path, 0, len(parts))
	for _, x := range parts {
		switch v := x.(type) {
		case string:
			p = append(p, Field(v))
		case int:
			p = append(p, IndexOf(v))
		case PathElement:
			p = append(p, v)
		default:
			panic(fmt.Sprintf("fieldpath.MakePath: unsupported part %T", x))
		}
	}
	return p
}

// Normalize returns v with its numbers as int64 (when integral) or float64, so that
// values decoded with json.Decoder.UseNumber, with float64 or built in Go compare alike.
// Maps and lists are copied only when something in them changes.
func Normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return string(x)
		}
		return normFloat(f)
	case float64:
		return normFloat(x)
	case float32:
		return normFloat(float64(x))
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case int64, string, bool, nil:
		return v
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Normalize(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Normalize(e)
		}
		return out
	}
	return v
}

func normFloat(f float64) any {
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int64(f)
	}
	return f
}

// typeRank orders the types of JSON values as apply sorts them: numbers, strings, booleans,
// lists, maps, null.
func typeRank(v any) int {
	switch v.(type) {
	case int64, float64:
		return 0
	case string:
		return 2
	case bool:
		return 3
	case []any:
		return 4
	case map[string]any:
		return 5
	case nil:
		return 6
	}
	return 7
}

// CompareValues orders two normalised JSON values (a total order across types).
func CompareValues(a, b any) int {
	ra, rb := typeRank(a), typeRank(b)
	if ra != rb {
		if ra < rb {
			return -1
		}
		return 1
	}
	switch x := a.(type) {
	case int64:
		if y, ok := b.(int64); ok {
			return cmpOrdered(x, y)
		}
		return cmpOrdered(float64(x), b.(float64))
	case float64:
		if y, ok := b.(int64); ok {
			return cmpOrdered(x, float64(y))
		}
		return cmpOrdered(x, b.(float64))
	case string:
		return strings.Compare(x, b.(string))
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case []any:
		y := b.([]any)
		for i := 0; i < len(x) && i < len(y); i++ {
			if c := CompareValues(x[i], y[i]); c != 0 {
				return c
			}
		}
		return cmpOrdered(len(x), len(y))
	case map[string]any:
		y := b.(map[string]any)
		kx, ky := sortedKeys(x), sortedKeys(y)
		for i := 0; i < len(kx) && i < len(ky); i++ {
			if c := strings.Compare(kx[i], ky[i]); c != 0 {
				return c
			}
			if c := CompareValues(x[kx[i]], y[ky[i]]); c != 0 {
				return c
			}
		}
		return cmpOrdered(len(kx), len(ky))
	}
	return 0
}

func cmpOrdered[T int | int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ValueString renders a normalised value as apply's messages do: strings quoted, numbers
// and booleans bare, lists in brackets.
func ValueString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return fmt.Sprint(x)
	case bool:
		return strconv.FormatBool(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = ValueString(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case map[string]any:
		var b strings.Builder
		for _, k := range sortedKeys(x) {
			b.WriteString(k + "=" + ValueString(x[k]))
		}
		return b.String()
	}
	return fmt.Sprint(v)
}
