package celrules

import (
	"fmt"
	"math"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// The kube-apiserver bounds the sizes its estimator assumes by the largest request body it
// accepts (3 MiB) and by the smallest JSON each value can be written in.
const (
	maxRequestBytes = 3 * 1024 * 1024
	minStringSize   = 2 // ""
	minBoolSize     = 4 // true
	minNumberSize   = 1 // 0
	minDuration     = 3 // "0s"
	maxDuration     = 32
	dateSize        = 12 // "2006-01-02"
	minDatetime     = 21
	maxDatetime     = 32
)

// declType is the CEL type of a schema node, with what the cost estimator needs: the most
// elements (characters, items, properties) a value can have and the smallest size of its
// JSON.
type declType struct {
	name     string // of an object type; "" until named
	cel      *cel.Type
	fields   map[string]*declField // objects, by escaped name
	elem     *declType             // list items, map values
	kind     declKind
	maxElems int64
	minSize  int64
}

type declKind int

const (
	scalarKind declKind = iota
	objectKind
	listKind
	mapKind
)

type declField struct {
	name string // the property's name in the schema
	typ  *declType
}

var keyType = &declType{cel: cel.StringType, minSize: minStringSize}

// declTypeOf is the type of values of s (root: s is a resource's root or an embedded
// resource), or nil when rules cannot see them: a schema of no type that preserves
// unknown fields, and lists and maps of such.
func declTypeOf(s schema, root bool) *declType {
	if s == nil {
		return nil
	}
	if s.intOrString() {
		t := &declType{cel: cel.DynType, minSize: 1}
		if n, ok := s.limit("maxLength"); ok {
			t.maxElems = zeroIfNegative(n) * 4
		} else {
			t.maxElems = maxRequestBytes - 2
		}
		return t
	}
	if root {
		s = s.withTypeAndObjectMeta()
	}
	switch s.typ() {
	case "array":
		items := s.items()
		if items == nil {
			return nil
		}
		it := declTypeOf(items, items.embedded())
		if it == nil {
			return nil
		}
		n, ok := s.limit("maxItems")
		if ok {
			n = zeroIfNegative(n)
		} else {
			n = (maxRequestBytes - 2) / (it.minSize + 1)
		}
		return &declType{cel: cel.ListType(it.cel), elem: it, kind: listKind, maxElems: n, minSize: 2}
	case "object":
		if add := s.additional(); add != nil {
			vt := declTypeOf(add, add.embedded())
			if vt == nil {
				return nil
			}
			n, ok := s.limit("maxProperties")
			if ok {
				n = zeroIfNegative(n)
			} else {
				n = (maxRequestBytes - 2) / (vt.minSize + 6)
			}
			return &declType{cel: cel.MapType(cel.StringType, vt.cel), elem: vt, kind: mapKind, maxElems: n, minSize: 2}
		}
		t := &declType{fields: map[string]*declField{}, kind: objectKind, minSize: 2}
		req := s.required()
		props := s.properties()
		for _, name := range s.propertyNames() {
			p := props[name]
			ft := declTypeOf(p, p.embedded())
			if ft == nil {
				continue
			}
			if esc, ok := escape(name); ok {
				t.fields[esc] = &declField{name: name, typ: ft}
			}
			if _, hasDefault := p["default"]; req[name] && !hasDefault {
				t.minSize += int64(len(name)) + ft.minSize + 4
			}
		}
		return t
	case "string":
		return stringDeclType(s)
	case "boolean":
		return &declType{cel: cel.BoolType, minSize: minBoolSize}
	case "number":
		return &declType{cel: cel.DoubleType, minSize: minNumberSize}
	case "integer":
		return &declType{cel: cel.IntType, minSize: minNumberSize}
	}
	return nil
}

func stringDeclType(s schema) *declType {
	maxLen, hasMax := s.limit("maxLength")
	switch s.format() {
	case "byte":
		t := &declType{cel: cel.BytesType, minSize: minStringSize, maxElems: maxRequestBytes - 2}
		if hasMax {
			t.maxElems = zeroIfNegative(maxLen)
		}
		return t
	case "duration":
		return &declType{cel: cel.DurationType, minSize: minDuration, maxElems: maxDuration}
	case "date":
		return &declType{cel: cel.TimestampType, minSize: dateSize, maxElems: dateSize}
	case "date-time":
		return &declType{cel: cel.TimestampType, minSize: minDatetime, maxElems: maxDatetime}
	}
	t := &declType{cel: cel.StringType, minSize: minStringSize, maxElems: maxRequestBytes - 2}
	switch {
	case hasMax:
		t.maxElems = zeroIfNegative(maxLen) * 4 // maxLength counts runes; a rune is up to 4 bytes
	case len(s.enum()) > 0:
		t.maxElems = 0
		for _, e := range s.enum() {
			if e, ok := e.(string); ok && int64(len(e)) > t.maxElems {
				t.maxElems = int64(len(e))
			}
		}
	}
	return t
}

func zeroIfNegative(n int64) int64 { return max(n, 0) }

// named gives the object types under t their names: name for t itself, then name.field,
// name.field.@idx for list items and name.field.@elem for map values, as the
// kube-apiserver names them. Types already named keep their names.
func (t *declType) named(name string) *declType {
	switch t.kind {
	case objectKind:
		if t.name != "" {
			name = t.name
		}
		out := *t
		out.name = name
		out.cel = cel.ObjectType(name)
		out.fields = make(map[string]*declField, len(t.fields))
		for k, f := range t.fields {
			out.fields[k] = &declField{name: f.name, typ: f.typ.named(name + "." + k)}
		}
		return &out
	case listKind:
		out := *t
		out.elem = t.elem.named(name + ".@idx")
		out.cel = cel.ListType(out.elem.cel)
		return &out
	case mapKind:
		out := *t
		out.elem = t.elem.named(name + ".@elem")
		out.cel = cel.MapType(cel.StringType, out.elem.cel)
		return &out
	}
	return t
}

// objectTypes collects the named object types under t.
func (t *declType) objectTypes(into map[string]*declType) {
	switch t.kind {
	case objectKind:
		into[t.name] = t
		for _, f := range t.fields {
			f.typ.objectTypes(into)
		}
	case listKind, mapKind:
		t.elem.objectTypes(into)
	}
}

// provider resolves the object types of one rule's scope for the checker and delegates
// everything else to the environment's own provider.
type provider struct {
	types.Provider
	adapter types.Adapter
	objects map[string]*declType
}

func newProvider(env *cel.Env, root *declType) *provider {
	p := &provider{Provider: env.CELTypeProvider(), adapter: env.CELTypeAdapter(), objects: map[string]*declType{}}
	root.objectTypes(p.objects)
	return p
}

func (p *provider) FindStructType(name string) (*types.Type, bool) {
	if t, ok := p.objects[name]; ok {
		return types.NewTypeTypeWithParam(t.cel), true
	}
	return p.Provider.FindStructType(name)
}

func (p *provider) FindStructFieldNames(name string) ([]string, bool) {
	if _, ok := p.objects[name]; ok {
		return nil, false // as the kube-apiserver's provider: objects cannot be constructed
	}
	return p.Provider.FindStructFieldNames(name)
}

func (p *provider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	t, ok := p.objects[name]
	if !ok {
		return p.Provider.FindStructFieldType(name, field)
	}
	f, ok := t.fields[field]
	if !ok && reserved[field] {
		f, ok = t.fields["__"+field+"__"] // a keyword may name a field unescaped
	}
	if ok {
		return &types.FieldType{Type: f.typ.cel}, true
	}
	return nil, false
}

func (p *provider) NativeToValue(v any) ref.Val { return p.adapter.NativeToValue(v) }

// sizeEstimator bounds the size of a value a rule reaches from self (or oldSelf) by the
// schema's maxLength, maxItems and maxProperties, or by the request size where the schema
// sets none.
type sizeEstimator struct{ root *declType }

func (e sizeEstimator) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	path := n.Path()
	if len(path) == 0 {
		return nil
	}
	t := e.root
	for _, p := range path[1:] {
		switch p {
		case "@items", "@values":
			if t.elem == nil {
				return nil
			}
			t = t.elem
		case "@keys":
			if t.kind != mapKind {
				return nil
			}
			t = keyType
		default:
			f, ok := t.fields[p]
			if !ok {
				return nil
			}
			t = f.typ
		}
	}
	return &checker.SizeEstimate{Min: 0, Max: uint64(t.maxElems)}
}

func (sizeEstimator) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// maxCardinality is how often a value of the smallest JSON size minSize fits in one
// request: the estimator's bound on how often a rule under unbounded lists or maps runs.
func maxCardinality(minSize int64) uint64 {
	return uint64(maxRequestBytes / (minSize + 1))
}

func mulGuard(a, b uint64) uint64 {
	if a == 0 {
		return 0
	}
	if math.MaxUint64/a < b {
		return math.MaxUint64
	}
	return a * b
}

func (t *declType) String() string {
	if t.name != "" {
		return t.name
	}
	return fmt.Sprint(t.cel)
}
