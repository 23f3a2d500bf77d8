package workqueue

import "time"

// GaugeMetric is a value that goes up and down (the queue depth).
type GaugeMetric interface {
	// Inc adds one.
	Inc()
	// Dec subtracts one.
	Dec()
}

// SettableGaugeMetric is a value that is set (the unfinished-work gauges).
type SettableGaugeMetric interface {
	// Set replaces the value.
	Set(float64)
}

// CounterMetric is a value that only goes up (adds, retries).
type CounterMetric interface {
	// Inc adds one.
	Inc()
}

// HistogramMetric records observations (durations in seconds).
type HistogramMetric interface {
	// Observe records one observation.
	Observe(float64)
}

// MetricsProvider creates the metrics of a named queue; name is Config.Name. The metrics are
// those of client-go's workqueue, with the same meaning:
//
//   - depth: items dirty and not yet handed out (including items re-added while processing);
//   - adds: Adds that made an item dirty;
//   - latency (queue_duration): seconds from the Add that made an item dirty to its Get;
//   - work duration: seconds from Get to Done;
//   - unfinished work seconds: sum of the ages of the items being processed, refreshed every
//     500 ms (only while the queue is not shut down);
//   - longest running processor seconds: age of the oldest item being processed, same refresh;
//   - retries: AddAfter and AddRateLimited calls (before ShutDown).
//
// The queue calls the metrics while holding its lock; they must be quick and must not call
// back into the queue.
type MetricsProvider interface {
	// NewDepthMetric returns the depth gauge of queue name.
	NewDepthMetric(name string) GaugeMetric
	// NewAddsMetric returns the adds counter of queue name.
	NewAddsMetric(name string) CounterMetric
	// NewLatencyMetric returns the queue_duration histogram (seconds) of queue name.
	NewLatencyMetric(name string) HistogramMetric
	// NewWorkDurationMetric returns the work_duration histogram (seconds) of queue name.
	NewWorkDurationMetric(name string) HistogramMetric
	// NewUnfinishedWorkSecondsMetric returns the unfinished_work_seconds gauge of queue name.
	NewUnfinishedWorkSecondsMetric(name string) SettableGaugeMetric
	// NewLongestRunningProcessorSecondsMetric returns the longest_running_processor_seconds
	// gauge of queue name.
	NewLongestRunningProcessorSecondsMetric(name string) SettableGaugeMetric
	// NewRetriesMetric returns the retries counter of queue name.
	NewRetriesMetric(name string) CounterMetric
}

// MetricsDeleter may be implemented by a MetricsProvider that can unregister a queue's metrics.
// The first ShutDown (or ShutDownWithDrain) of a named queue calls DeleteMetrics with its name,
// so that short-lived queues do not leave their metrics behind (client-go never unregisters
// them). The queue may still update the metric values it holds while it drains; a provider
// should treat those as detached.
type MetricsDeleter interface {
	// DeleteMetrics unregisters the metrics created for queue name.
	DeleteMetrics(name string)
}

// unfinishedWorkUpdatePeriod is how often the unfinished-work gauges are refreshed.
const unfinishedWorkUpdatePeriod = 500 * time.Millisecond

type queueMetrics struct {
	name                    string
	provider                MetricsProvider
	depth                   GaugeMetric
	adds                    CounterMetric
	latency                 HistogramMetric
	workDuration            HistogramMetric
	unfinishedWorkSeconds   SettableGaugeMetric
	longestRunningProcessor SettableGaugeMetric
	retries                 CounterMetric
	timer                   *time.Timer // refreshes the unfinished-work gauges
}

// itemTimes are an entry's timestamps (queue.now units), kept only when metrics are enabled.
type itemTimes struct {
	added   int64 // when the item last became dirty
	started int64 // when it was last handed out
}

func newQueueMetrics(name string, p MetricsProvider) *queueMetrics {
	return &queueMetrics{
		name:                    name,
		provider:                p,
		depth:                   p.NewDepthMetric(name),
		adds:                    p.NewAddsMetric(name),
		latency:                 p.NewLatencyMetric(name),
		workDuration:            p.NewWorkDurationMetric(name),
		unfinishedWorkSeconds:   p.NewUnfinishedWorkSecondsMetric(name),
		longestRunningProcessor: p.NewLongestRunningProcessorSecondsMetric(name),
		retries:                 p.NewRetriesMetric(name),
	}
}

func seconds(ns int64) float64 { return time.Duration(ns).Seconds() }

// metricsAdd records an Add that made an item dirty; it returns the time it read.
func (q *queue[T]) metricsAdd(idx uint32) int64 {
	now := q.now()
	q.metrics.adds.Inc()
	q.metrics.depth.Inc()
	q.times[idx].added = now
	return now
}

func (q *queue[T]) metricsGet(idx uint32) {
	now := q.now()
	q.metrics.depth.Dec()
	q.metrics.latency.Observe(seconds(now - q.times[idx].added))
	q.times[idx].started = now
}

// metricsDone records a Done; it returns the time it read.
func (q *queue[T]) metricsDone(idx uint32) int64 {
	now := q.now()
	q.metrics.workDuration.Observe(seconds(now - q.times[idx].started))
	return now
}

// updateUnfinishedWork runs on the metrics timer.
func (q *queue[T]) updateUnfinishedWork() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	var total, oldest int64
	if q.processing > 0 {
		now := q.now()
		for i := range q.slab {
			if q.slab[i].flags&flagProcessing != 0 {
				age := now - q.times[i].started
				total += age
				oldest = max(oldest, age)
			}
		}
	}
	q.metrics.unfinishedWorkSeconds.Set(seconds(total))
	q.metrics.longestRunningProcessor.Set(seconds(oldest))
	q.metrics.timer.Reset(unfinishedWorkUpdatePeriod)
}

// deleteMetrics lets the provider forget the queue's metrics (first ShutDown only).
func (q *queue[T]) deleteMetrics() {
	if q.metrics == nil {
		return
	}
	if d, ok := q.metrics.provider.(MetricsDeleter); ok {
		d.DeleteMetrics(q.metrics.name)
	}
}
