package celrules

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// path is a field path as the kube-apiserver prints it: children joined by ".", keys and
// indices in brackets; the empty path prints "<nil>".
type path string

func (p path) child(name string) path {
	if p == "" {
		return path(name)
	}
	return p + "." + path(name)
}
func (p path) key(k string) path { return p + "[" + path(k) + "]" }
func (p path) index(i int) path  { return p + "[" + path(strconv.Itoa(i)) + "]" }
func (p path) String() string {
	if p == "" {
		return "<nil>"
	}
	return string(p)
}

// tokens splits a rule's fieldPath into ".", "[", "]" and the names between them (a
// single-quoted string is one token, delimiters and all).
func tokens(s string) []string {
	var out []string
	for len(s) > 0 {
		if s[0] == '\'' {
			end := -1
			for i := 1; i < len(s); i++ {
				if s[i] == '\'' && s[i-1] != '\\' {
					end = i
					break
				}
			}
			if end < 0 {
				out = append(out, s)
				return out
			}
			out = append(out, s[:end+1])
			s = s[end+1:]
			continue
		}
		i := strings.IndexAny(s, ".[]")
		switch {
		case i == 0:
			out = append(out, s[:1])
			s = s[1:]
		case i < 0:
			out = append(out, s)
			s = ""
		default:
			out = append(out, s[:i])
			s = s[i:]
		}
	}
	return out
}

var errNotAField = errors.New("does not refer to a valid field")

// validFieldPath checks that a rule's fieldPath (".spec.x", "['a.b'].c") names a field of
// s through properties and map keys, and returns it as a field path with the schema it
// names.
func validFieldPath(jsonPath string, s schema) (string, schema, error) {
	var p path
	toks := tokens(jsonPath)
	step := func(name string) error {
		switch {
		case s.properties() != nil:
			p = p.child(name)
			ps, ok := s.properties()[name]
			if !ok {
				return errNotAField
			}
			s = ps
		case s.additional() != nil:
			p = p.key(name)
			s = s.additional()
		default:
			return errNotAField
		}
		return nil
	}
	for i := 0; i < len(toks); i++ {
		switch tok := toks[i]; tok {
		case "[":
			if i+1 >= len(toks) {
				return "", nil, errors.New("unexpected end of JSON path")
			}
			i++
			q := toks[i]
			if len(q) < 2 || q[0] != '\'' || q[len(q)-1] != '\'' {
				return "", nil, fmt.Errorf("expected single quoted string but got %s", q)
			}
			name, err := unquote(q[1 : len(q)-1])
			if err != nil {
				return "", nil, fmt.Errorf("invalid string literal: %w", err)
			}
			if err := step(name); err != nil {
				return "", nil, err
			}
			if i+1 >= len(toks) {
				return "", nil, errors.New("unexpected end of JSON path")
			}
			i++
			if toks[i] != "]" {
				return "", nil, fmt.Errorf("expected ] but got %s", toks[i])
			}
		case ".":
			if i+1 >= len(toks) {
				return "", nil, errors.New("unexpected end of JSON path")
			}
			i++
			if err := step(toks[i]); err != nil {
				return "", nil, err
			}
		default:
			return "", nil, fmt.Errorf("expected [ or . but got: %s", tok)
		}
	}
	return string(p), s, nil
}

// unquote reads the escapes of a single-quoted fieldPath string.
func unquote(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\'':
			b.WriteByte('\'')
		case '\\':
			b.WriteByte('\\')
		default:
			return "", fmt.Errorf("invalid escape char \\%c", s[i])
		}
	}
	return b.String(), nil
}
