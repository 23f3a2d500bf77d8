package multicluster

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/meta"
)

// work takes Requests until stop is done or the queue shuts down; reconciles run under rctx.
func (c *Controller) work(stop, rctx context.Context) {
	for {
		req, shutdown, err := c.queue.GetWithContext(stop)
		if shutdown || err != nil {
			return
		}
		c.process(rctx, req)
	}
}

// verdict is what admit decides for a Request a worker took.
type verdict uint8

const (
	run  verdict = iota
	drop         // its cluster is not reconciled here
	park         // its cluster cannot take it now
)

// admit decides whether req runs now. A Request that runs counts in its cluster's
// in-flight reconciles until finish.
func (c *Controller) admit(req Request) (*clusterState, verdict) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.states[req.Cluster]
	if st == nil || !st.active {
		return nil, drop
	}
	if !st.synced || st.cl.IsDown() || st.inflight >= c.opts.MaxConcurrentReconcilesPerCluster {
		prio := controller.PriorityDefault
		if !st.synced {
			prio = controller.PriorityLow // an initial list's, most likely
		}
		p, ok := st.parked[req.Request]
		if !ok {
			st.series.parked.Inc()
		}
		if !ok || p < prio {
			st.parked[req.Request] = prio
		}
		return st, park
	}
	st.inflight++
	return st, run
}

// process reconciles req if its cluster can take it, and handles the result.
func (c *Controller) process(rctx context.Context, req Request) {
	st, v := c.admit(req)
	switch v {
	case drop:
		c.queue.Forget(req)
		c.queue.Done(req)
		c.stats.stale.Add(1)
		return
	case park:
		c.queue.Done(req)
		c.stats.parked.Add(1)
		return
	}
	defer c.finish(st, req)
	if r := c.fleet.ring; r != nil {
		// A spread fleet: reconcile only while this replica holds the cluster, and keep the
		// ring from handing it over until the reconcile has returned.
		done, ok := r.Begin(placeOf(req.Cluster))
		if !ok {
			c.queue.Forget(req)
			c.stats.notHeld.Add(1)
			return
		}
		defer done()
	}
	cl := st.cl
	ctx, cancel := context.WithCancelCause(rctx)
	defer cancel(nil)
	stopWithCluster := context.AfterFunc(cl.ctx, func() { cancel(context.Cause(cl.ctx)) })
	defer stopWithCluster()
	if c.opts.ReconcileTimeout > 0 {
		var cancelTimeout context.CancelFunc
		ctx, cancelTimeout = context.WithTimeout(ctx, c.opts.ReconcileTimeout)
		defer cancelTimeout()
	}
	start := time.Now()
	res, err := c.call(ctx, cl, req)
	st.series.time.Observe(time.Since(start).Seconds())
	if err != nil && st.cl.ctx.Err() == nil {
		if apiclient.IsUnreachable(err) {
			cl.markDown(err, start)
		} else if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil && cl.cfg.Timeout > 0 {
			// A deadline that is not the reconcile's own: the API client's Config.Timeout,
			// a request the server did not answer in time.
			cl.markDown(&apiclient.TimeoutError{Op: "request", Path: cl.cfg.Host, Limit: cl.cfg.Timeout, Setting: "Config.Timeout"}, start)
		}
	}
	c.handle(st, req, res, err)
}

// finish ends a reconcile of st: one more of its parked Requests may run.
func (c *Controller) finish(st *clusterState, req Request) {
	c.mu.Lock()
	st.inflight--
	c.mu.Unlock()
	c.unparkState(st, 1)
	c.queue.Done(req)
}

// unpark lets cl's parked Requests run again (its server answers again).
func (c *Controller) unpark(cl *Cluster) {
	c.mu.Lock()
	st := c.states[cl.name]
	c.mu.Unlock()
	if st != nil && st.cl == cl {
		c.unparkState(st, -1)
	}
}

// unparkState puts back up to n (all if n < 0) of st's parked Requests, if the cluster can
// take them: the queue hands them out again in turn with the other clusters'.
func (c *Controller) unparkState(st *clusterState, n int) {
	c.mu.Lock()
	if !st.active || !st.synced || len(st.parked) == 0 || st.cl.IsDown() {
		c.mu.Unlock()
		return
	}
	type parked struct {
		r    controller.Request
		prio int
	}
	var out []parked
	for r, p := range st.parked {
		if n >= 0 && len(out) >= n {
			break
		}
		out = append(out, parked{r, p})
		delete(st.parked, r)
	}
	st.series.parked.Add(-float64(len(out)))
	q := st.q
	c.mu.Unlock()
	for _, p := range out {
		q.AddWithPriority(p.r, p.prio)
	}
}

// call calls the Reconciler, turning a panic into a *controller.PanicError.
func (c *Controller) call(ctx context.Context, cl *Cluster, req Request) (res controller.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			c.stats.panics.Add(1)
			pe := &controller.PanicError{Request: req.Request, Value: v, Stack: debug.Stack()}
			c.log.Error("reconcile panicked", "request", req.String(), "panic", fmt.Sprint(v), "stack", string(pe.Stack))
			res, err = controller.Result{}, pe
		}
	}()
	return c.r.Reconcile(ctx, cl, req)
}

// handle acts on a reconcile's result as controller.Controller does. (process has marked
// the cluster down if the error says that its server did not answer, so that its next
// Requests wait aside instead of holding workers.)
func (c *Controller) handle(st *clusterState, req Request, res controller.Result, err error) {
	c.stats.reconciles.Add(1)
	log := c.log
	switch {
	case err != nil:
		c.count(st, func(k *clusterCounts) { k.errors++ })
		c.stats.errors.Add(1)
		st.series.result(controller.ResultError)
		if controller.IsTerminalError(err) {
			c.queue.Forget(req)
			c.stats.terminal.Add(1)
			log.Error("reconcile failed; not retrying", "request", req.String(), "err", err)
			return
		}
		if n := c.queue.NumRequeues(req); c.opts.MaxRetries > 0 && n >= c.opts.MaxRetries {
			c.queue.Forget(req)
			c.stats.dropped.Add(1)
			log.Error("reconcile failed too often; dropping the request until an event enqueues it again",
				"request", req.String(), "err", err, "retries", n)
			return
		}
		c.queue.AddRateLimited(req)
		c.stats.requeues.Add(1)
		if meta.IsConflict(err) {
			log.Debug("reconcile hit a conflict; retrying with backoff", "request", req.String(), "err", err)
			return
		}
		log.Error("reconcile failed; retrying with backoff", "request", req.String(), "err", err, "retries", c.queue.NumRequeues(req))
	case res.RequeueAfter > 0:
		c.count(st, func(k *clusterCounts) { k.requeueAfter++ })
		st.series.result(controller.ResultRequeueAfter)
		st.cl.markUp()
		c.queue.Forget(req)
		c.queue.AddAfter(req, res.RequeueAfter)
		c.stats.requeues.Add(1)
	case res.Requeue:
		c.count(st, func(k *clusterCounts) { k.requeues++ })
		st.series.result(controller.ResultRequeue)
		st.cl.markUp()
		c.queue.AddRateLimited(req)
		c.stats.requeues.Add(1)
	default:
		c.count(st, func(k *clusterCounts) { k.success++ })
		st.series.result(controller.ResultSuccess)
		st.cl.markUp()
		c.queue.Forget(req)
		log.Debug("reconciled", "request", req.String())
	}
}

func (c *Controller) count(st *clusterState, fn func(*clusterCounts)) {
	c.mu.Lock()
	fn(&st.counts)
	c.mu.Unlock()
}
