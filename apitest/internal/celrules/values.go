package celrules

import (
	"encoding/base64"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// toVal is the CEL value of the JSON value v under schema s, as the kube-apiserver binds
// self and oldSelf: objects and maps read through, lists keep their list type's equality
// and concatenation, formatted strings become durations, timestamps or bytes.
func toVal(v any, s schema) ref.Val {
	if v == nil {
		if s.nullable() {
			return types.NullValue
		}
		return types.NewErr("invalid data, got null for schema with nullable=false")
	}
	if s.intOrString() {
		if x, ok := v.(string); ok {
			return types.String(x)
		}
		if isInteger(v) {
			i, _ := toInt64(v)
			return types.Int(i)
		}
		return types.NewErr("invalid data, expected XIntOrString value to be either a string or integer")
	}
	switch s.typ() {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return types.NewErr("invalid data, expected a map for the provided schema with type=object")
		}
		if s.embedded() {
			s = s.withTypeAndObjectMeta()
		}
		return &objectVal{m: m, s: s}
	case "array":
		l, ok := v.([]any)
		if !ok {
			return types.NewErr("invalid data, expected an array for the provided schema with type=array")
		}
		if s.items() == nil {
			return types.NewErr("invalid array type, expected Items with a non-empty Schema")
		}
		lv := &listVal{elems: l, items: s.items()}
		switch lt := s.listType(); lt {
		case "", "atomic":
			return lv
		case "set":
			lv.set = true
		case "map":
			lv.keys = s.listMapKeys()
		default:
			return types.NewErr("invalid x-kubernetes-list-type, expected 'map', 'set' or 'atomic' but got %s", lt)
		}
		return lv
	case "string":
		x, ok := v.(string)
		if !ok {
			return types.NewErr("invalid data, expected string, got %T", v)
		}
		return formatted(x, s.format())
	case "number":
		if f, ok := toFloat64(v); ok {
			return types.Double(f)
		}
		return types.NewErr("invalid data, expected float, got %T", v)
	case "integer":
		if isInteger(v) {
			i, _ := toInt64(v)
			return types.Int(i)
		}
		return types.NewErr("invalid data, expected int, got %T", v)
	case "boolean":
		if b, ok := v.(bool); ok {
			return types.Bool(b)
		}
		return types.NewErr("invalid data, expected bool, got %T", v)
	}
	if s.preserveUnknown() {
		return &unknownVal{v: v}
	}
	return types.NewErr("invalid type, expected object, array, number, integer, boolean or string, or no type with x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields is true, got %s", s.typ())
}

var durationPart = regexp.MustCompile(`(\d+)\s*([a-zA-Zµ]+)`)

// formatted reads a string of the formats rules see typed.
func formatted(x, format string) ref.Val {
	switch format {
	case "duration":
		if d, err := time.ParseDuration(x); err == nil {
			return types.Duration{Duration: d}
		}
		if d, ok := unitDuration(x); ok {
			return types.Duration{Duration: d}
		}
		return types.NewErr("Invalid duration %s: unable to parse %s as duration", x, x)
	case "date":
		d, err := time.Parse("2006-01-02", x)
		if err != nil {
			return types.NewErr("Invalid date formatted string %s: %v", x, err)
		}
		return types.Timestamp{Time: d}
	case "date-time":
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", "2006-01-02T15:04:05Z07:00",
			"2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05"} {
			if d, err := time.Parse(layout, x); err == nil {
				return types.Timestamp{Time: d}
			}
		}
		return types.NewErr("Invalid date-time formatted string %s: parsing time %q as %q: cannot parse", x, x, time.RFC3339)
	case "byte":
		b, err := base64.StdEncoding.DecodeString(x)
		if err != nil {
			return types.NewErr("Invalid byte formatted string %s: %v", x, err)
		}
		return types.Bytes(b)
	}
	return types.String(x)
}

// unitDuration reads the longer unit names OpenAPI durations allow ("3 days", "1w").
func unitDuration(x string) (time.Duration, bool) {
	units := []struct {
		names []string
		d     time.Duration
	}{
		{[]string{"ns", "nanosecond"}, time.Nanosecond}, {[]string{"us", "µs", "microsecond"}, time.Microsecond},
		{[]string{"ms", "millisecond"}, time.Millisecond}, {[]string{"s", "sec", "second"}, time.Second},
		{[]string{"m", "min", "minute"}, time.Minute}, {[]string{"h", "hr", "hour"}, time.Hour},
		{[]string{"d", "day"}, 24 * time.Hour}, {[]string{"w", "wk", "week"}, 7 * 24 * time.Hour},
	}
	var d time.Duration
	found := false
	for _, m := range durationPart.FindAllStringSubmatch(x, -1) {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return 0, false
		}
		unit := strings.ToLower(m[2])
		for _, u := range units {
			for i, name := range u.names {
				if unit == name || i == len(u.names)-1 && strings.HasPrefix(unit, name) {
					d += time.Duration(n) * u.d
					found = true
				}
			}
		}
	}
	return d, found
}

// objectVal is an object of the schema s (properties: field access by escaped names; or
// additionalProperties: a map).
type objectVal struct {
	m map[string]any
	s schema
}

var _ traits.Mapper = (*objectVal)(nil)

func (o *objectVal) isObject() bool { return o.s.properties() != nil }

// propSchema is the schema of key, if the schema knows it.
func (o *objectVal) propSchema(key string) (schema, bool) {
	if props := o.s.properties(); props != nil {
		p, ok := props[key]
		return p, ok
	}
	if add := o.s.additional(); add != nil {
		return add, true
	}
	return nil, false
}

func (o *objectVal) ConvertToNative(t reflect.Type) (any, error) {
	if t.Kind() == reflect.Map {
		return o.m, nil
	}
	return nil, fmt.Errorf("type conversion error from '%s' to '%s'", o.Type(), t)
}

func (o *objectVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.MapType:
		return o
	case types.TypeType:
		return types.MapType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", o.Type(), t.TypeName())
}

func (o *objectVal) Equal(other ref.Val) ref.Val {
	om, ok := other.(traits.Mapper)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	if o.Size() != om.Size() {
		return types.False
	}
	for k, v := range o.m {
		if _, known := o.propSchema(k); !known {
			// A field the schema preserves without declaring it: compared as data.
			ou, ok := other.(*objectVal)
			if !ok {
				return types.MaybeNoSuchOverloadErr(other)
			}
			if ov, ok := ou.m[k]; ok && !semanticEqual(v, ov) {
				return types.False
			}
			continue
		}
		key := types.String(k)
		if esc, ok := escape(k); ok && o.isObject() {
			key = types.String(esc)
		}
		a, found := o.Find(key)
		b, oFound := om.Find(key)
		if found != oFound {
			return types.False
		}
		if !found {
			continue
		}
		if eq := a.Equal(b); eq != types.True {
			return eq
		}
	}
	return types.True
}

func (o *objectVal) Type() ref.Type { return types.MapType }
func (o *objectVal) Value() any     { return o.m }
func (o *objectVal) Size() ref.Val  { return types.Int(len(o.m)) }

func (o *objectVal) Contains(key ref.Val) ref.Val {
	v, found := o.Find(key)
	if v != nil && types.IsUnknownOrError(v) {
		return v
	}
	return types.Bool(found)
}

func (o *objectVal) Get(key ref.Val) ref.Val {
	if v, found := o.Find(key); found {
		return v
	}
	return types.ValOrErr(key, "no such key: %v", key)
}

// Find looks key up: an object's escaped field name, or a map's key. A field set to null
// is absent from an object (not from a map).
func (o *objectVal) Find(key ref.Val) (ref.Val, bool) {
	ks, ok := key.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(key), true
	}
	k := string(ks)
	object := o.isObject()
	if object {
		var ok bool
		if k, ok = unescape(k); !ok {
			return nil, false
		}
	}
	v, ok := o.m[k]
	if !ok || object && v == nil {
		return nil, false
	}
	ps, ok := o.propSchema(k)
	if !ok {
		return nil, false
	}
	return toVal(v, ps), true
}

func (o *objectVal) Iterator() traits.Iterator {
	object := o.isObject()
	var keys []ref.Val
	for k := range o.m {
		if _, ok := o.propSchema(k); !ok {
			continue
		}
		if object {
			if esc, ok := escape(k); ok {
				k = esc
			}
		}
		keys = append(keys, types.String(k))
	}
	return &sliceIter{vals: keys}
}

// unescape is escape's inverse (false for a name no property can have).
func unescape(s string) (string, bool) {
	if !strings.Contains(s, "__") {
		return s, true
	}
	if strings.HasPrefix(s, "__") && strings.HasSuffix(s, "__") && reserved[s[2:len(s)-2]] {
		return s[2 : len(s)-2], true
	}
	var b strings.Builder
	for s != "" {
		i := strings.Index(s, "__")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		rest := s[i+2:]
		j := strings.Index(rest, "__")
		if j <= 0 {
			return "", false
		}
		switch rest[:j] {
		case "underscores":
			b.WriteString("__")
		case "dot":
			b.WriteString(".")
		case "dash":
			b.WriteString("-")
		case "slash":
			b.WriteString("/")
		default:
			return "", false
		}
		s = rest[j+2:]
	}
	return b.String(), true
}

type sliceIter struct {
	vals []ref.Val
	i    int
}

func (it *sliceIter) ConvertToNative(reflect.Type) (any, error) { return nil, fmt.Errorf("iterator") }
func (it *sliceIter) ConvertToType(ref.Type) ref.Val            { return types.NewErr("iterator") }
func (it *sliceIter) Equal(ref.Val) ref.Val                     { return types.False }
func (it *sliceIter) Type() ref.Type                            { return types.IteratorType }
func (it *sliceIter) Value() any                                { return nil }
func (it *sliceIter) HasNext() ref.Val                          { return types.Bool(it.i < len(it.vals)) }
func (it *sliceIter) Next() ref.Val {
	if it.i >= len(it.vals) {
		return nil
	}
	v := it.vals[it.i]
	it.i++
	return v
}

// unknownVal is data kept by x-kubernetes-preserve-unknown-fields without a type: rules
// cannot read it, only compare it.
type unknownVal struct{ v any }

func (u *unknownVal) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion to '%s' not supported for values preserved by x-kubernetes-preserve-unknown-fields", t)
}
func (u *unknownVal) ConvertToType(t ref.Type) ref.Val {
	return types.NewErr("type conversion to '%s' not supported for values preserved by x-kubernetes-preserve-unknown-fields", t.TypeName())
}
func (u *unknownVal) Equal(o ref.Val) ref.Val { return types.Bool(semanticEqual(u.v, o.Value())) }
func (u *unknownVal) Type() ref.Type          { return types.UnknownType }
func (u *unknownVal) Value() any              { return u.v }

// semanticEqual compares JSON values as the kube-apiserver's semantic equality does
// (an empty and an absent list or map are equal; an integer and a float are not).
func semanticEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return b == nil && len(x) == 0
		}
		if len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !semanticEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok {
			return b == nil && len(x) == 0
		}
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !semanticEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case nil:
		switch y := b.(type) {
		case map[string]any:
			return len(y) == 0
		case []any:
			return len(y) == 0
		}
		return b == nil
	}
	if isInteger(a) != isInteger(b) {
		return false
	}
	if fa, ok := toFloat64(a); ok {
		fb, ok := toFloat64(b)
		return ok && fa == fb
	}
	return a == b
}
