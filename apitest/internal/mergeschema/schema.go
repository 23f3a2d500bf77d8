// Package mergeschema describes the shape of Kubernetes objects as the merge engines see
// it: strategic merge patch (internal/smp) needs the patch strategy and merge key of each
// field, server-side apply (internal/ssa) needs which maps, structs and lists are atomic and
// by which keys the items of a list are told apart.
//
// A Type is a node of that description. ForKubeType builds the types of the built-in kinds
// from kubeschema's table; FromOpenAPI builds them from a custom resource's OpenAPI v3
// schema (x-kubernetes-list-type, -list-map-keys, -map-type, -preserve-unknown-fields). A
// nil Type means "no schema": the engines then deduce the shape from the value, as the
// kube-apiserver does for custom resources without a schema (objects are granular maps,
// lists are atomic).
package mergeschema

// Kind is what a Type describes.
type Kind uint8

// The kinds of types.
const (
	// Deduced: nothing is known; the value decides (an object is a granular map of Deduced
	// values, a list is atomic, anything else a scalar).
	Deduced Kind = iota
	// Scalar is a string, number, boolean or null, or a value that the API treats as one
	// (a quantity, a timestamp, an int-or-string).
	Scalar
	// Struct is an object with named fields (Field).
	Struct
	// Map is an object whose keys are data and whose values are all of type Elem.
	Map
	// List is an array of Elem values.
	List
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case Scalar:
		return "scalar"
	case Struct:
		return "struct"
	case Map:
		return "map"
	case List:
		return "list"
	}
	return "deduced"
}

// Type describes a JSON value.
type Type interface {
	// Kind says what the value is.
	Kind() Kind
	// Field returns a named field of a Struct; ok is false for a name the struct does not
	// declare.
	Field(name string) (f Field, ok bool)
	// Elem is the type of a Map's values and of a List's items. For a Struct it is the type
	// of the fields it does not declare: nil when there may be none (built-in kinds), a
	// Deduced type when anything goes (x-kubernetes-preserve-unknown-fields).
	Elem() Type
	// Atomic reports whether a Struct, Map or List is one value for server-side apply
	// (x-kubernetes-map-type: atomic, x-kubernetes-list-type: atomic or no list type):
	// owned and replaced as a whole.
	Atomic() bool
	// ListKeys returns the fields that identify an item of a List whose
	// x-kubernetes-list-type is map; nil for a set (items are scalars that identify
	// themselves) or an atomic list.
	ListKeys() []string
	// ScalarKind says which values a Scalar takes ("": any scalar).
	ScalarKind() ScalarKind
}

// ScalarKind is the JSON type of a Scalar's values.
type ScalarKind uint8

// The scalar kinds.
const (
	AnyScalar ScalarKind = iota
	String
	Numeric
	Boolean
)

// Field is a named field of a Struct.
type Field struct {
	// Type is the field's type (nil: Deduced).
	Type Type
	// PatchStrategy is the strategic merge patch strategy: "", "merge", "replace",
	// "retainKeys" or "merge,retainKeys".
	PatchStrategy string
	// PatchMergeKey is the field that identifies an item of a list merged by strategic merge
	// patch ("" for a list of scalars).
	PatchMergeKey string
	// Default is the value the server gives the field when it is absent (nil: none). Apply
	// uses it for list-map keys the applied configuration omits (a container port's
	// protocol, "TCP").
	Default any
}

// KindOf returns t's kind, Deduced for nil.
func KindOf(t Type) Kind {
	if t == nil {
		return Deduced
	}
	return t.Kind()
}

// Node is a Type whose description is data. The built-in and OpenAPI types are Nodes;
// tests write them as literals.
type Node struct {
	// What is the node's kind.
	What Kind
	// Fields are a Struct's fields by JSON name.
	Fields map[string]Field
	// Element is Elem().
	Element Type
	// IsAtomic is Atomic().
	IsAtomic bool
	// Keys is ListKeys().
	Keys []string
	// Scalar is ScalarKind().
	Scalar ScalarKind
}

// Kind implements Type.
func (n *Node) Kind() Kind { return n.What }

// Field implements Type.
func (n *Node) Field(name string) (Field, bool) {
	f, ok := n.Fields[name]
	return f, ok
}

// Elem implements Type.
func (n *Node) Elem() Type { return n.Element }

// Atomic implements Type.
func (n *Node) Atomic() bool { return n.IsAtomic }

// ListKeys implements Type.
func (n *Node) ListKeys() []string { return n.Keys }

// ScalarKind implements Type.
func (n *Node) ScalarKind() ScalarKind { return n.Scalar }

// Untyped is the Deduced type: what fields of objects with
// x-kubernetes-preserve-unknown-fields and objects without a schema are.
var Untyped Type = &Node{What: Deduced}

// ScalarType is a Scalar of any JSON type; StringType, NumberType and BoolType take one.
var (
	ScalarType Type = &Node{What: Scalar}
	StringType Type = &Node{What: Scalar, Scalar: String}
	NumberType Type = &Node{What: Scalar, Scalar: Numeric}
	BoolType   Type = &Node{What: Scalar, Scalar: Boolean}
)

// Lookup returns the type of a struct field or map value named name in t, and the field's
// metadata; ok is false when t is a Struct that does not declare name and takes no other
// fields. For a Deduced t the answer is Deduced.
func Lookup(t Type, name string) (Field, bool) {
	switch KindOf(t) {
	case Struct:
		if f, ok := t.Field(name); ok {
			return f, true
		}
		if e := t.Elem(); e != nil {
			return Field{Type: e}, true
		}
		return Field{}, false
	case Map:
		return Field{Type: t.Elem()}, true
	case Deduced:
		return Field{}, true
	}
	return Field{}, false
}
