package informer

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/deltafifo"
	"github.com/informerkit/informerkit/indexer"
	"github.com/informerkit/informerkit/internal/share"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/reflector"
)

// Defaults of Options.
const (
	// MinimumResyncPeriod is the shortest resync period a handler can get; shorter positive
	// periods are raised to it.
	MinimumResyncPeriod = time.Second
	// DefaultNotFoundLogInterval is how often, at most, an informer logs that its resource
	// is not served (404), while it keeps retrying.
	DefaultNotFoundLogInterval = 5 * time.Minute
	// DefaultNotFoundGracePeriod is how long a resource must have answered 404 before its
	// informer logs that it is not served: a CustomResourceDefinition being deleted (whose
	// informer its users are about to release) or being installed is not worth a warning.
	DefaultNotFoundGracePeriod = 10 * time.Second
	// DefaultBatchSize is the number of queue positions handleDeltas takes from the DeltaFIFO
	// under one lock acquisition.
	DefaultBatchSize = 256
)

// SharedIndexInformer is the interface of Informer[T], for code that accepts any informer of
// T (controllers, tests). It is client-go's SharedIndexInformer, typed and with contexts.
type SharedIndexInformer[T meta.Object] interface {
	Run(ctx context.Context)
	HasSynced() bool
	Synced() <-chan struct{}
	LastSyncResourceVersion() string
	GetStore() indexer.Indexer[T]
	GetIndexer() indexer.Indexer[T]
	AddIndexers(indexers indexer.Indexers[T]) error
	SetTransform(transform func(T) (T, error)) error
	SetWatchErrorHandler(handler func(ctx context.Context, err error)) error
	AddEventHandler(handler ResourceEventHandler[T]) (*Registration[T], error)
	AddEventHandlerWithResyncPeriod(handler ResourceEventHandler[T], resyncPeriod time.Duration) (*Registration[T], error)
	AddEventHandlerWithOptions(handler ResourceEventHandler[T], opts HandlerOptions) (*Registration[T], error)
	RemoveEventHandler(reg *Registration[T]) error
	IsStopped() bool
	Lister() Lister[T]
	Staleness() time.Duration
}

var _ SharedIndexInformer[*meta.ObjectMeta] = (*Informer[*meta.ObjectMeta])(nil)

// Options configure an Informer. Every field has a default.
type Options[T meta.Object] struct {
	// Name identifies the informer in logs, errors and WaitForCacheSync. Default: the
	// ListerWatcher's String() if it has one, else its resource ("configmaps.v1" for an
	// *apiclient.Resource), else the Go type of T.
	Name string
	// KeyFunc keys the cache; default indexer.MetaNamespaceKeyFunc. Listers need the default.
	KeyFunc indexer.KeyFunc[T]
	// Indexers are added to the cache, next to the namespace index (indexer.NamespaceIndex)
	// that every informer has.
	Indexers indexer.Indexers[T]
	// DefaultResyncPeriod is the resync period of handlers added with AddEventHandler
	// (0: no resync).
	DefaultResyncPeriod time.Duration
	// Transform is applied to every object before it is cached (see SetTransform). nil means
	// DropManagedFields.
	Transform func(T) (T, error)
	// DisableSharing turns structural sharing off. By default, after the transform, every
	// object's strings, pointed-to values, slices and maps that are equal by content to those
	// of an object already seen are replaced by that one copy (see the package
	// documentation, "Structural sharing"), and slices are trimmed to their length.
	DisableSharing bool
	// BatchSize is how many queue positions are taken from the DeltaFIFO at a time (default
	// DefaultBatchSize).
	BatchSize int
	// BufferSize is the default per-handler buffer before coalescing (DefaultBufferSize).
	BufferSize int

	// WatchList, PageSize, MinWatchTimeout, StallTimeout, Backoff and
	// MaxInternalErrorRetryDuration are passed to the reflector (see reflector.Options).
	WatchList                     reflector.WatchListMode
	PageSize                      int64
	MinWatchTimeout               time.Duration
	StallTimeout                  time.Duration
	Backoff                       reflector.Backoff
	MaxInternalErrorRetryDuration time.Duration

	// NotFoundLogInterval is how often, at most, the informer logs that its resource is not
	// served (default DefaultNotFoundLogInterval).
	NotFoundLogInterval time.Duration
	// NotFoundGracePeriod is how long the resource must have answered 404 (with nothing
	// received in between) before the first such line (default DefaultNotFoundGracePeriod;
	// negative: at the first 404).
	NotFoundGracePeriod time.Duration
	// Logger receives the informer's and its reflector's log lines (default slog.Default()).
	Logger *slog.Logger

	// DetectCacheMutations turns on the cache mutation detector (see CacheMutationError):
	// the cache keeps a deep copy of every object and reports code that changed a cached
	// object. It doubles the cache's memory; it is meant for tests. Default false, unless the
	// environment variable INFORMERKIT_CACHE_MUTATION_DETECTOR is "true".
	DetectCacheMutations bool
	// OnCacheMutation receives what the detector finds. Default: panic when running under
	// go test (testing.Testing), otherwise log an error; Stats.CacheMutations counts either
	// way.
	OnCacheMutation func(*CacheMutationError)
	// CacheMutationCheckInterval is the period of the detector's sweep over the whole cache
	// (default CacheMutationCheckInterval). Negative: no sweep; objects are checked only when
	// they are replaced or deleted and when the informer stops (tests that change cached
	// objects on purpose use it, so that no sweep races with their change).
	CacheMutationCheckInterval time.Duration

	// Observe, if set, is told everything the informer does with each object, stage by
	// stage (see Observation and Stage): for tools that explain the informer, such as the
	// generator of docs/walkthrough.md. It is called synchronously, from the informer's
	// goroutines and sometimes under its locks: it must return quickly and must not call
	// the informer. Default nil: nothing is reported and nothing is paid for it.
	Observe func(Observation[T])

	// Knobs that exist only to measure and test the alternatives (the package's tests set
	// them): the DeltaFIFO layout, and relists handed to the DeltaFIFO as one slice
	// (Replace) as client-go does, instead of object by object, so that the whole new list
	// sits in memory next to the whole cache (BenchmarkRelistPeakHeap).
	mode                     fifoMode
	disableIncrementalRelist bool
}

// Informer is a shared index informer: a reflector lists and watches one collection into a
// DeltaFIFO; handleDeltas pops the deltas, updates the indexed cache and hands notifications
// to every registered handler through that handler's listener. Create it with New, register
// handlers, then Run it.
type Informer[T meta.Object] struct {
	name    string
	lw      apiclient.ListerWatcher[T]
	opts    Options[T]
	keyFunc indexer.KeyFunc[T]
	cache   indexer.Indexer[T]
	logger  *slog.Logger

	// mu guards the lifecycle and the settings that may only change before Run.
	mu                sync.Mutex
	started, stopped  bool
	released          bool // dropped by its factory (acquire.go): Run empties the state
	transform         func(T) (T, error)
	defaultTransform  bool      // transform is DropManagedFields from New (the decoder skips them)
	sharer            sharer[T] // nil with Options.DisableSharing
	watchErrorHandler func(ctx context.Context, err error)
	refl              *reflector.Reflector[T]
	fifo              deltafifo.Queue[T]
	// stampArrivals: a handler wants EventInfo, so the FIFO stamps watch events.
	stampArrivals bool

	// deliverMu serialises everything that must be seen in one order by the cache and every
	// listener: handleDeltas, handler registration and removal, resyncs and the sync point.
	// Lock order: mu, then the DeltaFIFO's lock, then deliverMu.
	deliverMu    sync.Mutex
	listeners    []*listener[T]
	synced       bool
	resyncKick   chan struct{}
	syncedCh     chan struct{}
	stoppedCh    chan struct{}
	notFound     atomic.Uint64
	lastNotFound atomic.Int64 // unix nanoseconds of the last "not served" log line
	// notFoundSince is when the current run of 404s began (unix nanoseconds, 0: none);
	// anything the reflector receives ends the run.
	notFoundSince atomic.Int64
	// incrementalLists counts relists (and the first list) handed over object by object;
	// incrementalAborts those that failed part-way.
	incrementalLists, incrementalAborts atomic.Uint64
	// fresh tracks the newest resourceVersion the cache shows (freshness.go).
	fresh freshness

	// The segments of a ScopedInformer (scope.go, reselect.go): tap sees every notification
	// the listeners see, in the same order (under deliverMu); reselects carries label
	// selector changes to Run's reflector loop. Both are set before Run.
	tap       func(key string, n notification[T])
	reselects chan reselect[T]
}

// New returns an informer of the collection lw lists and watches. Nothing happens until Run.
func New[T meta.Object](lw apiclient.ListerWatcher[T], opts Options[T]) *Informer[T] {
	if lw == nil {
		panic("informer.New: nil ListerWatcher")
	}
	if opts.KeyFunc == nil {
		opts.KeyFunc = indexer.MetaNamespaceKeyFunc[T]
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.NotFoundLogInterval <= 0 {
		opts.NotFoundLogInterval = DefaultNotFoundLogInterval
	}
	if opts.NotFoundGracePeriod == 0 {
		opts.NotFoundGracePeriod = DefaultNotFoundGracePeriod
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	name := opts.Name
	if name == "" {
		name = reflector.DefaultName(lw)
	}
	indexers := indexer.Indexers[T]{indexer.NamespaceIndex: indexer.MetaNamespaceIndexFunc[T]}
	for k, f := range opts.Indexers {
		indexers[k] = f
	}
	transform := opts.Transform
	defaultTransform := transform == nil
	if defaultTransform {
		transform = DropManagedFields[T]
	}
	var sh sharer[T]
	if !opts.DisableSharing {
		sh = share.New[T]()
	}
	return &Informer[T]{
		sharer:           sh,
		name:             name,
		lw:               lw,
		opts:             opts,
		keyFunc:          opts.KeyFunc,
		cache:            withMutationDetector(indexer.New(opts.KeyFunc, indexers), name, opts.KeyFunc, opts.DetectCacheMutations, opts.OnCacheMutation, opts.Logger),
		logger:           opts.Logger.With("informer", name),
		transform:        transform,
		defaultTransform: defaultTransform,
		resyncKick:       make(chan struct{}, 1),
		syncedCh:         make(chan struct{}),
		stoppedCh:        make(chan struct{}),
	}
}

// Name returns the informer's name.
func (inf *Informer[T]) Name() string { return inf.name }

// SetTransform sets the function applied to every object before it is cached and handed to
// handlers, replacing the default (DropManagedFields). nil disables transforms. It may modify
// the object in place (the informer owns freshly decoded objects). It runs once per object
// received, streaming-list syncs included, so it need not be idempotent (client-go runs it
// twice during a WatchList sync). Structural sharing, unless disabled, runs after it. It
// fails once the informer has started.
func (inf *Informer[T]) SetTransform(transform func(T) (T, error)) error {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	if inf.started {
		return fmt.Errorf("informer %s: SetTransform after the informer started", inf.name)
	}
	inf.transform = transform
	inf.defaultTransform = false
	return nil
}

// SetWatchErrorHandler sets a function called with every error that ends a list or a watch
// (a *reflector.Error), on the reflector's goroutine; it must return quickly. The informer
// logs errors whether or not a handler is set. It fails once the informer has started.
func (inf *Informer[T]) SetWatchErrorHandler(handler func(ctx context.Context, err error)) error {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	if inf.started {
		return fmt.Errorf("informer %s: SetWatchErrorHandler after the informer started", inf.name)
	}
	inf.watchErrorHandler = handler
	return nil
}

// Run lists and watches until ctx is done, then stops every handler and returns once no
// goroutine it started is left. An informer runs once; a second call returns at once.
func (inf *Informer[T]) Run(ctx context.Context) {
	inf.mu.Lock()
	if inf.started {
		inf.mu.Unlock()
		inf.logger.Warn("informer: Run called more than once; ignored")
		return
	}
	inf.started = true
	fifo := inf.newFIFO()
	fifo.StampArrivals(inf.stampArrivals)
	lw := inf.lw
	if t, ok := lw.(apiclient.DecodeTunable[T]); ok {
		// The default transform drops managedFields: skip them while decoding instead. And
		// strings the cache already holds are taken from the sharer instead of allocated.
		var o apiclient.DecodeOptions
		o.OmitManagedFields = inf.defaultTransform
		if inf.sharer != nil {
			o.Strings = inf.sharer.String
		}
		if o.OmitManagedFields || o.Strings != nil {
			lw = t.WithDecodeOptions(o)
		}
	}
	refl := inf.newReflector(lw, fifo, "")
	inf.fifo, inf.refl = fifo, refl
	inf.mu.Unlock()

	inf.deliverMu.Lock()
	for _, l := range inf.listeners {
		l.start()
	}
	inf.deliverMu.Unlock()

	var wg sync.WaitGroup
	wg.Go(func() { inf.runReflector(ctx, fifo, lw, refl) })
	wg.Go(func() { inf.processLoop(ctx, fifo) })
	wg.Go(func() { runMutationDetector(ctx, inf.cache, inf.opts.CacheMutationCheckInterval) })
	wg.Go(func() {
		select {
		case <-fifo.Synced():
		case <-ctx.Done():
			return
		}
		inf.markSynced()
		inf.resyncLoop(ctx)
	})
	wg.Wait()
	finalMutationCheck(inf.cache)

	inf.mu.Lock()
	inf.stopped = true
	inf.mu.Unlock()
	stopListeners(&inf.deliverMu, &inf.listeners)
	inf.mu.Lock()
	released := inf.released
	inf.mu.Unlock()
	if released {
		inf.dropState()
	}
	close(inf.stoppedCh)
}

// newReflector returns the informer's reflector over lw into fifo; resumeFrom is
// reflector.Options.ResumeFrom.
func (inf *Informer[T]) newReflector(lw apiclient.ListerWatcher[T], fifo deltafifo.Queue[T], resumeFrom string) *reflector.Reflector[T] {
	return reflector.New(lw, inf.reflectorStore(fifo), reflector.Options[T]{
		Name:                          inf.name,
		PageSize:                      inf.opts.PageSize,
		WatchList:                     inf.opts.WatchList,
		MinWatchTimeout:               inf.opts.MinWatchTimeout,
		StallTimeout:                  inf.opts.StallTimeout,
		Backoff:                       inf.opts.Backoff,
		WatchErrorHandler:             inf.onWatchError,
		MaxInternalErrorRetryDuration: inf.opts.MaxInternalErrorRetryDuration,
		Logger:                        slog.New(&quietNotFound{inner: inf.opts.Logger.Handler()}),
		ResumeFrom:                    resumeFrom,
	})
}

// HasSynced reports whether the cache holds the whole first list. Handlers may still be
// processing it: a registration's HasSynced tells when that handler has.
func (inf *Informer[T]) HasSynced() bool {
	select {
	case <-inf.syncedCh:
		return true
	default:
		return false
	}
}

// Synced returns a channel closed when HasSynced becomes true.
func (inf *Informer[T]) Synced() <-chan struct{} { return inf.syncedCh }

// Done returns a channel closed when Run has returned.
func (inf *Informer[T]) Done() <-chan struct{} { return inf.stoppedCh }

// IsStopped reports whether Run has stopped (or is stopping): no handler can be added.
func (inf *Informer[T]) IsStopped() bool {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	return inf.stopped
}

// HasStarted reports whether Run was called.
func (inf *Informer[T]) HasStarted() bool {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	return inf.started
}

// LastSyncResourceVersion returns the resourceVersion of the last list, event or bookmark
// the reflector received ("" before Run). The cache reflects it once the DeltaFIFO drained.
func (inf *Informer[T]) LastSyncResourceVersion() string {
	inf.mu.Lock()
	refl := inf.refl
	inf.mu.Unlock()
	if refl == nil {
		return ""
	}
	return refl.LastSyncResourceVersion()
}

// GetStore returns the cache. It is the same as GetIndexer.
func (inf *Informer[T]) GetStore() indexer.Indexer[T] { return inf.cache }

// GetIndexer returns the cache: read it, never write to it.
func (inf *Informer[T]) GetIndexer() indexer.Indexer[T] { return inf.cache }

// Lister returns a Lister over the cache.
func (inf *Informer[T]) Lister() Lister[T] { return NewLister(inf.cache, inf.name) }

// AddIndexers adds indexes to the cache, back-filling them from the objects it holds. It
// fails after the informer stopped, for a name already in use, or when an index function
// fails on a cached object.
func (inf *Informer[T]) AddIndexers(indexers indexer.Indexers[T]) error {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	if inf.stopped {
		return fmt.Errorf("informer %s: AddIndexers after the informer stopped", inf.name)
	}
	return inf.cache.AddIndexers(indexers)
}

// Staleness returns how long ago the informer last had evidence that its cache is current
// (a list, an event, a bookmark or a watch re-opened from its resourceVersion); see
// reflector.Reflector.Staleness. Compare it with a threshold in readiness checks. Before Run
// it is 0 and HasSynced is false.
func (inf *Informer[T]) Staleness() time.Duration {
	inf.mu.Lock()
	refl := inf.refl
	inf.mu.Unlock()
	if refl == nil {
		return 0
	}
	return refl.Staleness()
}
