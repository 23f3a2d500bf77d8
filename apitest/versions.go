package apitest

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/admission"
	"github.com/informerkit/informerkit/meta"
)

// The versions a resource is served at: one for most, every served version of its
// CustomResourceDefinition for a custom resource (crdserve.go) and the versions of a
// built-in resource served at several (autoscaling's horizontalpodautoscalers), from one
// storage.

// serves reports whether a request may name version for r.
func (r *resource) serves(version string) bool {
	if r.served == nil {
		return r.typ.Version == version
	}
	return slices.Contains(r.served, version)
}

// versions returns the versions r is served at.
func (r *resource) versions() []string {
	if r.served == nil {
		return []string{r.typ.Version}
	}
	return r.served
}

// atVersion returns the stored JSON of a resource served at several versions as served at
// version: with its apiVersion rewritten when it is not version's (conversion strategy
// None, as for every CRD apitest serves; built-in kinds are not converted either, a
// documented difference). raw is returned as is when it already is.
func atVersion(r *resource, version string, raw []byte) []byte {
	if len(r.served) < 2 || version == "" {
		return raw
	}
	gv := r.typ.Group + "/" + version
	if bytes.HasPrefix(raw, []byte(`{"apiVersion":"`+gv+`"`)) {
		return raw // json.Marshal sorts the keys: apiVersion comes first
	}
	m := mustDecode(raw)
	if gvk := r.typ.gvk(); r.builtin() && admission.Converts(gvk) {
		m = admission.Convert(gvk, m, version)
		m = admission.Normalize(meta.GroupVersionKind{Group: gvk.Group, Version: version, Kind: gvk.Kind}, m)
	}
	m["apiVersion"] = gv
	b, _ := json.Marshal(m)
	return b
}

// writtenAt turns the body of a write at version into the storage version's: a built-in
// kind with a conversion is decoded and defaulted at version (unknown fields as the
// request's fieldValidation says), then converted; other kinds get their apiVersion
// rewritten (toStorageVersion).
func writtenAt(r *resource, version string, obj map[string]any, wo writeOptions) (map[string]any, *meta.Status) {
	gvk := r.typ.gvk()
	if len(r.served) < 2 || version == "" || version == gvk.Version || !r.builtin() || !admission.Converts(gvk) ||
		obj["apiVersion"] != r.typ.Group+"/"+version {
		toStorageVersion(r, version, obj)
		return obj, nil
	}
	at := meta.GroupVersionKind{Group: gvk.Group, Version: version, Kind: gvk.Kind}
	decoded, warnings, st := admission.Decode(at, obj, wo.fieldValidation)
	if st != nil {
		return nil, st
	}
	wo.warn(warnings)
	return admission.Convert(at, decoded, gvk.Version), nil
}

// toStorageVersion turns the apiVersion of an object written at version into the storage
// version's, if it names version.
func toStorageVersion(r *resource, version string, obj map[string]any) {
	if len(r.served) > 1 && version != r.typ.Version && obj["apiVersion"] == r.typ.Group+"/"+version {
		obj["apiVersion"] = r.typ.GroupVersion().String()
	}
}

// compareKubeVersions orders versions as the kube-apiserver's discovery does: GA before
// beta before alpha, higher major and minor first, then other names alphabetically.
func compareKubeVersions(a, b string) int {
	ka, kb := kubeVersionKey(a), kubeVersionKey(b)
	if ka.kind != kb.kind {
		return ka.kind - kb.kind
	}
	if ka.kind == 3 {
		return strings.Compare(a, b)
	}
	if ka.major != kb.major {
		return kb.major - ka.major
	}
	return kb.minor - ka.minor
}

type versionKey struct{ kind, major, minor int } // kind: 0 GA, 1 beta, 2 alpha, 3 other

func kubeVersionKey(v string) versionKey {
	rest, ok := strings.CutPrefix(v, "v")
	if !ok {
		return versionKey{kind: 3}
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	major, err := strconv.Atoi(rest[:i])
	if err != nil || major == 0 {
		return versionKey{kind: 3}
	}
	rest = rest[i:]
	for kind, prefix := range []string{"", "beta", "alpha"} {
		if kind == 0 {
			if rest == "" {
				return versionKey{kind: 0, major: major}
			}
			continue
		}
		if n, ok := strings.CutPrefix(rest, prefix); ok {
			minor, err := strconv.Atoi(n)
			if err == nil && minor > 0 {
				return versionKey{kind: kind, major: major, minor: minor}
			}
		}
	}
	return versionKey{kind: 3}
}

// convertsAt reports whether objects of r read at version are converted from the storage
// version (a built-in kind served at several versions), so that the stored JSON and
// protobuf cannot be written as they are.
func (r *resource) convertsAt(version string) bool {
	return len(r.served) > 1 && version != "" && version != r.typ.Version && r.builtin() && admission.Converts(r.typ.gvk())
}

// itemAt is a list item of a converted resource at version: its JSON without apiVersion
// and kind.
func itemAt(r *resource, version string, o *storedObj) map[string]any {
	m := mustDecode(atVersion(r, version, o.raw))
	delete(m, "apiVersion")
	delete(m, "kind")
	return m
}
