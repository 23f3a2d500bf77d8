package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// The output: schema.json, the table without descriptions (one kind, resource or type
// block per line, for readable diffs; kubeschema indexes the type blocks and decodes each on
// first use), and descriptions/descriptions.json, the OpenAPI descriptions of the types and
// fields and the Table columns' descriptions, one line per type (package descriptions,
// which only apitest imports, so that the toolkit's binaries do not carry them).

// typeDocs is one line of descriptions.json.
type typeDocs struct {
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Fields      map[string]string `json:"fields,omitempty"`
}

// columnsDocName names the line of a resource's column descriptions.
func columnsDocName(r Resource) string { return "columns:" + r.Group + "/" + r.Resource }

func writeLines[T any](buf *bytes.Buffer, items []T, line func(T) ([]byte, error)) error {
	for i, it := range items {
		b, err := line(it)
		if err != nil {
			return err
		}
		buf.Write(b)
		if i < len(items)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	return nil
}

func (g *gen) encode() (schema, docs []byte, err error) {
	res, err := g.resources()
	if err != nil {
		return nil, nil, err
	}
	tab := Table{Source: g.versions + "; resources recorded from kube-apiserver " + g.served.Source, Kinds: g.kinds, Resources: res}
	names := make([]string, 0, len(g.types))
	for n := range g.types {
		names = append(names, n)
	}
	sort.Strings(names)
	var allDocs []typeDocs
	for _, n := range names {
		t := g.types[n]
		tab.Types = append(tab.Types, t)
		d := typeDocs{Name: n, Description: t.Description}
		for _, f := range t.Fields {
			if f.Description != "" {
				if d.Fields == nil {
					d.Fields = map[string]string{}
				}
				d.Fields[f.Name] = f.Description
			}
		}
		if d.Description != "" || d.Fields != nil {
			allDocs = append(allDocs, d)
		}
	}
	for i := range tab.Resources {
		r := &tab.Resources[i]
		d := typeDocs{Name: columnsDocName(*r), Fields: map[string]string{}}
		for j := range r.Columns {
			if c := &r.Columns[j]; c.Description != "" {
				d.Fields[c.Name], c.Description = c.Description, ""
			}
		}
		if len(d.Fields) > 0 {
			allDocs = append(allDocs, d)
		}
	}
	sort.Slice(allDocs, func(i, j int) bool { return allDocs[i].Name < allDocs[j].Name })

	var buf bytes.Buffer
	src, _ := json.Marshal(tab.Source)
	fmt.Fprintf(&buf, "{\n\"source\": %s,\n\"kinds\": [\n", src)
	if err := writeLines(&buf, tab.Kinds, func(k Kind) ([]byte, error) { return json.Marshal(k) }); err != nil {
		return nil, nil, err
	}
	buf.WriteString("],\n\"resources\": [\n")
	if err := writeLines(&buf, tab.Resources, func(r Resource) ([]byte, error) { return json.Marshal(r) }); err != nil {
		return nil, nil, err
	}
	buf.WriteString("],\n\"types\": [\n")
	if err := writeLines(&buf, tab.Types, encodeType); err != nil {
		return nil, nil, err
	}
	buf.WriteString("]}\n")
	var chk Table
	if err := json.Unmarshal(buf.Bytes(), &chk); err != nil {
		return nil, nil, fmt.Errorf("encoding: %w", err)
	}

	var dbuf bytes.Buffer
	dbuf.WriteString("[\n")
	if err := writeLines(&dbuf, allDocs, func(d typeDocs) ([]byte, error) { return json.Marshal(d) }); err != nil {
		return nil, nil, err
	}
	dbuf.WriteString("]\n")
	var dchk []typeDocs
	if err := json.Unmarshal(dbuf.Bytes(), &dchk); err != nil {
		return nil, nil, fmt.Errorf("encoding descriptions: %w", err)
	}
	return buf.Bytes(), dbuf.Bytes(), nil
}

// encodeType writes a type's block: its head, then one field per line; no descriptions.
func encodeType(t *Type) ([]byte, error) {
	t2 := *t
	t2.Fields, t2.Description = nil, ""
	head, err := json.Marshal(t2)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Write(bytes.TrimSuffix(head, []byte(`,"fields":null}`)))
	buf.WriteString(`,"fields":[`)
	for j, f := range t.Fields {
		buf.WriteString("\n  ")
		f2 := *f
		f2.Description = ""
		fb, err := json.Marshal(f2)
		if err != nil {
			return nil, err
		}
		buf.Write(fb)
		if j < len(t.Fields)-1 {
			buf.WriteByte(',')
		}
	}
	buf.WriteString("]}")
	return buf.Bytes(), nil
}
