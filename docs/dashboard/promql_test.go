package main

import (
	"math"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// storeOf builds a store from scrapes of Prometheus text, one second apart.
func storeOf(t *testing.T, texts ...string) *store {
	t.Helper()
	st := &store{series: map[string]series{}}
	t0 := time.Unix(1000, 0)
	for i, text := range texts {
		sc := scrape{at: t0.Add(time.Duration(i) * time.Second), values: map[string]float64{}}
		err := parseText(strings.NewReader(text), func(name string, labels map[string]string, v float64) {
			k := key(name, labels)
			st.series[k] = series{name, labels}
			sc.values[k] = v
		})
		if err != nil {
			t.Fatal(err)
		}
		st.scrapes = append(st.scrapes, sc)
	}
	return st
}

func evalAt(t *testing.T, st *store, q string, at int) map[string]float64 {
	t.Helper()
	n, err := parseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, s := range n.eval(st, at) {
		out[key("", s.labels)] = s.v
	}
	return out
}

func TestRateSumAndQuantile(t *testing.T) {
	st := storeOf(t,
		"# HELP x\nreqs_total{code=\"200\",verb=\"GET\"} 10\nreqs_total{code=\"500\",verb=\"GET\"} 1\n"+
			"lat_bucket{c=\"a\",le=\"0.1\"} 0\nlat_bucket{c=\"a\",le=\"1\"} 0\nlat_bucket{c=\"a\",le=\"+Inf\"} 0\n",
		"reqs_total{code=\"200\",verb=\"GET\"} 30\nreqs_total{code=\"500\",verb=\"GET\"} 5\n"+
			"lat_bucket{c=\"a\",le=\"0.1\"} 50\nlat_bucket{c=\"a\",le=\"1\"} 100\nlat_bucket{c=\"a\",le=\"+Inf\"} 100\n")
	if got := evalAt(t, st, `sum by (verb) (rate(reqs_total[10s]))`, 1); got[`{verb="GET"}`] != 24 {
		t.Errorf("sum of rates = %v, want 24/s", got)
	}
	if got := evalAt(t, st, `rate(reqs_total{code=~"5.."}[10s])`, 1); len(got) != 1 || got[`{code="500",verb="GET"}`] != 4 {
		t.Errorf("rate with a regexp matcher = %v", got)
	}
	got := evalAt(t, st, `histogram_quantile(0.75, sum by (le, c) (rate(lat_bucket[10s])))`, 1)
	if v := got[`{c="a"}`]; math.Abs(v-0.55) > 1e-9 {
		t.Errorf("p75 = %v, want 0.55 (half-way through the (0.1, 1] bucket)", v)
	}
	if got := evalAt(t, st, `rate(reqs_total[10s])`, 0); len(got) != 0 {
		t.Errorf("a rate from one scrape: %v", got)
	}
	for _, bad := range []string{`rate(reqs_total)`, `avg(reqs_total)`, `reqs_total{code=~"("}`, `sum(reqs_total) x`} {
		if _, err := parseQuery(bad); err == nil {
			t.Errorf("parseQuery(%q) accepted", bad)
		}
	}
}

// TestDashboardQueriesParse: every query of the dashboard is in the subset promql.go knows.
func TestDashboardQueriesParse(t *testing.T) {
	d, err := loadDashboard("informerkit.json")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			if _, err := parseQuery(substitute(tg.Expr, 10*time.Second)); err != nil {
				t.Error(err)
			}
			n++
		}
	}
	if n < 15 {
		t.Fatalf("%d queries, want the dashboard's", n)
	}
}
