package informer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/informerkit/informerkit/indexer"
	"github.com/informerkit/informerkit/meta"
)

// A ScopedInformer as a SharedIndexInformer: handlers, and reads over the union of its
// segments' caches.

var _ SharedIndexInformer[*meta.ObjectMeta] = (*ScopedInformer[*meta.ObjectMeta])(nil)

// informers returns the informers of the segments, running and handing over.
func (s *ScopedInformer[T]) informers() []*Informer[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Informer[T], 0, len(s.segs)+len(s.leaving))
	for _, ns := range slices.Sorted(maps.Keys(s.segs)) {
		out = append(out, s.segs[ns].inf)
	}
	for _, seg := range s.leaving {
		out = append(out, seg.inf)
	}
	return out
}

// AddEventHandler registers handler; see AddEventHandlerWithOptions.
func (s *ScopedInformer[T]) AddEventHandler(handler ResourceEventHandler[T]) (*Registration[T], error) {
	return s.AddEventHandlerWithOptions(handler, HandlerOptions{})
}

// AddEventHandlerWithResyncPeriod registers handler; a ScopedInformer has no resyncs, so
// resyncPeriod must be 0.
func (s *ScopedInformer[T]) AddEventHandlerWithResyncPeriod(handler ResourceEventHandler[T], resyncPeriod time.Duration) (*Registration[T], error) {
	return s.AddEventHandlerWithOptions(handler, HandlerOptions{ResyncPeriod: resyncPeriod})
}

// AddEventHandlerWithOptions registers handler, before or after Run, as
// Informer.AddEventHandlerWithOptions does: one added late first gets OnAdd(obj, true) for
// every cached object. A ScopedInformer has no resyncs: a ResyncPeriod other than 0 is an
// error.
func (s *ScopedInformer[T]) AddEventHandlerWithOptions(handler ResourceEventHandler[T], opts HandlerOptions) (*Registration[T], error) {
	if handler == nil {
		return nil, errors.New("informer: nil handler")
	}
	if opts.ResyncPeriod != 0 {
		return nil, fmt.Errorf("informer %s: a ScopedInformer has no resyncs (ResyncPeriod %v)", s.name, opts.ResyncPeriod)
	}
	size := opts.BufferSize
	if size <= 0 {
		size = s.opts.BufferSize
	}
	logger := opts.Logger
	if logger == nil {
		logger = s.logger
	}
	l := newListener(handler, opts.Name, logger, size)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil, fmt.Errorf("informer %s: handler not added: %w", s.name, ErrStopped)
	}
	// Every segment's delivery lock, in namespace order, then the scoped one (the order of
	// deliver): no notification is in flight while the caches are replayed.
	segs := slices.Sorted(maps.Keys(s.segs))
	for _, ns := range segs {
		s.segs[ns].inf.deliverMu.Lock()
	}
	s.deliverMu.Lock()
	if s.started {
		for _, ns := range segs {
			s.segs[ns].inf.cache.Range(func(key string, obj T) bool {
				l.add(key, notification[T]{kind: kindAdd, new: obj, initial: true})
				return true
			})
		}
		if s.synced {
			l.setUpstreamSynced()
		}
		l.start()
	}
	s.listeners = append(s.listeners, l)
	s.deliverMu.Unlock()
	for _, ns := range segs {
		s.segs[ns].inf.deliverMu.Unlock()
	}
	return &Registration[T]{l: l, own: s}, nil
}

// RemoveEventHandler unregisters the handler of reg (see Informer.RemoveEventHandler).
func (s *ScopedInformer[T]) RemoveEventHandler(reg *Registration[T]) error {
	if reg == nil || reg.own != s {
		return fmt.Errorf("informer %s: RemoveEventHandler: %w", s.name, ErrForeignRegistration)
	}
	s.deliverMu.Lock()
	s.listeners = slices.DeleteFunc(s.listeners, func(l *listener[T]) bool { return l == reg.l })
	s.deliverMu.Unlock()
	reg.l.stop()
	return nil
}

// HasSynced reports whether every namespace of the scope Run started with has synced.
func (s *ScopedInformer[T]) HasSynced() bool {
	select {
	case <-s.syncedCh:
		return true
	default:
		return false
	}
}

// Synced returns a channel closed when HasSynced becomes true.
func (s *ScopedInformer[T]) Synced() <-chan struct{} { return s.syncedCh }

// Done returns a channel closed when Run has returned.
func (s *ScopedInformer[T]) Done() <-chan struct{} { return s.stoppedCh }

// IsStopped reports whether Run has stopped.
func (s *ScopedInformer[T]) IsStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

// HasStarted reports whether Run was called.
func (s *ScopedInformer[T]) HasStarted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// LastSyncResourceVersion returns the resourceVersion of the only segment, or "" when there
// are several (each namespace is watched apart).
func (s *ScopedInformer[T]) LastSyncResourceVersion() string {
	if infs := s.informers(); len(infs) == 1 {
		return infs[0].LastSyncResourceVersion()
	}
	return ""
}

// SetTransform sets the transform of every segment (see Informer.SetTransform); it fails
// once Run was called.
func (s *ScopedInformer[T]) SetTransform(transform func(T) (T, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return fmt.Errorf("informer %s: SetTransform after the informer started", s.name)
	}
	s.transform, s.custom = transform, true
	return nil
}

// SetWatchErrorHandler sets the watch error handler of every segment (see
// Informer.SetWatchErrorHandler); it fails once Run was called.
func (s *ScopedInformer[T]) SetWatchErrorHandler(handler func(ctx context.Context, err error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return fmt.Errorf("informer %s: SetWatchErrorHandler after the informer started", s.name)
	}
	s.watchErr = handler
	return nil
}

// AddIndexers adds indexes to every segment's cache, and to those of namespaces added later.
func (s *ScopedInformer[T]) AddIndexers(indexers indexer.Indexers[T]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range indexers {
		if _, dup := s.indexers[name]; dup || name == indexer.NamespaceIndex {
			return fmt.Errorf("informer %s: index %q: %w", s.name, name, indexer.ErrDuplicateIndex)
		}
	}
	for _, seg := range s.segs {
		if err := seg.inf.AddIndexers(indexers); err != nil {
			return err
		}
	}
	if s.indexers == nil {
		s.indexers = indexer.Indexers[T]{}
	}
	maps.Copy(s.indexers, indexers)
	return nil
}

// GetStore returns the read-only view of the segments' caches; it is GetIndexer.
func (s *ScopedInformer[T]) GetStore() indexer.Indexer[T] { return scopedCache[T]{s} }

// GetIndexer returns the read-only view of the segments' caches: reads see their union,
// writes fail with ErrReadOnly.
func (s *ScopedInformer[T]) GetIndexer() indexer.Indexer[T] { return scopedCache[T]{s} }

// Lister returns a Lister over GetIndexer.
func (s *ScopedInformer[T]) Lister() Lister[T] { return NewLister(s.GetIndexer(), s.name) }

// Stats returns the sum of the segments' figures (Reflector: zero; see each segment).
func (s *ScopedInformer[T]) Stats() Stats {
	st := Stats{Name: s.name, Synced: s.HasSynced()}
	for _, inf := range s.informers() {
		x := inf.Stats()
		st.Cached += x.Cached
		st.Queued += x.Queued
		st.NotFound += x.NotFound
		st.CacheMutations += x.CacheMutations
	}
	s.deliverMu.Lock()
	st.Handlers = len(s.listeners)
	for _, l := range s.listeners {
		st.HandlerBacklogs = append(st.HandlerBacklogs, HandlerBacklog{Name: l.name, Backlog: l.backlog()})
	}
	s.deliverMu.Unlock()
	return st
}

// scopedCache is the read-only view of a ScopedInformer's segments' caches.
type scopedCache[T meta.Object] struct{ s *ScopedInformer[T] }

func (c scopedCache[T]) Add(T) error                              { return ErrReadOnly }
func (c scopedCache[T]) Update(T) error                           { return ErrReadOnly }
func (c scopedCache[T]) Delete(T) error                           { return ErrReadOnly }
func (c scopedCache[T]) Replace([]T, string) error                { return ErrReadOnly }
func (c scopedCache[T]) Resync() error                            { return nil }
func (c scopedCache[T]) LastSyncResourceVersion() string          { return c.s.LastSyncResourceVersion() }
func (c scopedCache[T]) AddIndexers(ix indexer.Indexers[T]) error { return c.s.AddIndexers(ix) }

func (c scopedCache[T]) ReplaceAndDiff([]T, string, func(indexer.Change[T])) error {
	return ErrReadOnly
}

func (c scopedCache[T]) Upsert(T) (old T, existed bool, err error) { return old, false, ErrReadOnly }
func (c scopedCache[T]) DeleteByKey(string) (old T, existed bool)  { return old, false }

func (c scopedCache[T]) List() []T {
	var out []T
	for _, inf := range c.s.informers() {
		out = append(out, inf.cache.List()...)
	}
	return out
}

func (c scopedCache[T]) ListKeys() []string {
	var out []string
	for _, inf := range c.s.informers() {
		out = append(out, inf.cache.ListKeys()...)
	}
	return out
}

func (c scopedCache[T]) Get(obj T) (T, bool, error) {
	key, err := indexer.MetaNamespaceKeyFunc(obj)
	if err != nil {
		var zero T
		return zero, false, err
	}
	return c.GetByKey(key)
}

func (c scopedCache[T]) GetByKey(key string) (T, bool, error) {
	for _, inf := range c.s.informers() {
		if o, ok, _ := inf.cache.GetByKey(key); ok {
			return o, true, nil
		}
	}
	var zero T
	return zero, false, nil
}

func (c scopedCache[T]) Index(name string, obj T) ([]T, error) {
	var out []T
	for _, inf := range c.s.informers() {
		x, err := inf.cache.Index(name, obj)
		if err != nil {
			return nil, err
		}
		out = append(out, x...)
	}
	return out, nil
}

func (c scopedCache[T]) IndexKeys(name, value string) ([]string, error) {
	var out []string
	for _, inf := range c.s.informers() {
		x, err := inf.cache.IndexKeys(name, value)
		if err != nil {
			return nil, err
		}
		out = append(out, x...)
	}
	return out, nil
}

func (c scopedCache[T]) ListIndexFuncValues(name string) []string {
	var out []string
	for _, inf := range c.s.informers() {
		out = append(out, inf.cache.ListIndexFuncValues(name)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (c scopedCache[T]) ByIndex(name, value string) ([]T, error) {
	var out []T
	for _, inf := range c.s.informers() {
		x, err := inf.cache.ByIndex(name, value)
		if err != nil {
			return nil, err
		}
		out = append(out, x...)
	}
	return out, nil
}

func (c scopedCache[T]) GetIndexers() indexer.Indexers[T] {
	if infs := c.s.informers(); len(infs) > 0 {
		return infs[0].cache.GetIndexers()
	}
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return maps.Clone(c.s.indexers)
}

func (c scopedCache[T]) Range(fn func(key string, obj T) bool) {
	for _, inf := range c.s.informers() {
		stop := false
		inf.cache.Range(func(key string, obj T) bool {
			stop = !fn(key, obj)
			return !stop
		})
		if stop {
			return
		}
	}
}

func (c scopedCache[T]) RangeByIndex(name, value string, fn func(key string, obj T) bool) error {
	for _, inf := range c.s.informers() {
		stop := false
		err := inf.cache.RangeByIndex(name, value, func(key string, obj T) bool {
			stop = !fn(key, obj)
			return !stop
		})
		if err != nil {
			return err
		}
		if stop {
			return nil
		}
	}
	return nil
}

func (c scopedCache[T]) Len() int {
	n := 0
	for _, inf := range c.s.informers() {
		n += inf.cache.Len()
	}
	return n
}
