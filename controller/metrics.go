package controller

import "github.com/informerkit/informerkit/workqueue"

// The values of the result label of the reconcile-total metric.
const (
	ResultSuccess      = "success"
	ResultError        = "error"
	ResultRequeue      = "requeue"
	ResultRequeueAfter = "requeue_after"
)

// MetricsProvider creates the metrics of a named controller, as workqueue.MetricsProvider
// does for queues. The Manager's Registry implements it (and workqueue.MetricsProvider) with
// controller-runtime's metric names, so dashboards written for controller-runtime work:
//
//   - reconcile total by result (controller_runtime_reconcile_total{controller,result}):
//     ResultSuccess, ResultError, ResultRequeue, ResultRequeueAfter;
//   - reconcile errors (controller_runtime_reconcile_errors_total), panics included;
//   - reconcile panics (controller_runtime_reconcile_panics_total);
//   - reconcile time in seconds (controller_runtime_reconcile_time_seconds, a histogram);
//   - active workers (controller_runtime_active_workers): reconciles in progress;
//   - max concurrent reconciles (controller_runtime_max_concurrent_reconciles);
//   - requests dropped after Options.MaxRetries failed reconciles
//     (informerkit_controller_dropped_requests_total; controller-runtime has no MaxRetries);
//   - reconciles that failed with a 409 Conflict
//     (informerkit_controller_reconcile_conflicts_total, through ConflictsMetricsProvider).
//
// The metrics are called from the workers and must be safe for concurrent use and quick.
type MetricsProvider interface {
	NewReconcileTotalMetric(controller, result string) workqueue.CounterMetric
	NewReconcileErrorsMetric(controller string) workqueue.CounterMetric
	NewReconcilePanicsMetric(controller string) workqueue.CounterMetric
	NewReconcileTimeMetric(controller string) workqueue.HistogramMetric
	NewActiveWorkersMetric(controller string) workqueue.GaugeMetric
	NewMaxConcurrentReconcilesMetric(controller string) workqueue.SettableGaugeMetric
	NewDroppedRequestsMetric(controller string) workqueue.CounterMetric
}

// controllerMetrics are the metrics of one controller; with no provider they are no-ops.
type controllerMetrics struct {
	total         map[string]workqueue.CounterMetric
	errors        workqueue.CounterMetric
	panics        workqueue.CounterMetric
	reconcileTime workqueue.HistogramMetric
	activeWorkers workqueue.GaugeMetric
	maxConcurrent workqueue.SettableGaugeMetric
	dropped       workqueue.CounterMetric
	conflicts     workqueue.CounterMetric
}

type noopMetric struct{}

func (noopMetric) Inc()            {}
func (noopMetric) Dec()            {}
func (noopMetric) Set(float64)     {}
func (noopMetric) Observe(float64) {}

func newControllerMetrics(name string, p MetricsProvider) *controllerMetrics {
	results := []string{ResultSuccess, ResultError, ResultRequeue, ResultRequeueAfter}
	m := &controllerMetrics{total: make(map[string]workqueue.CounterMetric, len(results))}
	if p == nil {
		for _, r := range results {
			m.total[r] = noopMetric{}
		}
		m.errors, m.panics, m.reconcileTime, m.activeWorkers, m.maxConcurrent, m.dropped, m.conflicts =
			noopMetric{}, noopMetric{}, noopMetric{}, noopMetric{}, noopMetric{}, noopMetric{}, noopMetric{}
		return m
	}
	for _, r := range results {
		m.total[r] = p.NewReconcileTotalMetric(name, r)
	}
	m.errors = p.NewReconcileErrorsMetric(name)
	m.panics = p.NewReconcilePanicsMetric(name)
	m.reconcileTime = p.NewReconcileTimeMetric(name)
	m.activeWorkers = p.NewActiveWorkersMetric(name)
	m.maxConcurrent = p.NewMaxConcurrentReconcilesMetric(name)
	m.dropped = p.NewDroppedRequestsMetric(name)
	m.conflicts = noopMetric{}
	if cp, ok := p.(ConflictsMetricsProvider); ok {
		m.conflicts = cp.NewReconcileConflictsMetric(name)
	}
	return m
}
