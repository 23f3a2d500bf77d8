package controller

import (
	"strings"
	"testing"

	"github.com/informerkit/informerkit/controller/metrics"
)

func TestRegistryQueueMetricsAreDeletedWithTheQueue(t *testing.T) {
	reg := metrics.NewRegistry()
	r := registryMetrics{reg}
	r.NewDepthMetric("q1").Inc()
	r.NewAddsMetric("q1").Inc()
	r.NewDepthMetric("q2").Inc()
	r.NewReconcileErrorsMetric("q1").Inc() // not a queue metric: kept
	r.DeleteMetrics("q1")
	text := scrape(t, reg)
	if strings.Contains(text, `name="q1"`) || !strings.Contains(text, `workqueue_depth{name="q2"} 1`) ||
		!strings.Contains(text, `controller_runtime_reconcile_errors_total{controller="q1"} 1`) {
		t.Fatalf("after DeleteMetrics(q1):\n%s", text)
	}
}
