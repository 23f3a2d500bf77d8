package apitest

import (
	"fmt"
	"strconv"
	"strings"
)

type labelOp int

const (
	opEquals labelOp = iota
	opNotEquals
	opIn
	opNotIn
	opExists
	opNotExists
	opGt
	opLt
)

type labelReq struct {
	key    string
	op     labelOp
	values []string
}

// labelSelector is a parsed labelSelector; the empty selector matches everything.
type labelSelector []labelReq

func (s labelSelector) matches(labels map[string]string) bool {
	for _, r := range s {
		v, ok := labels[r.key]
		switch r.op {
		case opEquals:
			if !ok || v != r.values[0] {
				return false
			}
		case opNotEquals:
			if ok && v == r.values[0] {
				return false
			}
		case opIn:
			if !ok || !contains(r.values, v) {
				return false
			}
		case opNotIn:
			if ok && contains(r.values, v) {
				return false
			}
		case opExists:
			if !ok {
				return false
			}
		case opNotExists:
			if ok {
				return false
			}
		case opGt, opLt:
			if !ok {
				return false
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return false
			}
			lim, _ := strconv.ParseInt(r.values[0], 10, 64)
			if (r.op == opGt && n <= lim) || (r.op == opLt && n >= lim) {
				return false
			}
		}
	}
	return true
}

// parseLabelSelector parses the labelSelector grammar of the Kubernetes API:
// "k=v", "k==v", "k!=v", "k in (a,b)", "k notin (a,b)", "k", "!k", "k>1", "k<1", joined by
// commas.
func parseLabelSelector(s string) (labelSelector, error) {
	p := &selParser{s: s}
	var sel labelSelector
	p.skipSpace()
	if p.eof() {
		return nil, nil
	}
	for {
		r, err := p.requirement()
		if err != nil {
			return nil, fmt.Errorf("unable to parse requirement: %v", err)
		}
		sel = append(sel, r)
		p.skipSpace()
		if p.eof() {
			return sel, nil
		}
		if p.s[p.i] != ',' {
			return nil, fmt.Errorf("unable to parse requirement: found '%s', expected: ',' or 'end of string'", p.s[p.i:])
		}
		p.i++
	}
}

type selParser struct {
	s string
	i int
}

func (p *selParser) eof() bool { return p.i >= len(p.s) }

func (p *selParser) skipSpace() {
	for !p.eof() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func isIdentChar(c byte) bool {
	return c == '-' || c == '_' || c == '.' || c == '/' ||
		(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func (p *selParser) ident() string {
	p.skipSpace()
	start := p.i
	for !p.eof() && isIdentChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *selParser) requirement() (labelReq, error) {
	p.skipSpace()
	if !p.eof() && p.s[p.i] == '!' {
		p.i++
		key := p.ident()
		if err := validLabelKey(key); err != nil {
			return labelReq{}, err
		}
		return labelReq{key: key, op: opNotExists}, nil
	}
	key := p.ident()
	if err := validLabelKey(key); err != nil {
		return labelReq{}, err
	}
	p.skipSpace()
	if p.eof() || p.s[p.i] == ',' {
		return labelReq{key: key, op: opExists}, nil
	}
	rest := p.s[p.i:]
	switch {
	case strings.HasPrefix(rest, "=="):
		p.i += 2
		return p.single(key, opEquals)
	case strings.HasPrefix(rest, "!="):
		p.i += 2
		return p.single(key, opNotEquals)
	case strings.HasPrefix(rest, "="):
		p.i++
		return p.single(key, opEquals)
	case strings.HasPrefix(rest, ">"):
		p.i++
		return p.number(key, opGt)
	case strings.HasPrefix(rest, "<"):
		p.i++
		return p.number(key, opLt)
	}
	word := p.ident()
	switch word {
	case "in":
		return p.set(key, opIn)
	case "notin":
		return p.set(key, opNotIn)
	}
	return labelReq{}, fmt.Errorf("found '%s', expected: in, notin, =, ==, !=, gt, lt", word)
}

func (p *selParser) single(key string, op labelOp) (labelReq, error) {
	v := p.ident()
	if err := validLabelValue(v); err != nil {
		return labelReq{}, err
	}
	return labelReq{key: key, op: op, values: []string{v}}, nil
}

func (p *selParser) number(key string, op labelOp) (labelReq, error) {
	v := p.ident()
	if _, err := strconv.ParseInt(v, 10, 64); err != nil {
		return labelReq{}, fmt.Errorf("for 'Gt', 'Lt' operators, the value must be an integer")
	}
	return labelReq{key: key, op: op, values: []string{v}}, nil
}

func (p *selParser) set(key string, op labelOp) (labelReq, error) {
	p.skipSpace()
	if p.eof() || p.s[p.i] != '(' {
		return labelReq{}, fmt.Errorf("found '%s', expected: '('", p.s[p.i:])
	}
	p.i++
	var vals []string
	for {
		v := p.ident()
		if err := validLabelValue(v); err != nil {
			return labelReq{}, err
		}
		vals = append(vals, v)
		p.skipSpace()
		if p.eof() {
			return labelReq{}, fmt.Errorf("found '', expected: ',' or ')'")
		}
		c := p.s[p.i]
		p.i++
		if c == ')' {
			break
		}
		if c != ',' {
			return labelReq{}, fmt.Errorf("found '%c', expected: ',' or ')'", c)
		}
	}
	if len(vals) == 1 && vals[0] == "" && op == opIn {
		vals = []string{""}
	}
	return labelReq{key: key, op: op, values: vals}, nil
}

func validLabelKey(k string) error {
	if k == "" {
		return fmt.Errorf("found '', expected: identifier")
	}
	name := k
	if prefix, n, ok := strings.Cut(k, "/"); ok {
		if prefix == "" || len(prefix) > 253 {
			return fmt.Errorf("invalid label key %q: prefix part must be a DNS subdomain", k)
		}
		name = n
	}
	if name == "" || len(name) > 63 || !alnum(name[0]) || !alnum(name[len(name)-1]) {
		return fmt.Errorf("invalid label key %q: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", k)
	}
	return nil
}

func validLabelValue(v string) error {
	if v == "" {
		return nil
	}
	if len(v) > 63 || !alnum(v[0]) || !alnum(v[len(v)-1]) || strings.Contains(v, "/") {
		return fmt.Errorf("invalid label value: %q: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", v)
	}
	return nil
}

func alnum(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

type fieldReq struct {
	field string
	value string
	neg   bool
}

// fieldSelector is a parsed fieldSelector; the empty selector matches everything.
type fieldSelector []fieldReq

// parseFieldSelector parses "f=v", "f==v", "f!=v" terms joined by commas; fields other than
// metadata.name, metadata.namespace and the resource's extra fields are refused as the
// kube-apiserver refuses them.
func parseFieldSelector(s string, t *ResourceType) (fieldSelector, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var sel fieldSelector
	for _, term := range splitUnescaped(s, ',') {
		var r fieldReq
		var ok bool
		if r.field, r.value, ok = strings.Cut(term, "!="); ok {
			r.neg = true
		} else if r.field, r.value, ok = strings.Cut(term, "=="); ok {
		} else if r.field, r.value, ok = strings.Cut(term, "="); ok {
		} else {
			return nil, fmt.Errorf("invalid selector: '%s'; can't understand '%s'", s, term)
		}
		r.field = strings.TrimSpace(r.field)
		r.value = unescapeField(r.value)
		if r.field != "metadata.name" && r.field != "metadata.namespace" && !contains(t.extraFields, r.field) {
			known := []string{`"metadata.name"`, `"metadata.namespace"`}
			for _, f := range t.extraFields {
				known = append(known, strconv.Quote(f))
			}
			return nil, fmt.Errorf("%q is not a known field selector: only %s", r.field, strings.Join(known, ", "))
		}
		sel = append(sel, r)
	}
	return sel, nil
}

func splitUnescaped(s string, sep byte) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == sep {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func unescapeField(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// needsObject reports whether matching needs fields beyond name and namespace.
func (s fieldSelector) needsObject() bool {
	for _, r := range s {
		if r.field != "metadata.name" && r.field != "metadata.namespace" {
			return true
		}
	}
	return false
}

func (s fieldSelector) matches(o *storedObj) bool {
	if len(s) == 0 {
		return true
	}
	var obj map[string]any
	for _, r := range s {
		var v string
		switch r.field {
		case "metadata.name":
			v = o.name
		case "metadata.namespace":
			v = o.namespace
		default:
			if obj == nil {
				obj = mustDecode(o.raw)
			}
			v = fieldValue(obj, r.field)
		}
		if (v == r.value) == r.neg {
			return false
		}
	}
	return true
}

func fieldValue(obj map[string]any, path string) string {
	var cur any = obj
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[p]
	}
	switch v := cur.(type) {
	case string:
		return v
	case nil:
		return ""
	case map[string]any:
		// events' "source" selects source.component.
		if c, ok := v["component"].(string); ok {
			return c
		}
		return ""
	default:
		return fmt.Sprint(v)
	}
}

// filter is the namespace and selectors of a list or watch.
type filter struct {
	namespace string
	labels    labelSelector
	fields    fieldSelector
}

func (f *filter) empty() bool { return len(f.labels) == 0 && len(f.fields) == 0 }

func (f *filter) matches(o *storedObj) bool {
	if o == nil {
		return false
	}
	if f.namespace != "" && o.namespace != f.namespace {
		return false
	}
	return f.labels.matches(o.labels) && f.fields.matches(o)
}
