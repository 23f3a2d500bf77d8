package informer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
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

	// Knobs that exist only to measure and test the alternatives (the package's tests set
	// them): the DeltaFIFO layout, and relists handed to the DeltaFIFO as one slice
	// (Replace) as client-go does, instead of object by object, so that the whole new list
	// sits in memory next to the whole cache (BenchmarkRelistPeakHeap).
	mode                     fifoMode
	disableIncrementalRelist bool
}

// fifoMode selects the DeltaFIFO layout of an informer.
type fifoMode int

const (
	// fifoAtomic (the default) is a deltafifo.AtomicFIFO with UnlockWhileProcessing: deltas
	// in arrival order, a relist as one ReplacedAll delta that handleDeltas diffs against the
	// cache, and a reflector that is never blocked while handlers are being fed.
	fifoAtomic fifoMode = iota
	// fifoCoalescing is a deltafifo.FIFO, client-go's classic DeltaFIFO.
	fifoCoalescing
	// fifoInOrder is a deltafifo.RealFIFO, client-go's RealFIFO without atomic events.
	fifoInOrder
)

// String returns the mode's name.
func (m fifoMode) String() string {
	switch m {
	case fifoAtomic:
		return "Atomic"
	case fifoCoalescing:
		return "Coalescing"
	case fifoInOrder:
		return "InOrder"
	}
	return fmt.Sprintf("fifoMode(%d)", int(m))
}

// newFIFO returns the informer's DeltaFIFO in its layout. The FIFO sees the cache as its
// KnownObjects except in the atomic layout, which never reads it, so handleDeltas needs no
// FIFO lock there and the FIFO lets the reflector go on while handlers are fed.
func (inf *Informer[T]) newFIFO() deltafifo.Queue[T] {
	transform := withSharing(inf.transform, inf.sharer)
	switch inf.opts.mode {
	case fifoCoalescing:
		return deltafifo.New(inf.keyFunc, deltafifo.Options[T]{KnownObjects: inf.cache, Transform: transform})
	case fifoInOrder:
		return deltafifo.NewRealFIFO(inf.keyFunc, deltafifo.RealFIFOOptions[T]{KnownObjects: inf.cache, Transform: transform})
	}
	return deltafifo.NewAtomicFIFO(inf.keyFunc, deltafifo.AtomicFIFOOptions[T]{Transform: transform, UnlockWhileProcessing: true})
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
	transform         func(T) (T, error)
	defaultTransform  bool      // transform is DropManagedFields from New (the decoder skips them)
	sharer            sharer[T] // nil with Options.DisableSharing
	watchErrorHandler func(ctx context.Context, err error)
	refl              *reflector.Reflector[T]
	fifo              deltafifo.Queue[T]

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
	// incrementalLists counts relists (and the first list) handed over object by object;
	// incrementalAborts those that failed part-way.
	incrementalLists, incrementalAborts atomic.Uint64
	// fresh tracks the newest resourceVersion the cache shows (freshness.go).
	fresh freshness
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
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	name := opts.Name
	if name == "" {
		switch x := lw.(type) {
		case fmt.Stringer:
			name = x.String()
		case interface {
			GroupVersionResource() meta.GroupVersionResource
		}:
			name = x.GroupVersionResource().String()
		default:
			name = reflect.TypeFor[T]().String()
		}
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

// DropManagedFields is the default transform: it removes metadata.managedFields, which is
// large and which controllers almost never read. Objects that implement
// meta.MetaObject (every struct embedding meta.ObjectMeta) get ManagedFields set to
// nil; an *meta.Unstructured loses the "managedFields" key of its metadata map. Any other
// pointer to a struct with a promoted ManagedFields field (client-go's typed objects, which
// embed metav1.ObjectMeta) has that field zeroed, found once per type by reflection. Other
// types pass unchanged: give such a type its own transform.
func DropManagedFields[T any](obj T) (T, error) {
	switch o := any(obj).(type) {
	case meta.MetaObject:
		if m := o.GetObjectMeta(); m != nil {
			m.ManagedFields = nil
		}
	case *meta.Unstructured:
		if o != nil {
			if md, ok := o.Object["metadata"].(map[string]any); ok {
				delete(md, "managedFields")
			}
		}
	default:
		v := reflect.ValueOf(obj)
		if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
			break
		}
		if path := managedFieldsPath(v.Elem().Type()); len(path) > 0 {
			if f, err := v.Elem().FieldByIndexErr(path); err == nil && f.CanSet() {
				f.SetZero()
			}
		}
	}
	return obj, nil
}

// managedFieldPaths caches, per struct type, the index path of its promoted ManagedFields
// field (an empty, non-nil slice when it has none).
var managedFieldPaths sync.Map

func managedFieldsPath(t reflect.Type) []int {
	if p, ok := managedFieldPaths.Load(t); ok {
		if path := p.([]int); len(path) > 0 {
			return path
		}
		return nil
	}
	path := []int{}
	if f, ok := t.FieldByName("ManagedFields"); ok && f.IsExported() && len(f.Index) > 1 {
		path = f.Index
	}
	managedFieldPaths.Store(t, path)
	if len(path) == 0 {
		return nil
	}
	return path
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
	refl := reflector.New(lw, inf.reflectorStore(fifo), reflector.Options[T]{
		Name:                          inf.name,
		PageSize:                      inf.opts.PageSize,
		WatchList:                     inf.opts.WatchList,
		MinWatchTimeout:               inf.opts.MinWatchTimeout,
		StallTimeout:                  inf.opts.StallTimeout,
		Backoff:                       inf.opts.Backoff,
		WatchErrorHandler:             inf.onWatchError,
		MaxInternalErrorRetryDuration: inf.opts.MaxInternalErrorRetryDuration,
		Logger:                        slog.New(&quietNotFound{inner: inf.opts.Logger.Handler()}),
	})
	inf.fifo, inf.refl = fifo, refl
	inf.mu.Unlock()

	inf.deliverMu.Lock()
	for _, l := range inf.listeners {
		l.start()
	}
	inf.deliverMu.Unlock()

	var wg sync.WaitGroup
	wg.Go(func() { refl.Run(ctx) })
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
	inf.deliverMu.Lock()
	ls := inf.listeners
	inf.listeners = nil
	inf.deliverMu.Unlock()
	for _, l := range ls {
		l.stop()
	}
	for _, l := range ls {
		<-l.done
	}
	close(inf.stoppedCh)
}

// processLoop pops deltas until ctx is done.
func (inf *Informer[T]) processLoop(ctx context.Context, fifo deltafifo.Queue[T]) {
	for {
		err := fifo.PopBatch(ctx, inf.opts.BatchSize, inf.handleBatch)
		if ctx.Err() != nil {
			return
		}
		inf.afterBatch(fifo)
		if err != nil {
			// handleDeltas reports errors it could not apply (a key or index function failing);
			// the deltas are dropped, as client-go does, and the informer goes on.
			inf.logger.Error("informer: could not apply deltas", "err", err)
		}
	}
}

func (inf *Informer[T]) handleBatch(batch []deltafifo.Deltas[T], isInInitialList bool) error {
	inf.deliverMu.Lock()
	defer inf.deliverMu.Unlock()
	var errs []error
	for _, deltas := range batch {
		if err := inf.handleDeltasLocked(deltas, isInInitialList); err != nil {
			errs = append(errs, err)
		}
	}
	observeBatch(&inf.fresh, batch)
	return errors.Join(errs...)
}

// handleDeltas applies the deltas of one key to the cache and notifies every handler:
// client-go's processDeltas. The process loop goes through handleBatch; tests drive an
// informer's cache with it by hand before Run.
func (inf *Informer[T]) handleDeltas(deltas deltafifo.Deltas[T], isInInitialList bool) error {
	inf.deliverMu.Lock()
	defer inf.fresh.notify()
	defer inf.deliverMu.Unlock()
	err := inf.handleDeltasLocked(deltas, isInInitialList)
	observeBatch(&inf.fresh, []deltafifo.Deltas[T]{deltas})
	return err
}

func (inf *Informer[T]) handleDeltasLocked(deltas deltafifo.Deltas[T], isInInitialList bool) error {
	var errs []error
	for i := range deltas {
		d := &deltas[i]
		switch d.Type {
		case deltafifo.ReplacedAll:
			if err := inf.applyReplacedAll(d.All, isInInitialList); err != nil {
				errs = append(errs, err)
			}
		case deltafifo.ReplacedChunk:
			if err := inf.applyReplacedChunk(d.Chunk, isInInitialList); err != nil {
				errs = append(errs, err)
			}
		case deltafifo.ReplacedEnd:
			inf.applyReplacedEnd(d.End)
		case deltafifo.SyncAll, deltafifo.Sync:
			// Resyncs are generated per handler by the informer itself (see resync); the
			// reflector is configured without a resync period. A SyncAll is a freshness
			// marker (freshness.go).
			if d.Type == deltafifo.SyncAll {
				inf.fresh.markerApplied()
			}
		case deltafifo.Deleted:
			key, err := inf.keyFunc(d.Object)
			if err != nil {
				errs = append(errs, fmt.Errorf("informer %s: delete: %w", inf.name, err))
				continue
			}
			old, existed := inf.cache.DeleteByKey(key)
			if !existed {
				// Handlers never saw the key; nothing to tell them.
				continue
			}
			obj := d.Object
			if isZero(obj) {
				obj = old
			}
			inf.distribute(key, notification[T]{kind: kindDelete, old: obj, unknown: d.FinalStateUnknown})
		default: // Added, Updated, Replaced
			key, err := inf.keyFunc(d.Object)
			if err != nil {
				errs = append(errs, fmt.Errorf("informer %s: %s: %w", inf.name, d.Type, err))
				continue
			}
			old, existed, err := inf.cache.Upsert(d.Object)
			if err != nil {
				errs = append(errs, fmt.Errorf("informer %s: %s %s: %w", inf.name, d.Type, key, err))
				continue
			}
			inf.notifyUpsert(key, old, d.Object, existed, isInInitialList)
		}
	}
	return errors.Join(errs...)
}

// notifyUpsert distributes the notification for an object that was stored: an add if the key
// was new, an update if it changed. An update whose resourceVersion did not change (a relist
// returning an unchanged object) reaches no handler: handlers that want periodic
// re-deliveries ask for a resync period.
func (inf *Informer[T]) notifyUpsert(key string, old, obj T, existed, isInInitialList bool) {
	if !existed {
		inf.distribute(key, notification[T]{kind: kindAdd, new: obj, initial: isInInitialList})
		return
	}
	if old.GetResourceVersion() == obj.GetResourceVersion() {
		return
	}
	inf.distribute(key, notification[T]{kind: kindUpdate, old: old, new: obj})
}

// applyReplacedAll applies an atomic relist (AtomicFIFO) to the cache and notifies.
func (inf *Informer[T]) applyReplacedAll(all *deltafifo.ReplacedAllInfo[T], isInInitialList bool) error {
	if all == nil {
		return nil
	}
	return deltafifo.ApplyReplacedAll(inf.cache, inf.keyFunc, all, func(key string, d deltafifo.Delta[T], old T, existed bool) {
		if d.Type == deltafifo.Deleted {
			inf.distribute(key, notification[T]{kind: kindDelete, old: d.Object, unknown: true})
			return
		}
		inf.notifyUpsert(key, old, d.Object, existed, isInInitialList)
	})
}

// distribute hands n to every listener. Caller holds deliverMu.
func (inf *Informer[T]) distribute(key string, n notification[T]) {
	for _, l := range inf.listeners {
		l.add(key, n)
	}
}

func isZero[T any](v T) bool {
	return any(v) == nil || reflect.ValueOf(&v).Elem().IsZero()
}

// markSynced records that the informer synced and tells every listener.
func (inf *Informer[T]) markSynced() {
	inf.deliverMu.Lock()
	defer inf.deliverMu.Unlock()
	inf.synced = true
	close(inf.syncedCh)
	for _, l := range inf.listeners {
		l.setUpstreamSynced()
	}
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

// Stats are an informer's figures.
type Stats struct {
	// Name is the informer's name.
	Name string
	// Synced is HasSynced.
	Synced bool
	// Cached is the number of objects in the cache; Queued the number of DeltaFIFO queue
	// positions not yet processed.
	Cached, Queued int
	// Handlers is the number of registered handlers.
	Handlers int
	// NotFound counts list/watch attempts answered 404 (the resource is not served).
	NotFound uint64
	// Reflector holds the reflector's figures (zero before Run).
	Reflector reflector.Stats
	// Sharing holds the structural sharing figures.
	Sharing SharingStats
	// CacheMutations counts the changes to cached objects the mutation detector found (0
	// without the detector).
	CacheMutations uint64
}

// Stats returns the informer's figures.
func (inf *Informer[T]) Stats() Stats {
	inf.mu.Lock()
	refl, fifo := inf.refl, inf.fifo
	inf.mu.Unlock()
	s := Stats{Name: inf.name, Synced: inf.HasSynced(), Cached: inf.cache.Len(), NotFound: inf.notFound.Load(), Sharing: sharingStats(inf.sharer),
		CacheMutations: cacheMutations(inf.cache)}
	if refl != nil {
		s.Reflector = refl.Stats()
	}
	if fifo != nil {
		s.Queued = fifo.Len()
	}
	inf.deliverMu.Lock()
	s.Handlers = len(inf.listeners)
	inf.deliverMu.Unlock()
	return s
}

// onWatchError counts 404s and logs them at most once per NotFoundLogInterval (the
// reflector's own log line is filtered out by quietNotFound), then calls the user's handler.
func (inf *Informer[T]) onWatchError(ctx context.Context, err error) {
	if meta.IsNotFound(err) {
		n := inf.notFound.Add(1)
		now := time.Now().UnixNano()
		last := inf.lastNotFound.Load()
		if (last == 0 || time.Duration(now-last) >= inf.opts.NotFoundLogInterval) && inf.lastNotFound.CompareAndSwap(last, now) {
			inf.logger.Warn("informer: the resource is not served (404); retrying with backoff until it is",
				"err", err, "attempts", n, "nextLogIn", inf.opts.NotFoundLogInterval)
		}
	}
	inf.mu.Lock()
	h := inf.watchErrorHandler
	inf.mu.Unlock()
	if h != nil {
		h(ctx, err)
	}
}

// quietNotFound is a slog.Handler that drops records carrying an "err" attribute for which
// meta.IsNotFound holds: the informer logs those itself, rate-limited.
type quietNotFound struct {
	inner slog.Handler
}

func (q *quietNotFound) Enabled(ctx context.Context, l slog.Level) bool {
	return q.inner.Enabled(ctx, l)
}

func (q *quietNotFound) Handle(ctx context.Context, r slog.Record) error {
	drop := false
	r.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Any().(error); ok && a.Key == "err" && meta.IsNotFound(err) {
			drop = true
			return false
		}
		return true
	})
	if drop {
		return nil
	}
	return q.inner.Handle(ctx, r)
}

func (q *quietNotFound) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &quietNotFound{inner: q.inner.WithAttrs(attrs)}
}

func (q *quietNotFound) WithGroup(name string) slog.Handler {
	return &quietNotFound{inner: q.inner.WithGroup(name)}
}
