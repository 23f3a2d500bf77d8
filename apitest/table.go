package apitest

import (
	"fmt"
	"net/http"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/printers"
	"github.com/informerkit/informerkit/meta"
)

// Tables (Accept: application/json;as=Table;g=meta.k8s.io;v=v1, what kubectl get asks for)
// are internal/printers' work; this is the request's side.

// tableOptions reads includeObject (None, Object, Metadata or empty).
func tableOptions(r *http.Request) (string, *meta.Status) {
	v := r.URL.Query().Get("includeObject")
	switch v {
	case "", "None", "Object", "Metadata":
		return v, nil
	}
	return "", apierr.BadRequest(fmt.Sprintf("Unable to convert to Table as requested: includeObject: Invalid value: %q: must be 'Metadata', 'Object', 'None', or empty", v))
}

// table renders stored objects of res as a meta.k8s.io/v1 Table.
func table(res *resource, items []*storedObj, lm meta.ListMeta, includeObject string, headers bool) map[string]any {
	objs := make([]map[string]any, len(items))
	for i, o := range items {
		objs[i] = mustDecode(o.raw)
	}
	return printers.Table(res.typ.Group, res.typ.Kind, objs, lm,
		printers.Options{IncludeObject: includeObject, NoHeaders: !headers, Generic: res.typ.custom, Columns: res.typ.columns})
}
