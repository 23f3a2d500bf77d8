package labels

import (
	"fmt"
	"slices"
	"strings"
)

// Operator is the relation of a label selector Requirement.
type Operator string

// The operators of label selectors. "==" parses as Equals.
const (
	Equals       Operator = "="
	NotEquals    Operator = "!="
	In           Operator = "in"
	NotIn        Operator = "notin"
	Exists       Operator = "exists"
	DoesNotExist Operator = "!"
)

// Requirement is one comma-separated term of a label selector.
type Requirement struct {
	Key      string
	Operator Operator
	// Values holds one value for Equals and NotEquals, a sorted set for In and NotIn, and
	// nothing for Exists and DoesNotExist.
	Values []string
}

// Matches reports whether labels satisfy the requirement. As in Kubernetes, NotEquals and
// NotIn match objects that do not have the label at all.
func (r Requirement) Matches(labels map[string]string) bool {
	v, ok := labels[r.Key]
	switch r.Operator {
	case Exists:
		return ok
	case DoesNotExist:
		return !ok
	case Equals:
		return ok && v == r.Values[0]
	case NotEquals:
		return !ok || v != r.Values[0]
	case In:
		return ok && slices.Contains(r.Values, v)
	case NotIn:
		return !ok || !slices.Contains(r.Values, v)
	}
	return false
}

// String writes the requirement in selector syntax.
func (r Requirement) String() string {
	switch r.Operator {
	case Exists:
		return r.Key
	case DoesNotExist:
		return "!" + r.Key
	case Equals, NotEquals:
		return r.Key + string(r.Operator) + r.Values[0]
	default:
		return r.Key + " " + string(r.Operator) + " (" + strings.Join(r.Values, ",") + ")"
	}
}

// Selector is a parsed label selector: the conjunction of its requirements. The zero value
// selects everything.
type Selector struct {
	reqs []Requirement
}

// Everything returns the selector that matches every object.
func Everything() Selector { return Selector{} }

// SelectorFromSet returns the selector requiring every label of set with its value.
func SelectorFromSet(set map[string]string) Selector {
	var s Selector
	for k, v := range set {
		s.reqs = append(s.reqs, Requirement{Key: k, Operator: Equals, Values: []string{v}})
	}
	s.sort()
	return s
}

// Empty reports whether the selector matches everything.
func (s Selector) Empty() bool { return len(s.reqs) == 0 }

// Requirements returns a copy of the selector's requirements, sorted by key.
func (s Selector) Requirements() []Requirement { return slices.Clone(s.reqs) }

// Matches reports whether labels satisfy every requirement.
func (s Selector) Matches(labels map[string]string) bool {
	for _, r := range s.reqs {
		if !r.Matches(labels) {
			return false
		}
	}
	return true
}

// String returns the selector in the syntax Parse reads ("" for Everything), with
// requirements sorted by key.
func (s Selector) String() string {
	parts := make([]string, len(s.reqs))
	for i, r := range s.reqs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}

func (s *Selector) sort() {
	slices.SortStableFunc(s.reqs, func(a, b Requirement) int { return strings.Compare(a.Key, b.Key) })
}

// MustParse is Parse that panics on error, for selectors written in code.
func MustParse(selector string) Selector {
	s, err := Parse(selector)
	if err != nil {
		panic(err)
	}
	return s
}

// Parse parses a Kubernetes label selector: comma-separated requirements, each one of
//
//	key          the label exists
//	!key         the label does not exist
//	key=value    also key==value
//	key!=value   the label is missing or has another value
//	key in (v1,v2)
//	key notin (v1,v2)
//
// Keys are label keys (an optional DNS subdomain prefix and "/", then a name of at most 63
// characters); values are empty or names of at most 63 characters. The empty string selects
// everything. Set-based operators < and > (numeric comparison) are not supported.
func Parse(selector string) (Selector, error) {
	p := selectorParser{src: selector}
	var s Selector
	if strings.TrimSpace(selector) == "" {
		return s, nil
	}
	for {
		r, err := p.requirement()
		if err != nil {
			return Selector{}, fmt.Errorf("labels: selector %q: %w", selector, err)
		}
		s.reqs = append(s.reqs, r)
		t := p.next()
		if t.kind == tokEOF {
			break
		}
		if t.kind != tokComma {
			return Selector{}, fmt.Errorf("labels: selector %q: expected \",\" at offset %d, found %q", selector, t.pos, t.text)
		}
	}
	s.sort()
	return s, nil
}

type tokenKind int

const (
	tokEOF tokenKind = iota
	tokIdent
	tokComma
	tokLParen
	tokRParen
	tokBang
	tokEq
	tokNotEq
	tokOther
)

type token struct {
	kind tokenKind
	text string
	pos  int
}

type selectorParser struct {
	src    string
	pos    int
	peeked *token
}

func isSpecial(c byte) bool {
	switch c {
	case ',', '(', ')', '!', '=', '<', '>', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

func (p *selectorParser) next() token {
	if p.peeked != nil {
		t := *p.peeked
		p.peeked = nil
		return t
	}
	for p.pos < len(p.src) && strings.IndexByte(" \t\n\r", p.src[p.pos]) >= 0 {
		p.pos++
	}
	start := p.pos
	if p.pos >= len(p.src) {
		return token{kind: tokEOF, pos: start}
	}
	c := p.src[p.pos]
	two := ""
	if p.pos+1 < len(p.src) {
		two = p.src[p.pos : p.pos+2]
	}
	switch {
	case two == "!=":
		p.pos += 2
		return token{tokNotEq, two, start}
	case two == "==":
		p.pos += 2
		return token{tokEq, two, start}
	case c == '=':
		p.pos++
		return token{tokEq, "=", start}
	case c == '!':
		p.pos++
		return token{tokBang, "!", start}
	case c == ',':
		p.pos++
		return token{tokComma, ",", start}
	case c == '(':
		p.pos++
		return token{tokLParen, "(", start}
	case c == ')':
		p.pos++
		return token{tokRParen, ")", start}
	case c == '<' || c == '>':
		p.pos++
		return token{tokOther, string(c), start}
	}
	for p.pos < len(p.src) && !isSpecial(p.src[p.pos]) {
		p.pos++
	}
	return token{tokIdent, p.src[start:p.pos], start}
}

func (p *selectorParser) peek() token {
	if p.peeked == nil {
		t := p.next()
		p.peeked = &t
	}
	return *p.peeked
}

func (p *selectorParser) requirement() (Requirement, error) {
	t := p.next()
	if t.kind == tokBang {
		k := p.next()
		if k.kind != tokIdent {
			return Requirement{}, fmt.Errorf("expected a label key after \"!\" at offset %d", k.pos)
		}
		if err := validateKey(k.text); err != nil {
			return Requirement{}, err
		}
		return Requirement{Key: k.text, Operator: DoesNotExist}, nil
	}
	if t.kind != tokIdent {
		return Requirement{}, fmt.Errorf("expected a label key at offset %d, found %q", t.pos, t.text)
	}
	if err := validateKey(t.text); err != nil {
		return Requirement{}, err
	}
	r := Requirement{Key: t.text}
	op := p.peek()
	switch {
	case op.kind == tokEOF || op.kind == tokComma:
		r.Operator = Exists
		return r, nil
	case op.kind == tokEq || op.kind == tokNotEq:
		p.next()
		r.Operator = Equals
		if op.kind == tokNotEq {
			r.Operator = NotEquals
		}
		v := p.peek()
		value := ""
		if v.kind == tokIdent {
			p.next()
			value = v.text
		} else if v.kind != tokEOF && v.kind != tokComma {
			return Requirement{}, fmt.Errorf("expected a value after %q at offset %d, found %q", op.text, v.pos, v.text)
		}
		if err := validateValue(value); err != nil {
			return Requirement{}, err
		}
		r.Values = []string{value}
		return r, nil
	case op.kind == tokIdent && (op.text == "in" || op.text == "notin"):
		p.next()
		r.Operator = In
		if op.text == "notin" {
			r.Operator = NotIn
		}
		values, err := p.valueSet()
		if err != nil {
			return Requirement{}, err
		}
		r.Values = values
		return r, nil
	case op.kind == tokOther:
		return Requirement{}, fmt.Errorf("operator %q at offset %d is not supported", op.text, op.pos)
	default:
		return Requirement{}, fmt.Errorf("expected an operator (=, ==, !=, in, notin) after %q at offset %d, found %q", r.Key, op.pos, op.text)
	}
}

func (p *selectorParser) valueSet() ([]string, error) {
	if t := p.next(); t.kind != tokLParen {
		return nil, fmt.Errorf("expected \"(\" at offset %d, found %q", t.pos, t.text)
	}
	var values []string
	for {
		value := ""
		t := p.next()
		if t.kind == tokIdent {
			value = t.text
			t = p.next()
		}
		if err := validateValue(value); err != nil {
			return nil, err
		}
		values = append(values, value)
		switch t.kind {
		case tokComma:
			continue
		case tokRParen:
		default:
			return nil, fmt.Errorf("expected \",\" or \")\" at offset %d, found %q", t.pos, t.text)
		}
		break
	}
	if len(values) == 1 && values[0] == "" {
		return nil, fmt.Errorf("the set of values of in and notin cannot be empty")
	}
	slices.Sort(values)
	return slices.Compact(values), nil
}

// validateKey checks a label key: [prefix/]name, prefix a DNS subdomain of at most 253
// characters, name at most 63 characters of [A-Za-z0-9_.-] starting and ending alphanumeric.
func validateKey(key string) error {
	name := key
	if prefix, rest, ok := strings.Cut(key, "/"); ok {
		name = rest
		if prefix == "" || len(prefix) > 253 || !isDNSSubdomain(prefix) {
			return fmt.Errorf("label key %q: the prefix must be a DNS subdomain", key)
		}
	}
	if name == "" || len(name) > 63 || !isLabelName(name) {
		return fmt.Errorf("label key %q: the name must be 1 to 63 characters of [A-Za-z0-9_.-], starting and ending with an alphanumeric character", key)
	}
	return nil
}

func validateValue(value string) error {
	if value == "" {
		return nil
	}
	if len(value) > 63 || !isLabelName(value) {
		return fmt.Errorf("label value %q: must be empty or 1 to 63 characters of [A-Za-z0-9_.-], starting and ending with an alphanumeric character", value)
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isLabelName(s string) bool {
	if !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isDNSSubdomain(s string) bool {
	for _, part := range strings.Split(s, ".") {
		if part == "" || len(part) > 63 {
			return false
		}
		if !isLower(part[0]) || !isLower(part[len(part)-1]) {
			return false
		}
		for i := 0; i < len(part); i++ {
			if !isLower(part[i]) && part[i] != '-' {
				return false
			}
		}
	}
	return true
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
