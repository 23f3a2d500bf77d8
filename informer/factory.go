package informer

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/reflector"
)

// Factory hands out shared informers: one per resource, Go type, namespace and selectors,
// however many times it is asked. It is client-go's SharedInformerFactory without generated
// code: InformerFor[T] plays the role of factory.Core().V1().Pods().Informer().
//
//	f := informer.NewFactoryWithOptions(client, informer.FactoryOptions{Namespace: "default"})
//	pods := informer.InformerFor[*Pod](f, podsGVR)
//	pods.AddEventHandler(handler)
//	f.Start(ctx)
//	if err := f.WaitForCacheSync(ctx); err != nil { ... }
//	defer f.Shutdown()
type Factory struct {
	client *apiclient.Client
	opts   FactoryOptions

	mu       sync.Mutex
	entries  map[factoryKey]*factoryEntry
	order    []factoryKey
	shards   map[meta.GroupVersionResource]shardSpec // Shard
	shutdown bool
	wg       sync.WaitGroup
}

// factoryEntry is the factory's record of one informer: who holds it (acquire.go) and how to
// stop it.
type factoryEntry struct {
	inf runnable
	// refs counts the references handed out by Acquire and not released; pinned is set by
	// InformerFor, whose callers never release: a pinned informer lives as long as the
	// factory.
	refs   int
	pinned bool
	// running is set by Start; cancel stops the informer's Run.
	running bool
	cancel  context.CancelFunc
}

// runnable is what the factory needs of an Informer[T], whatever T.
type runnable interface {
	AnyInformer
	Run(ctx context.Context)
	// Done is closed when Run has returned.
	Done() <-chan struct{}
	// release marks the informer as dropped by its factory: when Run returns (at once if
	// it never ran) its cache and sharing table are emptied.
	release(started bool)
}

// AnyInformer is the part of an *Informer[T] that does not depend on T: what a Factory
// tells about each informer it made (Factory.Informers), for readiness checks and metrics.
type AnyInformer interface {
	// Name is the informer's name, as in WaitForCacheSync's errors.
	Name() string
	// HasStarted reports whether Run was called (by Factory.Start).
	HasStarted() bool
	// HasSynced reports whether the cache holds the whole first list; Synced returns a
	// channel closed when it does.
	HasSynced() bool
	Synced() <-chan struct{}
	// Staleness is how long ago the informer last had evidence that its cache is current
	// (see Informer.Staleness).
	Staleness() time.Duration
	// Stats returns the informer's figures.
	Stats() Stats
}

var _ AnyInformer = (*Informer[*meta.ObjectMeta])(nil)

type factoryKey struct {
	gvr       meta.GroupVersionResource
	typ       reflect.Type
	namespace string
	labels    string
	fields    string
}

// FactoryOptions are the optional settings of a Factory (NewFactoryWithOptions): what every
// informer of the factory selects, and the settings each of them gets. The zero value of each
// field is the default of the informer.Options or reflector.Options field of the same name.
type FactoryOptions struct {
	// Namespace restricts the informers to one namespace. Default "": all namespaces.
	Namespace string
	// LabelSelector lists and watches only the objects whose labels match (the server
	// filters; an object whose labels stop matching is deleted from the cache). Default:
	// everything.
	LabelSelector labels.Selector
	// FieldSelector lists and watches only the objects matching a field selector such as
	// "spec.nodeName=node-1" (the server validates it). Default "": everything.
	FieldSelector string

	// DefaultResyncPeriod is the resync period of handlers added with AddEventHandler
	// (Options.DefaultResyncPeriod). Default 0: no resync.
	DefaultResyncPeriod time.Duration
	// KeepManagedFields gives the informers no default transform, so cached objects keep
	// metadata.managedFields. Default false: DropManagedFields.
	KeepManagedFields bool
	// DisableSharing turns structural sharing off (Options.DisableSharing).
	DisableSharing bool
	// DetectCacheMutations turns on every informer's cache mutation detector
	// (Options.DetectCacheMutations); so does INFORMERKIT_CACHE_MUTATION_DETECTOR=true.
	// OnCacheMutation and CacheMutationCheckInterval are the detector's settings (see
	// Options).
	DetectCacheMutations       bool
	OnCacheMutation            func(*CacheMutationError)
	CacheMutationCheckInterval time.Duration
	// BufferSize is the default per-handler buffer before coalescing (Options.BufferSize).
	BufferSize int
	// WatchList, MinWatchTimeout, StallTimeout, Backoff and MaxInternalErrorRetryDuration are
	// passed to the reflectors (see reflector.Options).
	WatchList                     reflector.WatchListMode
	MinWatchTimeout               time.Duration
	StallTimeout                  time.Duration
	Backoff                       reflector.Backoff
	MaxInternalErrorRetryDuration time.Duration
	// NotFoundLogInterval is how often, at most, an informer of a resource that is not served
	// logs it, and NotFoundGracePeriod how long after its first 404 (Options'
	// NotFoundLogInterval and NotFoundGracePeriod).
	NotFoundLogInterval time.Duration
	NotFoundGracePeriod time.Duration
	// Logger receives the informers' log lines. Default slog.Default().
	Logger *slog.Logger
}

// InformerForOptions select the objects of one informer of a factory (InformerForWithOptions). A zero field
// takes the factory's value; informers that differ in namespace or selectors are distinct.
type InformerForOptions struct {
	// Namespace restricts the informer to one namespace. Default: FactoryOptions.Namespace.
	Namespace string
	// LabelSelector filters by labels. Default: FactoryOptions.LabelSelector.
	LabelSelector labels.Selector
	// FieldSelector filters by fields. Default: FactoryOptions.FieldSelector.
	FieldSelector string
}

// NewFactory returns a factory of informers that list and watch through client, with the
// default options.
func NewFactory(client *apiclient.Client) *Factory {
	return NewFactoryWithOptions(client, FactoryOptions{})
}

// NewFactoryWithOptions returns a factory of informers that list and watch through client.
// Every option has a default and none can be invalid (a bad field selector is the server's
// to refuse).
func NewFactoryWithOptions(client *apiclient.Client, opts FactoryOptions) *Factory {
	return &Factory{client: client, opts: opts, entries: map[factoryKey]*factoryEntry{}}
}

// InformerFor returns the factory's informer of T for gvr, creating it on first use. An informer
// created after Start runs at the next Start.
//
// T is the Go type objects are decoded into: the same gvr with two types gives two informers
// (and two watches), so pick one type per resource in a program.
//
// The informer lives as long as the factory: InformerFor pins it, so that releasing the
// references Acquire handed out for it never stops it. Code that stops using an informer
// before the factory shuts down takes it with Acquire instead.
func InformerFor[T meta.Object](f *Factory, gvr meta.GroupVersionResource) *Informer[T] {
	return InformerForWithOptions[T](f, gvr, InformerForOptions{})
}

// InformerForWithOptions is InformerFor with another namespace or other selectors than the factory's for
// this informer.
func InformerForWithOptions[T meta.Object](f *Factory, gvr meta.GroupVersionResource, opts InformerForOptions) *Informer[T] {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, e := informerLocked[T](f, gvr, opts)
	e.pinned = true
	return e.inf.(*Informer[T])
}

// informerLocked returns the entry of T's informer for gvr with opts, creating it (with no
// reference and not pinned) if there is none. f.mu held.
func informerLocked[T meta.Object](f *Factory, gvr meta.GroupVersionResource, opts InformerForOptions) (factoryKey, *factoryEntry) {
	o := f.opts
	if opts.Namespace != "" {
		o.Namespace = opts.Namespace
	}
	if !opts.LabelSelector.Empty() {
		o.LabelSelector = opts.LabelSelector
	}
	if opts.FieldSelector != "" {
		o.FieldSelector = opts.FieldSelector
	}
	key := factoryKey{gvr: gvr, typ: reflect.TypeFor[T](), namespace: o.Namespace, labels: o.LabelSelector.String(), fields: o.FieldSelector}
	if e, ok := f.entries[key]; ok {
		return key, e
	}
	var lw apiclient.ListerWatcher[T] = apiclient.NewResource[T](f.client, gvr).Namespace(o.Namespace)
	name := key.name()
	if slw, spec, ok := shardedLWLocked(f, gvr, lw); ok {
		lw, name = slw, name+" "+spec.describe()
	}
	if key.labels != "" || key.fields != "" {
		lw = &selectingLW[T]{lw: lw, labels: key.labels, fields: key.fields}
	}
	inf := New(lw, informerOptions[T](o, name))
	if o.KeepManagedFields {
		_ = inf.SetTransform(nil)
	}
	e := &factoryEntry{inf: inf}
	f.entries[key] = e
	f.order = append(f.order, key)
	return key, e
}

// informerOptions are the Options a factory with o gives its informers.
func informerOptions[T meta.Object](o FactoryOptions, name string) Options[T] {
	return Options[T]{
		Name:                          name,
		DefaultResyncPeriod:           o.DefaultResyncPeriod,
		WatchList:                     o.WatchList,
		StallTimeout:                  o.StallTimeout,
		Backoff:                       o.Backoff,
		MaxInternalErrorRetryDuration: o.MaxInternalErrorRetryDuration,
		MinWatchTimeout:               o.MinWatchTimeout,
		BufferSize:                    o.BufferSize,
		NotFoundLogInterval:           o.NotFoundLogInterval,
		NotFoundGracePeriod:           o.NotFoundGracePeriod,
		Logger:                        o.Logger,
		DisableSharing:                o.DisableSharing,
		DetectCacheMutations:          o.DetectCacheMutations,
		OnCacheMutation:               o.OnCacheMutation,
		CacheMutationCheckInterval:    o.CacheMutationCheckInterval,
	}
}

// NewScopedFor returns a ScopedInformer of T for gvr in scope, with the factory's client and
// informer settings (the factory's namespace and selectors do not apply: scope says what it
// caches). It is not shared and the factory does not run it: each call makes one, and its
// owner runs it (controller.Scoped's source makes one each time it runs).
func NewScopedFor[T meta.Object](f *Factory, gvr meta.GroupVersionResource, scope Scope) *ScopedInformer[T] {
	inf := NewScoped[T](f.client, gvr, scope, informerOptions[T](f.opts, gvr.String()+" (scoped)"))
	if f.opts.KeepManagedFields {
		_ = inf.SetTransform(nil)
	}
	return inf
}

// Lookup returns the factory's informer of T for gvr, with the factory's namespace and
// selectors, if InformerFor (or InformerForWithOptions without overrides) has created it. Unlike InformerFor it
// creates nothing.
func Lookup[T meta.Object](f *Factory, gvr meta.GroupVersionResource) (*Informer[T], bool) {
	key := factoryKey{gvr: gvr, typ: reflect.TypeFor[T](), namespace: f.opts.Namespace, labels: f.opts.LabelSelector.String(), fields: f.opts.FieldSelector}
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.entries[key]
	if !ok {
		return nil, false
	}
	inf, ok := e.inf.(*Informer[T])
	return inf, ok
}

// Namespace returns the namespace the factory's informers are restricted to ("" for all).
func (f *Factory) Namespace() string { return f.opts.Namespace }

// name is "resource.version[.group]", then " in <namespace>" and the selectors if any.
func (k factoryKey) name() string {
	var b strings.Builder
	b.WriteString(k.gvr.String())
	if k.namespace != "" {
		b.WriteString(" in " + k.namespace)
	}
	if k.labels != "" {
		b.WriteString(" labels " + k.labels)
	}
	if k.fields != "" {
		b.WriteString(" fields " + k.fields)
	}
	return b.String()
}

// Informers returns every informer the factory holds (whatever its type, started or not), in
// the order they were first asked for: for readiness checks and metrics that must cover the
// informers other code created with InformerFor or Acquire. An informer whose last
// reference was released is no longer listed.
func (f *Factory) Informers() []AnyInformer {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]AnyInformer, 0, len(f.order))
	for _, key := range f.order {
		out = append(out, f.entries[key].inf)
	}
	return out
}

// ResourceOf returns the resource inf lists and watches, if inf is one of the factory's
// informers (for a controller manager that checks what its controllers watch against
// discovery before waiting for their caches).
func (f *Factory) ResourceOf(inf AnyInformer) (meta.GroupVersionResource, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for key, e := range f.entries {
		if e.inf == inf {
			return key.gvr, true
		}
	}
	return meta.GroupVersionResource{}, false
}

// NamespaceOf returns the namespace inf lists and watches ("" for all), if inf is one of
// the factory's informers (for the permissions a controller manager needs).
func (f *Factory) NamespaceOf(inf AnyInformer) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for key, e := range f.entries {
		if e.inf == inf {
			return key.namespace, true
		}
	}
	return "", false
}

// Selection is what one of a factory's informers lists and watches (Factory.SelectionOf).
type Selection struct {
	Resource meta.GroupVersionResource
	// Namespace is "" for all namespaces (and for a cluster-scoped resource).
	Namespace string
	// LabelSelector and FieldSelector are "" for none.
	LabelSelector, FieldSelector string
}

// SelectionOf returns what inf lists and watches, if inf is one of the factory's informers
// (for a controller manager's inventory of its informers).
func (f *Factory) SelectionOf(inf AnyInformer) (Selection, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for key, e := range f.entries {
		if e.inf == inf {
			return Selection{Resource: key.gvr, Namespace: key.namespace, LabelSelector: key.labels, FieldSelector: key.fields}, true
		}
	}
	return Selection{}, false
}

// Start runs every informer of the factory that is not running yet, until ctx is done or
// Shutdown is called. It returns at once; call it again after InformerFor to start new informers.
// After Shutdown it does nothing.
func (f *Factory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shutdown {
		return
	}
	for _, key := range f.order {
		e := f.entries[key]
		if e.running {
			continue
		}
		e.running = true
		ictx, cancel := context.WithCancel(ctx)
		e.cancel = cancel
		inf := e.inf
		f.wg.Go(func() { inf.Run(ictx) })
	}
}

// Shutdown stops every informer the factory started and waits until all of them (and all
// their handlers) have stopped. Later Start calls do nothing. It is safe to call more than
// once.
func (f *Factory) Shutdown() {
	f.mu.Lock()
	f.shutdown = true
	var cancels []context.CancelFunc
	for _, e := range f.entries {
		if e.cancel != nil {
			cancels = append(cancels, e.cancel)
		}
	}
	f.mu.Unlock()
	for _, c := range cancels {
		c()
	}
	f.wg.Wait()
}

// WaitForCacheSync waits until every started informer has synced. If ctx is done first it
// returns an error naming the informers that have not synced. Informers created but not
// started are not waited for.
func (f *Factory) WaitForCacheSync(ctx context.Context) error {
	f.mu.Lock()
	var started []runnable
	for _, key := range f.order {
		if e := f.entries[key]; e.running {
			started = append(started, e.inf)
		}
	}
	f.mu.Unlock()
	for _, inf := range started {
		select {
		case <-inf.Synced():
		case <-ctx.Done():
			var missing []string
			for _, i := range started {
				select {
				case <-i.Synced():
				default:
					missing = append(missing, i.Name())
				}
			}
			slices.Sort(missing)
			return &NotSyncedError{Informers: missing, Err: ctx.Err()}
		}
	}
	return nil
}

// NotSyncedError is the error of WaitForCacheSync when its context ends first.
type NotSyncedError struct {
	// Informers names the informers that had not synced.
	Informers []string
	// Err is the context's error.
	Err error
}

// Error names the informers that had not synced.
func (e *NotSyncedError) Error() string {
	return fmt.Sprintf("informer: caches not synced: %s: %v", strings.Join(e.Informers, ", "), e.Err)
}

// Unwrap returns the context's error.
func (e *NotSyncedError) Unwrap() error { return e.Err }

// selectingLW adds label and field selectors to every list and watch of lw.
type selectingLW[T any] struct {
	lw             apiclient.ListerWatcher[T]
	labels, fields string
}

func (s *selectingLW[T]) List(ctx context.Context, opts apiclient.ListOptions) (*meta.List[T], error) {
	opts.LabelSelector, opts.FieldSelector = s.labels, s.fields
	return s.lw.List(ctx, opts)
}

func (s *selectingLW[T]) Watch(ctx context.Context, opts apiclient.ListOptions) (apiclient.Watcher[T], error) {
	opts.LabelSelector, opts.FieldSelector = s.labels, s.fields
	return s.lw.Watch(ctx, opts)
}
