package metrics

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Registry holds counters, gauges and histograms and writes them in the Prometheus text
// exposition format (version 0.0.4); the controller Manager serves its registry on /metrics.
// All methods are safe for concurrent use.
//
// Registering a name twice with the same type and labels returns the existing metric;
// registering it with another type, help-independent label set or bucket layout is a
// programming error and panics with a message saying so, as the Prometheus client does.
type Registry struct {
	mu       sync.Mutex
	families map[string]*family
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{families: map[string]*family{}} }

type metricType string

const (
	typeCounter   metricType = "counter"
	typeGauge     metricType = "gauge"
	typeHistogram metricType = "histogram"
)

type family struct {
	name    string
	help    string
	typ     metricType
	labels  []string
	buckets []float64

	mu      sync.Mutex
	series  map[string]*series
	collect func(emit func(value float64, labelValues ...string))
}

type series struct {
	labelValues []string
	value       atomicFloat // counters and gauges

	// histograms
	mu     sync.Mutex
	counts []uint64 // per bucket, not cumulative
	sum    float64
	count  uint64
}

type atomicFloat struct{ bits atomic.Uint64 }

func (f *atomicFloat) load() float64 { return math.Float64frombits(f.bits.Load()) }

func (f *atomicFloat) store(v float64) { f.bits.Store(math.Float64bits(v)) }

func (f *atomicFloat) add(d float64) {
	for {
		old := f.bits.Load()
		if f.bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+d)) {
			return
		}
	}
}

func validMetricName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9') {
			continue
		}
		return false
	}
	return true
}

func validLabelName(s string) bool {
	return validMetricName(s) && !strings.Contains(s, ":") && !strings.HasPrefix(s, "__")
}

func (r *Registry) register(name, help string, typ metricType, labels []string, buckets []float64) *family {
	if !validMetricName(name) {
		panic(fmt.Sprintf("metrics: metric name %q is not valid (want [a-zA-Z_:][a-zA-Z0-9_:]*)", name))
	}
	seen := map[string]bool{}
	for _, l := range labels {
		if !validLabelName(l) || (typ == typeHistogram && l == "le") || seen[l] {
			panic(fmt.Sprintf("metrics: metric %s: label name %q is not valid or repeated", name, l))
		}
		seen[l] = true
	}
	if typ == typeHistogram {
		if len(buckets) == 0 {
			panic(fmt.Sprintf("metrics: histogram %s needs buckets", name))
		}
		for i := 1; i < len(buckets); i++ {
			if !(buckets[i] > buckets[i-1]) {
				panic(fmt.Sprintf("metrics: histogram %s: buckets must increase", name))
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if f, ok := r.families[name]; ok {
		if f.typ != typ || !slices.Equal(f.labels, labels) || !slices.Equal(f.buckets, buckets) {
			panic(fmt.Sprintf("metrics: metric %s registered twice: as %s%v and as %s%v", name, f.typ, f.labels, typ, labels))
		}
		return f
	}
	f := &family{name: name, help: help, typ: typ, labels: slices.Clone(labels), buckets: slices.Clone(buckets), series: map[string]*series{}}
	r.families[name] = f
	return f
}

func (f *family) with(values []string) *series {
	if len(values) != len(f.labels) {
		panic(fmt.Sprintf("metrics: metric %s has labels %v, got %d values", f.name, f.labels, len(values)))
	}
	key := strings.Join(values, "\xff")
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.series[key]
	if !ok {
		s = &series{labelValues: slices.Clone(values)}
		if f.typ == typeHistogram {
			s.counts = make([]uint64, len(f.buckets))
		}
		f.series[key] = s
	}
	return s
}

func (f *family) delete(values []string) bool {
	key := strings.Join(values, "\xff")
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.series[key]
	delete(f.series, key)
	return ok
}

// deleteMatching removes every series whose label label has value value.
func (f *family) deleteMatching(label, value string) {
	i := slices.Index(f.labels, label)
	if i < 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, s := range f.series {
		if s.labelValues[i] == value {
			delete(f.series, k)
		}
	}
}

// CounterVec is a family of counters with the same name and label names.
type CounterVec struct{ f *family }

// Counter is a value that only goes up.
type Counter struct{ s *series }

// NewCounter registers (or returns) a counter family. By convention the name ends in
// "_total".
func (r *Registry) NewCounter(name, help string, labels ...string) *CounterVec {
	return &CounterVec{r.register(name, help, typeCounter, labels, nil)}
}

// With returns the counter with these label values (in the order of the label names).
func (v *CounterVec) With(labelValues ...string) Counter { return Counter{v.f.with(labelValues)} }

// Delete removes the counter with these label values; it reports whether it existed.
func (v *CounterVec) Delete(labelValues ...string) bool { return v.f.delete(labelValues) }

// Inc adds 1.
func (c Counter) Inc() { c.s.value.add(1) }

// Add adds d, which must not be negative (a negative d is ignored).
func (c Counter) Add(d float64) {
	if d >= 0 {
		c.s.value.add(d)
	}
}

// Value returns the current value.
func (c Counter) Value() float64 { return c.s.value.load() }

// GaugeVec is a family of gauges with the same name and label names.
type GaugeVec struct{ f *family }

// Gauge is a value that goes up and down.
type Gauge struct{ s *series }

// NewGauge registers (or returns) a gauge family.
func (r *Registry) NewGauge(name, help string, labels ...string) *GaugeVec {
	return &GaugeVec{r.register(name, help, typeGauge, labels, nil)}
}

// With returns the gauge with these label values.
func (v *GaugeVec) With(labelValues ...string) Gauge { return Gauge{v.f.with(labelValues)} }

// Delete removes the gauge with these label values; it reports whether it existed.
func (v *GaugeVec) Delete(labelValues ...string) bool { return v.f.delete(labelValues) }

// Set sets the value.
func (g Gauge) Set(x float64) { g.s.value.store(x) }

// Inc adds 1.
func (g Gauge) Inc() { g.s.value.add(1) }

// Dec subtracts 1.
func (g Gauge) Dec() { g.s.value.add(-1) }

// Add adds d.
func (g Gauge) Add(d float64) { g.s.value.add(d) }

// Value returns the current value.
func (g Gauge) Value() float64 { return g.s.value.load() }

// NewGaugeFunc registers a gauge family whose values are computed at every scrape: collect
// calls emit once per series. Use it for values that are cheaper to read than to track,
// such as an informer's staleness.
func (r *Registry) NewGaugeFunc(name, help string, labels []string, collect func(emit func(value float64, labelValues ...string))) {
	f := r.register(name, help, typeGauge, labels, nil)
	f.mu.Lock()
	f.collect = collect
	f.mu.Unlock()
}

// NewCounterFunc registers a counter family whose values are computed at every scrape:
// collect calls emit once per series with its total so far. Use it for counts kept
// elsewhere (an informer's Stats), which must only grow.
func (r *Registry) NewCounterFunc(name, help string, labels []string, collect func(emit func(value float64, labelValues ...string))) {
	f := r.register(name, help, typeCounter, labels, nil)
	f.mu.Lock()
	f.collect = collect
	f.mu.Unlock()
}

// HistogramVec is a family of histograms with the same name, label names and buckets.
type HistogramVec struct{ f *family }

// Histogram counts observations in buckets.
type Histogram struct {
	s       *series
	buckets []float64
}

// NewHistogram registers (or returns) a histogram family with the given upper bounds
// (increasing; the +Inf bucket is implicit).
func (r *Registry) NewHistogram(name, help string, buckets []float64, labels ...string) *HistogramVec {
	return &HistogramVec{r.register(name, help, typeHistogram, labels, buckets)}
}

// With returns the histogram with these label values.
func (v *HistogramVec) With(labelValues ...string) Histogram {
	return Histogram{s: v.f.with(labelValues), buckets: v.f.buckets}
}

// Delete removes the histogram with these label values; it reports whether it existed.
func (v *HistogramVec) Delete(labelValues ...string) bool { return v.f.delete(labelValues) }

// Observe records x.
func (h Histogram) Observe(x float64) {
	i := sort.SearchFloat64s(h.buckets, x) // first bucket with bound >= x
	h.s.mu.Lock()
	if i < len(h.s.counts) {
		h.s.counts[i]++
	}
	h.s.sum += x
	h.s.count++
	h.s.mu.Unlock()
}

// Count returns the number of observations.
func (h Histogram) Count() uint64 {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.s.count
}

// ExponentialBuckets returns n bucket bounds start, start×factor, start×factor², ...
func ExponentialBuckets(start, factor float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = start
		start *= factor
	}
	return out
}

// ContentType is the media type of the text exposition format.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// WriteText writes every metric in the Prometheus text exposition format: families sorted
// by name, each with its HELP and TYPE lines, series sorted by label values.
func (r *Registry) WriteText(w io.Writer) error {
	r.mu.Lock()
	fams := make([]*family, 0, len(r.families))
	for _, f := range r.families {
		fams = append(fams, f)
	}
	r.mu.Unlock()
	sort.Slice(fams, func(i, j int) bool { return fams[i].name < fams[j].name })
	bw := bufio.NewWriter(w)
	for _, f := range fams {
		f.write(bw)
	}
	return bw.Flush()
}

// ServeHTTP serves WriteText.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Content-Type", ContentType)
	_ = r.WriteText(w)
}

type sample struct {
	values []string
	value  float64
	// histograms
	counts []uint64
	sum    float64
	count  uint64
}

func (f *family) snapshot() []sample {
	f.mu.Lock()
	collect := f.collect
	out := make([]sample, 0, len(f.series))
	for _, s := range f.series {
		sm := sample{values: s.labelValues}
		if f.typ == typeHistogram {
			s.mu.Lock()
			sm.counts, sm.sum, sm.count = slices.Clone(s.counts), s.sum, s.count
			s.mu.Unlock()
		} else {
			sm.value = s.value.load()
		}
		out = append(out, sm)
	}
	f.mu.Unlock()
	if collect != nil {
		collect(func(v float64, labelValues ...string) {
			if len(labelValues) == len(f.labels) {
				out = append(out, sample{values: slices.Clone(labelValues), value: v})
			}
		})
	}
	sort.Slice(out, func(i, j int) bool { return slices.Compare(out[i].values, out[j].values) < 0 })
	return out
}

func (f *family) write(w *bufio.Writer) {
	samples := f.snapshot()
	if len(samples) == 0 {
		return
	}
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", f.name, escapeHelp(f.help), f.name, f.typ)
	for _, s := range samples {
		if f.typ != typeHistogram {
			writeSample(w, f.name, f.labels, s.values, "", "", s.value)
			continue
		}
		var cum uint64
		for i, b := range f.buckets {
			cum += s.counts[i]
			writeSample(w, f.name+"_bucket", f.labels, s.values, "le", formatFloat(b), float64(cum))
		}
		writeSample(w, f.name+"_bucket", f.labels, s.values, "le", "+Inf", float64(s.count))
		writeSample(w, f.name+"_sum", f.labels, s.values, "", "", s.sum)
		writeSample(w, f.name+"_count", f.labels, s.values, "", "", float64(s.count))
	}
}

func writeSample(w *bufio.Writer, name string, labels, values []string, extraName, extraValue string, v float64) {
	w.WriteString(name)
	if len(labels) > 0 || extraName != "" {
		w.WriteByte('{')
		for i, l := range labels {
			if i > 0 {
				w.WriteByte(',')
			}
			w.WriteString(l)
			w.WriteString(`="`)
			w.WriteString(escapeLabelValue(values[i]))
			w.WriteByte('"')
		}
		if extraName != "" {
			if len(labels) > 0 {
				w.WriteByte(',')
			}
			w.WriteString(extraName)
			w.WriteString(`="`)
			w.WriteString(extraValue)
			w.WriteByte('"')
		}
		w.WriteByte('}')
	}
	w.WriteByte(' ')
	w.WriteString(formatFloat(v))
	w.WriteByte('\n')
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string       { return helpEscaper.Replace(s) }
func escapeLabelValue(s string) string { return labelEscaper.Replace(s) }
