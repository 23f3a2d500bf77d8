package mergeschema

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/informerkit/informerkit/internal/kubeschema"
)

// kubeTypes holds the Types of every kubeschema type, built once: each Struct node is
// shared by every field of its type, so the graph is as small as the table.
var kubeTypes = sync.OnceValue(func() map[*kubeschema.Type]*Node {
	nodes := map[*kubeschema.Type]*Node{}
	for _, t := range kubeschema.Types() {
		if t.JSON != "" {
			continue
		}
		nodes[t] = &Node{What: Struct, IsAtomic: t.MapType == "atomic", Fields: map[string]Field{}}
	}
	for t, n := range nodes {
		for _, f := range t.JSONFields() {
			n.Fields[f.Name] = kubeField(f, nodes)
		}
		if len(t.GroupVersionKinds()) > 0 {
			// The table's messages carry no TypeMeta (the protobuf envelope does); the
			// objects' JSON has it.
			n.Fields["apiVersion"] = Field{Type: StringType}
			n.Fields["kind"] = Field{Type: StringType}
		}
	}
	return nodes
})

// verbs is a named list of strings (metav1.Verbs), atomic for apply.
var verbs = &Node{What: List, IsAtomic: true, Element: ScalarType}

func kubeValue(t *kubeschema.Type, nodes map[*kubeschema.Type]*Node) Type {
	switch t.JSON {
	case "":
		if n := nodes[t]; n != nil {
			return n
		}
		return nil
	case "raw":
		// RawExtension and FieldsV1: any JSON.
		return Untyped
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

func kubeField(f *kubeschema.Field, nodes map[*kubeschema.Type]*Node) Field {
	v := kubeScalar(f.Kind)
	if f.Kind == kubeschema.Message {
		v = kubeValue(f.Type(), nodes)
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
	if n := kubeTypes()[t]; n != nil {
		return n
	}
	return kubeValue(t, nil)
}

// ObjectMeta is the type of every object's metadata.
func ObjectMeta() Type {
	return ForKubeType(kubeschema.Lookup("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"))
}
