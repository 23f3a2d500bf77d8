package ring

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/sharding"
)

// ErrRangesChanged ends a sharded watch when the member's held ranges change: the
// reflector relists, with the new ranges.
var ErrRangesChanged = errors.New("ring: the member's hash ranges changed")

// shardObject is what client-side filtering reads from an object.
type shardObject interface {
	GetUID() string
	GetNamespace() string
}

// ShardedListerWatcher lists and watches only the objects of base whose hash the member
// holds, for an informer of a sharded controller.
//
// Each LIST and WATCH carries the held ranges as a shardSelector, so a kube-apiserver with
// the ShardedListAndWatch gate sends only them (cache and watch traffic ≈ 1/N). Before its
// first request it probes the server with a one-item list with a selector: a server that
// ignores the parameter answers without metadata.shardInfo. Then the selector is not sent
// and the objects are filtered here, before the cache: memory is still ≈ 1/N, but every
// replica receives and decodes every object and event. Results are filtered here in both cases (cheap: one FNV hash per
// object), so an object outside the ranges never reaches the cache.
//
// When the held ranges change, the open watch ends with ErrRangesChanged, and the
// reflector relists with the new ranges: objects of lost ranges leave the cache through the
// relist's Replace, those of gained ranges enter it. The cost is one list of the member's
// share per change (a simpler scheme than an extra watch per gained range). A member
// holding nothing lists the one-hash range [0, 1) and filters it out.
func ShardedListerWatcher[T apiclient.Object](base apiclient.ListerWatcher[T], r *Ring) apiclient.ListerWatcher[T] {
	if base == nil || r == nil {
		panic("ring.ShardedListerWatcher: nil ListerWatcher or Ring")
	}
	return &shardedLW[T]{base: base, ring: r}
}

type shardedLW[T apiclient.Object] struct {
	base    apiclient.ListerWatcher[T]
	ring    *Ring
	support atomic.Int32 // supportUnknown, supportYes, supportNo
}

const (
	supportUnknown = iota
	supportYes
	supportNo
)

// probe learns once whether the server honours shardSelector: a one-item list with a
// selector comes back with metadata.shardInfo only if it does. (A streaming list, the
// reflector's WatchList, has no list metadata to tell.)
func (s *shardedLW[T]) probe(ctx context.Context, sel sharding.Selector) (bool, error) {
	switch s.support.Load() {
	case supportYes:
		return true, nil
	case supportNo:
		return false, nil
	}
	// At resourceVersion "" the limit holds (at "0" a watch cache answers everything).
	l, err := s.base.List(ctx, apiclient.ListOptions{ShardSelector: sel.String(), Limit: 1})
	if err != nil {
		return false, err
	}
	if l.ShardInfo == nil {
		s.support.Store(supportNo)
		return false, nil
	}
	s.support.Store(supportYes)
	return true, nil
}

// nothing selects a single hash: what a member that holds nothing asks for.
var nothing = sharding.Range{Start: 0, End: 1}

func (s *shardedLW[T]) selector() (sel sharding.Selector, match func(T) bool, changed <-chan struct{}) {
	sel, ok, changed := s.ring.snapshot()
	field := s.ring.Field()
	if !ok {
		return sharding.NewSelector(field, nothing), func(T) bool { return false }, changed
	}
	return sel, func(o T) bool {
		so, ok := any(o).(shardObject)
		if !ok {
			return true // the type cannot be filtered here; the server's selection stands
		}
		return sel.MatchesObject(so.GetUID(), so.GetNamespace())
	}, changed
}

// Supported reports whether lw, made by ShardedListerWatcher, found that the server honours
// shard selectors (false also before its first list or watch).
func Supported[T apiclient.Object](lw apiclient.ListerWatcher[T]) bool {
	s, ok := lw.(*shardedLW[T])
	return ok && s.support.Load() == supportYes
}

func (s *shardedLW[T]) List(ctx context.Context, opts apiclient.ListOptions) (*apiclient.List[T], error) {
	sel, match, _ := s.selector()
	supported, err := s.probe(ctx, sel)
	if err != nil {
		return nil, err
	}
	if supported {
		opts.ShardSelector = sel.String()
	}
	l, err := s.base.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	kept := l.Items[:0]
	for _, o := range l.Items {
		if match(o) {
			kept = append(kept, o)
		}
	}
	clear(l.Items[len(kept):])
	l.Items = kept
	return l, nil
}

func (s *shardedLW[T]) Watch(ctx context.Context, opts apiclient.ListOptions) (apiclient.Watcher[T], error) {
	sel, match, changed := s.selector()
	supported, err := s.probe(ctx, sel)
	if err != nil {
		return nil, err
	}
	if supported {
		opts.ShardSelector = sel.String()
	}
	w, err := s.base.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	fw := &filteredWatcher[T]{inner: w, out: make(chan apiclient.Event[T]), stop: make(chan struct{})}
	go fw.run(match, changed)
	return fw, nil
}

// filteredWatcher forwards the events of inner that match, and ends with ErrRangesChanged
// when the ranges change.
type filteredWatcher[T any] struct {
	inner    apiclient.Watcher[T]
	out      chan apiclient.Event[T]
	stop     chan struct{}
	stopOnce sync.Once
}

func (f *filteredWatcher[T]) ResultChan() <-chan apiclient.Event[T] { return f.out }

func (f *filteredWatcher[T]) Stop() {
	f.stopOnce.Do(func() { close(f.stop) })
	f.inner.Stop()
}

func (f *filteredWatcher[T]) run(match func(T) bool, changed <-chan struct{}) {
	defer close(f.out)
	defer f.inner.Stop()
	in := f.inner.ResultChan()
	for {
		select {
		case <-f.stop:
			return
		case <-changed:
			select {
			case f.out <- apiclient.Event[T]{Type: apiclient.Error, Err: ErrRangesChanged}:
			case <-f.stop:
			}
			return
		case ev, ok := <-in:
			if !ok {
				return
			}
			switch ev.Type {
			case apiclient.Added, apiclient.Modified, apiclient.Deleted:
				if !match(ev.Object) {
					continue
				}
			}
			select {
			case f.out <- ev:
			case <-f.stop:
				return
			}
		}
	}
}
