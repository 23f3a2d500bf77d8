package controller

import (
	"sync"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller/metrics"
	"github.com/informerkit/informerkit/workqueue"
)

// NewMetricsProvider returns the controller metrics of a metrics.Registry, with
// controller-runtime's names (see MetricsProvider). A Manager gives it to the controllers
// added to it, for its own Registry.
func NewMetricsProvider(r *metrics.Registry) MetricsProvider { return registryMetrics{r} }

// NewQueueMetricsProvider returns the work queue metrics of a metrics.Registry, with
// client-go's names (workqueue_depth, workqueue_adds_total, ... with the label name). The
// provider is also a workqueue.MetricsDeleter: a queue that shuts down takes its series
// with it. A Manager gives it to the controllers added to it, for its own Registry.
func NewQueueMetricsProvider(r *metrics.Registry) workqueue.MetricsProvider {
	return registryMetrics{r}
}

// registryMetrics adapts a metrics.Registry to MetricsProvider and workqueue.MetricsProvider.
type registryMetrics struct{ reg *metrics.Registry }

// Buckets of the built-in histograms: controller-runtime's reconcile-time buckets, and
// client-go's workqueue buckets (10 ns to 1000 s by powers of ten).
var (
	reconcileTimeBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6,
		0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60}
	queueBuckets = metrics.ExponentialBuckets(10e-9, 10, 12)
)

// Controller metrics (MetricsProvider).

// NewReconcileTotalMetric implements MetricsProvider.
func (r registryMetrics) NewReconcileTotalMetric(controller, result string) workqueue.CounterMetric {
	return r.reg.NewCounter("controller_runtime_reconcile_total", "Total number of reconciliations per controller and result.", "controller", "result").With(controller, result)
}

// NewReconcileErrorsMetric implements MetricsProvider.
func (r registryMetrics) NewReconcileErrorsMetric(controller string) workqueue.CounterMetric {
	return r.reg.NewCounter("controller_runtime_reconcile_errors_total", "Total number of reconciliation errors per controller (panics included).", "controller").With(controller)
}

// NewReconcilePanicsMetric implements MetricsProvider.
func (r registryMetrics) NewReconcilePanicsMetric(controller string) workqueue.CounterMetric {
	return r.reg.NewCounter("controller_runtime_reconcile_panics_total", "Total number of reconciliation panics per controller.", "controller").With(controller)
}

// NewReconcileTimeMetric implements MetricsProvider.
func (r registryMetrics) NewReconcileTimeMetric(controller string) workqueue.HistogramMetric {
	return r.reg.NewHistogram("controller_runtime_reconcile_time_seconds", "Length of time per reconciliation per controller.", reconcileTimeBuckets, "controller").With(controller)
}

// NewActiveWorkersMetric implements MetricsProvider.
func (r registryMetrics) NewActiveWorkersMetric(controller string) workqueue.GaugeMetric {
	return r.reg.NewGauge("controller_runtime_active_workers", "Number of workers currently reconciling, per controller.", "controller").With(controller)
}

// NewMaxConcurrentReconcilesMetric implements MetricsProvider.
func (r registryMetrics) NewMaxConcurrentReconcilesMetric(controller string) workqueue.SettableGaugeMetric {
	return r.reg.NewGauge("controller_runtime_max_concurrent_reconciles", "Maximum number of concurrent reconciles per controller.", "controller").With(controller)
}

// NewDroppedRequestsMetric implements MetricsProvider.
func (r registryMetrics) NewDroppedRequestsMetric(controller string) workqueue.CounterMetric {
	return r.reg.NewCounter("informerkit_controller_dropped_requests_total", "Requests forgotten after MaxRetries failed reconciles, per controller.", "controller").With(controller)
}

// NewReconcileConflictsMetric implements ConflictsMetricsProvider.
func (r registryMetrics) NewReconcileConflictsMetric(controller string) workqueue.CounterMetric {
	return r.reg.NewCounter("informerkit_controller_reconcile_conflicts_total", "Reconciles that failed with a 409 Conflict (a write from a stale read; retried), per controller.", "controller").With(controller)
}

// eventLatencyBuckets are the event-to-reconcile histogram's bounds: 1 ms to 5 min.
var eventLatencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// NewEventToReconcileMetric implements EventLatencyMetricsProvider.
func (r registryMetrics) NewEventToReconcileMetric(controller string) workqueue.HistogramMetric {
	return r.reg.NewHistogram("informerkit_controller_event_to_reconcile_seconds",
		"Seconds from a watch event's arrival at the informer to the start of the reconcile of its Request, per controller (initial lists and resyncs excluded).",
		eventLatencyBuckets, "controller").With(controller)
}

// NewTriggersMetric implements TriggerMetricsProvider.
func (r registryMetrics) NewTriggersMetric(controller, kind string) TriggerCounter {
	return r.reg.NewCounter("informerkit_controller_triggers_total",
		"Causes of the reconciles, per controller and kind (create, update, delete, initial_list, resync, generic, retry, requeue, requeue_after); repeated events merged into one trigger each count.",
		"controller", "kind").With(controller, kind)
}

// NewDroppedTriggersMetric implements TriggerMetricsProvider.
func (r registryMetrics) NewDroppedTriggersMetric(controller string) TriggerCounter {
	return r.reg.NewCounter("informerkit_controller_triggers_dropped_total",
		"Triggers of reconciles not kept past the bound of distinct triggers per reconcile (controller.MaxTriggers), per controller.",
		"controller").With(controller)
}

// Work queue metrics (workqueue.MetricsProvider), with client-go's names; each vector has
// the one label "name".

func (r registryMetrics) depth() *metrics.GaugeVec {
	return r.reg.NewGauge("workqueue_depth", "Current depth of workqueue.", "name")
}

func (r registryMetrics) adds() *metrics.CounterVec {
	return r.reg.NewCounter("workqueue_adds_total", "Total number of adds handled by workqueue.", "name")
}

func (r registryMetrics) latency() *metrics.HistogramVec {
	return r.reg.NewHistogram("workqueue_queue_duration_seconds", "How long in seconds an item stays in workqueue before being requested.", queueBuckets, "name")
}

func (r registryMetrics) workDuration() *metrics.HistogramVec {
	return r.reg.NewHistogram("workqueue_work_duration_seconds", "How long in seconds processing an item from workqueue takes.", queueBuckets, "name")
}

func (r registryMetrics) unfinished() *metrics.GaugeVec {
	return r.reg.NewGauge("workqueue_unfinished_work_seconds", "How many seconds of work has been done that is in progress and hasn't been observed by work_duration.", "name")
}

func (r registryMetrics) longestRunning() *metrics.GaugeVec {
	return r.reg.NewGauge("workqueue_longest_running_processor_seconds", "How many seconds has the longest running processor for workqueue been running.", "name")
}

func (r registryMetrics) retries() *metrics.CounterVec {
	return r.reg.NewCounter("workqueue_retries_total", "Total number of retries handled by workqueue.", "name")
}

// NewDepthMetric implements workqueue.MetricsProvider.
func (r registryMetrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	return r.depth().With(name)
}

// NewAddsMetric implements workqueue.MetricsProvider.
func (r registryMetrics) NewAddsMetric(name string) workqueue.CounterMetric {
	return r.adds().With(name)
}

// NewLatencyMetric implements workqueue.MetricsProvider.
func (r registryMetrics) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return r.latency().With(name)
}

// NewWorkDurationMetric implements workqueue.MetricsProvider.
func (r registryMetrics) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return r.workDuration().With(name)
}

// NewUnfinishedWorkSecondsMetric implements workqueue.MetricsProvider.
func (r registryMetrics) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return r.unfinished().With(name)
}

// NewLongestRunningProcessorSecondsMetric implements workqueue.MetricsProvider.
func (r registryMetrics) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return r.longestRunning().With(name)
}

// NewRetriesMetric implements workqueue.MetricsProvider.
func (r registryMetrics) NewRetriesMetric(name string) workqueue.CounterMetric {
	return r.retries().With(name)
}

// DeleteMetrics implements workqueue.MetricsDeleter: it removes the series of the queue
// name (a queue that shut down).
func (r registryMetrics) DeleteMetrics(name string) {
	r.depth().Delete(name)
	r.adds().Delete(name)
	r.latency().Delete(name)
	r.workDuration().Delete(name)
	r.unfinished().Delete(name)
	r.longestRunning().Delete(name)
	r.retries().Delete(name)
}

var (
	_ MetricsProvider             = registryMetrics{}
	_ ConflictsMetricsProvider    = registryMetrics{}
	_ EventLatencyMetricsProvider = registryMetrics{}
	_ TriggerMetricsProvider      = registryMetrics{}
	_ workqueue.MetricsProvider   = registryMetrics{}
	_ workqueue.MetricsDeleter    = registryMetrics{}
)

// NewRequestMetrics returns the API request metrics of a metrics.Registry, with client-go's
// names: rest_client_requests_total{code,method,host} and
// rest_client_request_duration_seconds{verb,host} (verb is the HTTP method, as in
// client-go). A Manager gives it to its API client.
func NewRequestMetrics(r *metrics.Registry) apiclient.RequestMetrics {
	return &requestMetrics{
		total: r.NewCounter("rest_client_requests_total", "Number of HTTP requests, partitioned by status code, method, and host.", "code", "method", "host"),
		latency: r.NewHistogram("rest_client_request_duration_seconds", "Request latency in seconds. Broken down by verb, and host.",
			requestBuckets, "verb", "host"),
		series: map[requestSeries]requestMetric{},
	}
}

// requestBuckets are client-go's rest_client_request_duration_seconds buckets.
var requestBuckets = []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60}

// requestMetrics implements apiclient.RequestMetrics; it keeps the series it made so that
// a request costs a map lookup, not the registry's label join.
type requestMetrics struct {
	total   *metrics.CounterVec
	latency *metrics.HistogramVec

	mu     sync.RWMutex
	series map[requestSeries]requestMetric
}

type requestSeries struct{ method, host, code string }

type requestMetric struct {
	total   metrics.Counter
	latency metrics.Histogram
}

// ObserveRequest implements apiclient.RequestMetrics.
func (m *requestMetrics) ObserveRequest(method, host, code string, latency time.Duration) {
	k := requestSeries{method, host, code}
	m.mu.RLock()
	s, ok := m.series[k]
	m.mu.RUnlock()
	if !ok {
		s = requestMetric{total: m.total.With(code, method, host), latency: m.latency.With(method, host)}
		m.mu.Lock()
		m.series[k] = s
		m.mu.Unlock()
	}
	s.total.Inc()
	s.latency.Observe(latency.Seconds())
}
