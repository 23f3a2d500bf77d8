package apitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"
)

// AddCRD installs the CustomResourceDefinitions of a manifest (YAML or JSON, one or more
// documents, as cmd/crdgen writes them and kubectl apply -f reads them), as AddResource
// does: each CRD's storage version is served with its names, short names, categories,
// scope, status subresource and openAPIV3Schema. Documents of other kinds are skipped.
// apitest serves one version per resource: a CRD's other versions are not served.
func (s *Server) AddCRD(manifest []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(manifest))
	var errs []error
	found := 0
	for {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("apitest: AddCRD: %w", err)
		}
		var crd crdManifest
		if err := reencode(doc, &crd); err != nil {
			return fmt.Errorf("apitest: AddCRD: %w", err)
		}
		if crd.Kind != "CustomResourceDefinition" {
			continue
		}
		found++
		t, err := crd.resourceType()
		if err == nil {
			err = s.AddResource(t)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("apitest: AddCRD %s: %w", crd.Metadata.Name, err))
		}
	}
	if found == 0 && len(errs) == 0 {
		return errors.New("apitest: AddCRD: the manifest holds no CustomResourceDefinition")
	}
	return errors.Join(errs...)
}

// crdManifest is the part of a CustomResourceDefinition AddCRD reads.
type crdManifest struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Group string `json:"group"`
		Scope string `json:"scope"`
		Names struct {
			Kind       string   `json:"kind"`
			Plural     string   `json:"plural"`
			Singular   string   `json:"singular"`
			ShortNames []string `json:"shortNames"`
			Categories []string `json:"categories"`
		} `json:"names"`
		Versions []struct {
			Name         string `json:"name"`
			Served       bool   `json:"served"`
			Storage      bool   `json:"storage"`
			Subresources struct {
				Status *struct{} `json:"status"`
			} `json:"subresources"`
			Schema struct {
				OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

func (c *crdManifest) resourceType() (ResourceType, error) {
	sp := c.Spec
	if want := sp.Names.Plural + "." + sp.Group; c.Metadata.Name != want {
		return ResourceType{}, fmt.Errorf("metadata.name must be %q (plural.group), as the kube-apiserver requires", want)
	}
	for _, v := range sp.Versions {
		if !v.Storage {
			continue
		}
		if !v.Served {
			return ResourceType{}, fmt.Errorf("the storage version %s is not served", v.Name)
		}
		return ResourceType{Group: sp.Group, Version: v.Name, Kind: sp.Names.Kind, Plural: sp.Names.Plural,
			Singular: sp.Names.Singular, ShortNames: sp.Names.ShortNames, Categories: sp.Names.Categories,
			Namespaced: sp.Scope != "Cluster", StatusSubresource: v.Subresources.Status != nil,
			OpenAPIV3Schema: v.Schema.OpenAPIV3Schema}, nil
	}
	return ResourceType{}, errors.New("no storage version")
}

// reencode turns a decoded YAML document into out through JSON, so that numbers in the
// schema are what a JSON decoder makes of them.
func reencode(doc any, out any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
