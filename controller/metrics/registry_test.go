package metrics

import (
	"fmt"
	"math"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/informerkit/informerkit/internal/promtest"
)

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
	fams, err := promtest.Parse(text)
	if err != nil {
		t.Fatalf("%v in:\n%s", err, text)
	}
	promtest.CheckHistograms(t, fams)
	if _, ok := fams["never_used_total"]; ok {
		t.Error("empty family written")
	}
	if f := fams["jobs_total"]; f == nil || f.Type != "counter" || f.Help != "Jobs done.\nSecond line with a \\ backslash." {
		t.Fatalf("jobs_total family: %+v", f)
	}
	if v := promtest.Value(t, fams, "jobs_total", map[string]string{"kind": "a", "path": `C:\dir "quoted"` + "\nnewline"}); v != 3 {
		t.Errorf("escaped counter = %v, want 3", v)
	}
	if v := promtest.Value(t, fams, "jobs_total", map[string]string{"kind": "b", "path": ""}); v != 0 {
		t.Errorf("counter with a negative Add = %v, want 0", v)
	}
	if v := promtest.Value(t, fams, "temperature", nil); v != -2.5 {
		t.Errorf("gauge = %v", v)
	}
	for le, want := range map[string]float64{"0.1": 2, "1": 3, "10": 4, "+Inf": 5} {
		if v := promtest.Value(t, fams, "latency_seconds_bucket", map[string]string{"op": "read", "le": le}); v != want {
			t.Errorf("bucket le=%s = %v, want %v", le, v, want)
		}
	}
	if v := promtest.Value(t, fams, "latency_seconds_sum", map[string]string{"op": "read"}); v != 55.65 {
		t.Errorf("sum = %v", v)
	}
	if v := promtest.Value(t, fams, "staleness_seconds", map[string]string{"informer": "never"}); !math.IsInf(v, 1) {
		t.Errorf("+Inf gauge = %v", v)
	}
	if len(fams["staleness_seconds"].Samples) != 2 {
		t.Errorf("gauge func samples: %+v", fams["staleness_seconds"].Samples)
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

func TestExponentialBuckets(t *testing.T) {
	if got := fmt.Sprint(ExponentialBuckets(1, 2, 4)); got != "[1 2 4 8]" {
		t.Fatal(got)
	}
}

func scrape(t *testing.T, reg *Registry) string {
	t.Helper()
	var b strings.Builder
	if err := reg.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestCounterFuncIsACounterComputedAtScrape(t *testing.T) {
	r := NewRegistry()
	n := 0.0
	r.NewCounterFunc("lists_total", "Computed at scrape.", []string{"name"}, func(emit func(float64, ...string)) {
		n++
		emit(n, "pods")
	})
	for want := 1.0; want <= 2; want++ {
		fams, err := promtest.Parse(scrape(t, r))
		if err != nil {
			t.Fatal(err)
		}
		if f := fams["lists_total"]; f == nil || f.Type != "counter" {
			t.Fatalf("lists_total family: %+v", f)
		}
		if v := promtest.Value(t, fams, "lists_total", map[string]string{"name": "pods"}); v != want {
			t.Fatalf("scrape %v: value %v", want, v)
		}
	}
}
