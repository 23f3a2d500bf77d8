package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	aggregatorscheme "k8s.io/kube-aggregator/pkg/apiserver/scheme"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	// Every API group of the kube-apiserver, installed into legacyscheme.
	_ "k8s.io/kubernetes/pkg/controlplane"
)

// The roots of the table are not a list typed here: they are the kinds of every resource
// and subresource the real kube-apiserver serves, read from its recording
// (testdata/kube-apiserver/served.json, written by e2e's TestKubeAPIServerRecording), so
// that a new release's kinds come with its recording. Go types come from the server's own
// schemes.

// servedFile is the part of served.json schemagen reads (the whole is kuberecord.Served in
// the root module).
type servedFile struct {
	Source    string           `json:"source"`
	Resources []servedResource `json:"resources"`
}

type servedResource struct {
	Group              string              `json:"group"`
	Version            string              `json:"version"`
	Resource           string              `json:"resource"`
	Kind               string              `json:"kind"`
	Namespaced         bool                `json:"namespaced"`
	Singular           string              `json:"singular"`
	Verbs              []string            `json:"verbs"`
	ShortNames         []string            `json:"shortNames"`
	Categories         []string            `json:"categories"`
	StorageVersionHash string              `json:"storageVersionHash"`
	Subresources       []servedSubresource `json:"subresources"`
	Columns            []servedColumn      `json:"columns"`
	Probe              *servedProbe        `json:"probe"`
	Problems           []string            `json:"problems"`
}

type servedSubresource struct {
	Name    string   `json:"name"`
	Group   string   `json:"group"`
	Version string   `json:"version"`
	Kind    string   `json:"kind"`
	Verbs   []string `json:"verbs"`
}

type servedColumn struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format,omitempty"`
	Priority    int    `json:"priority,omitempty"`
	Description string `json:"description,omitempty"`
}

type servedProbe struct {
	Generation     bool   `json:"generation"`
	CreateOnUpdate int    `json:"createOnUpdate"`
	Names          [4]int `json:"names"`
}

func readServed(path string) (*servedFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w (e2e's TestKubeAPIServerRecording with INFORMERKIT_UPDATE_RECORDING=1 records it)", err)
	}
	var s servedFile
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(s.Resources) == 0 {
		return nil, fmt.Errorf("%s: no resources", path)
	}
	for _, r := range s.Resources {
		if len(r.Problems) > 0 {
			return nil, fmt.Errorf("%s: %s/%s %s: the recording has problems: %v", path, r.Group, r.Version, r.Resource, r.Problems)
		}
	}
	return &s, nil
}

// jsonOnlyGroups are served groups whose kinds the table leaves out: apitest serves
// CustomResourceDefinitions in JSON from code of its own (their schemas' JSON is not the
// shape of their Go types).
var jsonOnlyGroups = map[string]bool{"apiextensions.k8s.io": true}

// schemes are the kube-apiserver's schemes: every built-in group, and the aggregator's.
var schemes = []*runtime.Scheme{legacyscheme.Scheme, aggregatorscheme.Scheme}

// newObject returns a new versioned object of the kind and the scheme that knows it.
func newObject(gvk schema.GroupVersionKind) (runtime.Object, *runtime.Scheme, error) {
	for _, s := range schemes {
		if s.Recognizes(gvk) {
			o, err := s.New(gvk)
			return o, s, err
		}
	}
	return nil, nil, fmt.Errorf("no scheme of the kube-apiserver has the kind %s", gvk)
}

// hasObjectMeta reports whether the Go struct embeds metav1.ObjectMeta: an object, not a
// subresource's options (PodExecOptions) or a review without metadata.
func hasObjectMeta(t reflect.Type) bool {
	f, ok := t.FieldByName("ObjectMeta")
	return ok && f.Type == reflect.TypeOf(metav1.ObjectMeta{})
}

// servedRoots returns the roots of every kind the recording's resources and subresources
// take, in the recording's order, each once.
func servedRoots(s *servedFile) ([]root, error) {
	var out []root
	seen := map[schema.GroupVersionKind]bool{}
	add := func(gvk schema.GroupVersionKind, list bool) error {
		if seen[gvk] || jsonOnlyGroups[gvk.Group] {
			return nil
		}
		seen[gvk] = true
		obj, sch, err := newObject(gvk)
		if err != nil {
			return err
		}
		rt := reflect.TypeOf(obj).Elem()
		if !hasObjectMeta(rt) {
			return nil
		}
		r := root{group: gvk.Group, version: gvk.Version, kind: gvk.Kind, obj: reflect.New(rt).Elem().Interface(), defaults: true, scheme: sch}
		if lgvk := gvk.GroupVersion().WithKind(gvk.Kind + "List"); list && sch.Recognizes(lgvk) {
			l, err := sch.New(lgvk)
			if err != nil {
				return err
			}
			r.list = reflect.New(reflect.TypeOf(l).Elem()).Elem().Interface()
		}
		out = append(out, r)
		return nil
	}
	for _, r := range s.Resources {
		gv := schema.GroupVersion{Group: r.Group, Version: r.Version}
		if err := add(gv.WithKind(r.Kind), true); err != nil {
			return nil, fmt.Errorf("%s %s: %w", gv, r.Resource, err)
		}
	}
	// Subresource kinds after the resources' (autoscaling/v1 Scale, policy/v1 Eviction...).
	for _, r := range s.Resources {
		for _, sub := range r.Subresources {
			gv := schema.GroupVersion{Group: r.Group, Version: r.Version}
			if sub.Group != "" || sub.Version != "" {
				gv = schema.GroupVersion{Group: sub.Group, Version: sub.Version}
			}
			if err := add(gv.WithKind(sub.Kind), false); err != nil {
				return nil, fmt.Errorf("%s %s/%s: %w", gv, r.Resource, sub.Name, err)
			}
		}
	}
	return out, nil
}
