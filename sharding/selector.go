package sharding

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrInvalid is wrapped by every error of Parse.
var ErrInvalid = errors.New("invalid shard selector")

// Field is the object field a selector hashes, in the selector's CEL syntax.
type Field string

// The fields the kube-apiserver can shard on.
const (
	// FieldUID spreads objects evenly whatever their namespace; an owner and the objects it
	// owns usually land in different ranges.
	FieldUID Field = "object.metadata.uid"
	// FieldNamespace keeps every object of a namespace in one range (an owner and its
	// children together), at the price of an uneven spread when namespaces differ in size.
	FieldNamespace Field = "object.metadata.namespace"
)

// Valid reports whether f is a field the kube-apiserver shards on.
func (f Field) Valid() bool { return f == FieldUID || f == FieldNamespace }

// Hash is the 64-bit FNV-1a hash of value's bytes, the hash the kube-apiserver compares
// with a selector's ranges.
func Hash(value string) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	for i := 0; i < len(value); i++ {
		h ^= uint64(value[i])
		h *= prime
	}
	return h
}

// Range is the half-open range [Start, End) of the 64-bit hash space. End 0 stands for
// 2^64, the end of the space (no range ends at 0), so the zero Range is the whole space.
type Range struct {
	Start uint64
	End   uint64
}

// FullRange is the whole hash space.
var FullRange = Range{}

// Contains reports whether h lies in r.
func (r Range) Contains(h uint64) bool {
	return h >= r.Start && (r.End == 0 || h < r.End)
}

// Empty reports whether r holds no hash (Start is not below End).
func (r Range) Empty() bool { return r.End != 0 && r.Start >= r.End }

// Size is the number of hashes in r; the whole space (2^64) is reported as 0 with full true.
func (r Range) Size() (n uint64, full bool) {
	if r.Start == 0 && r.End == 0 {
		return 0, true
	}
	if r.Empty() {
		return 0, false
	}
	return r.End - r.Start, false // End 0 wraps to 2^64 - Start, as it should
}

// String is the range as "[0x…, 0x…)".
func (r Range) String() string {
	return "[" + formatStart(r.Start) + ", " + formatEnd(r.End) + ")"
}

func formatStart(v uint64) string { return fmt.Sprintf("0x%016x", v) }

func formatEnd(v uint64) string {
	if v == 0 {
		return "0x10000000000000000"
	}
	return fmt.Sprintf("0x%016x", v)
}

// Selector is a parsed shard selector: an object matches when the hash of its Field lies
// in any of Ranges. A Selector without ranges matches nothing and has no wire form (the
// kube-apiserver refuses an empty shardSelector; omit the parameter to select everything).
type Selector struct {
	Field  Field
	Ranges []Range
}

// NewSelector returns the selector of ranges on field.
func NewSelector(field Field, ranges ...Range) Selector {
	return Selector{Field: field, Ranges: ranges}
}

// MatchesHash reports whether h lies in one of the selector's ranges.
func (s Selector) MatchesHash(h uint64) bool {
	for _, r := range s.Ranges {
		if r.Contains(h) {
			return true
		}
	}
	return false
}

// Matches reports whether an object whose Field holds value matches.
func (s Selector) Matches(value string) bool { return s.MatchesHash(Hash(value)) }

// MatchesObject reports whether an object with this uid and namespace matches.
func (s Selector) MatchesObject(uid, namespace string) bool {
	if s.Field == FieldNamespace {
		return s.Matches(namespace)
	}
	return s.Matches(uid)
}

// String is the selector's wire form in the kube-apiserver's normal form (the one it
// echoes in ListMeta.shardInfo.selector): "shardRange(<field>, '0x…', '0x…')" per range,
// joined with " || ". It is "" for a selector without ranges.
func (s Selector) String() string {
	var b strings.Builder
	for i, r := range s.Ranges {
		if i > 0 {
			b.WriteString(" || ")
		}
		b.WriteString("shardRange(")
		b.WriteString(string(s.Field))
		b.WriteString(", '")
		b.WriteString(formatStart(r.Start))
		b.WriteString("', '")
		b.WriteString(formatEnd(r.End))
		b.WriteString("')")
	}
	return b.String()
}

// Validate checks what the kube-apiserver checks: a known field, at least one range, and
// every range non-empty.
func (s Selector) Validate() error {
	if !s.Field.Valid() {
		return fmt.Errorf("%w: unsupported field path %q; supported: %s, %s", ErrInvalid, s.Field, FieldUID, FieldNamespace)
	}
	if len(s.Ranges) == 0 {
		return fmt.Errorf("%w: no range", ErrInvalid)
	}
	for _, r := range s.Ranges {
		if r.Empty() {
			return fmt.Errorf("%w: shard range start %s must be less than end %s", ErrInvalid, formatStart(r.Start), formatEnd(r.End))
		}
	}
	return nil
}

// Parse reads a shardSelector as the kube-apiserver does: shardRange(<field>, '<start>',
// '<end>') calls joined with ||, in any parentheses, all on the same field. Errors wrap
// ErrInvalid.
func Parse(s string) (Selector, error) {
	p := parser{in: s}
	p.space()
	if p.pos == len(p.in) {
		return Selector{}, fmt.Errorf("%w: empty shard selector is not allowed; omit the parameter for unfiltered lists", ErrInvalid)
	}
	var sel Selector
	if err := p.or(&sel, 0); err != nil {
		return Selector{}, err
	}
	p.space()
	if p.pos != len(p.in) {
		if strings.HasPrefix(p.in[p.pos:], "&&") {
			// The server's CEL tree is then an && call at the root.
			return Selector{}, p.errorf("unsupported function \"_&&_\"; only shardRange() and || are allowed")
		}
		return Selector{}, p.errorf("unexpected %q", p.rest())
	}
	return sel, nil
}

type parser struct {
	in  string
	pos int
}

// maxDepth bounds nested parentheses (CEL's parser has a recursion limit too).
const maxDepth = 100

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

func (p *parser) rest() string {
	r := p.in[p.pos:]
	if len(r) > 20 {
		r = r[:20] + "…"
	}
	return r
}

func (p *parser) space() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r', '\f':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) eat(tok string) bool {
	p.space()
	if strings.HasPrefix(p.in[p.pos:], tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

// or reads term ('||' term)*.
func (p *parser) or(sel *Selector, depth int) error {
	for {
		if err := p.term(sel, depth); err != nil {
			return err
		}
		if !p.eat("||") {
			return nil
		}
	}
}

// term reads '(' or ')' or a shardRange call.
func (p *parser) term(sel *Selector, depth int) error {
	if p.eat("(") {
		if depth >= maxDepth {
			return p.errorf("too deeply nested")
		}
		if err := p.or(sel, depth+1); err != nil {
			return err
		}
		if !p.eat(")") {
			return p.errorf("expected ')'")
		}
		return nil
	}
	p.space()
	name := p.ident()
	if name != "shardRange" {
		if name == "" {
			return p.errorf("expected shardRange() call or || operator")
		}
		if p.eat("(") {
			return p.errorf("unsupported function %q; only shardRange() and || are allowed", name)
		}
		return p.errorf("unexpected identifier %q; expected shardRange() call or || operator", name)
	}
	if !p.eat("(") {
		return p.errorf("expected '(' after shardRange")
	}
	field, err := p.path()
	if err != nil {
		return err
	}
	if !Field(field).Valid() {
		return p.errorf("unsupported field path %q; supported: %s, %s", field, FieldUID, FieldNamespace)
	}
	if !p.eat(",") {
		return p.argCount(1)
	}
	start, err := p.bound("hexStart")
	if err != nil {
		return err
	}
	if !p.eat(",") {
		return p.argCount(2)
	}
	end, err := p.bound("hexEnd")
	if err != nil {
		return err
	}
	if !p.eat(")") {
		return p.argCount(3)
	}
	if start == "0x10000000000000000" {
		return p.errorf("shard range start %s must be less than end %s", start, end)
	}
	r := Range{Start: parseHex(start[2:])}
	if end != "0x10000000000000000" {
		r.End = parseHex(end[2:])
		if r.Start >= r.End {
			return p.errorf("shard range start %s must be less than end %s", start, end)
		}
	}
	if sel.Field == "" {
		sel.Field = Field(field)
	} else if sel.Field != Field(field) {
		return p.errorf("all shard ranges must use the same field, got %q and %q", sel.Field, field)
	}
	sel.Ranges = append(sel.Ranges, r)
	return nil
}

// argCount reports a shardRange call that does not have 3 arguments: n were read and the
// call goes on at p.pos. It counts the remaining top-level arguments as the server does
// (which sees the whole call), or reports a syntax error if the call does not close.
func (p *parser) argCount(n int) error {
	depth := 0
	for p.space(); p.pos < len(p.in); p.pos++ {
		switch c := p.in[p.pos]; c {
		case '\'', '"':
			end := strings.IndexByte(p.in[p.pos+1:], c)
			if end < 0 {
				return p.errorf("unterminated string literal")
			}
			p.pos += end + 1
		case '(':
			depth++
		case ')':
			if depth == 0 {
				return p.errorf("shardRange() requires exactly 3 arguments, got %d", n)
			}
			depth--
		case ',':
			if depth == 0 {
				n++
			}
		}
	}
	return p.errorf("syntax error: missing ')'")
}

func parseHex(s string) uint64 {
	v, _ := strconv.ParseUint(s, 16, 64) // checked by bound
	return v
}

func isIdentStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func (p *parser) ident() string {
	start := p.pos
	if p.pos < len(p.in) && isIdentStart(p.in[p.pos]) {
		p.pos++
		for p.pos < len(p.in) && (isIdentStart(p.in[p.pos]) || ('0' <= p.in[p.pos] && p.in[p.pos] <= '9')) {
			p.pos++
		}
	}
	return p.in[start:p.pos]
}

// path reads ident ('.' ident)*.
func (p *parser) path() (string, error) {
	var parts []string
	for {
		p.space()
		id := p.ident()
		if id == "" {
			return "", p.errorf("expected field path (e.g. %s)", FieldUID)
		}
		parts = append(parts, id)
		if !p.eat(".") {
			return strings.Join(parts, "."), nil
		}
	}
}

// bound reads a quoted hex literal and checks it as the server does.
func (p *parser) bound(name string) (string, error) {
	p.space()
	if p.pos >= len(p.in) || (p.in[p.pos] != '\'' && p.in[p.pos] != '"') {
		return "", p.errorf("%s must be a string literal (e.g. '0xff')", name)
	}
	q := p.in[p.pos]
	end := strings.IndexByte(p.in[p.pos+1:], q)
	if end < 0 {
		return "", p.errorf("unterminated string literal")
	}
	s := p.in[p.pos+1 : p.pos+1+end]
	if strings.ContainsAny(s, "\\\n\r") {
		return "", p.errorf("%s: escape sequences and line breaks are not supported", name)
	}
	p.pos += end + 2
	if !strings.HasPrefix(s, "0x") {
		return "", p.errorf("%s must have '0x' prefix, got %q", name, s)
	}
	hex := s[2:]
	if hex == "" {
		return "", p.errorf("%s: hex value is required after '0x'", name)
	}
	if len(hex) > 17 {
		return "", p.errorf("%s: hex value too long (%d chars, max 17): %q", name, len(hex), hex)
	}
	for i := 0; i < len(hex); i++ {
		if c := hex[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", p.errorf("%s: invalid hex character %q in %q", name, string(c), s)
		}
	}
	if len(hex) == 17 && s != "0x10000000000000000" {
		return "", p.errorf("%s: 17-digit hex value must be '0x10000000000000000' (2^64), got %q", name, s)
	}
	if len(hex) < 16 {
		return "", p.errorf("%s must be a 0x-prefixed 16-digit hex value, got %q (did you mean %q?)", name, s, "0x"+strings.Repeat("0", 16-len(hex))+hex)
	}
	return s, nil
}
