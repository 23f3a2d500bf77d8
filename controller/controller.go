package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/informerkit/informerkit/controller/rbac"
	"github.com/informerkit/informerkit/leaderelection"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/tracing"
	"github.com/informerkit/informerkit/workqueue"
)

// Defaults of Options.
const (
	// DefaultCacheSyncTimeout bounds the wait for a controller's sources to sync.
	DefaultCacheSyncTimeout = 2 * time.Minute
	// DefaultDrainTimeout bounds the wait for in-flight reconciles at shutdown.
	DefaultDrainTimeout = 30 * time.Second
	// DefaultPriorityAging is how long a Request may wait behind Requests of higher
	// priorities before it gets every second turn (workqueue.Config.Aging).
	DefaultPriorityAging = time.Minute
)

// ErrLeaderElectionLost is the cause of the context cancellation that tells runnables the
// manager lost its leadership (context.Cause), and what Manager.Start returns then. A
// controller whose context ends with this cause does not drain: it cancels its in-flight
// reconciles at once, since another replica may lead soon. It is
// leaderelection.ErrLeadershipLost.
var ErrLeaderElectionLost = leaderelection.ErrLeadershipLost

// Options configure a Controller. The zero value is usable.
type Options struct {
	// MaxConcurrentReconciles is the number of workers (default 1). Different Requests are
	// reconciled in parallel; one Request never is.
	MaxConcurrentReconciles int
	// RateLimiter decides the delay of Requests re-added after an error or Result.Requeue
	// (default workqueue.DefaultControllerRateLimiter: per-item exponential 5 ms..1000 s,
	// and an overall 10 qps / burst 100 token bucket).
	RateLimiter workqueue.RateLimiter[Request]
	// Logger receives the controller's logs, with controller=name (default: the Manager's
	// logger once added to a Manager, else slog.Default()).
	Logger *slog.Logger
	// CacheSyncTimeout bounds the wait for the sources to sync before the workers start
	// (default DefaultCacheSyncTimeout); Start fails if it passes.
	CacheSyncTimeout time.Duration
	// DrainTimeout bounds how long Start waits, once its context is done, for the reconciles
	// in flight to finish (default DefaultDrainTimeout, or the Manager's
	// GracefulShutdownTimeout for a controller added to a Manager). Their context is
	// cancelled when it passes.
	DrainTimeout time.Duration
	// ReconcileTimeout, if positive, bounds each Reconcile call through its context.
	ReconcileTimeout time.Duration
	// MetricsProvider receives the controller's metrics (default none, or the Manager's
	// Registry for a controller added to a Manager).
	MetricsProvider MetricsProvider
	// QueueMetricsProvider receives the work queue's metrics, under the controller's name
	// (default none, or the Manager's Registry).
	QueueMetricsProvider workqueue.MetricsProvider
	// Tracer traces each watch event through the queue to the reconcile it causes and that
	// reconcile's API requests (see package tracing; default none, or the Manager's).
	Tracer tracing.Tracer
	// TraceparentAnnotation, if set (for example to "traceparent"), carries the trace across
	// controllers through the objects they write, when the Tracer is a tracing.Propagator:
	// a reconcile triggered by an event of an object that has this annotation links to the
	// span the annotation names (a W3C traceparent), and the controller client's Create,
	// Update and PatchFrom made with the reconcile's context write the reconcile span's
	// traceparent in it. Default "": off, nothing read or written.
	TraceparentAnnotation string
	// QueueObserve is the work queue's workqueue.Config.Observe: told every Add, Get and Done
	// of a Request with its dirty and processing state (the generator of
	// docs/walkthrough.md uses it). Default nil: nothing is reported.
	QueueObserve func(workqueue.Observation)
	// NeedLeaderElection, if set to false, lets a Manager run the controller on every
	// replica instead of only on the leader. Default true (false with Sharded).
	NeedLeaderElection *bool
	// DisableFairness makes the queue serve each priority in FIFO order. By default it serves
	// the Requests of each priority round robin across their fairness keys (FairnessKey), so
	// that 10,000 Requests of one namespace do not delay the one of another
	// (workqueue.Config.Fairness).
	DisableFairness bool
	// FairnessKey returns the fairness key of a Request (default: its Namespace; a
	// multi-cluster controller may return the cluster, for example).
	FairnessKey func(Request) string
	// PriorityAging bounds how long priorities hold a Request back: the objects of an
	// initial list and periodic resyncs are enqueued with PriorityLow, and a Request that
	// has waited PriorityAging behind higher priorities gets every second turn of the
	// workers (workqueue.Config.Aging; controller-runtime#3496). Default
	// DefaultPriorityAging; negative: strict priorities.
	PriorityAging time.Duration
	// Sharded runs the controller on every replica of a Manager with
	// ManagerOptions.Sharding, each on its share of the objects: the Manager's informers of
	// its primary type and of the types it owns list and watch only this replica's share
	// (so does every reader of them, the Manager's Client included), and a Request is
	// reconciled only while this replica holds its object; a range passes to another
	// replica only once the reconciles begun on it have returned. Watched types (Watches)
	// are not sharded. Only the Builder honours it (New refuses it). Default false.
	Sharded bool
	// MaxRetries bounds the retries of a Request whose reconciles keep failing: after
	// MaxRetries requeues with backoff, the next failure forgets the Request (until an event
	// enqueues it again), logs its last error and counts it in the dropped-requests metric,
	// as kube-controller-manager's controllers do (the DeploymentController's maxRetries is
	// 15). Default 0: retry for ever, as controller-runtime does.
	MaxRetries int
	// Permissions are the API permissions the reconciler needs beyond those its sources
	// and the Builder declare (reads of what it watches, writes of what it owns, status
	// writes of its primary type): for example update of the primary type, to add a
	// finalizer. Manager.Permissions lists them with the rest, and a Manager checks them
	// at Start. Default none.
	Permissions []rbac.Rule
	// FollowResources makes the controller follow the resources its sources watch, for
	// resources that a CustomResourceDefinition (or an aggregated API) adds and removes while
	// the Manager runs. Run by a Manager, the controller waits quietly while one of them is
	// not served (its /readyz entry "resources-<name>" names it; no error is logged), starts
	// once all are, stops cleanly when one stops being served (its CRD deleted, its version
	// no longer served: the workers drained, the queue shut down, the informers released),
	// and starts again when it is back. Its sources must be able to run again: the Builder's
	// (they acquire their informers when they run), Kind, Scoped and Channel; FromInformer,
	// over a fixed informer, cannot. Default false, on purpose (docs/controller.md, "Controllers
	// that follow their resources"): the controller starts with the Manager, and a resource
	// that is not served makes its cache sync fail, which is what a deployment whose CRD is
	// missing by mistake should see; following also needs the right to list and watch
	// CustomResourceDefinitions, which a controller does not otherwise need.
	FollowResources bool
}

// Controller runs a Reconciler over a work queue of Requests fed by sources (the
// controller-runtime controller). Create it with New, add sources with Watch, then run it
// with Start, directly or through a Manager.
//
// Semantics:
//
//   - Events from sources are turned into Requests by handlers and deduplicated by the queue:
//     many events for one object while it waits give one reconcile.
//   - MaxConcurrentReconciles workers take Requests from the queue; the queue never hands one
//     Request to two workers, and a Request re-added while it is being reconciled is
//     reconciled again afterwards.
//   - After Reconcile: an error (or a panic) re-adds the Request with the rate limiter's
//     backoff (AddRateLimited), unless it is a TerminalError; Result.RequeueAfter re-adds it
//     after that delay (AddAfter) and resets its backoff (Forget); Result.Requeue re-adds it
//     with backoff; success resets its backoff (Forget).
//   - Start waits for every source to sync before starting the workers, so the first
//     reconciles see complete caches.
//   - When Start's context is done the sources stop, no worker takes a new Request, and
//     Start waits for the reconciles in flight (DrainTimeout), then returns. Requests still
//     queued are dropped: a controller started again relists and sees them.
type Controller struct {
	name       string
	reconciler Reconciler
	opts       Options
	log        *slog.Logger

	mu        sync.Mutex
	sources   []Source
	started   bool // Start was called: the sources are fixed
	starting  bool // a Start runs now
	queue     Queue
	events    *eventTracker // from Start on
	startedCh chan struct{} // closed once the workers run
	stats     stats

	// Lives (follow.go): running is set while the workers run; startedOnce closes
	// startedCh at the first start; tracker tells a following controller whether its
	// resources are served (its Manager's), and waiting lists those it waits for.
	running     atomic.Bool
	startedOnce sync.Once
	tracker     *resourceTracker
	waiting     []meta.GroupVersionResource
	// declared are the permissions the Builder derived from its inputs.
	declared []rbac.Rule

	defaultLogger bool       // Options.Logger was nil: a Manager's Add gives its own
	shard         *shardGate // built with Options.Sharded: runs on every replica, gated
}

// New returns a controller named name (unique among the controllers of a Manager: it labels
// metrics and logs) that calls reconciler. Add its sources with Watch before Start.
func New(name string, reconciler Reconciler, opts Options) (*Controller, error) {
	if name == "" {
		return nil, errors.New("controller: New needs a name")
	}
	if reconciler == nil {
		return nil, fmt.Errorf("controller %q: New needs a Reconciler", name)
	}
	if opts.Sharded {
		return nil, fmt.Errorf("controller %q: Options.Sharded needs the Builder, which shards the informers and gates the Reconciler", name)
	}
	if opts.MaxRetries < 0 {
		return nil, fmt.Errorf("controller %q: MaxRetries %d is negative", name, opts.MaxRetries)
	}
	if opts.MaxConcurrentReconciles < 0 {
		return nil, fmt.Errorf("controller %q: MaxConcurrentReconciles %d is negative", name, opts.MaxConcurrentReconciles)
	}
	if opts.MaxConcurrentReconciles == 0 {
		opts.MaxConcurrentReconciles = 1
	}
	if opts.RateLimiter == nil {
		opts.RateLimiter = workqueue.DefaultControllerRateLimiter[Request]()
	}
	defaultLogger := opts.Logger == nil
	if defaultLogger {
		opts.Logger = slog.Default()
	}
	if opts.CacheSyncTimeout <= 0 {
		opts.CacheSyncTimeout = DefaultCacheSyncTimeout
	}
	return &Controller{
		name:       name,
		reconciler: reconciler,
		opts:       opts,
		log:        opts.Logger.With("controller", name),
		startedCh:  make(chan struct{}),

		defaultLogger: defaultLogger,
	}, nil
}

// Name returns the controller's name.
func (c *Controller) Name() string { return c.name }

// Watch adds a source of events (see Kind and Channel). It must be called before Start.
func (c *Controller) Watch(src Source) error {
	if src == nil {
		return fmt.Errorf("controller %q: Watch: nil source", c.name)
	}
	if err := bindError(src); err != nil {
		return fmt.Errorf("controller %q: Watch: %w", c.name, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return fmt.Errorf("controller %q: Watch after Start", c.name)
	}
	if b, ok := src.(binder); ok {
		bound, err := b.bind(c.opts.FollowResources)
		if err != nil {
			return fmt.Errorf("controller %q: Watch: %w", c.name, err)
		}
		src = bound
	}
	c.sources = append(c.sources, src)
	return nil
}

// bindError is the error of a Builder's input that could not be bound (errSource), if src
// is one.
func bindError(src Source) error {
	switch s := src.(type) {
	case errSource:
		return s.err
	case *discoveryChecked:
		return bindError(s.Source)
	}
	return nil
}

// NeedLeaderElection reports whether a Manager must run the controller only while it leads
// (Options.NeedLeaderElection, default true).
func (c *Controller) NeedLeaderElection() bool {
	if c.shard != nil {
		return false
	}
	return c.opts.NeedLeaderElection == nil || *c.opts.NeedLeaderElection
}

// Started returns a channel closed once Start has synced the sources and started the
// workers: from then on every event reaches the queue and is reconciled. It is never closed
// if Start fails before that.
func (c *Controller) Started() <-chan struct{} { return c.startedCh }

// Queue returns the controller's work queue once Start has created it (nil before). Tests and
// diagnostics use it; handlers get it with every event.
func (c *Controller) Queue() Queue {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queue
}

// queueConfig returns the work queue's configuration from the controller's options.
func queueConfig(name string, opts Options) workqueue.Config {
	cfg := workqueue.Config{
		Name:            name,
		MetricsProvider: opts.QueueMetricsProvider,
		Priorities:      true,
		Aging:           opts.PriorityAging,
		Observe:         opts.QueueObserve,
	}
	if cfg.Aging == 0 {
		cfg.Aging = DefaultPriorityAging
	}
	if !opts.DisableFairness {
		key := opts.FairnessKey
		if key == nil {
			key = func(r Request) string { return r.Namespace }
		}
		cfg.Fairness = workqueue.FairBy(key)
	}
	return cfg
}

// setDefaultTracer gives the controller the Manager's Tracer unless it has one.
func (c *Controller) setDefaultTracer(t tracing.Tracer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.opts.Tracer == nil {
		c.opts.Tracer = t
	}
}

// setManagerDefaults fills the options a Manager provides (see Manager.Add).
func (c *Controller) setManagerDefaults(m MetricsProvider, qm workqueue.MetricsProvider, drain time.Duration, log *slog.Logger) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// A controller built without a Logger logs through its manager's, as ManagerOptions.Logger
	// promises; Add runs before Start, so no worker reads c.log yet.
	if c.defaultLogger && log != nil {
		c.opts.Logger = log
		c.log = log.With("controller", c.name)
		c.defaultLogger = false
	}
	if c.opts.MetricsProvider == nil {
		c.opts.MetricsProvider = m
	}
	if c.opts.QueueMetricsProvider == nil {
		c.opts.QueueMetricsProvider = qm
	}
	if c.opts.DrainTimeout <= 0 {
		c.opts.DrainTimeout = drain
	}
}

// Start runs the controller until ctx is done: it starts the sources, waits until they have
// synced (at most CacheSyncTimeout), runs MaxConcurrentReconciles workers, and, once ctx is
// done, stops the workers, waits for the reconciles in flight (at most DrainTimeout) and
// stops the sources. It returns nil after a clean shutdown, and an error if a source failed,
// the sources did not sync in time, or the drain timed out. One Start runs at a time; once
// it has returned, Start runs the controller again, with a new queue, its sources run again
// (FromInformer's replay the informer's cache: no relist); a Manager with
// LeaderElectionStepDown does so at each term. With Options.FollowResources it runs, stops
// and runs again inside one Start as its resources come and go (see follow.go).
func (c *Controller) Start(ctx context.Context) error {
	c.mu.Lock()
	if c.starting {
		c.mu.Unlock()
		return fmt.Errorf("controller %q: already started", c.name)
	}
	c.started, c.starting = true, true
	defer func() {
		c.mu.Lock()
		c.starting = false
		c.mu.Unlock()
	}()
	opts := c.opts
	sources := c.sources
	tracker := c.tracker
	events := newEventTracker(c.name, opts.Tracer, opts.MetricsProvider)
	events.setTraceparentAnnotation(opts.TraceparentAnnotation)
	c.events = events
	c.mu.Unlock()
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = DefaultDrainTimeout
	}
	metrics := newControllerMetrics(c.name, opts.MetricsProvider)
	metrics.maxConcurrent.Set(float64(opts.MaxConcurrentReconciles))
	if opts.FollowResources {
		return c.follow(ctx, opts, sources, tracker, metrics, events)
	}
	return c.run(ctx, opts, sources, metrics, events)
}

// run is one life of the controller: a new queue, the sources, the sync, the workers until
// ctx is done, the drain.
func (c *Controller) run(ctx context.Context, opts Options, sources []Source, metrics *controllerMetrics, events *eventTracker) error {
	q := newTriggerQueue(c.name, opts)
	c.mu.Lock()
	c.queue = q
	c.mu.Unlock()

	// Sources run until srcCtx is done (after the drain); the first failure stops the
	// controller.
	srcCtx, stopSources := context.WithCancel(context.WithoutCancel(ctx))
	defer stopSources()
	var srcWG sync.WaitGroup
	srcErr := make(chan error, len(sources))
	for i, s := range sources {
		srcWG.Go(func() {
			// Each source gets its own view of the queue, which ties the Requests its
			// handlers enqueue to the watch event being handled (trace.go).
			if err := s.Run(srcCtx, newEventQueue(q, events)); err != nil {
				srcErr <- fmt.Errorf("controller %q: source %d: %w", c.name, i, err)
			}
		})
	}
	shutdownSources := func() {
		stopSources()
		srcWG.Wait()
	}

	if err := c.waitForSync(ctx, sources, opts.CacheSyncTimeout, srcErr); err != nil {
		q.ShutDown()
		shutdownSources()
		if ctx.Err() != nil {
			return nil // stopped before the caches synced: not an error
		}
		return err
	}
	c.log.Info("starting workers", "workers", opts.MaxConcurrentReconciles)

	// Reconciles run under a context that outlives ctx by the drain, so that a reconcile in
	// flight at shutdown can finish its writes.
	rctx, cancelReconciles := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelReconciles(nil)
	// Workers take Requests until workCtx is done.
	workCtx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	w := &worker{c: c, q: q, m: metrics, ev: events, timeout: opts.ReconcileTimeout, maxRetries: opts.MaxRetries}
	var wg sync.WaitGroup
	for range opts.MaxConcurrentReconciles {
		wg.Go(func() { w.run(workCtx, rctx) })
	}
	c.running.Store(true)
	c.startedOnce.Do(func() { close(c.startedCh) })

	var err error
	select {
	case <-ctx.Done():
	case err = <-srcErr:
	}
	stopWork()
	if errors.Is(context.Cause(ctx), ErrLeaderElectionLost) {
		// Another replica may lead already: stop now rather than finish.
		cancelReconciles(ErrLeaderElectionLost)
	}
	drainCtx, cancelDrain := context.WithTimeout(context.Background(), opts.DrainTimeout)
	defer cancelDrain()
	// Workers take no new Request; wait for those in flight. The sources stop after them,
	// so that a reconcile in flight still reads from their informers (a source that
	// releases its informer would otherwise make the client start a new one).
	if derr := q.ShutDownWithDrainContext(drainCtx); derr != nil && err == nil {
		err = fmt.Errorf("controller %q: reconciles still running after the drain timeout %v", c.name, opts.DrainTimeout)
	}
	q.ShutDown()
	cancelReconciles(context.Canceled)
	wg.Wait()
	shutdownSources()
	c.running.Store(false)
	c.log.Info("stopped")
	return err
}

// syncNotifier is a Source whose channel is closed once it has synced.
type syncNotifier interface {
	syncedChan() <-chan struct{}
}

// waitForSync polls the sources' HasSynced (10 ms, growing to 100 ms, or at once when a
// syncNotifier says so) until all have synced, a source fails, ctx is done or the timeout
// passes.
func (c *Controller) waitForSync(ctx context.Context, sources []Source, timeout time.Duration, srcErr <-chan error) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	delay := 10 * time.Millisecond
	for {
		pending := -1
		for i, s := range sources {
			if !s.HasSynced() {
				pending = i
				break
			}
		}
		if pending < 0 {
			return nil
		}
		// A source that tells when it has synced (Kind) wakes the wait at once: a new
		// leader's controller starts reconciling as soon as its handlers have the cache.
		var wake <-chan struct{}
		if n, ok := sources[pending].(syncNotifier); ok {
			wake = n.syncedChan()
		}
		tick := time.NewTimer(delay)
		select {
		case <-wake:
			tick.Stop()
			continue
		case <-ctx.Done():
			tick.Stop()
			return ctx.Err()
		case err := <-srcErr:
			tick.Stop()
			return err
		case <-deadline.C:
			tick.Stop()
			return fmt.Errorf("controller %q: source %d (%s) did not sync within %v", c.name, pending, describe(sources[pending]), timeout)
		case <-tick.C:
		}
		delay = min(2*delay, 100*time.Millisecond)
	}
}

func describe(s Source) string {
	if st, ok := s.(fmt.Stringer); ok {
		return st.String()
	}
	return fmt.Sprintf("%T", s)
}
