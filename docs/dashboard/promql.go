package main

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The panels' queries use a small part of PromQL, which this file parses and evaluates over
// the scraped store: selectors with = and =~ matchers, rate(selector[range]),
// sum by (labels) (expr) and histogram_quantile(q, expr). Anything else is an error, so a
// dashboard change that needs more shows up here instead of being drawn wrong.

// sample is one element of an instant vector.
type sample struct {
	labels map[string]string
	v      float64
}

type node interface {
	eval(s *store, at int) []sample // at: index of the scrape evaluated
}

type matcher struct {
	label string
	re    *regexp.Regexp // anchored; = is an escaped literal
}

type selector struct {
	name     string
	matchers []matcher
	window   time.Duration // for rate
}

type rateNode struct{ sel *selector }

type sumBy struct {
	by []string
	x  node
}

type quantileNode struct {
	q float64
	x node
}

// parser is a recursive-descent parser over the query text.
type parser struct {
	s   string
	pos int
}

func parseQuery(q string) (node, error) {
	p := &parser{s: q}
	n, err := p.expr()
	if err == nil {
		if p.skip(); p.pos != len(p.s) {
			err = fmt.Errorf("unexpected %q", p.s[p.pos:])
		}
	}
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", q, err)
	}
	return n, nil
}

func (p *parser) skip() {
	for p.pos < len(p.s) && p.s[p.pos] == ' ' {
		p.pos++
	}
}

func (p *parser) eat(tok string) bool {
	p.skip()
	if strings.HasPrefix(p.s[p.pos:], tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

func (p *parser) expect(tok string) error {
	if !p.eat(tok) {
		return fmt.Errorf("want %q at %d", tok, p.pos)
	}
	return nil
}

func (p *parser) ident() string {
	p.skip()
	start := p.pos
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || p.pos > start && c >= '0' && c <= '9' {
			p.pos++
			continue
		}
		break
	}
	return p.s[start:p.pos]
}

func (p *parser) expr() (node, error) {
	name := p.ident()
	switch name {
	case "rate":
		if err := p.expect("("); err != nil {
			return nil, err
		}
		sel, err := p.selector(p.ident())
		if err != nil {
			return nil, err
		}
		if sel.window == 0 {
			return nil, fmt.Errorf("rate needs a range")
		}
		return rateNode{sel}, p.expect(")")
	case "sum":
		var by []string
		if p.eat("by") {
			if err := p.expect("("); err != nil {
				return nil, err
			}
			for !p.eat(")") {
				by = append(by, p.ident())
				p.eat(",")
			}
		}
		if err := p.expect("("); err != nil {
			return nil, err
		}
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		return sumBy{by, x}, p.expect(")")
	case "histogram_quantile":
		if err := p.expect("("); err != nil {
			return nil, err
		}
		p.skip()
		end := strings.IndexByte(p.s[p.pos:], ',')
		if end < 0 {
			return nil, fmt.Errorf("histogram_quantile needs two arguments")
		}
		q, err := strconv.ParseFloat(strings.TrimSpace(p.s[p.pos:p.pos+end]), 64)
		if err != nil {
			return nil, err
		}
		p.pos += end + 1
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		return quantileNode{q, x}, p.expect(")")
	case "":
		return nil, fmt.Errorf("want an expression at %d", p.pos)
	}
	return p.selector(name)
}

func (p *parser) selector(name string) (*selector, error) {
	sel := &selector{name: name}
	if p.eat("{") {
		for !p.eat("}") {
			label := p.ident()
			op := "="
			if p.eat("=~") {
				op = "=~"
			} else if err := p.expect("="); err != nil {
				return nil, err
			}
			p.skip()
			v, rest, err := unquotePrefix(p.s[p.pos:])
			if err != nil {
				return nil, err
			}
			p.pos = len(p.s) - len(rest)
			if op == "=" {
				v = regexp.QuoteMeta(v)
			}
			re, err := regexp.Compile("^(?:" + v + ")$")
			if err != nil {
				return nil, err
			}
			sel.matchers = append(sel.matchers, matcher{label, re})
			p.eat(",")
		}
	}
	if p.eat("[") {
		end := strings.IndexByte(p.s[p.pos:], ']')
		if end < 0 {
			return nil, fmt.Errorf("unterminated range")
		}
		d, err := time.ParseDuration(p.s[p.pos : p.pos+end])
		if err != nil {
			return nil, err
		}
		sel.window, p.pos = d, p.pos+end+1
	}
	return sel, nil
}

// matching returns the keys of the series the selector picks.
func (sel *selector) matching(s *store) []string {
	var keys []string
	for k, sr := range s.series {
		ok := sr.name == sel.name
		for _, m := range sel.matchers {
			ok = ok && m.re.MatchString(sr.labels[m.label])
		}
		if ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func (sel *selector) eval(s *store, at int) []sample {
	var out []sample
	for _, k := range sel.matching(s) {
		if v, ok := s.scrapes[at].values[k]; ok {
			out = append(out, sample{s.series[k].labels, v})
		}
	}
	return out
}

func (r rateNode) eval(s *store, at int) []sample {
	from := at
	for from > 0 && s.scrapes[at].at.Sub(s.scrapes[from-1].at) <= r.sel.window {
		from--
	}
	if from == at {
		return nil
	}
	dt := s.scrapes[at].at.Sub(s.scrapes[from].at).Seconds()
	var out []sample
	for _, k := range r.sel.matching(s) {
		v0, ok0 := s.scrapes[from].values[k]
		v1, ok1 := s.scrapes[at].values[k]
		if ok0 && ok1 {
			d := v1 - v0
			if d < 0 { // a counter reset
				d = v1
			}
			out = append(out, sample{s.series[k].labels, d / dt})
		}
	}
	return out
}

func (n sumBy) eval(s *store, at int) []sample {
	groups := map[string]*sample{}
	var order []string
	for _, x := range n.x.eval(s, at) {
		labels := map[string]string{}
		for _, l := range n.by {
			if v, ok := x.labels[l]; ok {
				labels[l] = v
			}
		}
		k := key("", labels)
		if g, ok := groups[k]; ok {
			g.v += x.v
			continue
		}
		groups[k] = &sample{labels, x.v}
		order = append(order, k)
	}
	out := make([]sample, len(order))
	for i, k := range order {
		out[i] = *groups[k]
	}
	return out
}

// eval is Prometheus' histogram_quantile: per group of buckets, the bucket the rank falls
// in, interpolated linearly; the highest finite bound when it falls in +Inf; nothing when
// the group counted nothing.
func (n quantileNode) eval(s *store, at int) []sample {
	type bkt struct{ le, c float64 }
	groups := map[string][]bkt{}
	labelsOf := map[string]map[string]string{}
	for _, x := range n.x.eval(s, at) {
		le, err := strconv.ParseFloat(x.labels["le"], 64)
		if err != nil {
			continue
		}
		rest := map[string]string{}
		for k, v := range x.labels {
			if k != "le" {
				rest[k] = v
			}
		}
		k := key("", rest)
		groups[k], labelsOf[k] = append(groups[k], bkt{le, x.v}), rest
	}
	var out []sample
	for k, bs := range groups {
		sort.Slice(bs, func(i, j int) bool { return bs[i].le < bs[j].le })
		total := bs[len(bs)-1].c
		if total <= 0 || !math.IsInf(bs[len(bs)-1].le, 1) {
			continue
		}
		rank, lower, below := n.q*total, 0.0, 0.0
		v := math.NaN()
		for i, b := range bs {
			if b.c >= rank {
				if math.IsInf(b.le, 1) {
					v = bs[max(i-1, 0)].le
				} else {
					v = lower + (b.le-lower)*(rank-below)/math.Max(b.c-below, 1e-12)
				}
				break
			}
			lower, below = b.le, b.c
		}
		out = append(out, sample{labelsOf[k], v})
	}
	sort.Slice(out, func(i, j int) bool { return key("", out[i].labels) < key("", out[j].labels) })
	return out
}
