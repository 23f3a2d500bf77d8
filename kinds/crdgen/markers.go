package crdgen

import (
	"fmt"
	"go/ast"
	"go/token"
	"strconv"
	"strings"
)

// A marker is a comment line that starts with "+": "+optional", "+minimum=0",
// "+kind:group=example.com,version=v1", "+printcolumn:name=Age,type=date,jsonPath=...".
type marker struct {
	name  string // "optional", "minimum", "kind", "subresource:status", ...
	value string // after "=" for a value marker
	args  []arg  // after ":" for an argument marker
	pos   token.Position
	text  string // the line, for errors
}

// arg is one key=value (or bare key) of an argument marker.
type arg struct {
	key, value string
	hasValue   bool
}

// argMarkers take key=value arguments after a colon.
var argMarkers = []string{"kind", "printcolumn", "subresource:scale", "cel"}

// flagMarkers take no value; valueMarkers take one after "=".
var (
	flagMarkers = map[string]bool{"optional": true, "required": true, "nullable": true, "preserveUnknownFields": true,
		"embeddedResource": true, "intOrString": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
		"subresource:status": true}
	valueMarkers = map[string]bool{"minimum": true, "maximum": true, "multipleOf": true, "minLength": true, "maxLength": true,
		"minItems": true, "maxItems": true, "minProperties": true, "maxProperties": true, "pattern": true, "format": true,
		"type": true, "enum": true, "default": true, "listType": true, "listMapKey": true, "mapType": true, "structType": true}
)

// foreign reports markers of other tools that crdgen leaves alone without a word (those of
// k8s.io/api's code generators).
func foreign(name string) bool {
	for _, p := range []string{"k8s:", "genclient", "groupName", "protobuf", "patchStrategy", "patchMergeKey",
		"featureGate", "union", "deepcopy-gen", "+"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// parseComments splits a doc comment into its description (the text without marker lines)
// and its markers. Unknown markers are returned as warnings; malformed ones as errors.
func parseComments(fset *token.FileSet, cg *ast.CommentGroup) (desc string, ms []marker, warnings []string, err error) {
	if cg == nil {
		return "", nil, nil, nil
	}
	var text []string
	for _, c := range cg.List {
		pos := fset.Position(c.Pos())
		lines := []string{strings.TrimPrefix(c.Text, "//")}
		if strings.HasPrefix(c.Text, "/*") {
			lines = strings.Split(strings.TrimSuffix(strings.TrimPrefix(c.Text, "/*"), "*/"), "\n")
		}
		for _, line := range lines {
			trimmed := strings.TrimSpace(line)
			if !strings.HasPrefix(trimmed, "+") || len(trimmed) < 2 {
				line = strings.TrimPrefix(line, " ")
				if !strings.HasPrefix(line, "\t") { // a code block of the Go doc says nothing to kubectl explain
					text = append(text, line)
				}
				continue
			}
			m, known, perr := parseMarker(trimmed[1:])
			m.pos, m.text = pos, trimmed
			switch {
			case perr != nil:
				return "", nil, nil, fmt.Errorf("%s: marker %s: %w", pos, trimmed, perr)
			case known:
				ms = append(ms, m)
			case strings.HasPrefix(m.name, "kubebuilder:"):
				warnings = append(warnings, fmt.Sprintf("%s: %s: kubebuilder markers are not read; crdgen's are listed in docs/workbench.md", pos, trimmed))
			case !foreign(m.name):
				warnings = append(warnings, fmt.Sprintf("%s: unknown marker %s (ignored)", pos, trimmed))
			}
		}
	}
	desc = strings.TrimSpace(strings.Join(text, "\n"))
	for strings.Contains(desc, "\n\n\n") {
		desc = strings.ReplaceAll(desc, "\n\n\n", "\n\n")
	}
	if strings.HasSuffix(desc, ":") { // it introduced a code block, left out
		desc = strings.TrimSuffix(desc, ":") + "."
	}
	return desc, ms, warnings, nil
}

// parseMarker parses the body of a marker line (without the "+").
func parseMarker(body string) (m marker, known bool, err error) {
	for _, name := range argMarkers {
		if body == name || strings.HasPrefix(body, name+":") {
			m.name = name
			m.args, err = parseArgs(strings.TrimPrefix(strings.TrimPrefix(body, name), ":"))
			return m, true, err
		}
	}
	name, value, hasValue := strings.Cut(body, "=")
	m.name = name
	switch {
	case flagMarkers[name] && !hasValue:
		return m, true, nil
	case flagMarkers[name]:
		return m, true, fmt.Errorf("takes no value")
	case valueMarkers[name] && !hasValue:
		return m, true, fmt.Errorf("needs a value (+%s=...)", name)
	case valueMarkers[name]:
		m.value, err = unquoteAll(strings.TrimSpace(value))
		return m, true, err
	}
	return m, false, nil
}

// parseArgs parses "k=v,k=v,flag": a value is bare (up to the next comma), "quoted" with
// Go's escapes, or `raw`.
func parseArgs(s string) ([]arg, error) {
	var out []arg
	for len(s) > 0 {
		var a arg
		i := strings.IndexAny(s, "=,")
		if i < 0 {
			a.key, s = s, ""
			out = append(out, a)
			break
		}
		a.key = strings.TrimSpace(s[:i])
		if a.key == "" {
			return nil, fmt.Errorf("empty argument name in %q", s)
		}
		if s[i] == ',' {
			out = append(out, a)
			s = s[i+1:]
			continue
		}
		s = s[i+1:]
		a.hasValue = true
		switch {
		case strings.HasPrefix(s, `"`) || strings.HasPrefix(s, "`"):
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, fmt.Errorf("argument %s: bad quoted value: %w", a.key, err)
			}
			a.value, _ = strconv.Unquote(q)
			s = s[len(q):]
			if s != "" && s[0] != ',' {
				return nil, fmt.Errorf("argument %s: text after the quoted value: %q", a.key, s)
			}
		default:
			j := strings.IndexByte(s, ',')
			if j < 0 {
				j = len(s)
			}
			a.value = strings.TrimSpace(s[:j])
			s = s[j:]
		}
		s = strings.TrimPrefix(s, ",")
		out = append(out, a)
	}
	return out, nil
}

// unquoteAll unquotes a value written whole in quotes; other values are returned as is.
func unquoteAll(v string) (string, error) {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '`') {
		u, err := strconv.Unquote(v)
		if err != nil {
			return "", fmt.Errorf("bad quoted value %s: %w", v, err)
		}
		return u, nil
	}
	return v, nil
}

// has reports whether ms holds a marker named name.
func has(ms []marker, name string) bool {
	for _, m := range ms {
		if m.name == name {
			return true
		}
	}
	return false
}
