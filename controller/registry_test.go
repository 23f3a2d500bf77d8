package controller

import (
	"bufio"
	"fmt"
	"math"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// promFamily is one metric family parsed from the text exposition format.
type promFamily struct {
	name, help, typ string
	samples         []promSample
}

type promSample struct {
	name   string // with _bucket/_sum/_count for histograms
	labels map[string]string
	value  float64
}

// parseProm parses the Prometheus text format (version 0.0.4) strictly enough to catch an
// encoder that breaks it: every sample follows the HELP and TYPE of its family, names and
// labels are well formed, label values unescape, values parse.
func parseProm(text string) (map[string]*promFamily, error) {
	fams := map[string]*promFamily{}
	var cur *promFamily
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
			cur = &promFamily{name: name, help: h}
			fams[name] = cur
		case strings.HasPrefix(l, "# TYPE "):
			name, typ, _ := strings.Cut(strings.TrimPrefix(l, "# TYPE "), " ")
			if cur == nil || cur.name != name || cur.typ != "" {
				return nil, fmt.Errorf("line %d: TYPE of %s not right after its HELP", line, name)
			}
			switch typ {
			case "counter", "gauge", "histogram":
			default:
				return nil, fmt.Errorf("line %d: unknown type %q", line, typ)
			}
			cur.typ = typ
		case strings.HasPrefix(l, "#"):
			return nil, fmt.Errorf("line %d: unexpected comment %q", line, l)
		default:
			s, err := parseSample(l)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", line, err)
			}
			if cur == nil || cur.typ == "" {
				return nil, fmt.Errorf("line %d: sample before HELP/TYPE", line)
			}
			base := s.name
			if cur.typ == "histogram" {
				for _, suf := range []string{"_bucket", "_sum", "_count"} {
					if strings.HasSuffix(s.name, suf) {
						base = strings.TrimSuffix(s.name, suf)
					}
				}
				if base == s.name {
					return nil, fmt.Errorf("line %d: histogram sample %s without suffix", line, s.name)
				}
			}
			if base != cur.name {
				return nil, fmt.Errorf("line %d: sample %s in family %s", line, s.name, cur.name)
			}
			cur.samples = append(cur.samples, s)
		}
	}
	return fams, sc.Err()
}

func parseSample(l string) (promSample, error) {
	s := promSample{labels: map[string]string{}}
	i := strings.IndexAny(l, "{ ")
	if i <= 0 {
		return s, fmt.Errorf("no metric name in %q", l)
	}
	s.name = l[:i]
	if !validMetricName(s.name) {
		return s, fmt.Errorf("bad metric name %q", s.name)
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
			if _, dup := s.labels[name]; dup {
				return s, fmt.Errorf("label %s twice", name)
			}
			s.labels[name] = v
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
	s.value = v
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

// checkHistograms verifies the histogram rules: buckets sorted by le, cumulative counts,
// a +Inf bucket equal to _count, and a _sum.
func checkHistograms(t *testing.T, fams map[string]*promFamily) {
	t.Helper()
	for _, f := range fams {
		if f.typ != "histogram" {
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
		key := func(s promSample) string {
			var parts []string
			for k, v := range s.labels {
				if k != "le" {
					parts = append(parts, k+"="+v)
				}
			}
			slices.Sort(parts)
			return strings.Join(parts, ",")
		}
		for _, s := range f.samples {
			st := bySeries[key(s)]
			if st == nil {
				st = &state{le: math.Inf(-1)}
				bySeries[key(s)] = st
			}
			switch {
			case strings.HasSuffix(s.name, "_bucket"):
				le, err := parseValue(s.labels["le"])
				if err != nil {
					t.Fatalf("%s: bad le %q", f.name, s.labels["le"])
				}
				if le <= st.le || s.value < st.last {
					t.Fatalf("%s: buckets not increasing/cumulative at le=%v", f.name, le)
				}
				st.le, st.last = le, s.value
				if math.IsInf(le, 1) {
					st.inf, st.hasInf = s.value, true
				}
			case strings.HasSuffix(s.name, "_count"):
				st.count = s.value
			case strings.HasSuffix(s.name, "_sum"):
				st.hasSum = true
			}
		}
		for k, st := range bySeries {
			if !st.hasInf || st.inf != st.count || !st.hasSum {
				t.Fatalf("%s{%s}: +Inf bucket %v (present %v), count %v, sum present %v", f.name, k, st.inf, st.hasInf, st.count, st.hasSum)
			}
		}
	}
}

func value(t *testing.T, fams map[string]*promFamily, name string, labels map[string]string) float64 {
	t.Helper()
	for _, f := range fams {
		for _, s := range f.samples {
			if s.name != name || len(s.labels) != len(labels) {
				continue
			}
			match := true
			for k, v := range labels {
				if s.labels[k] != v {
					match = false
				}
			}
			if match {
				return s.value
			}
		}
	}
	t.Fatalf("no sample %s%v", name, labels)
	return 0
}

func TestRegistryTextFormat(t *testing.T) {
	r := NewRegistry()
	c := r.NewCounter("jobs_total", "Jobs done.\nSecond line with a \\ backslash.", "kind", "path")
	c.With("a", `C:\dir "quoted"`+"\nnewline").Inc()
	c.With("a", `C:\dir "quoted"`+"\nnewline").Add(2)
	c.With("b", "").Add(-5) // ignored: counters only go up
	g := r.NewGauge("temperature", "A gauge.")
	g.With().Set(-3.5)
	g.With().Inc()
	h := r.NewHistogram("latency_seconds", "A histogram.", []float64{0.1, 1, 10}, "op")
	for _, v := range []float64{0.05, 0.1, 0.5, 5, 50} {
		h.With("read").Observe(v)
	}
	r.NewGaugeFunc("staleness_seconds", "Computed at scrape.", []string{"informer"}, func(emit func(float64, ...string)) {
		emit(1.5, "pods")
		emit(math.Inf(1), "never")
		emit(2, "wrong", "arity") // dropped
	})
	r.NewCounter("never_used_total", "Families without series are not written.")

	text := scrape(t, r)
	fams, err := parseProm(text)
	if err != nil {
		t.Fatalf("%v in:\n%s", err, text)
	}
	checkHistograms(t, fams)
	if _, ok := fams["never_used_total"]; ok {
		t.Error("empty family written")
	}
	if f := fams["jobs_total"]; f == nil || f.typ != "counter" || f.help != "Jobs done.\nSecond line with a \\ backslash." {
		t.Fatalf("jobs_total family: %+v", f)
	}
	if v := value(t, fams, "jobs_total", map[string]string{"kind": "a", "path": `C:\dir "quoted"` + "\nnewline"}); v != 3 {
		t.Errorf("escaped counter = %v, want 3", v)
	}
	if v := value(t, fams, "jobs_total", map[string]string{"kind": "b", "path": ""}); v != 0 {
		t.Errorf("counter with a negative Add = %v, want 0", v)
	}
	if v := value(t, fams, "temperature", nil); v != -2.5 {
		t.Errorf("gauge = %v", v)
	}
	for le, want := range map[string]float64{"0.1": 2, "1": 3, "10": 4, "+Inf": 5} {
		if v := value(t, fams, "latency_seconds_bucket", map[string]string{"op": "read", "le": le}); v != want {
			t.Errorf("bucket le=%s = %v, want %v", le, v, want)
		}
	}
	if v := value(t, fams, "latency_seconds_sum", map[string]string{"op": "read"}); v != 55.65 {
		t.Errorf("sum = %v", v)
	}
	if v := value(t, fams, "staleness_seconds", map[string]string{"informer": "never"}); !math.IsInf(v, 1) {
		t.Errorf("+Inf gauge = %v", v)
	}
	if len(fams["staleness_seconds"].samples) != 2 {
		t.Errorf("gauge func samples: %+v", fams["staleness_seconds"].samples)
	}
	// Families come sorted by name.
	var order []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "# TYPE ") {
			order = append(order, strings.Fields(l)[2])
		}
	}
	if got := strings.Join(order, ","); got != "jobs_total,latency_seconds,staleness_seconds,temperature" {
		t.Errorf("family order %s", got)
	}

	// Deleting series.
	if !c.Delete("b", "") || c.Delete("b", "") {
		t.Error("CounterVec.Delete")
	}
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); ct != ContentType || strings.Contains(rec.Body.String(), `kind="b"`) {
		t.Errorf("served %q with a deleted series:\n%s", ct, rec.Body.String())
	}
}

func TestRegistryRegistrationRules(t *testing.T) {
	r := NewRegistry()
	a := r.NewCounter("x_total", "x", "l")
	if b := r.NewCounter("x_total", "other help", "l"); b.f != a.f {
		t.Error("re-registering the same counter gave a new family")
	}
	for name, f := range map[string]func(){
		"type change":     func() { r.NewGauge("x_total", "x", "l") },
		"label change":    func() { r.NewCounter("x_total", "x", "m") },
		"bad name":        func() { r.NewCounter("1abc", "x") },
		"bad label":       func() { r.NewCounter("y_total", "x", "__reserved") },
		"repeated label":  func() { r.NewCounter("z_total", "x", "a", "a") },
		"le on histogram": func() { r.NewHistogram("h", "x", []float64{1}, "le") },
		"no buckets":      func() { r.NewHistogram("h2", "x", nil) },
		"unsorted":        func() { r.NewHistogram("h3", "x", []float64{2, 1}) },
		"arity":           func() { a.With("1", "2") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestRegistryQueueMetricsAreDeletedWithTheQueue(t *testing.T) {
	r := NewRegistry()
	r.NewDepthMetric("q1").Inc()
	r.NewAddsMetric("q1").Inc()
	r.NewDepthMetric("q2").Inc()
	r.NewReconcileErrorsMetric("q1").Inc() // not a queue metric: kept
	r.DeleteMetrics("q1")
	text := scrape(t, r)
	if strings.Contains(text, `name="q1"`) || !strings.Contains(text, `workqueue_depth{name="q2"} 1`) ||
		!strings.Contains(text, `controller_runtime_reconcile_errors_total{controller="q1"} 1`) {
		t.Fatalf("after DeleteMetrics(q1):\n%s", text)
	}
}

func TestExponentialBuckets(t *testing.T) {
	if got := fmt.Sprint(ExponentialBuckets(1, 2, 4)); got != "[1 2 4 8]" {
		t.Fatal(got)
	}
}
