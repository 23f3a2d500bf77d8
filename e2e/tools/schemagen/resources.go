package main

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The resource table: every resource of the recording, as its discovery lists it, with
// what apitest needs to serve it that discovery does not say, derived from the recording's
// probes and from the kube-apiserver's schemes.

// Resource is one resource of the table (kubeschema.Resource).
type Resource struct {
	Group              string            `json:"group,omitempty"`
	Version            string            `json:"version"`
	Resource           string            `json:"resource"`
	Kind               string            `json:"kind"`
	Namespaced         bool              `json:"namespaced,omitempty"`
	Singular           string            `json:"singular"`
	Verbs              []string          `json:"verbs"`
	ShortNames         []string          `json:"shortNames,omitempty"`
	Categories         []string          `json:"categories,omitempty"`
	StorageVersionHash string            `json:"storageVersionHash,omitempty"`
	Subresources       []Subresource     `json:"subresources,omitempty"`
	Generation         bool              `json:"generation,omitempty"`
	CreateOnUpdate     bool              `json:"createOnUpdate,omitempty"`
	Names              string            `json:"names,omitempty"`
	FieldLabels        []string          `json:"fieldLabels,omitempty"`
	FieldLabelPaths    map[string]string `json:"fieldLabelPaths,omitempty"`
	FieldLabelError    string            `json:"fieldLabelError,omitempty"`
	Columns            []servedColumn    `json:"columns,omitempty"`
}

// Subresource is one subresource of a Resource.
type Subresource = servedSubresource

// nameRules maps the statuses of the probe's creates by the names "n.a", "1n", "n:a" and
// "n" to the rule the resource's names follow.
var nameRules = map[[4]int]string{
	{201, 201, 201, 201}: "path-segment",
	{201, 201, 422, 201}: "dns-subdomain",
	{422, 201, 422, 201}: "dns-label",
	{422, 422, 422, 201}: "dns-1035-label",
}

// resources builds the table's resources from the recording.
func (g *gen) resources() ([]Resource, error) {
	var out []Resource
	for _, sr := range g.served.Resources {
		r := Resource{Group: sr.Group, Version: sr.Version, Resource: sr.Resource, Kind: sr.Kind, Namespaced: sr.Namespaced,
			Singular: sr.Singular, Verbs: sr.Verbs, ShortNames: sr.ShortNames, Categories: sr.Categories,
			StorageVersionHash: sr.StorageVersionHash, Subresources: sr.Subresources, Columns: sr.Columns}
		if p := sr.Probe; p != nil {
			r.Generation = p.Generation
			switch p.CreateOnUpdate {
			case http.StatusCreated, http.StatusOK:
				r.CreateOnUpdate = true
			case http.StatusNotFound:
			default:
				return nil, fmt.Errorf("%s: the update of a missing object answered %d", sr.Resource, p.CreateOnUpdate)
			}
			r.Names = nameRules[p.Names] // "": a rule of its own (IP addresses, group-qualified names)
		}
		if !jsonOnlyGroups[r.Group] {
			var err error
			if err = g.fieldLabels(&r); err != nil {
				return nil, err
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// extraFieldLabels are field selectors that are not JSON paths of their kind, with the
// path each selects (the registry's GetAttrs), or "" where the kind's field label
// conversion names it.
var extraFieldLabels = map[string]string{
	"spec.host":         "", // pods: converted to spec.nodeName
	"status.successful": "status.succeeded",
}

// fieldLabels finds the field selectors a kind takes beyond metadata.name and
// metadata.namespace by asking the kube-apiserver's scheme to convert every field path of
// the kind (up to four levels; lists and maps as a whole) and extraFieldLabels, and the
// words of the error for a label it does not take when the kind has a conversion of its
// own ("{label}" stands for the label; empty: the generic "not a known field selector").
func (g *gen) fieldLabels(r *Resource) error {
	gvk := schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
	_, sch, err := newObject(gvk)
	if err != nil {
		return err
	}
	const unknown = "no.such.field"
	if _, _, uerr := sch.ConvertFieldLabel(gvk, unknown, ""); uerr != nil && !strings.Contains(uerr.Error(), "is not a known field selector") {
		r.FieldLabelError = strings.ReplaceAll(uerr.Error(), unknown, "{label}")
	}
	t := g.types[g.kindType(gvk)]
	if t == nil {
		return nil
	}
	var paths []string
	var walk func(t *Type, prefix string, depth int)
	walk = func(t *Type, prefix string, depth int) {
		for _, f := range t.Fields {
			if f.Inline {
				walk(g.types[f.Type], prefix, depth)
				continue
			}
			if f.NoJSON {
				continue
			}
			p := prefix + f.Name
			if p == "metadata.name" || p == "metadata.namespace" {
				continue
			}
			paths = append(paths, p)
			if f.Kind == "message" && !f.Repeated && f.MapKey == "" && depth < 4 {
				if ft := g.types[f.Type]; ft != nil && ft.JSON == "" {
					walk(ft, p+".", depth+1)
				}
			}
		}
	}
	walk(t, "", 1)
	isPath := map[string]bool{}
	for _, p := range paths {
		isPath[p] = true
	}
	for l := range extraFieldLabels {
		if !isPath[l] {
			paths = append(paths, l)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		label, _, err := sch.ConvertFieldLabel(gvk, p, "x")
		if err != nil {
			continue
		}
		r.FieldLabels = append(r.FieldLabels, p)
		// The conversion may rename a label to another of the kind's paths (spec.host is
		// spec.nodeName); other names it gives are the internal type's, not this version's.
		path := p
		if isPath[label] {
			path = label
		}
		if alias := extraFieldLabels[p]; alias != "" {
			path = alias
		}
		if path != p {
			if r.FieldLabelPaths == nil {
				r.FieldLabelPaths = map[string]string{}
			}
			r.FieldLabelPaths[p] = path
		}
	}
	return nil
}

// kindType is the table's type name of a kind ("" if the table lacks it).
func (g *gen) kindType(gvk schema.GroupVersionKind) string {
	for _, k := range g.kinds {
		if k.Group == gvk.Group && k.Version == gvk.Version && k.Kind == gvk.Kind {
			return k.Type
		}
	}
	return ""
}
