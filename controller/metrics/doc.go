// Package metrics is a small, dependency-free stand-in for the Prometheus client library:
// a Registry of counters, gauges (also computed at scrape time) and histograms with labels,
// written in the Prometheus text exposition format (version 0.0.4). The controller Manager
// serves its Registry on /metrics; the controller package adapts a Registry to the
// controller and work queue metric providers (controller.NewMetricsProvider,
// controller.NewQueueMetricsProvider), with controller-runtime's and client-go's names.
//
// Rules:
//
//   - Registering a name twice with the same type, labels and buckets returns the existing
//     metric; anything else is a programming error and panics, as with the Prometheus client.
//   - A family without samples is not written; series are written sorted by label values.
//   - Counters only go up (Add of a negative value is ignored); histograms are cumulative with
//     a +Inf bucket, _sum and _count.
package metrics
