package printers

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
)

// CustomColumn is an additionalPrinterColumn of a CustomResourceDefinition version.
type CustomColumn struct {
	Name, Type, Format, Description, JSONPath string
	Priority                                  int
}

// customColumns are the columns of a custom resource as the apiextensions server serves
// them: Name, then the CRD's columns (Age alone when it has none), each cell the first
// value its JSONPath finds, converted to the column's type (nil when it finds none).
func customColumns(cols []CustomColumn) []column {
	out := []column{nameColumn()}
	if len(cols) == 0 {
		return append(out, column{name: "Age", typ: "date", desc: doc(metaType, "creationTimestamp"),
			cell: func(o map[string]any, now time.Time) any {
				return dateCell(jsonobj.Str(jsonobj.Map(o["metadata"]), "creationTimestamp"), now)
			}})
	}
	for _, c := range cols {
		desc := c.Description
		if desc == "" {
			desc = "Custom resource definition column (in JSONPath format): " + c.JSONPath
		}
		path, typ := c.JSONPath, c.Type
		out = append(out, column{name: c.Name, typ: c.Type, format: c.Format, priority: c.Priority, desc: desc,
			cell: func(o map[string]any, now time.Time) any {
				v, ok := jsonPathFirst(o, path)
				if !ok {
					return nil
				}
				return typedCell(typ, v, now)
			}})
	}
	return out
}

// typedCell converts a value found by a column's JSONPath to its type, as the
// apiextensions server's table convertor does: a string column prints any value, the
// others take only values of their type.
func typedCell(typ string, v any, now time.Time) any {
	if v == nil {
		return nil
	}
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			v = i
		} else if f, err := n.Float64(); err == nil {
			v = f
		}
	}
	switch typ {
	case "string":
		if s, ok := v.(string); ok {
			return s
		}
		return fmt.Sprint(v)
	case "integer":
		switch n := v.(type) {
		case int64:
			return n
		case float64:
			return int64(n)
		}
	case "number":
		switch n := v.(type) {
		case int64:
			return float64(n)
		case float64:
			return n
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
	case "date":
		if s, ok := v.(string); ok {
			return dateCell(s, now)
		}
	}
	return nil
}

// dateCell is a timestamp as the age the table shows.
func dateCell(ts string, now time.Time) string {
	if ts == "" {
		return "<unknown>"
	}
	if _, err := time.Parse(time.RFC3339, ts); err != nil {
		return "<invalid>"
	}
	return since(ts, now)
}

// jsonPathFirst evaluates the subset of JSONPath that printer columns use (.a.b, [n],
// [*], ['key'], [?(@.k=="v")] and [?(@.k!="v")]) on obj and returns its first result.
func jsonPathFirst(obj any, path string) (any, bool) {
	path = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(path), "{"), "}"))
	cur := []any{obj}
	for path != "" {
		var next []any
		switch {
		case strings.HasPrefix(path, "."):
			path = path[1:]
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			key := path[:end]
			path = path[end:]
			if key == "" {
				continue
			}
			for _, c := range cur {
				if m, ok := c.(map[string]any); ok {
					if v, ok := m[key]; ok {
						next = append(next, v)
					}
				}
			}
		case strings.HasPrefix(path, "["):
			end := strings.Index(path, "]")
			if strings.HasPrefix(path, "[?(") {
				end = strings.Index(path, ")]") + 1
			}
			if end <= 0 {
				return nil, false
			}
			sel := path[1:end]
			path = path[end+1:]
			for _, c := range cur {
				next = append(next, selectIn(c, sel)...)
			}
		default:
			return nil, false
		}
		cur = next
		if len(cur) == 0 {
			return nil, false
		}
	}
	return cur[0], len(cur) > 0
}

// selectIn applies one bracket selector to v.
func selectIn(v any, sel string) []any {
	switch {
	case sel == "*":
		switch x := v.(type) {
		case []any:
			return x
		case map[string]any:
			out := make([]any, 0, len(x))
			for _, e := range x {
				out = append(out, e)
			}
			return out
		}
	case strings.HasPrefix(sel, "?(") && strings.HasSuffix(sel, ")"):
		list, _ := v.([]any)
		var out []any
		for _, e := range list {
			if filterMatches(e, sel[2:len(sel)-1]) {
				out = append(out, e)
			}
		}
		return out
	case strings.HasPrefix(sel, "'") || strings.HasPrefix(sel, `"`):
		if m, ok := v.(map[string]any); ok {
			if e, ok := m[strings.Trim(sel, `'"`)]; ok {
				return []any{e}
			}
		}
	default:
		if i, err := strconv.Atoi(sel); err == nil {
			if list, ok := v.([]any); ok {
				if i < 0 {
					i += len(list)
				}
				if i >= 0 && i < len(list) {
					return []any{list[i]}
				}
			}
		}
	}
	return nil
}

// filterMatches evaluates "@.path==value" or "@.path!=value" on e.
func filterMatches(e any, expr string) bool {
	op := "=="
	i := strings.Index(expr, op)
	if j := strings.Index(expr, "!="); j >= 0 && (i < 0 || j < i) {
		op, i = "!=", j
	}
	if i < 0 || !strings.HasPrefix(strings.TrimSpace(expr), "@") {
		return false
	}
	lhs := strings.TrimPrefix(strings.TrimSpace(expr[:i]), "@")
	rhs := strings.Trim(strings.TrimSpace(expr[i+2:]), `'"`)
	got, ok := jsonPathFirst(e, lhs)
	if !ok {
		return false
	}
	eq := fmt.Sprint(got) == rhs
	if op == "!=" {
		return !eq
	}
	return eq
}
