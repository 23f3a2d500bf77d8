package apitest

import (
	"net/http"
	"slices"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/negotiation"
	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/meta"
)

// serveNonResource answers discovery, /version and health paths.
func (s *Server) serveNonResource(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeStatus(w, apierr.MethodNotAllowed())
		return
	}
	if s.serveOpenAPIV3(w, r) {
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.URL.Path == "/version" || r.URL.Path == "/version/":
		writeJSON(w, http.StatusOK, s.rel.versionInfo())
	case r.URL.Path == "/healthz" || r.URL.Path == "/livez" || r.URL.Path == "/readyz":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok"))
	case len(parts) == 1 && (parts[0] == "api" || parts[0] == "apis") && s.aggregatedAsked(w, r, parts[0] == "api"):
	case len(parts) == 1 && parts[0] == "api":
		writeJSON(w, http.StatusOK, map[string]any{
			"kind":     "APIVersions",
			"versions": []string{"v1"},
			"serverAddressByClientCIDRs": []map[string]string{
				{"clientCIDR": "0.0.0.0/0", "serverAddress": strings.TrimPrefix(strings.TrimPrefix(s.URL, "https://"), "http://")},
			},
		})
	case len(parts) == 1 && parts[0] == "apis":
		writeJSON(w, http.StatusOK, s.groupList())
	case len(parts) == 2 && parts[0] == "api":
		s.writeResourceList(w, "", parts[1])
	case len(parts) == 2 && parts[0] == "apis":
		for _, g := range s.groupList()["groups"].([]map[string]any) {
			if g["name"] == parts[1] {
				g["kind"] = "APIGroup"
				g["apiVersion"] = "v1"
				writeJSON(w, http.StatusOK, g)
				return
			}
		}
		pageNotFound(w) // as the kube-apiserver for a group nobody serves
	case len(parts) == 3 && parts[0] == "apis":
		s.writeResourceList(w, parts[1], parts[2])
	default:
		st := apierr.NoResource()
		st.Details = nil
		writeStatus(w, st)
	}
}

// aggregatedAsked answers with the aggregated document if the request asks for it.
func (s *Server) aggregatedAsked(w http.ResponseWriter, r *http.Request, core bool) bool {
	v, format, ok := negotiation.Discovery(r.Header.Get("Accept"))
	if ok {
		s.writeAggregated(w, r, core, v, format)
	}
	return ok
}

func (s *Server) groupList() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	versions := map[string][]string{}
	for _, r := range s.order {
		g := r.typ.Group
		if g == "" {
			continue
		}
		if _, ok := versions[g]; !ok {
			names = append(names, g)
		}
		for _, v := range r.versions() {
			if !slices.Contains(versions[g], v) {
				versions[g] = append(versions[g], v)
			}
		}
	}
	groups := []map[string]any{}
	slices.SortStableFunc(names, compareGroups)
	for _, name := range names {
		// As the kube-apiserver: a group's versions by priority (GA, beta, alpha; higher
		// first), the first one preferred.
		vs := versions[name]
		slices.SortStableFunc(vs, compareKubeVersions)
		list := make([]map[string]string, 0, len(vs))
		for _, v := range vs {
			list = append(list, map[string]string{"groupVersion": name + "/" + v, "version": v})
		}
		groups = append(groups, map[string]any{"name": name, "versions": list, "preferredVersion": list[0]})
	}
	return map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
}

func (s *Server) writeResourceList(w http.ResponseWriter, group, version string) {
	s.mu.Lock()
	var list []map[string]any
	for _, r := range s.order {
		t := r.typ
		if t.Group != group || !r.serves(version) {
			continue
		}
		e := map[string]any{
			"name": t.Plural, "singularName": t.Singular, "namespaced": t.Namespaced, "kind": t.Kind,
			"verbs": t.resourceVerbs(),
		}
		if t.storageVersionHash != "" {
			e["storageVersionHash"] = t.storageVersionHash
		}
		if len(t.ShortNames) > 0 {
			e["shortNames"] = t.ShortNames
		}
		if len(t.Categories) > 0 {
			e["categories"] = t.Categories
		}
		list = append(list, e)
		for _, sub := range t.subresources() {
			se := map[string]any{"name": t.Plural + "/" + sub.name, "singularName": "", "namespaced": t.Namespaced,
				"kind": t.Kind, "verbs": sub.verbs}
			if sub.kind != "" {
				se["kind"] = sub.kind
			}
			if sub.group != "" {
				se["group"], se["version"] = sub.group, sub.version
			}
			list = append(list, se)
		}
	}
	s.mu.Unlock()
	if list == nil {
		if group != "" {
			pageNotFound(w) // as the kube-apiserver for a group/version nobody serves
			return
		}
		writeStatus(w, apierr.NoResource())
		return
	}
	gv := meta.GroupVersion{Group: group, Version: version}.String()
	writeJSON(w, http.StatusOK, map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": list})
}

// groupOrder ranks the built-in groups as the kube-apiserver lists them (kubeschema's
// order); other groups (custom resources') come after, by name.
var groupOrder = func() map[string]int {
	rank := map[string]int{}
	for _, r := range kubeschema.Resources() {
		if _, ok := rank[r.Group]; !ok {
			rank[r.Group] = len(rank)
		}
	}
	return rank
}()

// compareGroups orders two API groups as discovery lists them.
func compareGroups(a, b string) int {
	ra, oka := groupOrder[a]
	rb, okb := groupOrder[b]
	switch {
	case oka && okb:
		return ra - rb
	case oka != okb:
		if oka {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}
