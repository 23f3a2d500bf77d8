package mergeschema

// FromOpenAPI returns the Type of a custom resource whose objects are described by an
// OpenAPI v3 schema (a CustomResourceDefinition version's schema.openAPIV3Schema, decoded
// from JSON). As the kube-apiserver does for custom resources, apiVersion and kind are
// scalars and metadata is ObjectMeta whatever the schema says. A nil schema gives a
// resource without one: a Struct of those three fields whose other fields are Deduced.
func FromOpenAPI(schema map[string]any) Type {
	root := &Node{What: Struct, Fields: map[string]Field{}}
	if schema == nil {
		root.Element = Untyped
	} else if t, ok := openAPIType(schema).(*Node); ok && t.What == Struct {
		root = t
	} else {
		root.Element = Untyped
	}
	root.Fields["apiVersion"] = Field{Type: ScalarType}
	root.Fields["kind"] = Field{Type: ScalarType}
	root.Fields["metadata"] = Field{Type: ObjectMeta()}
	return root
}

func openAPIType(s map[string]any) Type {
	if s == nil {
		return Untyped
	}
	typ, _ := s["type"].(string)
	props, _ := s["properties"].(map[string]any)
	preserve, _ := s["x-kubernetes-preserve-unknown-fields"].(bool)
	if typ == "" {
		switch {
		case props != nil:
			typ = "object"
		case s["items"] != nil:
			typ = "array"
		case preserve:
			return Untyped
		}
	}
	if io, _ := s["x-kubernetes-int-or-string"].(bool); io {
		return ScalarType
	}
	switch typ {
	case "object":
		atomic := s["x-kubernetes-map-type"] == "atomic"
		if props == nil {
			n := &Node{What: Map, IsAtomic: atomic, Element: Untyped}
			if ap, ok := s["additionalProperties"].(map[string]any); ok {
				n.Element = openAPIType(ap)
			}
			return n
		}
		n := &Node{What: Struct, IsAtomic: atomic, Fields: make(map[string]Field, len(props))}
		for name, p := range props {
			ps, _ := p.(map[string]any)
			f := Field{Type: openAPIType(ps)}
			if ps != nil {
				f.Default = ps["default"]
			}
			n.Fields[name] = f
		}
		if preserve {
			n.Element = Untyped
		}
		return n
	case "array":
		items, _ := s["items"].(map[string]any)
		n := &Node{What: List, Element: openAPIType(items)}
		switch s["x-kubernetes-list-type"] {
		case "map":
			for _, k := range asList(s["x-kubernetes-list-map-keys"]) {
				if ks, ok := k.(string); ok {
					n.Keys = append(n.Keys, ks)
				}
			}
		case "set":
		default:
			n.IsAtomic = true
		}
		return n
	case "string":
		return StringType
	case "integer", "number":
		return NumberType
	case "boolean":
		return BoolType
	}
	return ScalarType
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
