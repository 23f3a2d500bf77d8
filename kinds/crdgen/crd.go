package crdgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/types"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// CustomResourceDefinition is an apiextensions.k8s.io/v1 CustomResourceDefinition, with
// the fields crdgen writes, in the order it writes them.
type CustomResourceDefinition struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       CRDSpec  `json:"spec"`
}

// Metadata is the CRD's metadata: its name is <plural>.<group>.
type Metadata struct {
	Name        string            `json:"name"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// CRDSpec is the spec of a CustomResourceDefinition.
type CRDSpec struct {
	Group    string    `json:"group"`
	Names    Names     `json:"names"`
	Scope    string    `json:"scope"`
	Versions []Version `json:"versions"`
}

// Names are the names of the kind and its resource.
type Names struct {
	Kind       string   `json:"kind"`
	ListKind   string   `json:"listKind"`
	Plural     string   `json:"plural"`
	Singular   string   `json:"singular"`
	ShortNames []string `json:"shortNames,omitempty"`
	Categories []string `json:"categories,omitempty"`
}

// Version is one served version of the kind.
type Version struct {
	Name                     string          `json:"name"`
	Served                   bool            `json:"served"`
	Storage                  bool            `json:"storage"`
	Subresources             *Subresources   `json:"subresources,omitempty"`
	AdditionalPrinterColumns []PrinterColumn `json:"additionalPrinterColumns,omitempty"`
	Schema                   VersionSchema   `json:"schema"`
}

// VersionSchema holds a version's schema.
type VersionSchema struct {
	OpenAPIV3Schema *Schema `json:"openAPIV3Schema"`
}

// Subresources are the status and scale subresources.
type Subresources struct {
	Status *struct{} `json:"status,omitempty"`
	Scale  *Scale    `json:"scale,omitempty"`
}

// Scale says where the scale subresource reads and writes replicas.
type Scale struct {
	SpecReplicasPath   string `json:"specReplicasPath"`
	StatusReplicasPath string `json:"statusReplicasPath"`
	LabelSelectorPath  string `json:"labelSelectorPath,omitempty"`
}

// PrinterColumn is a column of kubectl get.
type PrinterColumn struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format,omitempty"`
	Description string `json:"description,omitempty"`
	Priority    int32  `json:"priority,omitempty"`
	JSONPath    string `json:"jsonPath"`
}

// kindVersion is one Go type marked +kind, before versions of one kind are merged.
type kindVersion struct {
	typeName string // package path.Name, for errors
	group    string
	names    Names
	scope    string
	storage  bool
	version  Version
}

// kindOf reads the +kind, +subresource and +printcolumn markers of a type and builds its
// version; ok is false for a type without +kind.
func (w *walker) kindOf(pkg *types.Package, tn *types.TypeName) (kv kindVersion, ok bool, err error) {
	decl, found, err := w.p.decl(pkg.Path(), tn.Name())
	if err != nil || !found {
		return kv, false, err
	}
	desc, ms, warns, err := parseComments(w.p.fset, decl.doc)
	if err != nil {
		return kv, false, err
	}
	if !has(ms, "kind") {
		return kv, false, nil
	}
	w.warnings = append(w.warnings, warns...)
	where := pkg.Path() + "." + tn.Name()
	kv = kindVersion{typeName: where, scope: "Namespaced",
		names:   Names{Kind: tn.Name()},
		version: Version{Served: true}}
	var errs []error
	for _, m := range ms {
		switch m.name {
		case "kind":
			errs = append(errs, kv.kindArgs(m))
		case "subresource:status":
			kv.subresources().Status = &struct{}{}
		case "subresource:scale":
			errs = append(errs, kv.scaleArgs(m))
		case "printcolumn":
			errs = append(errs, kv.printColumn(m))
		}
	}
	if kv.group == "" || kv.version.Name == "" {
		errs = append(errs, fmt.Errorf("%s: +kind needs group= and version=", where))
	}
	n := &kv.names
	if n.Singular == "" {
		n.Singular = strings.ToLower(n.Kind)
	}
	if n.Plural == "" {
		n.Plural = plural(n.Singular)
	}
	if n.ListKind == "" {
		n.ListKind = n.Kind + "List"
	}
	root, err := w.rootSchema(tn)
	if err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", where, err))
	} else {
		errs = append(errs, applyMarkers(root, ms))
	}
	if err := errors.Join(errs...); err != nil {
		return kv, false, err
	}
	root.Description = desc
	kv.version.Schema.OpenAPIV3Schema = root
	return kv, true, nil
}

func (kv *kindVersion) subresources() *Subresources {
	if kv.version.Subresources == nil {
		kv.version.Subresources = &Subresources{}
	}
	return kv.version.Subresources
}

func (kv *kindVersion) kindArgs(m marker) error {
	for _, a := range m.args {
		v := a.value
		switch a.key {
		case "group":
			kv.group = v
		case "version":
			kv.version.Name = v
		case "kind":
			kv.names.Kind = v
		case "plural":
			kv.names.Plural = v
		case "singular":
			kv.names.Singular = v
		case "listKind":
			kv.names.ListKind = v
		case "shortNames":
			kv.names.ShortNames = splitList(v)
		case "categories":
			kv.names.Categories = splitList(v)
		case "scope":
			if v != "Namespaced" && v != "Cluster" {
				return fmt.Errorf("%s: scope is Namespaced or Cluster", m.pos)
			}
			kv.scope = v
		case "storage":
			kv.storage = true
		case "served":
			kv.version.Served = v != "false"
		default:
			return fmt.Errorf("%s: %s: unknown argument %q (group, version, kind, plural, singular, listKind, shortNames, categories, scope, storage, served)", m.pos, m.text, a.key)
		}
		if a.key != "storage" && !a.hasValue {
			return fmt.Errorf("%s: %s: %s needs a value", m.pos, m.text, a.key)
		}
	}
	return nil
}

func (kv *kindVersion) scaleArgs(m marker) error {
	sc := &Scale{}
	for _, a := range m.args {
		switch a.key {
		case "specReplicasPath":
			sc.SpecReplicasPath = a.value
		case "statusReplicasPath":
			sc.StatusReplicasPath = a.value
		case "labelSelectorPath":
			sc.LabelSelectorPath = a.value
		default:
			return fmt.Errorf("%s: %s: unknown argument %q (specReplicasPath, statusReplicasPath, labelSelectorPath)", m.pos, m.text, a.key)
		}
	}
	if sc.SpecReplicasPath == "" || sc.StatusReplicasPath == "" {
		return fmt.Errorf("%s: %s: the scale subresource needs specReplicasPath and statusReplicasPath", m.pos, m.text)
	}
	kv.subresources().Scale = sc
	return nil
}

func (kv *kindVersion) printColumn(m marker) error {
	var c PrinterColumn
	for _, a := range m.args {
		switch a.key {
		case "name":
			c.Name = a.value
		case "type":
			c.Type = a.value
		case "format":
			c.Format = a.value
		case "description":
			c.Description = a.value
		case "jsonPath", "JSONPath":
			c.JSONPath = a.value
		case "priority":
			p, err := strconv.ParseInt(a.value, 10, 32)
			if err != nil {
				return fmt.Errorf("%s: %s: priority is an integer", m.pos, m.text)
			}
			c.Priority = int32(p)
		default:
			return fmt.Errorf("%s: %s: unknown argument %q (name, type, jsonPath, format, description, priority)", m.pos, m.text, a.key)
		}
	}
	if c.Name == "" || c.Type == "" || c.JSONPath == "" {
		return fmt.Errorf("%s: %s: a printer column needs name, type and jsonPath", m.pos, m.text)
	}
	if !slices.Contains([]string{"integer", "number", "string", "boolean", "date"}, c.Type) {
		return fmt.Errorf("%s: %s: type is integer, number, string, boolean or date", m.pos, m.text)
	}
	kv.version.AdditionalPrinterColumns = append(kv.version.AdditionalPrinterColumns, c)
	return nil
}

// rootSchema walks the kind's struct: apiVersion, kind and metadata are never required,
// and metadata must be there.
func (w *walker) rootSchema(tn *types.TypeName) (*Schema, error) {
	named, ok := tn.Type().(*types.Named)
	if !ok || !isStruct(named) {
		return nil, errors.New("a kind is a struct type")
	}
	decl, _, err := w.p.decl(tn.Pkg().Path(), tn.Name())
	if err != nil {
		return nil, err
	}
	w.stack = append(w.stack[:0], tn.Pkg().Path()+"."+tn.Name())
	defer func() { w.stack = w.stack[:0] }()
	st, _ := decl.spec.Type.(*ast.StructType)
	s, err := w.structSchema(named.Underlying().(*types.Struct), st)
	if err != nil {
		return nil, err
	}
	if s.Properties["metadata"] == nil {
		return nil, errors.New(`a kind has metadata: embed meta.ObjectMeta with the tag json:"metadata"`)
	}
	s.Required = slices.DeleteFunc(s.Required, func(n string) bool {
		return n == "apiVersion" || n == "kind" || n == "metadata"
	})
	if len(s.Required) == 0 {
		s.Required = nil
	}
	return s, nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ";") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// plural is the English plural of a lower-case singular, by the common rules (override
// with +kind:plural=...).
func plural(s string) string {
	switch {
	case strings.HasSuffix(s, "s"), strings.HasSuffix(s, "x"), strings.HasSuffix(s, "z"),
		strings.HasSuffix(s, "ch"), strings.HasSuffix(s, "sh"):
		return s + "es"
	case strings.HasSuffix(s, "y") && len(s) > 1 && !strings.ContainsRune("aeiou", rune(s[len(s)-2])):
		return s[:len(s)-1] + "ies"
	}
	return s + "s"
}

// YAML returns crd as a YAML document, keys in the order of the Go types (and schema
// properties sorted by name), as kubectl apply -f reads it.
func (crd *CustomResourceDefinition) YAML() ([]byte, error) {
	j, err := json.Marshal(crd)
	if err != nil {
		return nil, err
	}
	n, err := jsonToNode(j)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// jsonToNode converts JSON to a YAML node tree keeping the order of object keys.
func jsonToNode(j []byte) (*yaml.Node, error) {
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var read func() (*yaml.Node, error)
	read = func() (*yaml.Node, error) {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case json.Delim:
			n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			end := json.Delim('}')
			if t == '[' {
				n = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
				end = ']'
			}
			for dec.More() {
				if n.Kind == yaml.MappingNode {
					k, err := dec.Token()
					if err != nil {
						return nil, err
					}
					n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k.(string)})
				}
				v, err := read()
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, v)
			}
			if tok, err := dec.Token(); err != nil || tok != end {
				return nil, fmt.Errorf("crdgen: unbalanced JSON")
			}
			if len(n.Content) == 0 {
				n.Style = yaml.FlowStyle
			}
			return n, nil
		case string:
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t}, nil
		case json.Number:
			tag := "!!int"
			if strings.ContainsAny(t.String(), ".eE") {
				tag = "!!float"
			}
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: t.String()}, nil
		case bool:
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(t)}, nil
		case nil:
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
		}
		return nil, fmt.Errorf("crdgen: unexpected JSON token %v", tok)
	}
	return read()
}
