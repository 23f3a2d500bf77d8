package mergeschema

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/informerkit/informerkit/internal/kubeschema"
)

// kubeNodes holds the Types of the kubeschema types asked for so far, and of the types
// they hold: each Struct node is shared by every field of its type, so the graph is as
// small as the part of the table in use (a kind's types are built on its first use).
var (
	kubeMu    sync.Mutex
	kubeNodes = map[*kubeschema.Type]*Node{}
)

// kubeNode returns the node of a struct type, building it and the nodes of its fields'
// types once. kubeMu held.
func kubeNode(t *kubeschema.Type) *Node {
	if n := kubeNodes[t]; n != nil {
		return n
	}
	n := &Node{What: Struct, IsAtomic: t.MapType == "atomic", Fields: map[string]Field{}}
	kubeNodes[t] = n
	for _, f := range t.JSONFields() {
		n.Fields[f.Name] = kubeField(f)
	}
	if len(t.GroupVersionKinds()) > 0 {
		// The table's messages carry no TypeMeta (the protobuf envelope does); the
		// objects' JSON has it.
		n.Fields["apiVersion"] = Field{Type: StringType}
		n.Fields["kind"] = Field{Type: StringType}
	}
	return n
}

// verbs is a named list of strings (metav1.Verbs), atomic for apply.
var verbs = &Node{What: List, IsAtomic: true, Element: ScalarType}

func kubeValue(t *kubeschema.Type) Type {
	switch t.JSON {
	case "":
		return kubeNode(t)
	case "raw":
		// RawExtension and FieldsV1: any JSON, one value for apply (a ControllerRevision's
		// data is owned as a whole, as on the kube-apiserver).
		return ScalarType
	case "array":
		return verbs
	case "time", "microtime", "duration":
		return StringType
	}
	// Quantities and int-or-strings take strings and numbers.
	return ScalarType
}

func kubeScalar(k kubeschema.Kind) Type {
	switch k {
	case kubeschema.String, kubeschema.Bytes:
		return StringType
	case kubeschema.Bool:
		return BoolType
	case kubeschema.Int32, kubeschema.Int64, kubeschema.Float64:
		return NumberType
	}
	return ScalarType
}

func kubeField(f *kubeschema.Field) Field {
	v := kubeScalar(f.Kind)
	if f.Kind == kubeschema.Message {
		v = kubeValue(f.Type())
	}
	out := Field{PatchStrategy: f.PatchStrategy, PatchMergeKey: f.PatchMergeKey}
	switch {
	case f.Repeated:
		l := &Node{What: List, Element: v}
		switch f.ListType {
		case "map":
			l.Keys = f.ListMapKeys
		case "set":
		default:
			// A list without x-kubernetes-list-type is atomic for apply.
			l.IsAtomic = true
		}
		out.Type = l
	case f.MapKey != "":
		out.Type = &Node{What: Map, Element: v, IsAtomic: f.MapType == "atomic"}
	default:
		out.Type = v
	}
	if len(f.Default) > 0 && f.DefaultWhen == "" && len(f.DefaultKinds) == 0 {
		d := json.NewDecoder(bytes.NewReader(f.Default))
		d.UseNumber()
		var def any
		if d.Decode(&def) == nil {
			out.Default = def
		}
	}
	return out
}

// ForKubeType returns the Type of a kubeschema type (an object kind's type from
// kubeschema.ForKind, or any message type of the table).
func ForKubeType(t *kubeschema.Type) Type {
	if t == nil {
		return nil
	}
	kubeMu.Lock()
	defer kubeMu.Unlock()
	return kubeValue(t)
}

// ObjectMeta is the type of every object's metadata.
func ObjectMeta() Type {
	return ForKubeType(kubeschema.Lookup("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"))
}
