package controller

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/events"
	"github.com/informerkit/informerkit/controller/metrics"
	"github.com/informerkit/informerkit/controller/rbac"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/leaderelection"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/reflector"
	"github.com/informerkit/informerkit/sharding/ring"
	"github.com/informerkit/informerkit/tracing"
)

// Defaults of ManagerOptions.
const (
	DefaultLeaseDuration           = 15 * time.Second
	DefaultRenewDeadline           = 10 * time.Second
	DefaultRetryPeriod             = 2 * time.Second
	DefaultGracefulShutdownTimeout = 30 * time.Second
	// DefaultMaxStaleness is how long an informer may go without an event or bookmark before
	// /readyz fails: twice the reflector's stall timeout, so that a quiet but healthy watch
	// (re-opened at every stall timeout) never trips it.
	DefaultMaxStaleness = 2 * reflector.DefaultStallTimeout
)

// ManagerOptions configure a Manager. The zero value runs without leader election and
// without HTTP endpoints.
type ManagerOptions struct {
	// Logger receives the manager's logs and is the default of its controllers' and
	// informers' loggers (default slog.Default()).
	Logger *slog.Logger

	// HTTPAddress, if set, serves /healthz, /readyz and /metrics on it ("127.0.0.1:0" picks a
	// free port; see HTTPAddr).
	HTTPAddress string

	// LeaderElection runs the runnables that need it (controllers, by default) only on the
	// replica that holds the Lease LeaderElectionNamespace/LeaderElectionID. Caches run on
	// every replica, so a new leader starts reconciling at once, from its synced cache and
	// without a relist (warm standby; see LeaderElectionColdStandby).
	LeaderElection bool
	// LeaderElectionID is the Lease's name; required with LeaderElection.
	LeaderElectionID string
	// LeaderElectionNamespace is the Lease's namespace (default: the client configuration's
	// namespace, else "default").
	LeaderElectionNamespace string
	// LeaderElectionIdentity names this replica in the Lease (default: hostname_<random>).
	LeaderElectionIdentity string
	// LeaseDuration, RenewDeadline and RetryPeriod follow leaderelection.Config (defaults
	// 15 s, 10 s, 2 s, as controller-runtime).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// LeaderElectionKeepLease keeps the Lease when the Manager shuts down: a standby then
	// takes over only after LeaseDuration. Default false: once the leader's runnables have
	// stopped, the Lease is released, and a standby, which watches it, takes over at once.
	LeaderElectionKeepLease bool
	// LeaderElectionColdStandby runs no informers on a replica that does not lead, to save
	// the memory of a standby's caches: when it wins the Lease it starts them, lists
	// everything and waits for them to sync (CacheSyncTimeout) before any runnable starts,
	// those that need no leadership included. A cold standby is ready (/readyz) while it
	// waits. Default false: every replica's caches run and stay synced (warm standby).
	// It cannot be combined with Sharding, whose controllers run on every replica.
	LeaderElectionColdStandby bool
	// LeaderElectionStepDown makes a leader that loses its Lease step down instead of
	// stopping: the runnables that need leadership end (their context cancelled with cause
	// ErrLeaderElectionLost; in-flight reconciles are cancelled, so their writes are refused)
	// and are waited for; the informers, caches and other runnables keep running; the
	// replica campaigns again and, when it wins, starts them anew (controllers with new
	// queues and an initial resync from the warm caches, no relist). Those runnables must be
	// able to start again once they have returned (controllers can). Default false, as
	// controller-runtime: Start returns ErrLeaderElectionLost and the process is expected to
	// exit, which also drops whatever a leader-only runnable kept in memory; see
	// docs/leaderelection.md, "Step down, stay warm".
	LeaderElectionStepDown bool

	// CacheSyncTimeout bounds the wait for the informers to sync at Start (default
	// DefaultCacheSyncTimeout); the error names the informers that did not sync.
	CacheSyncTimeout time.Duration
	// MissingResourceTimeout is how long a resource an informer watches may stay unserved
	// (discovery does not list it: a CRD not installed) while the caches sync at Start,
	// before Start fails with a *MissingResourceError naming it (default
	// DefaultMissingResourceTimeout; negative: never, wait for CacheSyncTimeout). A
	// controller that should wait for its CRD instead follows its resources
	// (Options.FollowResources).
	MissingResourceTimeout time.Duration
	// MaxStaleness is the longest time an informer may go without an event, a bookmark or a
	// re-opened watch before /readyz fails (default DefaultMaxStaleness).
	MaxStaleness time.Duration
	// GracefulShutdownTimeout bounds the wait for runnables to stop once Start's context is
	// done (default DefaultGracefulShutdownTimeout); it is also the drain timeout of
	// controllers added without one.
	GracefulShutdownTimeout time.Duration
	// DiscoveryInterval is how often the Manager reads discovery again while a controller
	// follows its resources (Options.FollowResources), for resources no
	// CustomResourceDefinition defines (aggregated APIs) and for clusters where it may not
	// list CRDs (default DefaultDiscoveryInterval). CRDs are watched: their changes are seen
	// at once.
	DiscoveryInterval time.Duration

	// InformerOptions are the shared informer factory's options (namespace, selectors,
	// stall timeout, ...). Default: informer.FactoryOptions' defaults, with the manager's
	// Logger as the informers' Logger.
	InformerOptions informer.FactoryOptions
	// Registry receives every metric (default a new Registry; see Manager.Registry).
	Registry *metrics.Registry

	// Kinds is the type registry that gives every Go type its kind and resource: the
	// Builder's inputs, InformerFor, Kind, the client, event recorders and owner references
	// read it (default kinds.Default). Nothing is registered in it as a side effect: register
	// built-in kinds too (kinds.MustRegister[*Pod](kinds.Pod)).
	Kinds *kinds.Registry
	// ClientOptions are the options of Manager.Client (read-your-writes timeout, ...). Their
	// Registry defaults to Kinds and their Logger to Logger.
	ClientOptions client.Options
	// EventOptions are the options of the event broadcaster behind EventRecorderFor. Their
	// Registry defaults to Kinds, Logger to Logger, DrainTimeout to GracefulShutdownTimeout
	// and Instance to the leader election identity (else the host name).
	EventOptions events.Options

	// Tracer traces each watch event through every controller's queue to the reconciles it
	// causes and their API requests (see package tracing): the Tracer of the controllers
	// added without one, and of the API client unless its Config has one. Default none.
	// The API client's Config.Metrics defaults to NewRequestMetrics of Registry.
	Tracer tracing.Tracer

	// Sharding makes the Manager a member of a sharding ring, for its controllers with
	// Options.Sharded (see ShardingOptions). Default: no ring.
	Sharding ShardingOptions

	// SkipPermissionCheck turns off the check at Start: by default, before its informers
	// start, the Manager asks the API server (SelfSubjectAccessReviews) whether it may do
	// what Permissions lists, and Start fails with one error naming every missing verb and
	// resource instead of a stream of 403s in the logs.
	SkipPermissionCheck bool

	// InformerBudget bounds the informers: their number (a new one past it is refused) and
	// their estimated memory (Start fails past it). Default: no bound. /debug/informers
	// (Handler) lists every informer with what it holds and who acquired it.
	InformerBudget InformerBudget
}

// trackedInformer is what readiness needs of an informer.
type trackedInformer interface {
	HasSynced() bool
	Staleness() time.Duration
}

// Manager runs controllers and other runnables over one API client and one shared informer
// factory (controller-runtime's manager): Start runs the caches, waits for them to sync,
// elects a leader if asked, runs the runnables, serves health, readiness and metrics, and
// shuts everything down in order.
type Manager struct {
	opts        ManagerOptions
	log         *slog.Logger
	client      *apiclient.Client
	ctrlClient  *client.Client
	events      *events.Broadcaster
	leClient    *apiclient.Client
	factory     *informer.Factory
	registry    *metrics.Registry
	elector     *leaderelection.Elector
	leaderGauge metrics.Gauge
	ring        *ring.Ring // ManagerOptions.Sharding

	// follow serves the controllers that follow their resources (follow.go).
	follow followers

	mu          sync.Mutex
	runnables   []Runnable
	informers   []namedInformer
	acquirers   map[trackedInformer][]string // who acquired each informer (inventory.go)
	healthz     []namedCheck
	readyz      []namedCheck
	started     bool
	httpAddr    string
	permissions []rbac.Rule // AddPermissions

	recordsEvents atomic.Bool // EventRecorderFor was called: events are written

	elected     chan struct{}
	electedOnce sync.Once
	synced      chan struct{}

	// Set by Start before leader election begins; read by lead.
	leaderRunnables []Runnable
	runLeader       func(ctx context.Context, r Runnable)
	// cold: LeaderElectionColdStandby with leader election. coldStart, set by Start, starts the caches and the runnables
	// that need no leadership once this replica leads; false if the caches did not sync.
	cold      bool
	coldStart func() bool
	stepDowns metrics.Counter // terms ended by a lost Lease (stepdown.go)
}

type namedInformer struct {
	name string
	inf  trackedInformer
}

// NewManager returns a Manager for the API server config describes. It validates the
// options (leader election durations included) and creates the client and the informer
// factory; nothing runs until Start.
func NewManager(config *apiclient.Config, opts ManagerOptions) (*Manager, error) {
	if config == nil {
		return nil, errors.New("controller: NewManager needs a config")
	}
	opts.setDefaults()
	cfg := *config
	if cfg.Logger == nil {
		cfg.Logger = opts.Logger
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewRequestMetrics(opts.Registry)
	}
	if cfg.Tracer == nil {
		cfg.Tracer = opts.Tracer
	}
	api, err := apiclient.New(&cfg)
	if err != nil {
		return nil, fmt.Errorf("controller: NewManager: %w", err)
	}
	m := &Manager{
		opts:     opts,
		log:      opts.Logger,
		client:   api,
		registry: opts.Registry,
		elected:  make(chan struct{}),
		synced:   make(chan struct{}),
	}
	fopts := opts.InformerOptions
	if fopts.Logger == nil {
		fopts.Logger = opts.Logger
	}
	m.factory = informer.NewFactoryWithOptions(api, fopts)
	m.registerPipelineMetrics()
	if opts.LeaderElection {
		if err := m.setupLeaderElection(&cfg); err != nil {
			m.closeClients()
			return nil, err
		}
		m.cold = opts.LeaderElectionColdStandby
		m.leaderGauge = m.registry.NewGauge("leader_election_master_status",
			"Whether this replica leads (1) or not (0), per Lease.", "name").With(m.opts.LeaderElectionID)
		m.stepDowns = m.registry.NewCounter("informerkit_leader_election_step_downs_total",
			"Terms of leadership ended by a lost Lease after which the replica stepped down and campaigned again (LeaderElectionStepDown).", "name").With(m.opts.LeaderElectionID)
	}
	if opts.Sharding.Ring != "" {
		if opts.LeaderElectionColdStandby {
			m.closeClients()
			return nil, errors.New("controller: NewManager: LeaderElectionColdStandby cannot be combined with Sharding: sharded controllers run on every replica")
		}
		identity := m.opts.LeaderElectionIdentity
		if identity == "" {
			identity = defaultIdentity()
		}
		if err := m.setupSharding(&cfg, identity); err != nil {
			m.closeClients()
			return nil, err
		}
	}
	if err := m.setupClientAndEvents(); err != nil {
		m.closeClients()
		return nil, err
	}
	m.registry.NewGaugeFunc("informerkit_informer_staleness_seconds",
		"Seconds since the informer last had evidence that its cache is current (event, bookmark, list or re-opened watch).",
		[]string{"informer"}, func(emit func(float64, ...string)) {
			for _, i := range m.trackedInformers() {
				emit(i.inf.Staleness().Seconds(), i.name)
			}
		})
	m.registry.NewGaugeFunc("informerkit_informer_estimated_bytes",
		"Estimated memory of the informer's cached objects (an upper bound: values shared between objects counted in each).",
		[]string{"informer"}, func(emit func(float64, ...string)) {
			for _, i := range m.Inventory() {
				emit(float64(i.EstimatedBytes), i.Name)
			}
		})
	m.registry.NewGaugeFunc("informerkit_informer_synced",
		"Whether the informer's cache holds its whole first list (1) or not (0).",
		[]string{"informer"}, func(emit func(float64, ...string)) {
			for _, i := range m.trackedInformers() {
				v := 0.0
				if i.inf.HasSynced() {
					v = 1
				}
				emit(v, i.name)
			}
		})
	return m, nil
}

func (m *Manager) setupLeaderElection(cfg *apiclient.Config) error {
	o := &m.opts
	if o.LeaderElectionID == "" {
		return errors.New("controller: NewManager: LeaderElection needs a LeaderElectionID (the Lease's name)")
	}
	if o.LeaderElectionNamespace == "" {
		o.LeaderElectionNamespace = cfg.Namespace
	}
	if o.LeaderElectionNamespace == "" {
		o.LeaderElectionNamespace = "default"
	}
	if o.LeaderElectionIdentity == "" {
		o.LeaderElectionIdentity = defaultIdentity()
	}
	if o.LeaseDuration == 0 {
		o.LeaseDuration = DefaultLeaseDuration
	}
	if o.RenewDeadline == 0 {
		o.RenewDeadline = DefaultRenewDeadline
	}
	if o.RetryPeriod == 0 {
		o.RetryPeriod = DefaultRetryPeriod
	}
	leClient, err := m.coordinationClient(cfg)
	if err != nil {
		return err
	}
	el, err := leaderelection.New(leaderelection.Config{
		Client:          leClient,
		Namespace:       o.LeaderElectionNamespace,
		Name:            o.LeaderElectionID,
		Identity:        o.LeaderElectionIdentity,
		LeaseDuration:   o.LeaseDuration,
		RenewDeadline:   o.RenewDeadline,
		RetryPeriod:     o.RetryPeriod,
		ReleaseOnCancel: !o.LeaderElectionKeepLease,
		Logger:          m.log,
		Callbacks:       leaderelection.Callbacks{OnStartedLeading: m.lead},
	})
	if err != nil {
		return fmt.Errorf("controller: NewManager: %w", err)
	}
	m.elector = el
	return nil
}

// defaultIdentity is a replica's identity in Leases when none is given: hostname_<random>.
func defaultIdentity() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return host + "_" + hex.EncodeToString(b)
}

// coordinationClient returns the client of the Manager's Leases (leader election, sharding
// ring), created on first use: without retries, so that each renewal attempt is a single
// request bounded by the renew deadline, and without a rate limit, so that its requests do
// not queue behind the informers' on the main client's limiter.
func (m *Manager) coordinationClient(cfg *apiclient.Config) (*apiclient.Client, error) {
	if m.leClient != nil {
		return m.leClient, nil
	}
	lecfg := *cfg
	lecfg.MaxRetries = -1
	lecfg.QPS = -1
	c, err := apiclient.New(&lecfg)
	if err != nil {
		return nil, fmt.Errorf("controller: NewManager: coordination client: %w", err)
	}
	m.leClient = c
	return c, nil
}

// closeClients closes the clients NewManager created, when it fails.
func (m *Manager) closeClients() {
	m.client.Close()
	if m.leClient != nil {
		m.leClient.Close()
	}
}

// setupClientAndEvents creates the controller client and the event broadcaster.
func (m *Manager) setupClientAndEvents() error {
	copts := m.opts.ClientOptions
	if copts.AdmitStartOnRead == nil && m.opts.InformerBudget.MaxInformers > 0 {
		copts.AdmitStartOnRead = func(gvr meta.GroupVersionResource, _ reflect.Type) error {
			return m.admitInformer(gvr.String(), false)
		}
	}
	if copts.Registry == nil {
		copts.Registry = m.opts.Kinds
	}
	if copts.Logger == nil {
		copts.Logger = m.log
	}
	c, err := client.New(m.client, m.factory, copts)
	if err != nil {
		return fmt.Errorf("controller: NewManager: %w", err)
	}
	eopts := m.opts.EventOptions
	if eopts.Registry == nil {
		eopts.Registry = m.opts.Kinds
	}
	if eopts.Logger == nil {
		eopts.Logger = m.log
	}
	if eopts.DrainTimeout == 0 {
		eopts.DrainTimeout = m.opts.GracefulShutdownTimeout
	}
	if eopts.Instance == "" {
		eopts.Instance = m.opts.LeaderElectionIdentity
	}
	b, err := events.NewBroadcaster(m.client, eopts)
	if err != nil {
		return fmt.Errorf("controller: NewManager: %w", err)
	}
	m.ctrlClient, m.events = c, b
	m.registry.NewGaugeFunc("informerkit_event_recorder_events",
		"Events handled by the manager's event recorders since start, by outcome (counts, exposed as gauges): created, patched (count updates), filtered (spam filter), dropped (queue full), rejected (unknown kind, bad type), failed (given up), late (after shutdown).",
		[]string{"outcome"}, func(emit func(float64, ...string)) {
			s := b.Stats()
			for _, o := range []struct {
				name string
				n    uint64
			}{{"created", s.Created}, {"patched", s.Patched}, {"filtered", s.Filtered}, {"dropped", s.Dropped},
				{"rejected", s.Rejected}, {"failed", s.Failed}, {"late", s.Late}} {
				emit(float64(o.n), o.name)
			}
		})
	m.registry.NewGaugeFunc("informerkit_informer_cache_mutations",
		"Changes to cached objects found by the cache mutation detector since start, per informer (a count, exposed as a gauge; 0 without the detector).",
		[]string{"informer"}, func(emit func(float64, ...string)) {
			for _, inf := range m.factory.Informers() {
				emit(float64(inf.Stats().CacheMutations), inf.Name())
			}
		})
	return nil
}

// Client returns the controller client: reads from the manager's informers (started on first
// use), writes to the API server, and reads that see its own writes (see package client).
func (m *Manager) Client() *client.Client { return m.ctrlClient }

// APIClient returns the manager's API client, shared by its informers and its Client.
func (m *Manager) APIClient() *apiclient.Client { return m.client }

// Kinds returns the manager's type registry (ManagerOptions.Kinds).
func (m *Manager) Kinds() *kinds.Registry { return m.opts.Kinds }

// EventRecorderFor returns a recorder of events whose source and reporting controller are
// name (a controller's name). Events are written in the background by the manager's event
// broadcaster, from Start until the runnables have stopped (then the queued events are
// written within GracefulShutdownTimeout); recorded before Start, they wait in its queue.
func (m *Manager) EventRecorderFor(name string) events.EventRecorder {
	m.recordsEvents.Store(true)
	return m.events.NewRecorder(name)
}

// EventBroadcaster returns the broadcaster behind EventRecorderFor (for its Stats).
func (m *Manager) EventBroadcaster() *events.Broadcaster { return m.events }

// Factory returns the manager's shared informer factory, for code written against package
// informer. A controller gets its informers with InformerFor, which resolves the resource
// from the registry; an informer made on the factory directly before Start is started by
// Start and covered by /readyz and the informer metrics all the same.
func (m *Manager) Factory() *informer.Factory { return m.factory }

// Registry returns the registry served on /metrics; register your own metrics in it.
func (m *Manager) Registry() *metrics.Registry { return m.registry }

// Logger returns the manager's logger.
func (m *Manager) Logger() *slog.Logger { return m.log }

// Identity returns this replica's identity in the leader election Lease, else in the
// sharding ring ("" with neither).
func (m *Manager) Identity() string {
	switch {
	case m.elector != nil:
		return m.elector.Identity()
	case m.ring != nil:
		return m.ring.Identity()
	}
	return ""
}

func (m *Manager) track(name string, inf trackedInformer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.informers {
		if t.inf == inf {
			return
		}
	}
	m.informers = append(m.informers, namedInformer{name: name, inf: inf})
	slices.SortFunc(m.informers, func(a, b namedInformer) int { return strings.Compare(a.name, b.name) })
}

// untrack removes inf from the informers readiness and metrics cover (a ScopedKind's, when
// its run ends).
func (m *Manager) untrack(inf trackedInformer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.informers = slices.DeleteFunc(m.informers, func(t namedInformer) bool { return t.inf == inf })
}

// trackedInformers returns the informers readiness and metrics cover, sorted by name: every
// informer of the manager's factory, and those of the controllers' Kind sources that come
// from elsewhere.
func (m *Manager) trackedInformers() []namedInformer {
	m.mu.Lock()
	out := slices.Clone(m.informers)
	m.mu.Unlock()
	for _, inf := range m.factory.Informers() {
		if !slices.ContainsFunc(out, func(t namedInformer) bool { return sameInformer(t.inf, inf) }) {
			out = append(out, namedInformer{name: inf.Name(), inf: inf})
		}
	}
	slices.SortFunc(out, func(a, b namedInformer) int { return strings.Compare(a.name, b.name) })
	return out
}

// sameInformer reports whether a and b are the same informer (interface values holding the
// same pointer).
func sameInformer(a trackedInformer, b informer.AnyInformer) bool {
	x, ok := b.(trackedInformer)
	return ok && x == a
}

// Add registers a runnable, before Start. A *Controller gets the manager's metrics registry
// and graceful shutdown timeout as defaults, and the informers of its Kind sources are
// tracked for readiness. Runnables need leadership unless they implement
// LeaderElectionRunnable and say otherwise (see WithoutLeaderElection).
func (m *Manager) Add(r Runnable) error {
	if r == nil {
		return errors.New("controller: Manager.Add: nil runnable")
	}
	m.mu.Lock()
	started := m.started
	m.mu.Unlock()
	if started {
		return errors.New("controller: Manager.Add after Start")
	}
	if c, ok := r.(*Controller); ok {
		c.setManagerDefaults(NewMetricsProvider(m.registry), NewQueueMetricsProvider(m.registry), m.opts.GracefulShutdownTimeout, m.log)
		c.setDefaultTracer(m.opts.Tracer)
		if c.opts.FollowResources {
			if err := m.addFollower(c); err != nil {
				return err
			}
		}
		c.mu.Lock()
		srcs := slices.Clone(c.sources)
		c.mu.Unlock()
		for _, s := range srcs {
			if k, ok := s.(interface {
				trackedInformer() (string, trackedInformer)
			}); ok {
				if name, inf := k.trackedInformer(); inf != nil {
					m.track(name, inf)
				}
			}
		}
	}
	m.mu.Lock()
	m.runnables = append(m.runnables, r)
	m.mu.Unlock()
	return nil
}

// Elected returns a channel closed when this replica may run leader-only runnables: once
// it leads and its caches have synced (at once after the sync without leader election).
func (m *Manager) Elected() <-chan struct{} { return m.elected }

// IsLeader reports whether this replica leads now (true without leader election once the
// caches have synced).
func (m *Manager) IsLeader() bool {
	if m.elector == nil {
		select {
		case <-m.elected:
			return true
		default:
			return false
		}
	}
	return m.elector.IsLeader()
}
