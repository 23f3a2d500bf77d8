package apitest

import (
	"net/http"
	"strings"
)

// serveOpenAPIV3 serves a minimal OpenAPI v3 index and, per group version, a document that
// declares each resource's PATCH operation with its fieldValidation parameter. That is
// what kubectl reads to learn that the server validates fields itself, so kubectl create
// and replace work without --validate=false. No schemas are served: clients that validate
// against OpenAPI schemas (kubectl apply's client-side merge) do not work.
func (s *Server) serveOpenAPIV3(w http.ResponseWriter, r *http.Request) bool {
	p := strings.TrimPrefix(r.URL.Path, "/openapi/v3")
	if p == r.URL.Path {
		return false
	}
	p = strings.Trim(p, "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	if p == "" {
		paths := map[string]any{}
		for _, res := range s.order {
			gvp := gvPath(res.typ)
			paths[gvp] = map[string]string{"serverRelativeURL": "/openapi/v3/" + gvp + "?hash=apitest"}
		}
		writeJSON(w, http.StatusOK, map[string]any{"paths": paths})
		return true
	}
	paths := map[string]any{}
	for _, res := range s.order {
		t := res.typ
		if gvPath(t) != p {
			continue
		}
		prefix := "/" + p + "/"
		if t.Namespaced {
			prefix += "namespaces/{namespace}/"
		}
		gvk := map[string]string{"group": t.Group, "version": t.Version, "kind": t.Kind}
		params := []map[string]any{
			{"name": "fieldValidation", "in": "query", "schema": map[string]string{"type": "string"}},
			{"name": "dryRun", "in": "query", "schema": map[string]string{"type": "string"}},
			{"name": "fieldManager", "in": "query", "schema": map[string]string{"type": "string"}},
		}
		op := func(action string) map[string]any {
			return map[string]any{"x-kubernetes-group-version-kind": gvk, "x-kubernetes-action": action, "parameters": params,
				"responses": map[string]any{"200": map[string]string{"description": "OK"}}}
		}
		paths[prefix+t.Plural+"/{name}"] = map[string]any{"patch": op("patch"), "put": op("put"), "get": op("get"), "delete": op("delete")}
		paths[prefix+t.Plural] = map[string]any{"post": op("post"), "get": op("list")}
	}
	if len(paths) == 0 {
		writeStatus(w, errNoResource())
		return true
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"openapi":    "3.0.0",
		"info":       map[string]string{"title": "Kubernetes (apitest)", "version": version["gitVersion"]},
		"paths":      paths,
		"components": map[string]any{"schemas": map[string]any{}},
	})
	return true
}

func gvPath(t ResourceType) string {
	if t.Group == "" {
		return "api/" + t.Version
	}
	return "apis/" + t.Group + "/" + t.Version
}
