// Package descriptions holds the OpenAPI descriptions of kubeschema's types and fields and
// the descriptions of the built-in resources' Table columns, generated with the table by
// e2e/tools/schemagen. They are apart from kubeschema so that only the programs that
// publish them (apitest's /openapi/v3 and Tables) carry them: the toolkit, which decodes
// objects with kubeschema, does not need them. A type's descriptions are decoded on first
// use.
package descriptions

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"sync"
)

//go:embed descriptions.json
var descriptionsJSON []byte

type docs struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Fields      map[string]string `json:"fields"`
}

var (
	indexOnce sync.Once
	lines     map[string][]byte
	mu        sync.Mutex
	decoded   = map[string]*docs{}
)

// index maps each line's name to the line (one JSON object per line).
func index() {
	lines = map[string][]byte{}
	for _, l := range bytes.Split(descriptionsJSON, []byte("\n")) {
		l = bytes.TrimSuffix(bytes.TrimSpace(l), []byte(","))
		rest, ok := bytes.CutPrefix(l, []byte(`{"name":"`))
		if !ok {
			continue
		}
		if i := bytes.IndexByte(rest, '"'); i >= 0 {
			lines[string(rest[:i])] = l
		}
	}
}

func of(name string) *docs {
	indexOnce.Do(index)
	mu.Lock()
	defer mu.Unlock()
	if d, ok := decoded[name]; ok {
		return d
	}
	var d *docs
	if l := lines[name]; l != nil {
		d = &docs{}
		if err := json.Unmarshal(l, d); err != nil {
			panic("descriptions: the embedded descriptions do not load: " + err.Error())
		}
	}
	decoded[name] = d
	return d
}

// Type returns the description of a type, by its OpenAPI name ("io.k8s.api.core.v1.Pod").
func Type(name string) string {
	if d := of(name); d != nil {
		return d.Description
	}
	return ""
}

// Field returns the description of a field (its JSON name) of a type. A field of an
// inline type is described by that type (kubeschema.Field.Owner).
func Field(typeName, field string) string {
	if d := of(typeName); d != nil {
		return d.Fields[field]
	}
	return ""
}

// Column returns the description of a Table column of a built-in resource ("" for the
// core group).
func Column(group, resource, column string) string {
	return Field("columns:"+group+"/"+resource, column)
}
