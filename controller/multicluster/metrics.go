package multicluster

import (
	"sync"

	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/events"
	"github.com/informerkit/informerkit/controller/metrics"
)

// clusterLabels hands out the cluster label values of the metrics (see ClusterLabels).
type clusterLabels struct {
	opts ClusterLabels

	mu    sync.Mutex
	named map[string]bool // clusters with a label value of their own
}

func newClusterLabels(o ClusterLabels) *clusterLabels {
	return &clusterLabels{opts: o, named: map[string]bool{}}
}

// acquire gives cluster name a label of its own if a slot is free and it may have one.
func (l *clusterLabels) acquire(name string) {
	if l.opts.Limit < 0 || (l.opts.Select != nil && !l.opts.Select(name)) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.named) < l.opts.Limit {
		l.named[name] = true
	}
}

// release frees cluster name's slot.
func (l *clusterLabels) release(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.named, name)
}

// of returns the label value of cluster name.
func (l *clusterLabels) of(name string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.named[name] {
		return name
	}
	return OtherClusters
}

// Buckets of the engagement-time histogram: 100 µs to 10 s.
var engageBuckets = metrics.ExponentialBuckets(0.0001, 2.5, 12)

// fleetMetrics are the Fleet's own metrics.
type fleetMetrics struct {
	engageTime   metrics.Histogram
	engageErrors metrics.Counter
}

func newFleetMetrics(f *Fleet, r *metrics.Registry) *fleetMetrics {
	m := &fleetMetrics{
		engageTime: r.NewHistogram("informerkit_multicluster_engage_seconds",
			"Time to engage a cluster on this replica (clients, factory, informers acquired and started; not their lists).",
			engageBuckets).With(),
		engageErrors: r.NewCounter("informerkit_multicluster_engage_errors_total",
			"Engagements that failed (a Config the API client refused).").With(),
	}
	r.NewGaugeFunc("informerkit_multicluster_clusters",
		"Clusters of the fleet by state on this replica: known (reported by the provider), engaged, active (reconciled here), standby (engaged, caches only), down (not answering), failed (not engaged: bad Config).",
		[]string{"state"}, func(emit func(float64, ...string)) {
			s := f.states()
			emit(float64(s.known), "known")
			emit(float64(s.engaged), "engaged")
			emit(float64(s.active), "active")
			emit(float64(s.standby), "standby")
			emit(float64(s.down), "down")
			emit(float64(s.failed), "failed")
		})
	r.NewGaugeFunc("informerkit_multicluster_events",
		"Events written to the engaged clusters by the fleet's recorders, by cluster (within the label limit) and outcome (counts since engagement, exposed as gauges).",
		[]string{"cluster", "outcome"}, func(emit func(float64, ...string)) {
			sums := map[string]*events.Stats{}
			for _, cl := range f.engagedClusters() {
				st, ok := cl.eventStats()
				if !ok {
					continue
				}
				l := f.labels.of(cl.name)
				s := sums[l]
				if s == nil {
					s = &events.Stats{}
					sums[l] = s
				}
				s.Created += st.Created
				s.Patched += st.Patched
				s.Dropped += st.Dropped
				s.Failed += st.Failed
				s.Filtered += st.Filtered
			}
			for l, s := range sums {
				emit(float64(s.Created), l, "created")
				emit(float64(s.Patched), l, "patched")
				emit(float64(s.Filtered), l, "filtered")
				emit(float64(s.Dropped), l, "dropped")
				emit(float64(s.Failed), l, "failed")
			}
		})
	return m
}

// fleetStates counts clusters by state.
type fleetStates struct{ known, engaged, active, standby, down, failed int }

func (f *Fleet) states() fleetStates {
	f.mu.Lock()
	s := fleetStates{known: len(f.known), engaged: len(f.engaged)}
	for _, k := range f.known {
		if k.err != nil {
			s.failed++
		}
	}
	var cls []*Cluster
	for cl, r := range f.roles {
		switch r {
		case roleActive:
			s.active++
		case roleStandby:
			s.standby++
		}
		cls = append(cls, cl)
	}
	f.mu.Unlock()
	for _, cl := range cls {
		if cl.IsDown() {
			s.down++
		}
	}
	return s
}

func (f *Fleet) engagedClusters() []*Cluster {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]*Cluster, 0, len(f.engaged))
	for _, cl := range f.engaged {
		out = append(out, cl)
	}
	return out
}

// reconcileBuckets are controller-runtime's reconcile-time buckets, shortened.
var reconcileBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

var results = []string{controller.ResultSuccess, controller.ResultError, controller.ResultRequeue, controller.ResultRequeueAfter}

// controllerMetrics are a Controller's metrics labelled by cluster.
type controllerMetrics struct {
	c      *Controller
	total  *metrics.CounterVec
	time   *metrics.HistogramVec
	parked *metrics.GaugeVec
}

// clusterSeries are one cluster's series of a controller, resolved at its engagement.
type clusterSeries struct {
	label  string
	total  [4]metrics.Counter // by results' order
	time   metrics.Histogram
	parked metrics.Gauge
}

func newControllerMetrics(c *Controller, r *metrics.Registry) *controllerMetrics {
	return &controllerMetrics{
		c: c,
		total: r.NewCounter("informerkit_multicluster_reconcile_total",
			"Reconciles per controller, cluster (within the label limit; the rest are "+OtherClusters+") and result.",
			"controller", "cluster", "result"),
		time: r.NewHistogram("informerkit_multicluster_reconcile_time_seconds",
			"Length of reconciles per controller and cluster (within the label limit).", reconcileBuckets, "controller", "cluster"),
		parked: r.NewGauge("informerkit_multicluster_parked_requests",
			"Requests waiting aside per controller and cluster (within the label limit): their cluster has not synced, does not answer, or is at its worker bound.",
			"controller", "cluster"),
	}
}

// series returns cluster name's series.
func (m *controllerMetrics) series(name string) *clusterSeries {
	l := m.c.fleet.labels.of(name)
	s := &clusterSeries{label: l}
	for i, r := range results {
		s.total[i] = m.total.With(m.c.name, l, r)
	}
	s.time = m.time.With(m.c.name, l)
	s.parked = m.parked.With(m.c.name, l)
	return s
}

// forget deletes the series of a cluster that had a label of its own.
func (m *controllerMetrics) forget(s *clusterSeries) {
	if s == nil || s.label == OtherClusters {
		return
	}
	for _, r := range results {
		m.total.Delete(m.c.name, s.label, r)
	}
	m.time.Delete(m.c.name, s.label)
	m.parked.Delete(m.c.name, s.label)
}

func (s *clusterSeries) result(r string) {
	for i, x := range results {
		if x == r {
			s.total[i].Inc()
		}
	}
}
