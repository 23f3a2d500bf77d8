package apitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"
)

// ErrNoCRD is AddCRD's error for a manifest that holds no CustomResourceDefinition.
var ErrNoCRD = errors.New("apitest: AddCRD: the manifest holds no CustomResourceDefinition")

// AddCRD installs the CustomResourceDefinitions of a manifest (YAML or JSON, one or more
// documents, as cmd/crdgen writes them and kubectl apply -f reads them), as a client's
// create would: each becomes a CustomResourceDefinition object, established before AddCRD
// returns, whose served versions are served with its names, short names, categories, scope,
// status subresource and openAPIV3Schema (see docs/apitest.md, "CustomResourceDefinitions").
// Documents of other kinds are skipped.
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
		if _, err := crd.resourceType(); err != nil {
			errs = append(errs, fmt.Errorf("apitest: AddCRD %s: %w", crd.Metadata.Name, err))
			continue
		}
		var obj map[string]any
		if err := reencode(doc, &obj); err != nil {
			return fmt.Errorf("apitest: AddCRD: %w", err)
		}
		if err := s.installCRD(crd.Metadata.Name, obj); err != nil {
			errs = append(errs, fmt.Errorf("apitest: AddCRD %s: %w", crd.Metadata.Name, err))
		}
	}
	if found == 0 && len(errs) == 0 {
		return ErrNoCRD
	}
	return errors.Join(errs...)
}

// installCRD creates the CustomResourceDefinition obj and checks that it was established.
func (s *Server) installCRD(name string, obj map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.crdRes.objects[name]; ok {
		return fmt.Errorf("resource %s is already registered", name)
	}
	if _, st := s.createLocked(s.crdRes, "", obj, goWrite()); st != nil {
		return st
	}
	c, err := decodeCRD(s.crdRes.objects[name].raw)
	if err != nil {
		return err
	}
	if st, _ := c.condition("Established"); st != "True" {
		for _, x := range c.Status.Conditions {
			if x.Type == "NamesAccepted" && x.Status != "True" {
				return fmt.Errorf("names not accepted (%s): the group serves them already", x.Reason)
			}
		}
		return errors.New("not established")
	}
	return nil
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
		Versions []crdVersion `json:"versions"`
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
