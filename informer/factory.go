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
	"github.com/informerkit/informerkit/reflector"
)

// Factory hands out shared informers: one per resource, Go type, namespace and selectors,
// however many times it is asked. It is client-go's SharedInformerFactory without generated
// code: For[T] plays the role of factory.Core().V1().Pods().Informer().
//
//	f := informer.NewFactory(client, informer.WithNamespace("default"))
//	pods := informer.For[*Pod](f, podsGVR)
//	pods.AddEventHandler(handler)
//	f.Start(ctx)
//	if err := f.WaitForCacheSync(ctx); err != nil { ... }
//	defer f.Shutdown()
type Factory struct {
	client *apiclient.Client
	opts   factoryOptions

	mu        sync.Mutex
	informers map[factoryKey]runnable
	order     []factoryKey
	running   map[factoryKey]bool
	shutdown  bool
	cancels   []context.CancelFunc
	wg        sync.WaitGroup
}

// runnable is what the factory needs of an Informer[T], whatever T.
type runnable interface {
	AnyInformer
	Run(ctx context.Context)
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

var _ AnyInformer = (*Informer[*apiclient.ObjectMeta])(nil)

type factoryKey struct {
	gvr       apiclient.GroupVersionResource
	typ       reflect.Type
	namespace string
	labels    string
	fields    string
}

type factoryOptions struct {
	namespace     string
	labels        Selector
	fields        string
	resync        time.Duration
	mode          FIFOMode
	watchList     reflector.WatchListMode
	stallTimeout  time.Duration
	backoff       reflector.Backoff
	bufferSize    int
	noTransform   bool
	noSharing     bool
	logger        *slog.Logger
	notFoundLog   time.Duration
	minWatchLimit time.Duration
}

// FactoryOption configures a Factory (NewFactory) or one informer of it (For).
type FactoryOption func(*factoryOptions)

// WithNamespace restricts informers to one namespace ("" means all namespaces).
func WithNamespace(ns string) FactoryOption { return func(o *factoryOptions) { o.namespace = ns } }

// WithLabelSelector lists and watches only the objects whose labels match sel (the server
// filters; an object whose labels stop matching is deleted from the cache).
func WithLabelSelector(sel Selector) FactoryOption {
	return func(o *factoryOptions) { o.labels = sel }
}

// WithFieldSelector lists and watches only the objects matching a field selector such as
// "spec.nodeName=node-1" (the server validates it; see the resource's supported fields).
func WithFieldSelector(sel string) FactoryOption {
	return func(o *factoryOptions) { o.fields = sel }
}

// WithDefaultResync sets the resync period of handlers added with AddEventHandler.
func WithDefaultResync(d time.Duration) FactoryOption {
	return func(o *factoryOptions) { o.resync = d }
}

// WithFIFOMode selects the DeltaFIFO mode of the informers (see Options.Mode).
func WithFIFOMode(m FIFOMode) FactoryOption { return func(o *factoryOptions) { o.mode = m } }

// WithWatchList selects how the informers' reflectors list (see reflector.WatchListMode).
func WithWatchList(m reflector.WatchListMode) FactoryOption {
	return func(o *factoryOptions) { o.watchList = m }
}

// WithStallTimeout sets the reflectors' stall timeout (see reflector.Options.StallTimeout).
func WithStallTimeout(d time.Duration) FactoryOption {
	return func(o *factoryOptions) { o.stallTimeout = d }
}

// WithBackoff sets the reflectors' backoff between failed attempts.
func WithBackoff(b reflector.Backoff) FactoryOption {
	return func(o *factoryOptions) { o.backoff = b }
}

// WithMinWatchTimeout sets the reflectors' minimum watch timeout.
func WithMinWatchTimeout(d time.Duration) FactoryOption {
	return func(o *factoryOptions) { o.minWatchLimit = d }
}

// WithBufferSize sets the default per-handler buffer before coalescing.
func WithBufferSize(n int) FactoryOption { return func(o *factoryOptions) { o.bufferSize = n } }

// WithoutTransform keeps managedFields (the informers get no default transform).
func WithoutTransform() FactoryOption { return func(o *factoryOptions) { o.noTransform = true } }

// WithoutSharing turns structural sharing off (see Options.DisableSharing).
func WithoutSharing() FactoryOption { return func(o *factoryOptions) { o.noSharing = true } }

// WithLogger sets the informers' logger.
func WithLogger(l *slog.Logger) FactoryOption { return func(o *factoryOptions) { o.logger = l } }

// WithNotFoundLogInterval sets how often an informer of a resource that is not served logs it.
func WithNotFoundLogInterval(d time.Duration) FactoryOption {
	return func(o *factoryOptions) { o.notFoundLog = d }
}

// NewFactory returns a factory of informers that list and watch through client.
func NewFactory(client *apiclient.Client, opts ...FactoryOption) *Factory {
	f := &Factory{client: client, informers: map[factoryKey]runnable{}, running: map[factoryKey]bool{}}
	for _, o := range opts {
		o(&f.opts)
	}
	return f
}

// For returns the factory's informer of T for gvr, creating it on first use. opts override
// the factory's options for this informer (typically WithNamespace or WithLabelSelector);
// informers that differ in namespace or selectors are distinct. An informer created after
// Start runs at the next Start.
//
// T is the Go type objects are decoded into: the same gvr with two types gives two informers
// (and two watches), so pick one type per resource in a program.
func For[T apiclient.Object](f *Factory, gvr apiclient.GroupVersionResource, opts ...FactoryOption) *Informer[T] {
	o := f.opts
	for _, fn := range opts {
		fn(&o)
	}
	key := factoryKey{gvr: gvr, typ: reflect.TypeFor[T](), namespace: o.namespace, labels: o.labels.String(), fields: o.fields}
	f.mu.Lock()
	defer f.mu.Unlock()
	if existing, ok := f.informers[key]; ok {
		return existing.(*Informer[T])
	}
	var lw apiclient.ListerWatcher[T] = apiclient.NewResource[T](f.client, gvr).Namespace(o.namespace)
	if key.labels != "" || key.fields != "" {
		lw = &selectingLW[T]{lw: lw, labels: key.labels, fields: key.fields}
	}
	iopts := Options[T]{
		Name:                key.name(),
		DefaultResyncPeriod: o.resync,
		Mode:                o.mode,
		WatchList:           o.watchList,
		StallTimeout:        o.stallTimeout,
		Backoff:             o.backoff,
		MinWatchTimeout:     o.minWatchLimit,
		BufferSize:          o.bufferSize,
		NotFoundLogInterval: o.notFoundLog,
		Logger:              o.logger,
		DisableSharing:      o.noSharing,
	}
	inf := New(lw, iopts)
	if o.noTransform {
		_ = inf.SetTransform(nil)
	}
	f.informers[key] = inf
	f.order = append(f.order, key)
	return inf
}

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

// Informers returns every informer the factory made (whatever its type, started or not), in
// the order they were first asked for: for readiness checks and metrics that must cover the
// informers other code created with For.
func (f *Factory) Informers() []AnyInformer {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]AnyInformer, 0, len(f.order))
	for _, key := range f.order {
		out = append(out, f.informers[key])
	}
	return out
}

// Start runs every informer of the factory that is not running yet, until ctx is done or
// Shutdown is called. It returns at once; call it again after For to start new informers.
// After Shutdown it does nothing.
func (f *Factory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shutdown {
		return
	}
	for _, key := range f.order {
		if f.running[key] {
			continue
		}
		f.running[key] = true
		inf := f.informers[key]
		ictx, cancel := context.WithCancel(ctx)
		f.cancels = append(f.cancels, cancel)
		f.wg.Go(func() { inf.Run(ictx) })
	}
}

// Shutdown stops every informer the factory started and waits until all of them (and all
// their handlers) have stopped. Later Start calls do nothing. It is safe to call more than
// once.
func (f *Factory) Shutdown() {
	f.mu.Lock()
	f.shutdown = true
	cancels := f.cancels
	f.cancels = nil
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
		if f.running[key] {
			started = append(started, f.informers[key])
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

func (s *selectingLW[T]) List(ctx context.Context, opts apiclient.ListOptions) (*apiclient.List[T], error) {
	opts.LabelSelector, opts.FieldSelector = s.labels, s.fields
	return s.lw.List(ctx, opts)
}

func (s *selectingLW[T]) Watch(ctx context.Context, opts apiclient.ListOptions) (apiclient.Watcher[T], error) {
	opts.LabelSelector, opts.FieldSelector = s.labels, s.fields
	return s.lw.Watch(ctx, opts)
}
