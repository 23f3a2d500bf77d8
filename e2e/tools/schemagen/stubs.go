package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"
	etcddata "k8s.io/kubernetes/test/integration/etcd"
)

// The stubs: one valid object of every resource the kube-apiserver stores, from the data
// of its own etcd storage test (k8s.io/kubernetes/test/integration/etcd), with the objects
// each needs created first. e2e records what the real server makes of them
// (testdata/kube-apiserver/served.json) and apitest's tests create them too.

// stubNamespace is the namespace the namespaced stubs are created in.
const stubNamespace = "kube-stubs"

// Stub is one resource's object.
type Stub struct {
	Group    string `json:"group,omitempty"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
	// Object is the JSON to create (without apiVersion and kind).
	Object json.RawMessage `json:"object"`
	// Prerequisites are created first, in order.
	Prerequisites []Stub `json:"prerequisites,omitempty"`
}

// Stubs is the file's content.
type Stubs struct {
	Source    string `json:"source"`
	Namespace string `json:"namespace"`
	Stubs     []Stub `json:"stubs"`
}

func compactJSON(s string) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func newStub(gvr schema.GroupVersionResource, obj string) (Stub, error) {
	b, err := compactJSON(obj)
	if err != nil {
		return Stub{}, fmt.Errorf("stub of %s: %w", gvr, err)
	}
	return Stub{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource, Object: b}, nil
}

// stubs returns the stubs of the built-in resources (the test's custom resources left out),
// sorted by group, version and resource, one per line.
func (g *gen) stubs() ([]byte, error) {
	data := etcddata.GetEtcdStorageDataForNamespace(stubNamespace)
	crds := map[string]bool{}
	for _, crd := range etcddata.GetCustomResourceDefinitionData() {
		crds[crd.Spec.Group] = true
	}
	out := Stubs{Source: g.versions, Namespace: stubNamespace}
	for gvr, d := range data {
		if crds[gvr.Group] {
			continue
		}
		s, err := newStub(gvr, d.Stub)
		if err != nil {
			return nil, err
		}
		for _, p := range d.Prerequisites {
			ps, err := newStub(p.GvrData, p.Stub)
			if err != nil {
				return nil, err
			}
			s.Prerequisites = append(s.Prerequisites, ps)
		}
		out.Stubs = append(out.Stubs, s)
	}
	sort.Slice(out.Stubs, func(i, j int) bool {
		a, b := out.Stubs[i], out.Stubs[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Resource < b.Resource
	})
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "{\n\"source\": %q,\n\"namespace\": %q,\n\"stubs\": [\n", out.Source, out.Namespace)
	for i, s := range out.Stubs {
		b, err := json.Marshal(s)
		if err != nil {
			return nil, err
		}
		buf.Write(b)
		if i < len(out.Stubs)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("]}\n")
	return buf.Bytes(), nil
}
