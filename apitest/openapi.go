package apitest

import (
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/internal/kubeschema/descriptions"
)

// OpenAPI v3 (/openapi/v3 and one document per group version), built from kubeschema's
// table: the schemas of the served built-in kinds with their descriptions, list and map
// types and patch strategies (what kubectl explain prints and kubectl apply reads), and
// each resource's operations with the fieldValidation parameter (what tells kubectl that
// the server validates fields itself). Custom resources get an open schema.

const (
	apiVersionDoc = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
	kindDoc       = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)

func (s *Server) serveOpenAPIV3(w http.ResponseWriter, r *http.Request) bool {
	p := strings.TrimPrefix(r.URL.Path, "/openapi/v3")
	if p == r.URL.Path {
		return false
	}
	p = strings.Trim(p, "/")
	docs := s.openAPIDocs()
	if p == "" {
		paths := map[string]any{}
		for gvp, d := range docs {
			paths[gvp] = map[string]string{"serverRelativeURL": "/openapi/v3/" + gvp + "?hash=" + d.hash}
		}
		writeJSON(w, http.StatusOK, map[string]any{"paths": paths})
		return true
	}
	d, ok := docs[p]
	if !ok {
		writeStatus(w, apierr.NoResource())
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Etag", `"`+d.hash+`"`)
	w.WriteHeader(http.StatusOK)
	w.Write(d.body)
	return true
}

type openAPIDoc struct {
	body []byte
	hash string
}

// openAPIDocs returns the document of every served group version ("api/v1",
// "apis/apps/v1"), rebuilt when the set of resources changed.
func (s *Server) openAPIDocs() map[string]openAPIDoc {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.openapi != nil && s.openapiFor == len(s.order) {
		return s.openapi
	}
	byGV := map[string][]ResourceType{}
	for _, r := range s.order {
		byGV[gvPath(r.typ)] = append(byGV[gvPath(r.typ)], r.typ)
	}
	docs := map[string]openAPIDoc{}
	for gvp, types := range byGV {
		b, _ := json.Marshal(openAPIDocument(gvp, types, s.rel.git+"-apitest"))
		sum := sha512.Sum512(b)
		docs[gvp] = openAPIDoc{body: b, hash: strings.ToUpper(hex.EncodeToString(sum[:]))}
	}
	s.openapi, s.openapiFor = docs, len(s.order)
	return docs
}

func openAPIDocument(gvp string, types []ResourceType, gitVersion string) map[string]any {
	schemas := map[string]any{}
	paths := map[string]any{}
	for _, t := range types {
		gvk := []map[string]string{{"group": t.Group, "version": t.Version, "kind": t.Kind}}
		k, builtin := kubeschema.ForKind(t.Group, t.Version, t.Kind)
		var ref string
		if builtin && !t.custom {
			addSchemas(schemas, k.Type)
			ref = k.Type.Name
			schemas[ref].(map[string]any)["x-kubernetes-group-version-kind"] = gvk
			if k.List != nil {
				addSchemas(schemas, k.List)
				schemas[k.List.Name].(map[string]any)["x-kubernetes-group-version-kind"] = []map[string]string{{"group": t.Group, "version": t.Version, "kind": t.Kind + "List"}}
			}
		} else {
			ref = customSchemaName(t)
			sc := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
			if t.OpenAPIV3Schema != nil {
				// The registered schema, as the kube-apiserver publishes a CRD's.
				b, _ := json.Marshal(t.OpenAPIV3Schema)
				sc = map[string]any{}
				json.Unmarshal(b, &sc)
				sc["type"] = "object"
			}
			props, _ := sc["properties"].(map[string]any)
			if props == nil {
				props = map[string]any{}
			}
			props["apiVersion"] = map[string]any{"type": "string", "description": apiVersionDoc}
			props["kind"] = map[string]any{"type": "string", "description": kindDoc}
			props["metadata"] = map[string]any{"allOf": []any{map[string]any{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}}}
			sc["properties"] = props
			sc["x-kubernetes-group-version-kind"] = gvk
			schemas[ref] = sc
			addSchemas(schemas, kubeschema.Lookup("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"))
		}
		addPaths(paths, gvp, t, ref)
	}
	return map[string]any{
		"openapi":    "3.0.0",
		"info":       map[string]string{"title": "Kubernetes", "version": gitVersion},
		"paths":      paths,
		"components": map[string]any{"schemas": schemas},
	}
}

func customSchemaName(t ResourceType) string {
	parts := strings.Split(t.Group, ".")
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, ".") + "." + t.Version + "." + t.Kind
}

// addSchemas adds the schema of t and of every type it refers to.
func addSchemas(schemas map[string]any, t *kubeschema.Type) {
	if t == nil || schemas[t.Name] != nil {
		return
	}
	sc := typeSchema(t)
	schemas[t.Name] = sc
	for _, f := range t.Fields {
		if f.Kind == kubeschema.Message {
			addSchemas(schemas, f.Type())
		}
	}
}

// typeSchema is a type's OpenAPI schema.
func typeSchema(t *kubeschema.Type) map[string]any {
	sc := map[string]any{}
	if d := descriptions.Type(t.Name); d != "" {
		sc["description"] = d
	}
	switch t.JSON {
	case "time", "microtime":
		sc["type"], sc["format"] = "string", "date-time"
		return sc
	case "duration":
		sc["type"] = "string"
		return sc
	case "quantity":
		sc["oneOf"] = []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}
		return sc
	case "int-or-string":
		sc["format"] = "int-or-string"
		sc["oneOf"] = []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}
		return sc
	case "raw":
		sc["type"] = "object"
		return sc
	case "array":
		sc["type"] = "array"
		sc["items"] = valueSchema(t.FieldByNumber(1))
		return sc
	}
	props := map[string]any{}
	var required []string
	if len(t.GroupVersionKinds()) > 0 {
		props["apiVersion"] = map[string]any{"type": "string", "description": apiVersionDoc}
		props["kind"] = map[string]any{"type": "string", "description": kindDoc}
	}
	for _, f := range t.JSONFields() {
		props[f.Name] = fieldSchema(f)
		if f.Required {
			required = append(required, f.Name)
		}
	}
	sc["type"] = "object"
	sc["properties"] = props
	if t.MapType != "" {
		sc["x-kubernetes-map-type"] = t.MapType
	}
	if len(required) > 0 {
		sort.Strings(required)
		sc["required"] = required
	}
	return sc
}

// valueSchema is the schema of one value of f (an element, a map value).
func valueSchema(f *kubeschema.Field) map[string]any {
	switch f.Kind {
	case kubeschema.String:
		return map[string]any{"type": "string"}
	case kubeschema.Bool:
		return map[string]any{"type": "boolean"}
	case kubeschema.Int32:
		return map[string]any{"type": "integer", "format": "int32"}
	case kubeschema.Int64:
		return map[string]any{"type": "integer", "format": "int64"}
	case kubeschema.Float64:
		return map[string]any{"type": "number", "format": "double"}
	case kubeschema.Bytes:
		return map[string]any{"type": "string", "format": "byte"}
	}
	return map[string]any{"allOf": []any{map[string]any{"$ref": "#/components/schemas/" + f.TypeName}}}
}

func fieldSchema(f *kubeschema.Field) map[string]any {
	var sc map[string]any
	switch {
	case f.Repeated:
		sc = map[string]any{"type": "array", "items": valueSchema(f)}
	case f.MapKey != "":
		sc = map[string]any{"type": "object", "additionalProperties": valueSchema(f)}
	default:
		sc = valueSchema(f)
	}
	if d := descriptions.Field(f.Owner().Name, f.Name); d != "" {
		sc["description"] = d
	}
	if len(f.Enum) > 0 && !f.Repeated && f.MapKey == "" {
		sc["enum"] = f.Enum
	}
	if f.ListType != "" {
		sc["x-kubernetes-list-type"] = f.ListType
	}
	if len(f.ListMapKeys) > 0 {
		sc["x-kubernetes-list-map-keys"] = f.ListMapKeys
	}
	if f.MapType != "" {
		sc["x-kubernetes-map-type"] = f.MapType
	}
	if f.PatchStrategy != "" {
		sc["x-kubernetes-patch-strategy"] = f.PatchStrategy
	}
	if f.PatchMergeKey != "" {
		sc["x-kubernetes-patch-merge-key"] = f.PatchMergeKey
	}
	return sc
}

// addPaths declares the resource's operations with the query parameters kubectl looks for.
func addPaths(paths map[string]any, gvp string, t ResourceType, ref string) {
	prefix := "/" + gvp + "/"
	if t.Namespaced {
		prefix += "namespaces/{namespace}/"
	}
	gvk := map[string]string{"group": t.Group, "version": t.Version, "kind": t.Kind}
	params := []map[string]any{
		{"name": "fieldValidation", "in": "query", "schema": map[string]any{"type": "string", "uniqueItems": true}},
		{"name": "dryRun", "in": "query", "schema": map[string]any{"type": "string", "uniqueItems": true}},
		{"name": "fieldManager", "in": "query", "schema": map[string]any{"type": "string", "uniqueItems": true}},
	}
	body := map[string]any{"content": map[string]any{"application/json": map[string]any{
		"schema": map[string]any{"$ref": "#/components/schemas/" + ref}}}}
	op := func(action string, withBody bool) map[string]any {
		o := map[string]any{"x-kubernetes-group-version-kind": gvk, "x-kubernetes-action": action, "parameters": params,
			"responses": map[string]any{"200": map[string]any{"description": "OK", "content": map[string]any{"application/json": map[string]any{
				"schema": map[string]any{"$ref": "#/components/schemas/" + ref}}}}}}
		if withBody {
			o["requestBody"] = body
		}
		return o
	}
	if t.createOnly != nil {
		paths[prefix+t.Plural] = map[string]any{"post": op("post", true)}
		return
	}
	paths[prefix+t.Plural+"/{name}"] = map[string]any{"patch": op("patch", true), "put": op("put", true), "get": op("get", false), "delete": op("delete", false)}
	paths[prefix+t.Plural] = map[string]any{"post": op("post", true), "get": op("list", false)}
}

func gvPath(t ResourceType) string {
	if t.Group == "" {
		return "api/" + t.Version
	}
	return "apis/" + t.Group + "/" + t.Version
}
