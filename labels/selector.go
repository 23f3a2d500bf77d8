package labels

import (
	"fmt"
	"slices"
	"strconv"
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
	// GreaterThan and LessThan compare the label's value as an integer.
	GreaterThan Operator = "gt"
	LessThan    Operator = "lt"
)

// Requirement is one comma-separated term of a label selector.
type Requirement struct {
	Key      string
	Operator Operator
	// Values holds one value for Equals, NotEquals, GreaterThan and LessThan (an integer for
	// the last two), a sorted set for In and NotIn, and nothing for Exists and DoesNotExist.
	Values []string
}

// Matches reports whether labels satisfy the requirement. As in Kubernetes, NotEquals and
// NotIn match objects that do not have the label at all, and GreaterThan and LessThan match
// only labels whose value is an integer.
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
	case GreaterThan, LessThan:
		if !ok {
			return false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return false
		}
		limit, _ := strconv.ParseInt(r.Values[0], 10, 64) // validated by Parse
		return (r.Operator == GreaterThan && n > limit) || (r.Operator == LessThan && n < limit)
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
	case GreaterThan:
		return r.Key + ">" + r.Values[0]
	case LessThan:
		return r.Key + "<" + r.Values[0]
	default:
		return r.Key + " " + string(r.Operator) + " (" + strings.Join(r.Values, ",") + ")"
	}
}

// Selector is a parsed label selector: the conjunction of its requirements. The zero value
// selects everything.
type Selector struct {
	reqs    []Requirement
	nothing bool // Nothing
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
func (s Selector) Empty() bool { return len(s.reqs) == 0 && !s.nothing }

// Requirements returns a copy of the selector's requirements, sorted by key.
func (s Selector) Requirements() []Requirement { return slices.Clone(s.reqs) }

// Matches reports whether labels satisfy every requirement.
func (s Selector) Matches(labels map[string]string) bool {
	if s.nothing {
		return false
	}
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

// SyntaxError is the error of Parse: the selector and what is wrong with it, in the words of
// the Kubernetes API server (its message is the one a kube-apiserver puts in its 400 answer).
type SyntaxError struct {
	Selector string
	Msg      string
}

// Error returns the message.
func (e *SyntaxError) Error() string { return e.Msg }

// MustParse is Parse that panics on error, for selectors written in code.
func MustParse(selector string) Selector {
	s, err := Parse(selector)
	if err != nil {
		panic(fmt.Sprintf("labels: selector %q: %v", selector, err))
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
//	key>n, key<n the label's value is an integer greater (less) than n
//
// Keys are label keys (an optional DNS subdomain prefix and "/", then a name of at most 63
// characters); values are empty or names of at most 63 characters; "in ()" is the set of the
// empty value. The empty string selects everything. The grammar, the accepted inputs and the
// error messages are apimachinery's labels.Parse's. An error is a *SyntaxError.
func Parse(selector string) (Selector, error) {
	p := parser{lex: lexer{src: selector}}
	var s Selector
	for {
		switch t := p.peek(true); t.kind {
		case tokEOF:
			s.sort()
			return s, nil
		case tokIdent, tokBang:
			r, err := p.requirement()
			if err != nil {
				return Selector{}, p.fail("unable to parse requirement: %s", err)
			}
			s.reqs = append(s.reqs, r)
			switch t := p.next(true); t.kind {
			case tokEOF:
				s.sort()
				return s, nil
			case tokComma:
				if n := p.peek(true); n.kind != tokIdent && n.kind != tokBang {
					return Selector{}, p.fail("found '%s', expected: identifier after ','", n.text)
				}
			default:
				return Selector{}, p.fail("found '%s', expected: ',' or 'end of string'", t.text)
			}
		default:
			return Selector{}, p.fail("found '%s', expected: !, identifier, or 'end of string'", t.text)
		}
	}
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
	tokDoubleEq
	tokNotEq
	tokGt
	tokLt
	tokIn
	tokNotIn
)

type token struct {
	kind tokenKind
	text string
}

// lexer splits a selector into tokens: the operators and punctuation, and identifiers (runs
// of anything else but white space). "in" and "notin" are keywords only where an operator
// may stand; elsewhere they are values.
type lexer struct {
	src string
	pos int
}

func isSpecial(c byte) bool {
	switch c {
	case '=', '!', '(', ')', ',', '>', '<':
		return true
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func (l *lexer) next() token {
	for l.pos < len(l.src) && isSpace(l.src[l.pos]) {
		l.pos++
	}
	if l.pos >= len(l.src) {
		return token{kind: tokEOF}
	}
	if rest := l.src[l.pos:]; len(rest) >= 2 {
		switch rest[:2] {
		case "!=":
			l.pos += 2
			return token{tokNotEq, "!="}
		case "==":
			l.pos += 2
			return token{tokDoubleEq, "=="}
		}
	}
	c := l.src[l.pos]
	if isSpecial(c) {
		l.pos++
		var kind tokenKind
		switch c {
		case '=':
			kind = tokEq
		case '!':
			kind = tokBang
		case '(':
			kind = tokLParen
		case ')':
			kind = tokRParen
		case ',':
			kind = tokComma
		case '>':
			kind = tokGt
		case '<':
			kind = tokLt
		}
		return token{kind, l.src[l.pos-1 : l.pos]}
	}
	start := l.pos
	for l.pos < len(l.src) && !isSpecial(l.src[l.pos]) && !isSpace(l.src[l.pos]) {
		l.pos++
	}
	switch word := l.src[start:l.pos]; word {
	case "in":
		return token{tokIn, word}
	case "notin":
		return token{tokNotIn, word}
	default:
		return token{tokIdent, word}
	}
}

type parser struct {
	lex    lexer
	peeked *token
}

// next returns the next token; asValue makes the keywords in and notin identifiers.
func (p *parser) next(asValue bool) token {
	t := p.peek(asValue)
	p.peeked = nil
	return t
}

func (p *parser) peek(asValue bool) token {
	if p.peeked == nil {
		t := p.lex.next()
		p.peeked = &t
	}
	t := *p.peeked
	if asValue && (t.kind == tokIn || t.kind == tokNotIn) {
		t.kind = tokIdent
	}
	return t
}

func (p *parser) fail(format string, args ...any) error {
	return &SyntaxError{Selector: p.lex.src, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) requirement() (Requirement, error) {
	t := p.next(true)
	bang := t.kind == tokBang
	if bang {
		t = p.next(true)
	}
	if t.kind != tokIdent {
		return Requirement{}, fmt.Errorf("found '%s', expected: identifier", t.text)
	}
	if err := ValidateKey(t.text); err != nil {
		return Requirement{}, err
	}
	r := Requirement{Key: t.text}
	if bang {
		r.Operator = DoesNotExist
		return r, nil
	}
	if n := p.peek(true); n.kind == tokEOF || n.kind == tokComma {
		r.Operator = Exists
		return r, nil
	}
	switch op := p.next(false); op.kind {
	case tokIn, tokNotIn:
		r.Operator = In
		if op.kind == tokNotIn {
			r.Operator = NotIn
		}
		values, err := p.valueSet()
		if err != nil {
			return Requirement{}, err
		}
		slices.Sort(values)
		r.Values = slices.Compact(values)
	case tokEq, tokDoubleEq, tokNotEq, tokGt, tokLt:
		switch op.kind {
		case tokEq, tokDoubleEq:
			r.Operator = Equals
		case tokNotEq:
			r.Operator = NotEquals
		case tokGt:
			r.Operator = GreaterThan
		case tokLt:
			r.Operator = LessThan
		}
		value := ""
		if n := p.peek(true); n.kind != tokEOF && n.kind != tokComma {
			v := p.next(true)
			if v.kind != tokIdent {
				return Requirement{}, fmt.Errorf("found '%s', expected: identifier", v.text)
			}
			value = v.text
		}
		if r.Operator == GreaterThan || r.Operator == LessThan {
			if _, err := strconv.ParseInt(value, 10, 64); err != nil {
				return Requirement{}, fmt.Errorf("for 'Gt', 'Lt' operators, the value must be an integer")
			}
		}
		r.Values = []string{value}
	default:
		return Requirement{}, fmt.Errorf("found '%s', expected: in, notin, =, ==, !=, gt, lt", op.text)
	}
	for _, v := range r.Values {
		if err := ValidateValue(v); err != nil {
			return Requirement{}, err
		}
	}
	return r, nil
}

// valueSet parses "(v1,v2,...)". Empty members are the empty value: "()" and "(a,)" hold "".
func (p *parser) valueSet() ([]string, error) {
	if t := p.next(true); t.kind != tokLParen {
		return nil, fmt.Errorf("found '%s' expected: '('", t.text)
	}
	switch t := p.peek(true); t.kind {
	case tokRParen:
		p.next(true)
		return []string{""}, nil
	case tokIdent, tokComma:
	default:
		return nil, fmt.Errorf("found '%s', expected: ',', ')' or identifier", t.text)
	}
	var values []string
	for {
		switch t := p.next(true); t.kind {
		case tokIdent:
			values = append(values, t.text)
			switch n := p.peek(true); n.kind {
			case tokComma:
			case tokRParen:
				p.next(true)
				return values, nil
			default:
				return nil, fmt.Errorf("found '%s', expected: ',' or ')'", n.text)
			}
		case tokComma:
			if len(values) == 0 {
				values = append(values, "") // "(,"
			}
			switch n := p.peek(true); n.kind {
			case tokRParen: // ",)"
				p.next(true)
				return append(values, ""), nil
			case tokComma: // ",,"
				values = append(values, "")
			}
		default:
			return nil, fmt.Errorf("found '%s', expected: ',', or identifier", t.text)
		}
	}
}

// ValidateKey checks a label key: [prefix/]name, prefix a DNS subdomain of at most 253
// characters, name at most 63 characters of [A-Za-z0-9_.-] starting and ending alphanumeric
// (apimachinery's validation.IsQualifiedName).
func ValidateKey(key string) error {
	name := key
	if prefix, rest, ok := strings.Cut(key, "/"); ok {
		name = rest
		if prefix == "" || len(prefix) > 253 || !isDNSSubdomain(prefix) {
			return fmt.Errorf("invalid label key %q: prefix part must be a DNS subdomain (lower case alphanumeric characters, '-' or '.', starting and ending with an alphanumeric character)", key)
		}
	}
	if name == "" || len(name) > 63 || !isLabelName(name) {
		return fmt.Errorf("invalid label key %q: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", key)
	}
	return nil
}

// ValidateValue checks a label value: empty, or at most 63 characters of [A-Za-z0-9_.-]
// starting and ending alphanumeric (apimachinery's validation.IsValidLabelValue).
func ValidateValue(value string) error {
	if value == "" {
		return nil
	}
	if len(value) > 63 || !isLabelName(value) {
		return fmt.Errorf("invalid label value: %q: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", value)
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
