package controller

import (
	"sync/atomic"
	"time"

	"github.com/informerkit/informerkit/workqueue"
)

// Stats counts what a controller's workers did since Start, for tests and diagnostics that
// need the figures without scraping /metrics (controller/controllertest reads them). Every
// count only grows.
type Stats struct {
	// Reconciles is the number of Reconcile calls that returned (or panicked).
	Reconciles uint64
	// Errors is the number of reconciles that returned an error or panicked.
	Errors uint64
	// Conflicts is the number of those errors that were 409 Conflicts (meta.IsConflict): a
	// write from a stale read, retried with backoff and logged at debug level only.
	Conflicts uint64
	// Panics is the number of reconciles that panicked.
	Panics uint64
	// Requeues is the number of Requests the workers put back in the queue: after an error
	// (with backoff), Result.Requeue or Result.RequeueAfter.
	Requeues uint64
	// Dropped is the number of Requests forgotten after Options.MaxRetries failed reconciles.
	Dropped uint64
	// Terminal is the number of reconciles that failed with a TerminalError (not retried).
	Terminal uint64
	// NotHeld is the number of Requests a sharded controller (Options.Sharded) dropped
	// without a reconcile because this replica did not hold their object: another
	// replica's, or one whose object is neither cached nor remembered as deleted.
	NotHeld uint64
	// WatchEvents is the number of watch events whose Requests were reconciled (events of
	// initial lists and resyncs are not counted; repeats of one object's event merged into
	// one trigger count once, from the oldest); EventLatencySum and EventLatencyMax are the
	// sum and the largest of their times from arrival at the informer to the start of the
	// reconcile (the event-to-reconcile metric's observations).
	WatchEvents                      uint64
	EventLatencySum, EventLatencyMax time.Duration
}

// stats holds a controller's counts.
type stats struct {
	reconciles, errors, conflicts, panics, requeues, dropped, terminal, notHeld atomic.Uint64
}

func (s *stats) snapshot() Stats {
	return Stats{
		Reconciles: s.reconciles.Load(), Errors: s.errors.Load(), Conflicts: s.conflicts.Load(),
		Panics: s.panics.Load(), Requeues: s.requeues.Load(), Dropped: s.dropped.Load(), Terminal: s.terminal.Load(),
		NotHeld: s.notHeld.Load(),
	}
}

// Stats returns the controller's counts so far (zero before Start).
func (c *Controller) Stats() Stats {
	s := c.stats.snapshot()
	c.mu.Lock()
	ev := c.events
	c.mu.Unlock()
	if ev != nil {
		s.WatchEvents = ev.events.Load()
		s.EventLatencySum = time.Duration(ev.latencySum.Load())
		s.EventLatencyMax = time.Duration(ev.latencyMax.Load())
	}
	return s
}

// ConflictsMetricsProvider is implemented by a MetricsProvider that also counts the
// reconciles that failed with a 409 Conflict (the Manager's Registry does, as
// informerkit_controller_reconcile_conflicts_total{controller}). A provider without it
// still counts them in the reconcile errors.
type ConflictsMetricsProvider interface {
	NewReconcileConflictsMetric(controller string) workqueue.CounterMetric
}

// Controller returns the controller named name among those added to the Manager (Add, or
// a Builder's Build), for its Stats in tests and diagnostics.
func (m *Manager) Controller(name string) (*Controller, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.runnables {
		if c, ok := r.(*Controller); ok && c.Name() == name {
			return c, true
		}
	}
	return nil, false
}
