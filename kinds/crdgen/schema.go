package crdgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/types"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Schema is an OpenAPI v3 schema as a CustomResourceDefinition's openAPIV3Schema holds it
// (the structural subset with the Kubernetes extensions). Fields marshal in this order.
type Schema struct {
	Description          string             `json:"description,omitempty"`
	Type                 string             `json:"type,omitempty"`
	Format               string             `json:"format,omitempty"`
	Default              json.RawMessage    `json:"default,omitempty"`
	Enum                 []json.RawMessage  `json:"enum,omitempty"`
	Nullable             bool               `json:"nullable,omitempty"`
	Minimum              *float64           `json:"minimum,omitempty"`
	ExclusiveMinimum     bool               `json:"exclusiveMinimum,omitempty"`
	Maximum              *float64           `json:"maximum,omitempty"`
	ExclusiveMaximum     bool               `json:"exclusiveMaximum,omitempty"`
	MultipleOf           *float64           `json:"multipleOf,omitempty"`
	MinLength            *int64             `json:"minLength,omitempty"`
	MaxLength            *int64             `json:"maxLength,omitempty"`
	Pattern              string             `json:"pattern,omitempty"`
	MinItems             *int64             `json:"minItems,omitempty"`
	MaxItems             *int64             `json:"maxItems,omitempty"`
	MinProperties        *int64             `json:"minProperties,omitempty"`
	MaxProperties        *int64             `json:"maxProperties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	AdditionalProperties *Schema            `json:"additionalProperties,omitempty"`
	AnyOf                []*Schema          `json:"anyOf,omitempty"`

	XEmbeddedResource      bool             `json:"x-kubernetes-embedded-resource,omitempty"`
	XIntOrString           bool             `json:"x-kubernetes-int-or-string,omitempty"`
	XPreserveUnknownFields *bool            `json:"x-kubernetes-preserve-unknown-fields,omitempty"`
	XListType              string           `json:"x-kubernetes-list-type,omitempty"`
	XListMapKeys           []string         `json:"x-kubernetes-list-map-keys,omitempty"`
	XMapType               string           `json:"x-kubernetes-map-type,omitempty"`
	XValidations           []ValidationRule `json:"x-kubernetes-validations,omitempty"`
}

// ValidationRule is a CEL rule of x-kubernetes-validations.
type ValidationRule struct {
	Rule              string `json:"rule"`
	Message           string `json:"message,omitempty"`
	MessageExpression string `json:"messageExpression,omitempty"`
	Reason            string `json:"reason,omitempty"`
	FieldPath         string `json:"fieldPath,omitempty"`
}

// The packages whose types have a JSON form of their own, described here rather than walked.
const (
	metaPkg     = "github.com/informerkit/informerkit/meta"
	metav1Pkg   = "k8s.io/apimachinery/pkg/apis/meta/v1"
	intstrPkg   = "k8s.io/apimachinery/pkg/util/intstr"
	resourcePkg = "k8s.io/apimachinery/pkg/api/resource"
	runtimePkg  = "k8s.io/apimachinery/pkg/runtime"
)

var yes = true

// wellKnown returns the schema of a type whose JSON is not its Go structure.
func wellKnown(pkg, name string) (*Schema, bool) {
	intOrString := func() *Schema {
		return &Schema{XIntOrString: true, AnyOf: []*Schema{{Type: "integer"}, {Type: "string"}}}
	}
	switch pkg + "." + name {
	case metaPkg + ".Time", metav1Pkg + ".Time", metav1Pkg + ".MicroTime":
		return &Schema{Type: "string", Format: "date-time"}, true
	case metaPkg + ".Duration", metav1Pkg + ".Duration":
		return &Schema{Type: "string"}, true
	case metaPkg + ".LabelSelector", metav1Pkg + ".LabelSelector":
		return labelSelectorSchema(), true
	case metaPkg + ".ObjectMeta", metav1Pkg + ".ObjectMeta":
		// The API server owns metadata's schema; a CRD may only say it is an object.
		return &Schema{Type: "object"}, true
	case metaPkg + ".Unstructured", runtimePkg + ".RawExtension", runtimePkg + ".Unknown":
		return &Schema{Type: "object", XPreserveUnknownFields: &yes}, true
	case metaPkg + ".IntOrString", intstrPkg + ".IntOrString":
		return intOrString(), true
	case resourcePkg + ".Quantity":
		s := intOrString()
		s.Pattern = `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`
		return s, true
	case "encoding/json.RawMessage":
		return &Schema{XPreserveUnknownFields: &yes}, true
	}
	return nil, false
}

// labelSelectorSchema is the schema of a label selector (meta.LabelSelector) with the
// kube-apiserver's list and map types (atomic: a selector is replaced whole, never merged)
// and the four operators as an enum, so that the API server refuses an unknown one.
func labelSelectorSchema() *Schema {
	str := func(desc string) *Schema { return &Schema{Description: desc, Type: "string"} }
	ops := []json.RawMessage{json.RawMessage(`"In"`), json.RawMessage(`"NotIn"`), json.RawMessage(`"Exists"`), json.RawMessage(`"DoesNotExist"`)}
	return &Schema{
		Description: "A label selector: an object is selected when it has every label of matchLabels and meets every requirement of matchExpressions. An empty selector selects every object.",
		Type:        "object",
		Properties: map[string]*Schema{
			"matchLabels": {Description: "Labels an object must have, with these values.", Type: "object",
				AdditionalProperties: &Schema{Type: "string"}},
			"matchExpressions": {Description: "Requirements on an object's labels.", Type: "array", XListType: "atomic",
				Items: &Schema{Description: "A requirement: the label key's value is In (or NotIn) values, or the label Exists (or DoesNotExist), without values.",
					Type: "object", Required: []string{"key", "operator"},
					Properties: map[string]*Schema{
						"key":      str("The label key."),
						"operator": {Description: "In, NotIn, Exists or DoesNotExist.", Type: "string", Enum: ops},
						"values": {Description: "The values of In and NotIn; empty for Exists and DoesNotExist.", Type: "array", XListType: "atomic",
							Items: &Schema{Type: "string"}},
					}}},
		},
		XMapType: "atomic",
	}
}

// walker turns Go types into schemas.
type walker struct {
	p        *program
	warnings []string
	stack    []string // named types being walked, for cycles
}

// typeSchema returns the schema of t; expr is t's syntax where the walker has it (nil
// otherwise), for the doc comments of anonymous structs.
func (w *walker) typeSchema(t types.Type, expr ast.Expr) (*Schema, error) {
	t = types.Unalias(t)
	switch t := t.(type) {
	case *types.Pointer:
		var elem ast.Expr
		if star, ok := expr.(*ast.StarExpr); ok {
			elem = star.X
		}
		return w.typeSchema(t.Elem(), elem)
	case *types.Named:
		return w.namedSchema(t)
	case *types.Basic:
		return basicSchema(t)
	case *types.Slice, *types.Array:
		elem := t.(interface{ Elem() types.Type }).Elem()
		if b, ok := types.Unalias(elem).(*types.Basic); ok && b.Kind() == types.Byte {
			if _, slice := t.(*types.Slice); slice {
				return &Schema{Type: "string", Format: "byte"}, nil // base64, as encoding/json writes []byte
			}
		}
		var elemExpr ast.Expr
		if at, ok := expr.(*ast.ArrayType); ok {
			elemExpr = at.Elt
		}
		items, err := w.typeSchema(elem, elemExpr)
		if err != nil {
			return nil, err
		}
		return &Schema{Type: "array", Items: items}, nil
	case *types.Map:
		if b, ok := t.Key().Underlying().(*types.Basic); !ok || b.Info()&types.IsString == 0 {
			return nil, fmt.Errorf("map key %s: a JSON object's keys are strings", t.Key())
		}
		if _, ok := t.Elem().Underlying().(*types.Interface); ok {
			return &Schema{Type: "object", XPreserveUnknownFields: &yes}, nil
		}
		var valExpr ast.Expr
		if mt, ok := expr.(*ast.MapType); ok {
			valExpr = mt.Value
		}
		val, err := w.typeSchema(t.Elem(), valExpr)
		if err != nil {
			return nil, err
		}
		return &Schema{Type: "object", AdditionalProperties: val}, nil
	case *types.Struct:
		st, _ := expr.(*ast.StructType)
		return w.structSchema(t, st)
	case *types.Interface:
		return &Schema{XPreserveUnknownFields: &yes}, nil
	}
	return nil, fmt.Errorf("type %s has no JSON schema (channels, functions and complex numbers do not encode)", t)
}

func basicSchema(b *types.Basic) (*Schema, error) {
	switch b.Kind() {
	case types.Bool:
		return &Schema{Type: "boolean"}, nil
	case types.String:
		return &Schema{Type: "string"}, nil
	case types.Int, types.Uint, types.Uintptr:
		return &Schema{Type: "integer"}, nil
	case types.Int8, types.Int16, types.Int32, types.Uint8, types.Uint16:
		return &Schema{Type: "integer", Format: "int32"}, nil
	case types.Int64, types.Uint32, types.Uint64:
		return &Schema{Type: "integer", Format: "int64"}, nil
	case types.Float32:
		return &Schema{Type: "number", Format: "float"}, nil
	case types.Float64:
		return &Schema{Type: "number", Format: "double"}, nil
	}
	return nil, fmt.Errorf("type %s has no JSON schema", b)
}

// namedSchema walks a named type: a well-known one, or its underlying type with the
// markers and doc of its declaration.
func (w *walker) namedSchema(t *types.Named) (*Schema, error) {
	obj := t.Obj()
	if obj.Pkg() == nil {
		return w.typeSchema(t.Underlying(), nil) // error, predeclared
	}
	path, name := obj.Pkg().Path(), obj.Name()
	if s, ok := wellKnown(path, name); ok {
		return s, nil
	}
	if t.TypeArgs().Len() > 0 {
		return nil, fmt.Errorf("generic type %s: instantiate it in a named struct type", t)
	}
	id := path + "." + name
	if slices.Contains(w.stack, id) {
		return nil, fmt.Errorf("type %s contains itself (%s): a CRD schema cannot be recursive; use +preserveUnknownFields on the field",
			name, strings.Join(append(w.stack, id), " → "))
	}
	w.stack = append(w.stack, id)
	defer func() { w.stack = w.stack[:len(w.stack)-1] }()

	decl, _, err := w.p.decl(path, name)
	if err != nil {
		return nil, err
	}
	desc, ms, warns, err := parseComments(w.p.fset, decl.doc)
	if err != nil {
		return nil, err
	}
	w.warnings = append(w.warnings, warns...)
	var s *Schema
	if has(ms, "type") || has(ms, "intOrString") || has(ms, "preserveUnknownFields") && !isStruct(t) {
		s = &Schema{} // described by its markers alone
	} else if marshals(t) {
		return nil, fmt.Errorf("type %s.%s has its own JSON form (MarshalJSON): describe it with markers on its declaration (+type=string, +format=...)", path, name)
	} else {
		var expr ast.Expr
		if decl.spec != nil {
			expr = decl.spec.Type
		}
		if s, err = w.typeSchema(t.Underlying(), expr); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := applyMarkers(s, ms); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if s.Description == "" {
		s.Description = desc
	}
	return s, nil
}

func isStruct(t types.Type) bool {
	_, ok := t.Underlying().(*types.Struct)
	return ok
}

// marshals reports whether t or *t has a MarshalJSON method.
func marshals(t types.Type) bool {
	for _, typ := range []types.Type{t, types.NewPointer(t)} {
		ms := types.NewMethodSet(typ)
		for i := range ms.Len() {
			if ms.At(i).Obj().Name() == "MarshalJSON" {
				return true
			}
		}
	}
	return false
}

// jsonField is what a struct field's json tag says.
type jsonField struct {
	name              string
	omitempty, inline bool
	skip              bool
}

func parseJSONTag(f *types.Var, tag string) jsonField {
	v, ok := reflect.StructTag(tag).Lookup("json")
	if v == "-" {
		return jsonField{skip: true}
	}
	name, opts, _ := strings.Cut(v, ",")
	jf := jsonField{name: name}
	for _, o := range strings.Split(opts, ",") {
		switch o {
		case "omitempty", "omitzero":
			jf.omitempty = true
		case "inline":
			jf.inline = true
		}
	}
	if f.Embedded() && (!ok || name == "") {
		jf.inline = true
	}
	if jf.name == "" {
		jf.name = f.Name()
	}
	return jf
}

// structSchema walks a struct's exported fields as encoding/json sees them: embedded structs
// without a name are inlined; a field is required unless it is omitempty/omitzero or
// marked +optional (or marked +required).
func (w *walker) structSchema(st *types.Struct, syntax *ast.StructType) (*Schema, error) {
	s := &Schema{Type: "object", Properties: map[string]*Schema{}}
	for i := range st.NumFields() {
		f := st.Field(i)
		jf := parseJSONTag(f, st.Tag(i))
		if jf.skip || (!f.Exported() && !f.Embedded()) {
			continue
		}
		af := fieldSyntax(syntax, f)
		var doc *ast.CommentGroup
		var expr ast.Expr
		if af != nil {
			doc, expr = af.Doc, af.Type
		}
		desc, ms, warns, err := parseComments(w.p.fset, doc)
		if err != nil {
			return nil, err
		}
		w.warnings = append(w.warnings, warns...)
		if jf.inline {
			inner, err := w.typeSchema(f.Type(), expr)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name(), err)
			}
			if inner.Type != "object" {
				return nil, fmt.Errorf("field %s: only a struct can be inlined", f.Name())
			}
			for k, v := range inner.Properties {
				if _, dup := s.Properties[k]; !dup {
					s.Properties[k] = v
				}
			}
			for _, r := range inner.Required {
				if !slices.Contains(s.Required, r) {
					s.Required = append(s.Required, r)
				}
			}
			continue
		}
		if !f.Exported() {
			continue
		}
		fs, err := w.typeSchema(f.Type(), expr)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name(), err)
		}
		fs = fs.clone()
		if err := applyMarkers(fs, ms); err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Name(), err)
		}
		if desc != "" {
			fs.Description = desc
		}
		s.Properties[jf.name] = fs
		required := has(ms, "required") || (!jf.omitempty && !has(ms, "optional"))
		if required && !slices.Contains(s.Required, jf.name) {
			s.Required = append(s.Required, jf.name)
		}
	}
	if len(s.Properties) == 0 {
		s.Properties = nil
	}
	slices.Sort(s.Required)
	return s, nil
}

// fieldSyntax finds f's declaration in st (nil if st is nil or lacks it).
func fieldSyntax(st *ast.StructType, f *types.Var) *ast.Field {
	if st == nil {
		return nil
	}
	for _, af := range st.Fields.List {
		if len(af.Names) == 0 {
			if embeddedName(af.Type) == f.Name() {
				return af
			}
			continue
		}
		for _, n := range af.Names {
			if n.Name == f.Name() {
				return af
			}
		}
	}
	return nil
}

func embeddedName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return embeddedName(e.X)
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.Ident:
		return e.Name
	case *ast.IndexExpr:
		return embeddedName(e.X)
	}
	return ""
}

// clone copies s deeply enough that markers applied to a field leave the type's schema alone.
func (s *Schema) clone() *Schema {
	b, _ := json.Marshal(s)
	var c Schema
	_ = json.Unmarshal(b, &c)
	return &c
}

// applyMarkers applies the schema markers of ms to s.
func applyMarkers(s *Schema, ms []marker) error {
	var errs []error
	for _, m := range ms {
		if err := applyMarker(s, m); err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %w", m.pos, m.text, err))
		}
	}
	return errors.Join(errs...)
}

func applyMarker(s *Schema, m marker) error {
	num := func() (*float64, error) {
		f, err := strconv.ParseFloat(m.value, 64)
		if err != nil {
			return nil, fmt.Errorf("not a number")
		}
		return &f, nil
	}
	count := func() (*int64, error) {
		n, err := strconv.ParseInt(m.value, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("not a count")
		}
		return &n, nil
	}
	var err error
	switch m.name {
	case "optional", "required", "kind", "printcolumn", "subresource:status", "subresource:scale":
		// Not about the schema of the value.
	case "nullable":
		s.Nullable = true
	case "preserveUnknownFields":
		s.XPreserveUnknownFields = &yes
	case "embeddedResource":
		s.XEmbeddedResource = true
		s.Type = "object"
	case "intOrString":
		s.Type, s.Format = "", ""
		s.XIntOrString = true
		s.AnyOf = []*Schema{{Type: "integer"}, {Type: "string"}}
	case "exclusiveMinimum":
		s.ExclusiveMinimum = true
	case "exclusiveMaximum":
		s.ExclusiveMaximum = true
	case "minimum":
		s.Minimum, err = num()
	case "maximum":
		s.Maximum, err = num()
	case "multipleOf":
		s.MultipleOf, err = num()
	case "minLength":
		s.MinLength, err = count()
	case "maxLength":
		s.MaxLength, err = count()
	case "minItems":
		s.MinItems, err = count()
	case "maxItems":
		s.MaxItems, err = count()
	case "minProperties":
		s.MinProperties, err = count()
	case "maxProperties":
		s.MaxProperties, err = count()
	case "pattern":
		s.Pattern = m.value
	case "format":
		s.Format = m.value
	case "type":
		s.Type = m.value
		if !slices.Contains([]string{"string", "integer", "number", "boolean", "object", "array"}, m.value) {
			return fmt.Errorf("unknown type %q", m.value)
		}
	case "enum":
		s.Enum = nil
		for _, v := range strings.Split(m.value, ";") {
			s.Enum = append(s.Enum, literal(strings.TrimSpace(v), s.Type))
		}
	case "default":
		s.Default = literal(m.value, s.Type)
	case "listType":
		if !slices.Contains([]string{"atomic", "set", "map"}, m.value) {
			return fmt.Errorf("listType is atomic, set or map")
		}
		s.XListType = m.value
	case "listMapKey":
		s.XListMapKeys = append(s.XListMapKeys, m.value)
	case "mapType", "structType":
		if m.value != "atomic" && m.value != "granular" {
			return fmt.Errorf("%s is atomic or granular", m.name)
		}
		s.XMapType = m.value
	case "cel":
		r, err := celRule(m)
		if err != nil {
			return err
		}
		s.XValidations = append(s.XValidations, r)
	default:
		return fmt.Errorf("not a schema marker")
	}
	return err
}

// celRule reads the arguments of a +cel marker into a validation rule.
func celRule(m marker) (ValidationRule, error) {
	var r ValidationRule
	for _, a := range m.args {
		switch a.key {
		case "rule":
			r.Rule = a.value
		case "message":
			r.Message = a.value
		case "messageExpression":
			r.MessageExpression = a.value
		case "reason":
			r.Reason = a.value
		case "fieldPath":
			r.FieldPath = a.value
		default:
			return r, fmt.Errorf("unknown argument %q (rule, message, messageExpression, reason, fieldPath)", a.key)
		}
	}
	if r.Rule == "" {
		return r, fmt.Errorf("+cel needs rule=...")
	}
	return r, nil
}

// literal reads a marker's value as JSON when it is valid JSON, and as a string otherwise
// (so +default=abc and +enum=a;b need no quotes); for a string schema, a bare number or
// true stays a string.
func literal(v, typ string) json.RawMessage {
	if typ == "string" && !strings.HasPrefix(v, `"`) {
		b, _ := json.Marshal(v)
		return b
	}
	if json.Valid([]byte(v)) {
		return json.RawMessage(v)
	}
	b, _ := json.Marshal(v)
	return b
}
