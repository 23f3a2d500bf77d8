package informer

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/informerkit/informerkit/meta"
)

// Ref is one reference to a shared informer of a Factory, handed out by Acquire. The
// informer lives as long as some reference to it is held (or InformerFor pinned it): the
// release of the last one stops its reflector, stops and drops its handlers, empties its
// cache and removes it from the factory, so that it leaves Informers (and with it the
// readiness checks and metrics that cover the factory's informers). Acquiring the same
// informer again afterwards makes a fresh one, which lists again.
//
// A Ref is for one holder: release it once, when that holder stops using the informer
// (a second Release is a no-op). Handlers the holder added are the holder's to remove;
// other holders' handlers keep running until the last release.
type Ref[T meta.Object] struct {
	f        *Factory
	key      factoryKey
	inf      *Informer[T]
	released atomic.Bool
}

// Acquire returns a reference to the factory's informer of T for gvr, creating the informer
// if the factory holds none: the counterpart of InformerFor for code that stops using the
// informer before the factory shuts down (a controller that follows a
// CustomResourceDefinition, a cache whose scope changes). Like InformerFor's, a new informer
// runs from the factory's next Start.
func Acquire[T meta.Object](f *Factory, gvr meta.GroupVersionResource) *Ref[T] {
	return AcquireWithOptions[T](f, gvr, InformerForOptions{})
}

// AcquireWithOptions is Acquire with another namespace or other selectors than the factory's
// for this informer (see InformerForWithOptions).
func AcquireWithOptions[T meta.Object](f *Factory, gvr meta.GroupVersionResource, opts InformerForOptions) *Ref[T] {
	f.mu.Lock()
	defer f.mu.Unlock()
	key, e := informerLocked[T](f, gvr, opts)
	e.refs++
	return &Ref[T]{f: f, key: key, inf: e.inf.(*Informer[T])}
}

// Informer returns the referenced informer. It stays usable after Release, but once the last
// reference is gone it is stopped and its cache is empty.
func (r *Ref[T]) Informer() *Informer[T] { return r.inf }

// Release gives the reference back without waiting. If it was the informer's last reference
// and InformerFor did not pin the informer, the informer is removed from the factory at once
// and stopped in the background: its reflector's requests end, every handler stops (the
// call in progress, if any, returns first) and the cache is emptied. Releasing twice is a
// no-op.
func (r *Ref[T]) Release() { r.release() }

// ReleaseAndWait is Release followed, when it was the last reference, by a wait for the
// informer to stop (its goroutines gone, its cache emptied), bounded by ctx. It returns
// ctx's error if ctx ends first; the informer stops all the same.
func (r *Ref[T]) ReleaseAndWait(ctx context.Context) error {
	done := r.release()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release drops the reference and returns a channel closed when the informer has stopped,
// or nil if it goes on running.
func (r *Ref[T]) release() <-chan struct{} {
	if !r.released.CompareAndSwap(false, true) {
		return nil
	}
	f := r.f
	f.mu.Lock()
	e, ok := f.entries[r.key]
	if !ok || e.inf != runnable(r.inf) {
		f.mu.Unlock()
		return nil // cannot happen while the reference was held; nothing to stop
	}
	e.refs--
	if e.refs > 0 || e.pinned {
		f.mu.Unlock()
		return nil
	}
	delete(f.entries, r.key)
	f.order = slices.DeleteFunc(f.order, func(k factoryKey) bool { return k == r.key })
	running, cancel := e.running, e.cancel
	f.mu.Unlock()
	// The informer is out of the factory: no Start can run it any more. Tell it before
	// cancelling, so that Run empties the cache on its way out.
	r.inf.release(running)
	if cancel != nil {
		cancel()
	}
	return r.inf.Done()
}

// release is the factory's side of Ref.release: the informer was dropped. If Run was or will
// be called (started), Run empties the informer's state when it returns; otherwise the
// informer is stopped here.
func (inf *Informer[T]) release(started bool) {
	inf.mu.Lock()
	inf.released = true
	if inf.started || started {
		inf.mu.Unlock()
		return
	}
	inf.started, inf.stopped = true, true
	inf.mu.Unlock()
	inf.deliverMu.Lock()
	ls := inf.listeners
	inf.listeners = nil
	inf.deliverMu.Unlock()
	for _, l := range ls {
		l.stop()
	}
	inf.dropState()
	close(inf.stoppedCh)
}

// dropState empties the cache and forgets the sharing table of an informer that stopped for
// good, so that holding on to the *Informer (a Lister kept somewhere) keeps no object alive.
func (inf *Informer[T]) dropState() {
	_ = inf.cache.Replace(nil, "")
	inf.mu.Lock()
	inf.sharer = nil
	inf.mu.Unlock()
}
