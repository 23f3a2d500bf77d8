package informer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/indexer"
	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/meta"
)

// Scope is what a ScopedInformer caches: the objects of some namespaces (or of all) whose
// labels match a selector.
type Scope struct {
	// Namespaces are the namespaces whose objects are cached, each listed and watched
	// apart. Empty: every namespace, with one cluster-wide list and watch.
	Namespaces []string
	// LabelSelector selects the objects by their labels (the server filters). Default:
	// everything.
	LabelSelector labels.Selector
}

// namespaces returns the scope's namespaces, sorted and without duplicates; [""] for all.
func (sc Scope) namespaces() []string {
	if len(sc.Namespaces) == 0 {
		return []string{""}
	}
	ns := slices.Clone(sc.Namespaces)
	slices.Sort(ns)
	return slices.Compact(ns)
}

// ScopedInformer is a shared informer whose scope (namespaces, label selector) can change
// while it runs, without a restart, as a controller whose set of watched namespaces follows
// its configuration needs (controller-runtime's cache cannot: its issue #2829). It caches
// each namespace through an informer of its own (a segment) and hands every handler one
// ordered stream of notifications, as an Informer does. SetScope changes the scope:
//
//   - a namespace added is listed (and only it), its objects reach the handlers as adds
//     (isInInitialList true: they are that namespace's initial list);
//   - a namespace removed stops being watched, and each of its cached objects reaches the
//     handlers as a delete;
//   - a new label selector: the objects it no longer selects reach the handlers as deletes,
//     those it newly selects are listed (and only they, at the resourceVersion the cache
//     shows) and reach them as adds, and the objects both select are not delivered again;
//   - from every namespace to a list, or back: the new segments list their namespaces, and
//     only the differences with what the handlers were told reach them.
//
// Reads (GetIndexer, Lister) see the union of the segments. Handlers get no resync. Create
// it with NewScoped, add handlers, Run it.
type ScopedInformer[T meta.Object] struct {
	name   string
	client *apiclient.Client
	gvr    meta.GroupVersionResource
	opts   Options[T]
	logger *slog.Logger

	// setMu serialises SetScope.
	setMu sync.Mutex

	// mu guards the scope, the segments and the run state.
	mu        sync.Mutex
	scope     Scope
	segs      map[string]*segment[T]
	leaving   []*segment[T] // stopped segments whose objects the handlers still hold (handover)
	indexers  indexer.Indexers[T]
	transform func(T) (T, error)
	custom    bool // SetTransform was called
	watchErr  func(ctx context.Context, err error)
	runCtx    context.Context
	started   bool
	stopped   bool
	segWG     sync.WaitGroup

	// deliverMu orders the segments' notifications into the listeners; a segment's
	// deliverMu is taken before it, never after.
	deliverMu sync.Mutex
	listeners []*listener[T]
	synced    bool
	handover  *handover[T]
	syncedCh  chan struct{}
	stoppedCh chan struct{}
}

// segment is the informer of one namespace ("" for all) of a ScopedInformer.
type segment[T meta.Object] struct {
	ns     string
	inf    *Informer[T]
	sel    atomic.Pointer[labels.Selector] // what its ListerWatcher selects now
	cancel context.CancelFunc
	done   chan struct{} // closed when its Run returned
}

// NewScoped returns an informer of the objects of gvr in scope, listed and watched through
// client; opts are those of each segment's informer (their Name is the ScopedInformer's,
// with " in <namespace>"). Nothing happens until Run.
func NewScoped[T meta.Object](client *apiclient.Client, gvr meta.GroupVersionResource, scope Scope, opts Options[T]) *ScopedInformer[T] {
	if client == nil {
		panic("informer.NewScoped: nil client")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	name := opts.Name
	if name == "" {
		name = gvr.String()
	}
	return &ScopedInformer[T]{name: name, client: client, gvr: gvr, opts: opts, logger: opts.Logger.With("informer", name),
		scope: scope, segs: map[string]*segment[T]{}, indexers: maps.Clone(opts.Indexers), transform: opts.Transform,
		syncedCh: make(chan struct{}), stoppedCh: make(chan struct{})}
}

// Name returns the informer's name.
func (s *ScopedInformer[T]) Name() string { return s.name }

// Scope returns the current scope.
func (s *ScopedInformer[T]) Scope() Scope {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Scope{Namespaces: slices.Clone(s.scope.Namespaces), LabelSelector: s.scope.LabelSelector}
}

// segLW is a segment's ListerWatcher: its namespace's resource with the segment's current
// label selector.
type segLW[T meta.Object] struct {
	res apiclient.ListerWatcher[T]
	sel *atomic.Pointer[labels.Selector]
}

func (l *segLW[T]) List(ctx context.Context, opts apiclient.ListOptions) (*meta.List[T], error) {
	opts.LabelSelector = (*l.sel.Load()).String()
	return l.res.List(ctx, opts)
}

func (l *segLW[T]) Watch(ctx context.Context, opts apiclient.ListOptions) (apiclient.Watcher[T], error) {
	opts.LabelSelector = (*l.sel.Load()).String()
	return l.res.Watch(ctx, opts)
}

// WithDecodeOptions keeps the informer's decoding shortcuts (apiclient.DecodeTunable).
func (l *segLW[T]) WithDecodeOptions(o apiclient.DecodeOptions) apiclient.ListerWatcher[T] {
	if t, ok := l.res.(apiclient.DecodeTunable[T]); ok {
		return &segLW[T]{res: t.WithDecodeOptions(o), sel: l.sel}
	}
	return l
}

// newSegmentLocked makes the segment of namespace ns with selector sel. s.mu held.
func (s *ScopedInformer[T]) newSegmentLocked(ns string, sel labels.Selector) *segment[T] {
	seg := &segment[T]{ns: ns, done: make(chan struct{})}
	seg.sel.Store(&sel)
	o := s.opts
	o.Name = s.name
	if ns != "" {
		o.Name = s.name + " in " + ns
	}
	o.Indexers = maps.Clone(s.indexers)
	o.Transform = s.transform
	inf := New[T](&segLW[T]{res: apiclient.NewResource[T](s.client, s.gvr).Namespace(ns), sel: &seg.sel}, o)
	if s.custom && s.transform == nil {
		_ = inf.SetTransform(nil)
	}
	if s.watchErr != nil {
		_ = inf.SetWatchErrorHandler(s.watchErr)
	}
	inf.tap = func(key string, n notification[T]) { s.deliver(seg, key, n) }
	inf.reselects = make(chan reselect[T])
	seg.inf = inf
	return seg
}

// startLocked runs seg under the run's context. s.mu held.
func (s *ScopedInformer[T]) startLocked(seg *segment[T]) {
	ctx, cancel := context.WithCancel(s.runCtx)
	seg.cancel = cancel
	s.segWG.Go(func() {
		defer close(seg.done)
		seg.inf.Run(ctx)
	})
}

// stop stops seg and waits for it; its cache stays until dropState.
func (seg *segment[T]) stop() {
	seg.cancel()
	<-seg.done
}

// Run lists and watches the scope until ctx is done, then stops every handler and returns
// once no goroutine it started is left. It runs once.
func (s *ScopedInformer[T]) Run(ctx context.Context) {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		s.logger.Warn("informer: Run called more than once; ignored")
		return
	}
	s.started, s.runCtx = true, ctx
	var segs []*segment[T]
	for _, ns := range s.scope.namespaces() {
		seg := s.newSegmentLocked(ns, s.scope.LabelSelector)
		s.segs[ns] = seg
		segs = append(segs, seg)
	}
	s.deliverMu.Lock()
	for _, l := range s.listeners {
		l.start()
	}
	s.deliverMu.Unlock()
	for _, seg := range segs {
		s.startLocked(seg)
	}
	s.mu.Unlock()

	if s.waitSynced(ctx, segs) == nil {
		s.deliverMu.Lock()
		s.synced = true
		close(s.syncedCh)
		for _, l := range s.listeners {
			l.setUpstreamSynced()
		}
		s.deliverMu.Unlock()
	}
	<-ctx.Done()
	s.segWG.Wait()

	s.mu.Lock()
	s.stopped = true
	for _, seg := range s.segs {
		seg.inf.dropState()
	}
	s.mu.Unlock()
	stopListeners(&s.deliverMu, &s.listeners)
	close(s.stoppedCh)
}

// waitSynced waits until every segment of segs has synced, or ctx is done.
func (s *ScopedInformer[T]) waitSynced(ctx context.Context, segs []*segment[T]) error {
	for _, seg := range segs {
		select {
		case <-seg.inf.Synced():
		case <-seg.done:
			return ErrStopped
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// SetScope changes the scope (see ScopedInformer for what handlers see). Before Run it only
// records it. While running, it returns once the new namespaces have synced and every
// change has been handed to the handlers' queues (handlers may still be processing them),
// or with ctx's error (the change then completes in the background as far as it got;
// call SetScope again to be sure of the state). After the informer stopped it fails with
// ErrStopped.
func (s *ScopedInformer[T]) SetScope(ctx context.Context, scope Scope) error {
	s.setMu.Lock()
	defer s.setMu.Unlock()
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return fmt.Errorf("informer %s: SetScope: %w", s.name, ErrStopped)
	}
	old := s.scope
	s.scope = Scope{Namespaces: slices.Clone(scope.Namespaces), LabelSelector: scope.LabelSelector}
	running := s.started
	s.mu.Unlock()
	if !running {
		return nil
	}
	oldNS, newNS := old.namespaces(), scope.namespaces()
	if (oldNS[0] == "") != (newNS[0] == "") {
		return s.switchAll(ctx, scope)
	}
	if old.LabelSelector.String() != scope.LabelSelector.String() {
		for _, ns := range oldNS {
			if !slices.Contains(newNS, ns) {
				continue
			}
			if err := s.reselectSegment(ctx, s.segment(ns), old.LabelSelector, scope.LabelSelector); err != nil {
				return err
			}
		}
	}
	for _, ns := range oldNS {
		if !slices.Contains(newNS, ns) {
			s.removeSegment(ns)
		}
	}
	var added []*segment[T]
	s.mu.Lock()
	for _, ns := range newNS {
		if _, ok := s.segs[ns]; !ok {
			seg := s.newSegmentLocked(ns, scope.LabelSelector)
			s.segs[ns] = seg
			s.startLocked(seg)
			added = append(added, seg)
		}
	}
	s.mu.Unlock()
	return s.waitSynced(ctx, added)
}

// segment returns the running segment of ns.
func (s *ScopedInformer[T]) segment(ns string) *segment[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.segs[ns]
}

// reselectSegment changes seg's label selector from from to to (reselect.go).
func (s *ScopedInformer[T]) reselectSegment(ctx context.Context, seg *segment[T], from, to labels.Selector) error {
	res := apiclient.NewResource[T](s.client, s.gvr).Namespace(seg.ns)
	done := make(chan error, 1)
	req := reselect[T]{from: from, to: to, done: done, apply: func() { seg.sel.Store(&to) },
		list: func(ctx context.Context, sel, rv, cont string) ([]T, string, error) {
			l, err := res.List(ctx, apiclient.ListOptions{LabelSelector: sel, ResourceVersion: rv,
				ResourceVersionMatch: apiclient.ResourceVersionMatchExact, Limit: 500, Continue: cont})
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		}}
	select {
	case seg.inf.reselects <- req:
	case <-seg.done:
		return fmt.Errorf("informer %s: SetScope: %w", s.name, ErrStopped)
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done: // a relist instead (its reason is logged) is no failure
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// removeSegment stops the segment of ns, tells the handlers that each of its objects left,
// and drops it.
func (s *ScopedInformer[T]) removeSegment(ns string) {
	s.mu.Lock()
	seg := s.segs[ns]
	delete(s.segs, ns)
	s.mu.Unlock()
	if seg == nil {
		return
	}
	seg.stop()
	s.deliverMu.Lock()
	seg.inf.cache.Range(func(key string, obj T) bool {
		s.distributeLocked(key, notification[T]{kind: kindDelete, old: obj})
		return true
	})
	s.deliverMu.Unlock()
	seg.inf.dropState()
}

// switchAll moves between one cluster-wide segment and one per namespace: the old segments
// stop (their caches kept), the new ones list, and their initial lists reach the handlers
// only as differences with what the old ones had told them (handover); then what the old
// segments had and the new ones do not goes as deletes.
func (s *ScopedInformer[T]) switchAll(ctx context.Context, scope Scope) error {
	s.mu.Lock()
	old := slices.Collect(maps.Values(s.segs))
	var added []*segment[T]
	s.segs = map[string]*segment[T]{}
	for _, ns := range scope.namespaces() {
		seg := s.newSegmentLocked(ns, scope.LabelSelector)
		s.segs[ns] = seg
		added = append(added, seg)
	}
	s.leaving = old
	s.mu.Unlock()
	for _, seg := range old {
		seg.stop()
	}
	h := &handover[T]{old: old}
	s.deliverMu.Lock()
	s.handover = h
	s.deliverMu.Unlock()
	s.mu.Lock()
	for _, seg := range added {
		s.startLocked(seg)
	}
	s.mu.Unlock()
	err := s.waitSynced(ctx, added)
	s.deliverMu.Lock()
	s.handover = nil
	if err == nil {
		for _, seg := range old {
			seg.inf.cache.Range(func(key string, obj T) bool {
				if !h.told[key] {
					s.distributeLocked(key, notification[T]{kind: kindDelete, old: obj})
				}
				return true
			})
		}
	}
	s.deliverMu.Unlock()
	s.mu.Lock()
	s.leaving = nil
	s.mu.Unlock()
	for _, seg := range old {
		seg.inf.dropState()
	}
	return err
}

// handover filters the initial lists of the segments that replace others (switchAll).
type handover[T meta.Object] struct {
	old  []*segment[T]
	told map[string]bool // keys the new segments have listed
}

// filter turns a new segment's initial add into what the handlers need: nothing if an old
// segment had the object at the same resourceVersion, an update if it had an older one.
func (h *handover[T]) filter(key string, n notification[T]) (notification[T], bool) {
	if n.kind != kindAdd || !n.initial {
		return n, true
	}
	if h.told == nil {
		h.told = map[string]bool{}
	}
	h.told[key] = true
	for _, seg := range h.old {
		if o, ok, _ := seg.inf.cache.GetByKey(key); ok {
			if o.GetResourceVersion() == n.new.GetResourceVersion() {
				return n, false
			}
			return notification[T]{kind: kindUpdate, old: o, new: n.new, arrived: n.arrived}, true
		}
	}
	return n, true
}

// deliver hands a segment's notification to every handler (the segment's deliverMu held).
func (s *ScopedInformer[T]) deliver(_ *segment[T], key string, n notification[T]) {
	s.deliverMu.Lock()
	defer s.deliverMu.Unlock()
	if h := s.handover; h != nil {
		var ok bool
		if n, ok = h.filter(key, n); !ok {
			return
		}
	}
	s.distributeLocked(key, n)
}

// distributeLocked hands n to every listener. s.deliverMu held.
func (s *ScopedInformer[T]) distributeLocked(key string, n notification[T]) {
	for _, l := range s.listeners {
		l.add(key, n)
	}
}

// ErrReadOnly is the error of the write methods of a ScopedInformer's cache view.
var ErrReadOnly = errors.New("informer: the cache of a ScopedInformer is read-only")

// Staleness is the largest Staleness of the segments (see Informer.Staleness).
func (s *ScopedInformer[T]) Staleness() time.Duration {
	var worst time.Duration
	for _, inf := range s.informers() {
		worst = max(worst, inf.Staleness())
	}
	return worst
}
