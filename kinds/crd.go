package kinds

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// crdDoc is the part of a CustomResourceDefinition an Info comes from.
type crdDoc struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Spec       struct {
		Group string `yaml:"group"`
		Scope string `yaml:"scope"`
		Names struct {
			Kind   string `yaml:"kind"`
			Plural string `yaml:"plural"`
		} `yaml:"names"`
		Versions []struct {
			Name         string `yaml:"name"`
			Storage      bool   `yaml:"storage"`
			Subresources struct {
				Status *struct{} `yaml:"status"`
			} `yaml:"subresources"`
		} `yaml:"versions"`
	} `yaml:"spec"`
}

// FromCRD returns the Info of kind from a CustomResourceDefinition manifest (YAML or JSON,
// one or more documents, as cmd/crdgen writes them): its group, plural, scope and status
// subresource, at the CRD's storage version. With the manifest embedded next to the type,
// the kind's facts are written once, in the type's markers:
//
//	//go:embed crd.yaml
//	var crdYAML []byte
//	var WidgetKind = kinds.MustRegister[*Widget](kinds.MustFromCRD(crdYAML, "Widget"))
func FromCRD(manifest []byte, kind string) (Info, error) {
	dec := yaml.NewDecoder(bytes.NewReader(manifest))
	var kinds []string
	for {
		var d crdDoc
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return Info{}, fmt.Errorf("kinds: reading a CustomResourceDefinition manifest: %w", err)
		}
		if d.Kind != "CustomResourceDefinition" {
			continue
		}
		kinds = append(kinds, d.Spec.Names.Kind)
		if d.Spec.Names.Kind != kind {
			continue
		}
		info := Info{Group: d.Spec.Group, Kind: kind, Resource: d.Spec.Names.Plural, Namespaced: d.Spec.Scope != "Cluster"}
		for _, v := range d.Spec.Versions {
			if v.Storage || len(d.Spec.Versions) == 1 {
				info.Version, info.StatusSubresource = v.Name, v.Subresources.Status != nil
			}
		}
		if err := info.Validate(); err != nil {
			return Info{}, fmt.Errorf("kinds: CustomResourceDefinition of %s: %w", kind, err)
		}
		return info, nil
	}
	return Info{}, fmt.Errorf("kinds: the manifest has no CustomResourceDefinition of kind %q (it has: %s)", kind, strings.Join(kinds, ", "))
}

// MustFromCRD is FromCRD for package-level variables: it panics if the manifest has no
// valid CustomResourceDefinition of kind, a programming error caught at start.
func MustFromCRD(manifest []byte, kind string) Info {
	info, err := FromCRD(manifest, kind)
	if err != nil {
		panic(err)
	}
	return info
}
