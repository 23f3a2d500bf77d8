// Package promtest parses the Prometheus text exposition format (version 0.0.4) strictly
// enough to catch an encoder that breaks it, for the tests of controller/metrics and of the
// controller Manager's /metrics endpoint.
package promtest

import (
	"bufio"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Family is one metric family parsed from the text exposition format.
type Family struct {
	Name, Help, Type string
	Samples          []Sample
}

type Sample struct {
	Name   string // with _bucket/_sum/_count for histograms
	Labels map[string]string
	Value  float64
}

// Parse parses the Prometheus text format (version 0.0.4) strictly enough to catch an
// encoder that breaks it: every sample follows the HELP and TYPE of its family, names and
// labels are well formed, label values unescape, values parse.
func Parse(text string) (map[string]*Family, error) {
	fams := map[string]*Family{}
	var cur *Family
	sc := bufio.NewScanner(strings.NewReader(text))
	line := 0
	for sc.Scan() {
		line++
		l := sc.Text()
		switch {
		case l == "":
			return nil, fmt.Errorf("line %d: empty line", line)
		case strings.HasPrefix(l, "# HELP "):
			name, help, _ := strings.Cut(strings.TrimPrefix(l, "# HELP "), " ")
			if _, dup := fams[name]; dup {
				return nil, fmt.Errorf("line %d: family %s declared twice", line, name)
			}
			h, err := unescape(help, false)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", line, err)
			}
			cur = &Family{Name: name, Help: h}
			fams[name] = cur
		case strings.HasPrefix(l, "# TYPE "):
			name, typ, _ := strings.Cut(strings.TrimPrefix(l, "# TYPE "), " ")
			if cur == nil || cur.Name != name || cur.Type != "" {
				return nil, fmt.Errorf("line %d: TYPE of %s not right after its HELP", line, name)
			}
			switch typ {
			case "counter", "gauge", "histogram":
			default:
				return nil, fmt.Errorf("line %d: unknown type %q", line, typ)
			}
			cur.Type = typ
		case strings.HasPrefix(l, "#"):
			return nil, fmt.Errorf("line %d: unexpected comment %q", line, l)
		default:
			s, err := parseSample(l)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", line, err)
			}
			if cur == nil || cur.Type == "" {
				return nil, fmt.Errorf("line %d: sample before HELP/TYPE", line)
			}
			base := s.Name
			if cur.Type == "histogram" {
				for _, suf := range []string{"_bucket", "_sum", "_count"} {
					if strings.HasSuffix(s.Name, suf) {
						base = strings.TrimSuffix(s.Name, suf)
					}
				}
				if base == s.Name {
					return nil, fmt.Errorf("line %d: histogram sample %s without suffix", line, s.Name)
				}
			}
			if base != cur.Name {
				return nil, fmt.Errorf("line %d: sample %s in family %s", line, s.Name, cur.Name)
			}
			cur.Samples = append(cur.Samples, s)
		}
	}
	return fams, sc.Err()
}

func parseSample(l string) (Sample, error) {
	s := Sample{Labels: map[string]string{}}
	i := strings.IndexAny(l, "{ ")
	if i <= 0 {
		return s, fmt.Errorf("no metric name in %q", l)
	}
	s.Name = l[:i]
	if !validMetricName(s.Name) {
		return s, fmt.Errorf("bad metric name %q", s.Name)
	}
	rest := l[i:]
	if rest[0] == '{' {
		rest = rest[1:]
		for {
			if strings.HasPrefix(rest, "}") {
				rest = rest[1:]
				break
			}
			eq := strings.Index(rest, `="`)
			if eq <= 0 {
				return s, fmt.Errorf("bad label in %q", l)
			}
			name := rest[:eq]
			if !validLabelName(name) && name != "le" {
				return s, fmt.Errorf("bad label name %q", name)
			}
			rest = rest[eq+2:]
			// The value ends at the first unescaped quote.
			j := 0
			for ; j < len(rest); j++ {
				if rest[j] == '\\' {
					j++
					continue
				}
				if rest[j] == '"' {
					break
				}
			}
			if j >= len(rest) {
				return s, fmt.Errorf("unterminated label value in %q", l)
			}
			v, err := unescape(rest[:j], true)
			if err != nil {
				return s, err
			}
			if _, dup := s.Labels[name]; dup {
				return s, fmt.Errorf("label %s twice", name)
			}
			s.Labels[name] = v
			rest = rest[j+1:]
			if strings.HasPrefix(rest, ",") {
				rest = rest[1:]
			} else if !strings.HasPrefix(rest, "}") {
				return s, fmt.Errorf("expected , or } in %q", l)
			}
		}
	}
	if !strings.HasPrefix(rest, " ") {
		return s, fmt.Errorf("no value in %q", l)
	}
	v, err := parseValue(rest[1:])
	if err != nil {
		return s, err
	}
	s.Value = v
	return s, nil
}

func parseValue(s string) (float64, error) {
	switch s {
	case "+Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	return strconv.ParseFloat(s, 64)
}

func unescape(s string, label bool) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\n' || (label && c == '"') {
			return "", fmt.Errorf("unescaped %q in %q", c, s)
		}
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i == len(s) {
			return "", fmt.Errorf("trailing backslash in %q", s)
		}
		switch s[i] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		case '"':
			if !label {
				return "", fmt.Errorf(`\" in HELP %q`, s)
			}
			b.WriteByte('"')
		default:
			return "", fmt.Errorf("unknown escape \\%c in %q", s[i], s)
		}
	}
	return b.String(), nil
}

// CheckHistograms verifies the histogram rules: buckets sorted by le, cumulative counts,
// a +Inf bucket equal to _count, and a _sum.
func CheckHistograms(t testing.TB, fams map[string]*Family) {
	t.Helper()
	for _, f := range fams {
		if f.Type != "histogram" {
			continue
		}
		type state struct {
			le, last float64
			inf      float64
			hasInf   bool
			count    float64
			hasSum   bool
		}
		bySeries := map[string]*state{}
		key := func(s Sample) string {
			var parts []string
			for k, v := range s.Labels {
				if k != "le" {
					parts = append(parts, k+"="+v)
				}
			}
			slices.Sort(parts)
			return strings.Join(parts, ",")
		}
		for _, s := range f.Samples {
			st := bySeries[key(s)]
			if st == nil {
				st = &state{le: math.Inf(-1)}
				bySeries[key(s)] = st
			}
			switch {
			case strings.HasSuffix(s.Name, "_bucket"):
				le, err := parseValue(s.Labels["le"])
				if err != nil {
					t.Fatalf("%s: bad le %q", f.Name, s.Labels["le"])
				}
				if le <= st.le || s.Value < st.last {
					t.Fatalf("%s: buckets not increasing/cumulative at le=%v", f.Name, le)
				}
				st.le, st.last = le, s.Value
				if math.IsInf(le, 1) {
					st.inf, st.hasInf = s.Value, true
				}
			case strings.HasSuffix(s.Name, "_count"):
				st.count = s.Value
			case strings.HasSuffix(s.Name, "_sum"):
				st.hasSum = true
			}
		}
		for k, st := range bySeries {
			if !st.hasInf || st.inf != st.count || !st.hasSum {
				t.Fatalf("%s{%s}: +Inf bucket %v (present %v), count %v, sum present %v", f.Name, k, st.inf, st.hasInf, st.count, st.hasSum)
			}
		}
	}
}

func Value(t testing.TB, fams map[string]*Family, name string, labels map[string]string) float64 {
	t.Helper()
	for _, f := range fams {
		for _, s := range f.Samples {
			if s.Name != name || len(s.Labels) != len(labels) {
				continue
			}
			match := true
			for k, v := range labels {
				if s.Labels[k] != v {
					match = false
				}
			}
			if match {
				return s.Value
			}
		}
	}
	t.Fatalf("no sample %s%v", name, labels)
	return 0
}

// validMetricName reports whether s matches [a-zA-Z_:][a-zA-Z0-9_:]*.
func validMetricName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// validLabelName reports whether s is a metric name without ':' and not reserved ("__").
func validLabelName(s string) bool {
	return validMetricName(s) && !strings.Contains(s, ":") && !strings.HasPrefix(s, "__")
}
