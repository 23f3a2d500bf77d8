package multicluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/workqueue"
)

// Defaults of ControllerOptions.
const (
	// DefaultMaxConcurrentReconciles is a multi-cluster controller's number of workers: more
	// than a single-cluster controller's 1, so that a slow cluster (which holds at most
	// MaxConcurrentReconcilesPerCluster of them) leaves workers to the others.
	DefaultMaxConcurrentReconciles = 4
	// DefaultMaxConcurrentReconcilesPerCluster is how many workers one cluster may hold.
	DefaultMaxConcurrentReconcilesPerCluster = 1
	// DefaultReconcileTimeout bounds each reconcile.
	DefaultReconcileTimeout = time.Minute
)

// ControllerOptions are a Controller's optional settings.
type ControllerOptions struct {
	// MaxConcurrentReconciles is the number of workers (default
	// DefaultMaxConcurrentReconciles).
	MaxConcurrentReconciles int
	// MaxConcurrentReconcilesPerCluster bounds the workers one cluster holds at once
	// (default DefaultMaxConcurrentReconcilesPerCluster): a Request of a cluster at its
	// bound waits aside (parked, holding no worker) until one of that cluster's reconciles
	// ends, so that a slow cluster delays only itself. At most MaxConcurrentReconciles.
	MaxConcurrentReconcilesPerCluster int
	// RateLimiter delays the retries of Requests (default DefaultRateLimiter: exponential
	// per Request, a token bucket per cluster). If it is a ClusterForgetter, a disengaged
	// cluster is forgotten.
	RateLimiter workqueue.RateLimiter[Request]
	// ReconcileTimeout bounds each Reconcile through its context (default
	// DefaultReconcileTimeout; negative: none).
	ReconcileTimeout time.Duration
	// DrainTimeout bounds the wait for reconciles in flight at shutdown (default
	// controller.DefaultDrainTimeout).
	DrainTimeout time.Duration
	// CacheSyncTimeout bounds the wait for the hub sources (WatchHub) to sync before the
	// workers start (default controller.DefaultCacheSyncTimeout). A cluster's own sources
	// never hold the workers back: its Requests wait aside until they have synced.
	CacheSyncTimeout time.Duration
	// MaxRetries, if positive, forgets a Request after that many retries in a row (as
	// controller.Options.MaxRetries). Default 0: retry for ever.
	MaxRetries int
	// PriorityAging is controller.Options.PriorityAging (default
	// controller.DefaultPriorityAging; negative: strict priorities).
	PriorityAging time.Duration
	// NeedLeaderElection, if set to false, runs the controller on every replica. Default
	// true, false for a spread fleet (Options.Spread), whose replicas reconcile their own
	// clusters.
	NeedLeaderElection *bool
	// Logger receives the controller's logs, with controller=name (default the Fleet's).
	Logger *slog.Logger
}

// Controller reconciles the objects of every cluster of a Fleet (engaged and, with
// Options.Spread, held by this replica), with one work queue of Requests that name their
// cluster: fair across clusters (round robin within each priority), a Request never
// reconciled by two workers at once. Create it with NewController (which adds it to the
// Fleet's Manager), add sources with Watch and WatchHub.
type Controller struct {
	name  string
	fleet *Fleet
	r     Reconciler
	opts  ControllerOptions
	log   *slog.Logger
	rl    workqueue.RateLimiter[Request]
	m     *controllerMetrics

	// life serialises what changes the handlers: activations and deactivations of clusters,
	// the controller's start and stop. Workers and handlers never take it.
	life sync.Mutex

	mu         sync.Mutex
	sources    []source
	hubSources []hubSrc
	states     map[string]*clusterState
	started    bool
	running    bool
	queue      workqueue.RateLimitingInterface[Request]
	startedCh  chan struct{}
	stats      stats
}

// clusterState is a controller's state of one engaged cluster.
type clusterState struct {
	cl       *Cluster
	bindings []binding
	q        *clusterQueue
	want     bool // the Fleet says this replica reconciles the cluster
	active   bool // handlers registered: want, and the controller runs
	synced   bool // every handler has its initial list, since activation
	gen      uint64
	stopSync chan struct{} // closed at deactivation: the sync watch gives up
	inflight int
	parked   map[controller.Request]int // priority to re-add with
	counts   clusterCounts
	series   *clusterSeries
}

// clusterCounts are a cluster's counts in one controller.
type clusterCounts struct {
	success, errors, requeues, requeueAfter uint64
}

// stats are the controller's counts.
type stats struct {
	reconciles, errors, panics, requeues, dropped, terminal atomic.Uint64
	parked, notHeld, stale                                  atomic.Uint64
}

// Stats are a Controller's counts since it was created.
type Stats struct {
	// Reconciles counts the Reconcile calls that returned or panicked; Errors those that
	// failed (Panics of which panicked).
	Reconciles, Errors, Panics uint64
	// Requeues counts the Requests put back after a reconcile (error, Requeue,
	// RequeueAfter); Dropped those forgotten after MaxRetries; Terminal the
	// controller.TerminalError ones.
	Requeues, Dropped, Terminal uint64
	// Parked counts the times a Request was set aside: its cluster had not synced, did not
	// answer, or was at MaxConcurrentReconcilesPerCluster.
	Parked uint64
	// NotHeld counts the Requests of a spread fleet not reconciled because this replica
	// did not hold their cluster any more; Stale those of clusters no longer reconciled
	// here (disengaged, or the controller stopped reconciling them).
	NotHeld, Stale uint64
}

// ClusterStats are a Controller's state of one cluster.
type ClusterStats struct {
	// Active: the controller reconciles the cluster (handlers registered); Synced: every
	// handler has processed its initial list since.
	Active, Synced bool
	// InFlight reconciles now; Parked Requests waiting aside now.
	InFlight, Parked int
	// Reconciles of the cluster by outcome, since it was engaged.
	Succeeded, Failed, Requeued uint64
}

// NewController returns a controller named name (unique among the Manager's controllers)
// that reconciles the clusters of f with r, and adds it to f's Manager. Add its sources
// with Watch and WatchHub before the Manager starts.
func NewController(f *Fleet, name string, r Reconciler, opts ControllerOptions) (*Controller, error) {
	if f == nil {
		panic("multicluster.NewController: nil Fleet")
	}
	if r == nil {
		panic("multicluster.NewController: nil Reconciler")
	}
	if name == "" {
		return nil, errors.New("multicluster: NewController needs a name")
	}
	if opts.MaxConcurrentReconciles < 0 || opts.MaxConcurrentReconcilesPerCluster < 0 || opts.MaxRetries < 0 {
		return nil, fmt.Errorf("multicluster: controller %s: negative MaxConcurrentReconciles, MaxConcurrentReconcilesPerCluster or MaxRetries", name)
	}
	if opts.MaxConcurrentReconciles == 0 {
		opts.MaxConcurrentReconciles = DefaultMaxConcurrentReconciles
	}
	if opts.MaxConcurrentReconcilesPerCluster == 0 {
		opts.MaxConcurrentReconcilesPerCluster = DefaultMaxConcurrentReconcilesPerCluster
	}
	opts.MaxConcurrentReconcilesPerCluster = min(opts.MaxConcurrentReconcilesPerCluster, opts.MaxConcurrentReconciles)
	if opts.ReconcileTimeout == 0 {
		opts.ReconcileTimeout = DefaultReconcileTimeout
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = controller.DefaultDrainTimeout
	}
	if opts.CacheSyncTimeout <= 0 {
		opts.CacheSyncTimeout = controller.DefaultCacheSyncTimeout
	}
	if opts.PriorityAging == 0 {
		opts.PriorityAging = controller.DefaultPriorityAging
	}
	if opts.Logger == nil {
		opts.Logger = f.log
	}
	c := &Controller{
		name: name, fleet: f, r: r, opts: opts, log: opts.Logger.With("controller", name),
		rl: opts.RateLimiter, states: map[string]*clusterState{}, startedCh: make(chan struct{}),
	}
	if c.rl == nil {
		c.rl = DefaultRateLimiter()
	}
	c.m = newControllerMetrics(c, f.mgr.Registry())
	f.mu.Lock()
	if f.started {
		f.mu.Unlock()
		return nil, fmt.Errorf("multicluster: controller %s: NewController after the Fleet started", name)
	}
	f.controllers = append(f.controllers, c)
	f.mu.Unlock()
	if err := f.mgr.Add(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Name returns the controller's name.
func (c *Controller) Name() string { return c.name }

// NeedLeaderElection implements controller.LeaderElectionRunnable.
func (c *Controller) NeedLeaderElection() bool {
	if c.opts.NeedLeaderElection != nil {
		return *c.opts.NeedLeaderElection
	}
	return c.fleet.ring == nil
}

// String names the controller in the Manager's logs.
func (c *Controller) String() string { return "multicluster controller " + c.name }

// Started returns a channel closed once the workers run.
func (c *Controller) Started() <-chan struct{} { return c.startedCh }

func (c *Controller) addSource(s source, h hubSrc) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return fmt.Errorf("multicluster: controller %s: Watch after Start", c.name)
	}
	c.fleet.mu.Lock()
	started := c.fleet.started
	c.fleet.mu.Unlock()
	if started {
		return fmt.Errorf("multicluster: controller %s: Watch after the Fleet started", c.name)
	}
	if s != nil {
		c.sources = append(c.sources, s)
	}
	if h != nil {
		c.hubSources = append(c.hubSources, h)
	}
	return nil
}

// Queue returns the controller's queue as the handlers of cluster name see it, for
// Requests from elsewhere (a timer, another system's notification): what is added to it is
// a Request of that cluster, dropped while the controller does not reconcile the cluster
// here. Its Get hands nothing out. ok is false if the cluster is not engaged.
func (c *Controller) Queue(name string) (q controller.Queue, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.states[name]
	if !ok {
		return nil, false
	}
	return st.q, true
}

// Stats returns the controller's counts.
func (c *Controller) Stats() Stats {
	s := &c.stats
	return Stats{
		Reconciles: s.reconciles.Load(), Errors: s.errors.Load(), Panics: s.panics.Load(),
		Requeues: s.requeues.Load(), Dropped: s.dropped.Load(), Terminal: s.terminal.Load(),
		Parked: s.parked.Load(), NotHeld: s.notHeld.Load(), Stale: s.stale.Load(),
	}
}

// ClusterStats returns the controller's state of cluster name (ok false if it is not
// engaged).
func (c *Controller) ClusterStats(name string) (ClusterStats, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.states[name]
	if !ok {
		return ClusterStats{}, false
	}
	return ClusterStats{
		Active: st.active, Synced: st.synced, InFlight: st.inflight, Parked: len(st.parked),
		Succeeded: st.counts.success, Failed: st.counts.errors, Requeued: st.counts.requeues + st.counts.requeueAfter,
	}, true
}

// Start runs the controller until ctx is done (a controller.Runnable; the Manager calls it):
// it registers the hub sources and waits for them to sync, starts the workers and the
// handlers of every cluster it reconciles, and at the end removes the handlers and drains
// the reconciles in flight (DrainTimeout). Kept whole: the start and the ordered shutdown
// read best together.
func (c *Controller) Start(ctx context.Context) error {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return fmt.Errorf("multicluster: controller %s: already started", c.name)
	}
	c.started = true
	c.queue = workqueue.NewRateLimiting(c.rl, c.queueConfig())
	hubs := c.hubSources
	c.mu.Unlock()
	c.fleet.controllerRunning(1)
	defer c.fleet.controllerRunning(-1)

	srcCtx, stopSources := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSources()
	stopHubs := func() {
		for _, h := range hubs {
			h.stop()
		}
	}
	for _, h := range hubs {
		if err := h.start(srcCtx); err != nil {
			stopHubs()
			c.queue.ShutDown()
			return fmt.Errorf("multicluster: controller %s: %w", c.name, err)
		}
	}
	if err := c.waitHubs(ctx, hubs); err != nil {
		stopHubs()
		c.queue.ShutDown()
		if ctx.Err() != nil {
			return nil
		}
		return err
	}

	rctx, cancelReconciles := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelReconciles(nil)
	workCtx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	var wg sync.WaitGroup
	for range c.opts.MaxConcurrentReconciles {
		wg.Go(func() { c.work(workCtx, rctx) })
	}
	c.setRunning(true)
	close(c.startedCh)
	c.log.Info("starting workers", "workers", c.opts.MaxConcurrentReconciles, "perCluster", c.opts.MaxConcurrentReconcilesPerCluster)

	<-ctx.Done()
	stopWork()
	if errors.Is(context.Cause(ctx), controller.ErrLeaderElectionLost) {
		cancelReconciles(controller.ErrLeaderElectionLost)
	}
	c.setRunning(false)
	drainCtx, cancelDrain := context.WithTimeout(context.Background(), c.opts.DrainTimeout)
	defer cancelDrain()
	var err error
	if derr := c.queue.ShutDownWithDrainContext(drainCtx); derr != nil {
		err = fmt.Errorf("multicluster: controller %s: reconciles still running after the drain timeout %v", c.name, c.opts.DrainTimeout)
	}
	c.queue.ShutDown()
	cancelReconciles(context.Canceled)
	wg.Wait()
	stopHubs()
	c.log.Info("stopped")
	return err
}

func (c *Controller) queueConfig() workqueue.Config {
	return workqueue.Config{
		Name:            c.name,
		MetricsProvider: controller.NewQueueMetricsProvider(c.fleet.mgr.Registry()),
		Priorities:      true,
		Aging:           c.opts.PriorityAging,
		Fairness:        workqueue.FairBy(func(r Request) string { return r.Cluster }),
	}
}

// waitHubs waits for the hub sources' handlers to have their initial lists.
func (c *Controller) waitHubs(ctx context.Context, hubs []hubSrc) error {
	t := time.NewTimer(c.opts.CacheSyncTimeout)
	defer t.Stop()
	for i, h := range hubs {
		select {
		case <-h.synced():
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return fmt.Errorf("multicluster: controller %s: hub source %d did not sync within %v", c.name, i, c.opts.CacheSyncTimeout)
		}
	}
	return nil
}

// setRunning starts or stops reconciling every cluster the Fleet gives this replica.
func (c *Controller) setRunning(on bool) {
	c.life.Lock()
	defer c.life.Unlock()
	c.mu.Lock()
	c.running = on
	sts := make([]*clusterState, 0, len(c.states))
	for _, st := range c.states {
		sts = append(sts, st)
	}
	c.mu.Unlock()
	for _, st := range sts {
		c.apply(st)
	}
}

// engage acquires the controller's informers in a newly engaged cluster.
func (c *Controller) engage(cl *Cluster) {
	c.life.Lock()
	defer c.life.Unlock()
	st := &clusterState{cl: cl, q: &clusterQueue{c: c, cluster: cl.name}, parked: map[controller.Request]int{}, series: c.m.series(cl.name)}
	c.mu.Lock()
	srcs := c.sources
	c.mu.Unlock()
	for _, s := range srcs {
		st.bindings = append(st.bindings, s.bind(cl))
	}
	c.mu.Lock()
	c.states[cl.name] = st
	c.mu.Unlock()
}

// setActive records whether the Fleet has this replica reconcile cl.
func (c *Controller) setActive(cl *Cluster, on bool) {
	c.life.Lock()
	defer c.life.Unlock()
	c.setWant(cl, on)
}

// setWant sets whether cl's handlers should be registered and applies it, returning cl's state
// (nil when cl is not, or no longer, the engaged cluster of its name). Caller holds c.life.
func (c *Controller) setWant(cl *Cluster, on bool) *clusterState {
	c.mu.Lock()
	st := c.states[cl.name]
	if st == nil || st.cl != cl {
		c.mu.Unlock()
		return nil
	}
	st.want = on
	c.mu.Unlock()
	c.apply(st)
	return st
}

// disengage lets go of cl: handlers removed, informers released, parked Requests dropped.
func (c *Controller) disengage(cl *Cluster) {
	c.life.Lock()
	defer c.life.Unlock()
	st := c.setWant(cl, false)
	if st == nil {
		return
	}
	for _, b := range st.bindings {
		b.release()
	}
	c.mu.Lock()
	delete(c.states, cl.name)
	c.mu.Unlock()
	if f, ok := c.rl.(ClusterForgetter); ok {
		f.ForgetCluster(cl.name)
	}
	c.m.forget(st.series)
}

// apply registers or removes st's handlers as want and running say. Caller holds c.life.
func (c *Controller) apply(st *clusterState) {
	c.mu.Lock()
	on := st.want && c.running
	if on == st.active {
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	if on {
		c.activate(st)
	} else {
		c.deactivate(st)
	}
}

// activate registers st's handlers (their initial lists are Requests of the cluster) and
// replays the hub sources' caches to it; the cluster's Requests wait aside until every
// handler has its initial list. st is marked active before the first handler is added, so
// that no Request of an initial list finds it inactive (and is dropped). Caller holds
// c.life.
func (c *Controller) activate(st *clusterState) {
	c.mu.Lock()
	hubs := c.hubSources
	st.active, st.synced = true, false
	st.gen++
	gen := st.gen
	st.stopSync = make(chan struct{})
	stop := st.stopSync
	c.mu.Unlock()
	st.q.live.Store(true)
	var waits []<-chan struct{}
	for _, b := range st.bindings {
		if err := b.activate(st.cl.ctx, st.q); err != nil {
			// The informer stopped: the cluster is being torn down.
			c.log.Debug("handler not added", "cluster", st.cl.name, "err", err)
			continue
		}
		waits = append(waits, b.synced())
	}
	for _, h := range hubs {
		h.replay(st.cl.ctx, st.q)
	}
	if len(waits) == 0 {
		c.markSynced(st, gen)
		return
	}
	// One goroutine per cluster while its handlers get their initial lists; none once they
	// have (an idle engaged cluster costs no goroutine of the controller's).
	c.fleet.bg.Go(func() {
		for _, w := range waits {
			select {
			case <-w:
			case <-stop:
				return
			}
		}
		c.markSynced(st, gen)
	})
}

// deactivate removes st's handlers and drops its parked Requests. Caller holds c.life.
func (c *Controller) deactivate(st *clusterState) {
	st.q.live.Store(false)
	c.mu.Lock()
	st.active, st.synced = false, false
	if st.stopSync != nil {
		close(st.stopSync)
		st.stopSync = nil
	}
	st.series.parked.Add(-float64(len(st.parked)))
	clear(st.parked)
	c.mu.Unlock()
	for _, b := range st.bindings {
		b.deactivate()
	}
}

// markSynced records that st's handlers have their initial lists, and lets its parked
// Requests run.
func (c *Controller) markSynced(st *clusterState, gen uint64) {
	c.mu.Lock()
	if st.gen != gen || !st.active {
		c.mu.Unlock()
		return
	}
	st.synced = true
	c.mu.Unlock()
	c.unparkState(st, -1)
}

// liveQueues returns the queues of the clusters the controller reconciles (hub sources
// add to each).
func (c *Controller) liveQueues() []*clusterQueue {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*clusterQueue, 0, len(c.states))
	for _, st := range c.states {
		if st.active {
			out = append(out, st.q)
		}
	}
	return out
}
