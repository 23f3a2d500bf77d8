package multicluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/events"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/sharding/ring"
)

// ErrNoRing: Options.Spread needs a Manager with a sharding ring.
var ErrNoRing = errors.New("multicluster: Options.Spread needs a Manager with ManagerOptions.Sharding.Ring")

// Fleet is the set of clusters of a Provider, engaged on this replica: it runs in the hub's
// Manager (New adds it, on every replica, leader or not), takes the Provider's reports and
// the ring's changes, and engages and disengages clusters on one goroutine of its own. A
// cluster is engaged in well under a millisecond plus its lists (no request is waited
// for); it is disengaged without waiting either, its informers and connections closed in
// the background.
type Fleet struct {
	mgr      *controller.Manager
	provider Provider
	opts     Options
	log      *slog.Logger
	ring     *ring.Ring // Options.Spread
	labels   *clusterLabels
	metrics  *fleetMetrics
	// transports are the clusters' shared HTTP transports (nil: Options.SeparateTransports).
	transports *apiclient.Transports

	mu          sync.Mutex
	known       map[string]*known   // what the Provider reported
	engaged     map[string]*Cluster // engaged on this replica
	roles       map[*Cluster]role
	dirty       map[string]struct{} // known names to look at again
	replanAll   bool                // look at every cluster again (the ring moved)
	controllers []*Controller
	started     bool
	running     int           // controllers whose Start runs
	idle        chan struct{} // closed when running drops to 0, then replaced
	wake        chan struct{} // buffered: the loop has work
	changed     chan struct{} // closed at each change of the engaged clusters or their roles
	runCtx      context.Context

	// bg holds the goroutines that outlive a step of the loop: teardowns of disengaged
	// clusters, recovery watches of unreachable ones.
	bg sync.WaitGroup
}

// known is a cluster the Provider reported.
type known struct {
	cfg *apiclient.Config
	err error // why the last engagement failed
}

// role is what this replica does with a cluster.
type role uint8

const (
	roleNone    role = iota // not engaged
	roleStandby             // engaged, caches only
	roleActive              // engaged and reconciled
)

// New returns a Fleet of the clusters provider reports, run by mgr (the hub's Manager, to
// which New adds it). It fails for invalid options, and for Options.Spread without a ring
// (ErrNoRing).
func New(mgr *controller.Manager, provider Provider, opts Options) (*Fleet, error) {
	if mgr == nil {
		panic("multicluster.New: nil Manager")
	}
	if provider == nil {
		panic("multicluster.New: nil Provider")
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = mgr.Logger()
	}
	f := &Fleet{
		mgr: mgr, provider: provider, opts: opts, log: opts.Logger,
		labels:  newClusterLabels(opts.MetricsClusters),
		known:   map[string]*known{},
		engaged: map[string]*Cluster{},
		roles:   map[*Cluster]role{},
		dirty:   map[string]struct{}{},
		idle:    make(chan struct{}),
		wake:    make(chan struct{}, 1),
		changed: make(chan struct{}),
	}
	if !opts.SeparateTransports {
		f.transports = apiclient.NewTransports()
	}
	if opts.Spread {
		if f.ring = mgr.Ring(); f.ring == nil {
			return nil, ErrNoRing
		}
	}
	// The events' options are checked once here, so that a cluster's broadcaster cannot fail.
	if _, err := events.NewBroadcaster(mgr.APIClient(), f.eventOptions()); err != nil {
		return nil, fmt.Errorf("multicluster: EventOptions: %w", err)
	}
	if opts.ClientOptions.CacheSyncTimeout < 0 {
		return nil, errors.New("multicluster: ClientOptions.CacheSyncTimeout is negative")
	}
	f.metrics = newFleetMetrics(f, mgr.Registry())
	if err := mgr.Add(f); err != nil {
		return nil, err
	}
	return f, nil
}

// NeedLeaderElection is false: a Fleet engages its clusters on every replica, so that a
// new leader (or a replica the ring gives a cluster) reconciles from synced caches.
func (f *Fleet) NeedLeaderElection() bool { return false }

// String names the Fleet in the Manager's logs.
func (f *Fleet) String() string { return "multicluster fleet" }

// Set implements ClusterSet.
func (f *Fleet) Set(name string, cfg *apiclient.Config) error {
	if err := ValidName(name); err != nil {
		return err
	}
	if cfg == nil {
		return fmt.Errorf("multicluster: cluster %s: nil Config", name)
	}
	c := *cfg
	f.mu.Lock()
	if k, ok := f.known[name]; ok && sameConfig(k.cfg, &c) {
		f.mu.Unlock()
		return nil
	}
	f.known[name] = &known{cfg: &c}
	f.dirty[name] = struct{}{}
	f.mu.Unlock()
	f.poke()
	return nil
}

// Remove implements ClusterSet.
func (f *Fleet) Remove(name string) {
	f.mu.Lock()
	if _, ok := f.known[name]; !ok {
		f.mu.Unlock()
		return
	}
	delete(f.known, name)
	f.dirty[name] = struct{}{}
	f.mu.Unlock()
	f.poke()
}

func (f *Fleet) poke() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// Cluster returns the engaged cluster name (ok false if it is not engaged on this replica).
func (f *Fleet) Cluster(name string) (cl *Cluster, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cl, ok = f.engaged[name]
	return cl, ok
}

// Clusters returns the names of the clusters engaged on this replica, sorted.
func (f *Fleet) Clusters() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.engaged))
	for n := range f.engaged {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Known returns the names of the clusters the Provider reported, sorted: engaged here or
// not (another replica's, or one whose engagement failed: see Err).
func (f *Fleet) Known() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.known))
	for n := range f.known {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Active reports whether this replica reconciles cluster name now (engaged and, with
// Options.Spread, held).
func (f *Fleet) Active(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	cl, ok := f.engaged[name]
	return ok && f.roles[cl] == roleActive
}

// Err returns why the last engagement of cluster name failed (its Config was refused), or
// nil.
func (f *Fleet) Err(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if k, ok := f.known[name]; ok {
		return k.err
	}
	return nil
}

// Changed returns a channel closed at the next change of the engaged clusters, their roles
// or their health (for tests and tools that wait for a state).
func (f *Fleet) Changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

// signalLocked closes changed. Caller holds f.mu.
func (f *Fleet) signalLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *Fleet) noteHealth() {
	f.mu.Lock()
	f.signalLocked()
	f.mu.Unlock()
}

// Start runs the Fleet until ctx is done: the Provider, and the loop that engages and
// disengages clusters. At the end it waits for its controllers to stop (they drain their
// reconciles on engaged clusters), disengages every cluster and waits for their teardown.
func (f *Fleet) Start(ctx context.Context) error {
	f.mu.Lock()
	if f.started {
		f.mu.Unlock()
		return errors.New("multicluster: Fleet already started")
	}
	f.started = true
	f.runCtx = ctx
	f.mu.Unlock()

	pctx, stopProvider := context.WithCancel(ctx)
	defer stopProvider()
	provErr := make(chan error, 1)
	go func() { provErr <- f.provider.Run(pctx, f) }()
	err, providerDone := f.loop(ctx, provErr)
	stopProvider()
	if !providerDone {
		<-provErr
	}
	f.shutdown()
	return err
}

// loop engages and disengages until ctx is done or the Provider fails. providerDone says
// whether the Provider's Run has returned.
func (f *Fleet) loop(ctx context.Context, provErr chan error) (err error, providerDone bool) {
	var tick <-chan time.Time
	if f.ring != nil && f.opts.Standby == StandbyNext {
		// The standby set follows the ring's members, which change without the held
		// ranges changing: look again now and then.
		t := time.NewTicker(standbyRecheck)
		defer t.Stop()
		tick = t.C
	}
	for {
		var ringChanged <-chan struct{}
		if f.ring != nil {
			ringChanged = f.ring.Changed()
		}
		f.step()
		select {
		case <-ctx.Done():
			return nil, providerDone
		case err := <-provErr:
			providerDone = true
			if err != nil {
				return fmt.Errorf("multicluster: provider: %w", err), true
			}
			provErr = nil // it reported what it had and stopped: keep those clusters
		case <-f.wake:
		case <-ringChanged:
			f.markAll()
		case <-tick:
			f.markAll()
		}
	}
}

// standbyRecheck is how often a spread fleet with StandbyNext looks at its standby set.
const standbyRecheck = 5 * time.Second

func (f *Fleet) markAll() {
	f.mu.Lock()
	f.replanAll = true
	f.mu.Unlock()
}

// step brings the clusters marked dirty (all of them after a ring change) to their role.
func (f *Fleet) step() {
	f.mu.Lock()
	var names []string
	if f.replanAll {
		for n := range f.known {
			names = append(names, n)
		}
		for n := range f.engaged {
			if _, ok := f.known[n]; !ok {
				names = append(names, n)
			}
		}
	} else {
		for n := range f.dirty {
			names = append(names, n)
		}
	}
	f.replanAll = false
	clear(f.dirty)
	f.mu.Unlock()
	if len(names) == 0 {
		return
	}
	pl := f.newPlacer()
	for _, n := range names {
		f.bring(n, pl)
	}
}

// bring engages, disengages or changes the role of cluster name as its report and the ring
// say.
func (f *Fleet) bring(name string, pl *placer) {
	f.mu.Lock()
	k := f.known[name]
	cur := f.engaged[name]
	f.mu.Unlock()
	want := roleNone
	if k != nil {
		want = pl.role(name)
	}
	if cur != nil && (want == roleNone || !sameConfig(&cur.src, k.cfg)) {
		f.disengage(cur)
		cur = nil
	}
	if want == roleNone {
		return
	}
	if cur == nil {
		cl, err := f.engage(name, k.cfg)
		f.mu.Lock()
		if kk := f.known[name]; kk == k {
			kk.err = err
		}
		f.mu.Unlock()
		if err != nil {
			f.log.Error("cluster not engaged", "cluster", name, "err", err)
			f.metrics.engageErrors.Inc()
			return
		}
		cur = cl
	}
	f.setRole(cur, want)
}

// engage creates cluster name's clients and factory, acquires the informers its
// controllers watch and starts them.
func (f *Fleet) engage(name string, src *apiclient.Config) (*Cluster, error) {
	start := time.Now()
	log := f.log.With("cluster", name)
	cfg := *src
	if cfg.Timeout == 0 && f.opts.RequestTimeout > 0 {
		cfg.Timeout = f.opts.RequestTimeout
	}
	if cfg.WatchProtocol == apiclient.WatchAuto && !f.opts.KeepWatchProtocol {
		cfg.WatchProtocol = apiclient.WatchChunked
	}
	if cfg.Logger == nil {
		cfg.Logger = log
	}
	api, err := f.transports.New(&cfg)
	if err != nil {
		return nil, err
	}
	fopts := f.opts.InformerOptions
	if fopts.Logger == nil {
		fopts.Logger = log
	}
	factory := informer.NewFactoryWithOptions(api, fopts)
	copts := f.opts.ClientOptions
	if copts.Registry == nil {
		copts.Registry = f.mgr.Kinds()
	}
	if copts.Logger == nil {
		copts.Logger = log
	}
	cc, err := client.New(api, factory, copts)
	if err != nil {
		api.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(f.runCtx))
	cl := &Cluster{name: name, src: *src, cfg: cfg, api: api, factory: factory, client: cc, log: log, fleet: f, ctx: ctx, cancel: cancel}
	cc.Start(ctx)
	f.labels.acquire(name)
	f.mu.Lock()
	ctrls := slices.Clone(f.controllers)
	f.engaged[name] = cl
	f.roles[cl] = roleNone
	f.signalLocked()
	f.mu.Unlock()
	for _, c := range ctrls {
		c.engage(cl)
	}
	factory.Start(ctx)
	f.metrics.engageTime.Observe(time.Since(start).Seconds())
	log.Debug("cluster engaged", "took", time.Since(start))
	return cl, nil
}

// setRole makes cl standby or active on this replica.
func (f *Fleet) setRole(cl *Cluster, r role) {
	f.mu.Lock()
	if f.roles[cl] == r {
		f.mu.Unlock()
		return
	}
	f.roles[cl] = r
	ctrls := slices.Clone(f.controllers)
	f.signalLocked()
	f.mu.Unlock()
	for _, c := range ctrls {
		c.setActive(cl, r == roleActive)
	}
}

// disengage takes cl out of the fleet: its controllers' handlers removed and informers
// released, its context cancelled; its teardown runs in the background.
func (f *Fleet) disengage(cl *Cluster) {
	f.mu.Lock()
	delete(f.engaged, cl.name)
	delete(f.roles, cl)
	ctrls := slices.Clone(f.controllers)
	f.signalLocked()
	f.mu.Unlock()
	for _, c := range ctrls {
		c.disengage(cl)
	}
	f.labels.release(cl.name)
	cl.log.Debug("cluster disengaged")
	f.bg.Go(cl.stop)
}

// unpark lets every controller's parked Requests of cl run again.
func (f *Fleet) unpark(cl *Cluster) {
	f.mu.Lock()
	ctrls := slices.Clone(f.controllers)
	f.mu.Unlock()
	for _, c := range ctrls {
		c.unpark(cl)
	}
}

// shutdown disengages everything once the controllers have stopped, and waits for the
// teardowns.
func (f *Fleet) shutdown() {
	f.mu.Lock()
	idle := f.idle
	busy := f.running > 0
	f.mu.Unlock()
	if busy {
		// The controllers drain their in-flight reconciles, which still use the clusters;
		// the Manager bounds the whole shutdown with its GracefulShutdownTimeout.
		<-idle
	}
	f.mu.Lock()
	all := make([]*Cluster, 0, len(f.engaged))
	for _, cl := range f.engaged {
		all = append(all, cl)
	}
	f.mu.Unlock()
	for _, cl := range all {
		f.disengage(cl)
	}
	f.bg.Wait()
}

// controllerRunning records a controller's Start beginning (+1) or ending (-1).
func (f *Fleet) controllerRunning(delta int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running += delta
	if f.running == 0 {
		close(f.idle)
		f.idle = make(chan struct{})
	}
}

// eventOptions are the options of the clusters' event broadcasters.
func (f *Fleet) eventOptions() events.Options {
	o := f.opts.EventOptions
	if o.Registry == nil {
		o.Registry = f.mgr.Kinds()
	}
	if o.Logger == nil {
		o.Logger = f.log
	}
	if o.Instance == "" {
		o.Instance = f.mgr.Identity()
	}
	return o
}
