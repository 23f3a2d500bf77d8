package kubeschema

import (
	_ "embed"
	"encoding/json"
	"sort"
	"strings"
	"sync/atomic"
)

//go:embed schema.json
var schemaJSON []byte

// Kind is what a field's value is.
type Kind string

// The kinds of values.
const (
	String  Kind = "string"
	Bool    Kind = "bool"
	Int32   Kind = "int32"
	Int64   Kind = "int64"
	Float64 Kind = "float64"
	// Bytes is a byte string: base64 in JSON, length-delimited on the protobuf wire.
	Bytes Kind = "bytes"
	// Message is a nested type (Field.Type).
	Message Kind = "message"
)

// WireType is a protobuf wire type.
type WireType int

// The protobuf wire types that Kubernetes messages use.
const (
	Varint  WireType = 0
	Fixed64 WireType = 1
	// LengthDelimited carries strings, bytes, nested messages, map entries and packed
	// repeated scalars.
	LengthDelimited WireType = 2
	Fixed32         WireType = 5
)

// Type is one message type of the table.
type Type struct {
	// Name is the OpenAPI name, e.g. "io.k8s.api.core.v1.PodSpec".
	Name string `json:"name"`
	// Go is the Go type, e.g. "k8s.io/api/core/v1.PodSpec".
	Go string `json:"go,omitempty"`
	// JSON is the JSON form of a type that is not a JSON object ("time", "microtime",
	// "duration", "quantity", "int-or-string", "raw", "array"; see docs/kubeschema.md), "" for
	// an object.
	JSON string `json:"json,omitempty"`
	// MapType is the type's own x-kubernetes-map-type: "atomic" for the structs that
	// server-side apply treats as one value (+structType=atomic: LabelSelector,
	// ObjectReference, OwnerReference, ...), "" otherwise.
	MapType string `json:"mapType,omitempty"`
	// Fields in Go declaration order (which is also protobuf field order in most types).
	Fields []*Field `json:"fields"`

	byName   map[string]*Field
	byNumber map[int]*Field
	gvks     []GroupVersionKind
}

// Field is one field of a Type.
type Field struct {
	// Name is the JSON name ("" for an Inline field).
	Name string `json:"name"`
	// GoName is the Go field name.
	GoName string `json:"go,omitempty"`
	// ProtoName is the field's name in generated.proto.
	ProtoName string `json:"protoName,omitempty"`
	// Number is the protobuf field number.
	Number int `json:"number,omitempty"`
	// WireName is the wire type as the table writes it: "varint", "bytes", "fixed64".
	WireName string `json:"wire,omitempty"`
	// Kind is what a value (a list element, a map value) is.
	Kind Kind `json:"kind"`
	// TypeName is the message type of a Message value.
	TypeName string `json:"type,omitempty"`
	// Repeated marks a list.
	Repeated bool `json:"repeated,omitempty"`
	// MapKey is "string" for a map (string keys, values as Kind/TypeName), "" otherwise.
	MapKey string `json:"mapKey,omitempty"`
	// Pointer: the Go field is a pointer (written to JSON and protobuf only when set).
	Pointer bool `json:"pointer,omitempty"`
	// OmitEmpty and OmitZero are the Go field's JSON options.
	OmitEmpty bool `json:"omitempty,omitempty"`
	OmitZero  bool `json:"omitzero,omitempty"`
	// Inline: the field's message is embedded in the enclosing JSON object.
	Inline bool `json:"inline,omitempty"`
	// NoJSON: the field exists on the protobuf wire only (runtime.Unknown's raw bytes).
	NoJSON bool `json:"noJSON,omitempty"`
	// PatchStrategy and PatchMergeKey are the strategic merge patch tags.
	PatchStrategy string `json:"patchStrategy,omitempty"`
	PatchMergeKey string `json:"patchMergeKey,omitempty"`
	// ListType, ListMapKeys and MapType are the x-kubernetes-list-type, -list-map-keys
	// and -map-type OpenAPI extensions (server-side apply).
	ListType    string   `json:"listType,omitempty"`
	ListMapKeys []string `json:"listMapKeys,omitempty"`
	MapType     string   `json:"mapType,omitempty"`
	// Required: the OpenAPI schema lists the field as required.
	Required bool `json:"required,omitempty"`
	// Format is the OpenAPI format ("int32", "date-time", "byte", "int-or-string", ...).
	Format string `json:"format,omitempty"`
	// Default is the server default as JSON (nil: none); see docs/kubeschema.md.
	Default json.RawMessage `json:"default,omitempty"`
	// DefaultWhen is a condition "sibling=value|value" under which Default applies.
	DefaultWhen string `json:"defaultWhen,omitempty"`
	// DefaultKinds lists the kinds ("v1/Pod", "apps/v1/Deployment") in which Default
	// applies; empty means every kind holding the type.
	DefaultKinds []string `json:"defaultKinds,omitempty"`
	// Enum lists the values of a string field with a closed set (OpenAPI enum).
	Enum []string `json:"enum,omitempty"`

	typ   atomic.Pointer[Type] // resolved by Type on first use
	owner *Type
}

// GroupVersionKind names a kind.
type GroupVersionKind struct {
	Group   string `json:"group,omitempty"`
	Version string `json:"version,omitempty"`
	Kind    string `json:"kind"`
}

// KindInfo maps a kind to its object and list types.
type KindInfo struct {
	GroupVersionKind
	// Type is the object's type; List the list kind's type (nil for kinds without a list,
	// such as autoscaling/v1 Scale).
	Type, List *Type
}

// Source names the releases the table was generated from.
func Source() string { return load().Source }

// Lookup returns the type with an OpenAPI name, or nil.
func Lookup(name string) *Type { return load().lookup(name) }

// Types returns every type, sorted by name (all of the table is decoded).
func Types() []*Type { return load().all() }

// Kinds returns the kinds of the table: the kinds of every resource and subresource the
// pinned kube-apiserver serves (autoscaling/v1 Scale, policy/v1 Eviction, v1 Binding,
// authentication.k8s.io TokenRequest...) and the meta.k8s.io kinds of the protocol (Status,
// DeleteOptions, WatchEvent, PartialObjectMetadata, discovery lists). The kind with an
// empty group and version and name "Unknown" is the protobuf envelope.
func Kinds() []KindInfo { return load().kindInfos() }

// ForKind returns the kind's types; ok is false if the table does not have the kind. A
// list kind ("PodList") is found too: its Type is then the list type and List nil.
func ForKind(group, version, kind string) (KindInfo, bool) {
	t := load()
	for _, k := range t.Kinds {
		if k.Group != group || k.Version != version {
			continue
		}
		if k.Kind == kind {
			return KindInfo{GroupVersionKind: k.GroupVersionKind, Type: t.lookup(k.Type), List: t.lookup(k.ListType)}, true
		}
		if k.ListType != "" && k.Kind+"List" == kind {
			return KindInfo{GroupVersionKind: GroupVersionKind{group, version, kind}, Type: t.lookup(k.ListType)}, true
		}
	}
	return KindInfo{}, false
}

// GroupVersionKinds returns the kinds whose object (or list) type this is.
func (t *Type) GroupVersionKinds() []GroupVersionKind { return t.gvks }

// Field returns the field with a JSON name, looking through inline fields; nil if none.
func (t *Type) Field(name string) *Field { return t.byName[name] }

// FieldByNumber returns the field with a protobuf number (inline fields are fields of
// their own number here); nil if none.
func (t *Type) FieldByNumber(n int) *Field { return t.byNumber[n] }

// JSONFields returns the fields as they appear in the JSON object (inline fields replaced
// by their message's fields), sorted by name.
func (t *Type) JSONFields() []*Field {
	out := make([]*Field, 0, len(t.byName))
	for _, f := range t.byName {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// String returns the type's name.
func (t *Type) String() string { return t.Name }

// Type returns the message type of a Message field (nil otherwise). The type is decoded on
// first use.
func (f *Field) Type() *Type {
	if f.Kind != Message {
		return nil
	}
	if t := f.typ.Load(); t != nil {
		return t
	}
	t := load().lookup(f.TypeName)
	f.typ.Store(t)
	return t
}

// Owner returns the type the field belongs to.
func (f *Field) Owner() *Type { return f.owner }

// GoType is the Go type of the field as encoding/json's errors name it ("string",
// "[]v1.Container", "map[string]string", "*int32" is "int32"); elem gives the type of one
// element of a list or map.
func (f *Field) GoType(elem bool) string {
	var t string
	switch f.Kind {
	case Bytes:
		t = "[]uint8"
	case Message:
		t = shortGo(f.Type().Go)
	default:
		t = string(f.Kind)
	}
	switch {
	case elem:
	case f.Repeated:
		t = "[]" + t
	case f.MapKey != "":
		t = "map[string]" + t
	}
	return t
}

// shortGo turns "k8s.io/api/core/v1.Pod" into "v1.Pod".
func shortGo(goType string) string {
	if i := strings.LastIndex(goType, "/"); i >= 0 {
		return goType[i+1:]
	}
	return goType
}

// GoName returns the type's Go name without its import path ("v1.Pod").
func (t *Type) GoName() string { return shortGo(t.Go) }

// Wire returns the protobuf wire type of one value of the field (a list element, a map
// entry: LengthDelimited).
func (f *Field) Wire() WireType {
	switch f.WireName {
	case "varint":
		return Varint
	case "fixed64":
		return Fixed64
	case "fixed32":
		return Fixed32
	}
	return LengthDelimited
}

// AppliesDefault reports whether Default applies to an object of the kind ("v1/Pod",
// "apps/v1/Deployment"; see DefaultKinds) whose JSON object holding the field is obj (for
// DefaultWhen). It is false when the field has no default.
func (f *Field) AppliesDefault(kind string, obj map[string]any) bool {
	if f.Default == nil {
		return false
	}
	if len(f.DefaultKinds) > 0 {
		found := false
		for _, k := range f.DefaultKinds {
			found = found || k == kind
		}
		if !found {
			return false
		}
	}
	if f.DefaultWhen == "" {
		return true
	}
	field, values, _ := strings.Cut(f.DefaultWhen, "=")
	got, _ := obj[field].(string)
	for _, v := range strings.Split(values, "|") {
		if got == v {
			return true
		}
	}
	return false
}

// String returns "name (kind)".
func (f *Field) String() string {
	k := string(f.Kind)
	if f.Kind == Message {
		k = f.TypeName
	}
	switch {
	case f.Repeated:
		k = "[]" + k
	case f.MapKey != "":
		k = "map[string]" + k
	}
	return f.Name + " (" + k + ")"
}
