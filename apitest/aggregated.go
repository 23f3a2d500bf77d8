package apitest

import (
	"crypto/sha512"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/negotiation"
	"github.com/informerkit/informerkit/internal/kubeproto"
)

// Aggregated discovery: /api and /apis as one APIGroupDiscoveryList each, which client-go
// asks for first (Accept application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,
// then v2beta1, then the legacy documents), in the kube-apiserver's shape: the groups in
// its order, each version's resources with their scope, verbs, names, categories,
// responseKind and subresources, every version Current.

// writeAggregated answers /api (core) or /apis with the aggregated document at version
// in format.
func (s *Server) writeAggregated(w http.ResponseWriter, r *http.Request, core bool, version string, format negotiation.Format) {
	doc := s.aggregated(core, version)
	body := mustJSON(doc)
	ct := "application/json;g=apidiscovery.k8s.io;v=" + version + ";as=APIGroupDiscoveryList"
	if format == negotiation.Protobuf {
		b, err := kubeproto.EncodeObject(mustDecode(body))
		if err != nil {
			writeBody(w, negotiation.Output{}, http.StatusInternalServerError, mustJSON(map[string]any{"kind": "Status", "message": err.Error()}))
			return
		}
		body = b
		ct = negotiation.MediaProtobuf + ";g=apidiscovery.k8s.io;v=" + version + ";as=APIGroupDiscoveryList"
	}
	sum := sha512.Sum512(body)
	etag := `"` + strings.ToUpper(hex.EncodeToString(sum[:])) + `"`
	h := w.Header()
	h.Set("Vary", "Accept")
	h.Set("Cache-Control", "public")
	h.Set("Etag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// aggregated builds the APIGroupDiscoveryList of the core group or of the others.
func (s *Server) aggregated(core bool, version string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	type gv struct{ group, version string }
	byGV := map[gv][]any{}
	var groups []string
	versions := map[string][]string{}
	for _, r := range s.order {
		t := &r.typ
		if (t.Group == "") != core {
			continue
		}
		if _, ok := versions[t.Group]; !ok {
			groups = append(groups, t.Group)
		}
		for _, v := range r.versions() {
			if !slices.Contains(versions[t.Group], v) {
				versions[t.Group] = append(versions[t.Group], v)
			}
			byGV[gv{t.Group, v}] = append(byGV[gv{t.Group, v}], aggregatedResource(r, v))
		}
	}
	slices.SortStableFunc(groups, compareGroups)
	items := []any{}
	for _, g := range groups {
		vs := versions[g]
		slices.SortStableFunc(vs, compareKubeVersions)
		var vlist []any
		for _, v := range vs {
			vlist = append(vlist, map[string]any{"version": v, "resources": byGV[gv{g, v}], "freshness": "Current"})
		}
		md := map[string]any{}
		if g != "" {
			md["name"] = g
		}
		items = append(items, map[string]any{"metadata": md, "versions": vlist})
	}
	return map[string]any{"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/" + version,
		"metadata": map[string]any{}, "items": items}
}

// aggregatedResource is a resource's APIResourceDiscovery at version. The kube-apiserver
// leaves the group and version of a built-in resource's responseKind (and of its
// subresources' of the same group and version) empty, and sets them for custom resources.
func aggregatedResource(r *resource, version string) map[string]any {
	t := &r.typ
	custom := t.custom || r.crd != ""
	kind := func(group, ver, k string) map[string]any {
		if group == "" && ver == "" && custom {
			group, ver = t.Group, version
		}
		return map[string]any{"group": group, "version": ver, "kind": k}
	}
	scope := "Cluster"
	if t.Namespaced {
		scope = "Namespaced"
	}
	e := map[string]any{"resource": t.Plural, "responseKind": kind("", "", t.Kind), "scope": scope,
		"singularResource": t.Singular, "verbs": t.resourceVerbs()}
	if len(t.ShortNames) > 0 {
		e["shortNames"] = t.ShortNames
	}
	if len(t.Categories) > 0 {
		e["categories"] = t.Categories
	}
	var subs []any
	for _, sub := range t.subresources() {
		k := sub.kind
		if k == "" {
			k = t.Kind
		}
		subs = append(subs, map[string]any{"subresource": sub.name, "responseKind": kind(sub.group, sub.version, k), "verbs": sub.verbs})
	}
	if subs != nil {
		e["subresources"] = subs
	}
	return e
}
