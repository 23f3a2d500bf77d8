package controller

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/informerkit/informerkit/meta"
)

// worker is what the controller's goroutines run.
type worker struct {
	c          *Controller
	q          triggerQueue
	m          *controllerMetrics
	ev         *eventTracker
	timeout    time.Duration
	maxRetries int
}

// run takes Requests until stop is done or the queue shuts down; reconciles run under rctx.
func (w *worker) run(stop, rctx context.Context) {
	for {
		// The triggers go to the reconcile, which owns them: a new slice each time.
		req, trs, shutdown, err := w.q.GetWithCauses(stop, nil)
		if shutdown || err != nil {
			return
		}
		w.process(rctx, req, Triggers{List: trs.List, Dropped: trs.Dropped})
	}
}

func (w *worker) process(ctx context.Context, req Request, trs Triggers) {
	defer w.q.Done(req)
	if g := w.c.shard; g != nil {
		// A sharded controller: the Request is reconciled only while this replica holds it,
		// and not counted (metrics, traces, Stats.Reconciles) when it does not.
		end, ok := g.begin(req)
		if !ok {
			w.q.Forget(req)
			w.c.stats.notHeld.Add(1)
			return
		}
		var res Result
		var err error
		defer func() { end(res, err) }()
		res, err = w.processHeld(ctx, req, trs)
		return
	}
	_, _ = w.processHeld(ctx, req, trs)
}

// processHeld reconciles req, caused by trs, and handles the result. It returns the result
// for the shard gate.
func (w *worker) processHeld(ctx context.Context, req Request, trs Triggers) (Result, error) {
	w.m.activeWorkers.Inc()
	start := time.Now()
	w.ev.observe(&trs, start)
	ctx, span := w.ev.startReconcile(ctx, req, trs, start)
	res, err := w.reconcile(ctx, req)
	w.m.reconcileTime.Observe(time.Since(start).Seconds())
	endReconcile(span, resultOf(res, err), err)
	w.m.activeWorkers.Dec()
	st := &w.c.stats
	st.reconciles.Add(1)
	log := w.c.log
	switch {
	case err != nil:
		w.m.total[ResultError].Inc()
		w.m.errors.Inc()
		st.errors.Add(1)
		conflict := meta.IsConflict(err)
		if conflict {
			w.m.conflicts.Inc()
			st.conflicts.Add(1)
		}
		if isTerminal(err) {
			w.q.Forget(req)
			st.terminal.Add(1)
			log.Error("reconcile failed; not retrying", "request", req.String(), "err", err)
			return res, err
		}
		if n := w.q.NumRequeues(req); w.maxRetries > 0 && n >= w.maxRetries {
			w.q.Forget(req)
			w.m.dropped.Inc()
			st.dropped.Add(1)
			log.Error("reconcile failed too often; dropping the request until an event enqueues it again",
				"request", req.String(), "err", err, "retries", n, "maxRetries", w.maxRetries)
			return res, err
		}
		w.q.AddRateLimitedWithCause(req, requeueTrigger(TriggerRetry, req, err))
		st.requeues.Add(1)
		if conflict {
			// A write from a stale read: normal under concurrent writers, and the retry
			// reads again. Counted (metric and Stats) rather than logged as a failure.
			log.Debug("reconcile hit a conflict; retrying with backoff", "request", req.String(), "err", err, "retries", w.q.NumRequeues(req))
			return res, err
		}
		log.Error("reconcile failed; retrying with backoff", "request", req.String(), "err", err, "retries", w.q.NumRequeues(req))
	case res.RequeueAfter > 0:
		w.m.total[ResultRequeueAfter].Inc()
		w.q.Forget(req)
		w.q.AddAfterWithCause(req, res.RequeueAfter, requeueTrigger(TriggerRequeueAfter, req, nil))
		st.requeues.Add(1)
		log.Debug("reconciled; requeue after", "request", req.String(), "after", res.RequeueAfter)
	case res.Requeue:
		w.m.total[ResultRequeue].Inc()
		w.q.AddRateLimitedWithCause(req, requeueTrigger(TriggerRequeue, req, nil))
		st.requeues.Add(1)
		log.Debug("reconciled; requeue", "request", req.String())
	default:
		w.m.total[ResultSuccess].Inc()
		w.q.Forget(req)
		log.Debug("reconciled", "request", req.String())
	}
	return res, err
}

// resultOf names a reconcile's outcome, as the result label of the reconcile-total metric.
func resultOf(res Result, err error) string {
	switch {
	case err != nil:
		return ResultError
	case res.RequeueAfter > 0:
		return ResultRequeueAfter
	case res.Requeue:
		return ResultRequeue
	}
	return ResultSuccess
}

// reconcile calls the Reconciler, turning a panic into a *PanicError.
func (w *worker) reconcile(ctx context.Context, req Request) (res Result, err error) {
	if w.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, w.timeout)
		defer cancel()
	}
	defer func() {
		if v := recover(); v != nil {
			w.m.panics.Inc()
			w.c.stats.panics.Add(1)
			pe := &PanicError{Request: req, Value: v, Stack: debug.Stack()}
			w.c.log.Error("reconcile panicked", "request", req.String(), "panic", fmt.Sprint(v), "stack", string(pe.Stack))
			res, err = Result{}, pe
		}
	}()
	return w.c.reconciler.Reconcile(ctx, req)
}
