package informer

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/informerkit/informerkit/deltafifo"
)

// freshness tracks how new the cache is, for readers that must not see a version older
// than one they know of (the controller client's read-your-writes): the newest
// resourceVersion the cache has applied, and a broadcast to wake waiters after every change.
//
// Kubernetes resourceVersions are decimal integers that grow with every write of a
// resource (comparable since Kubernetes 1.35, as client-go's consistency store relies on); a
// resourceVersion that is not a decimal integer is ignored here.
//
// Bookmarks advance the reflector's resourceVersion without queueing anything. While a
// WaitUntil waits, the informer queues a marker (the atomic FIFO's keyless SyncAll delta,
// which nothing else queues in an informer) behind everything the reflector has queued, after
// reading the reflector's resourceVersion; once the marker is applied, so is everything up to
// that resourceVersion. One marker is outstanding at a time, and one is queued only when the
// reflector is ahead of the cache, so a waiter whose condition never holds does not spin.
type freshness struct {
	applied atomic.Uint64
	mu      sync.Mutex
	changed chan struct{} // nil until a waiter asks for it: no cost without waiters

	waiting       atomic.Int32  // WaitUntil calls in progress
	markerPending atomic.Bool   // a SyncAll marker is queued
	markerRV      atomic.Uint64 // the reflector's resourceVersion when it was queued
}

// reflectorAdvanced is called by the reflector's store after every resourceVersion it
// records (events and bookmarks): waiters re-check, and may queue a marker.
func (f *freshness) reflectorAdvanced() {
	if f.waiting.Load() > 0 {
		f.notify()
	}
}

// markerApplied records that the cache has applied everything queued before the marker.
func (f *freshness) markerApplied() {
	if f.markerPending.Load() {
		f.raise(f.markerRV.Load())
		f.markerPending.Store(false)
	}
}

// observe records that the cache has applied resourceVersion rv.
func (f *freshness) observe(rv string) {
	if n, err := strconv.ParseUint(rv, 10, 64); err == nil {
		f.raise(n)
	}
}

// raise makes the applied resourceVersion at least n.
func (f *freshness) raise(n uint64) {
	for {
		cur := f.applied.Load()
		if n <= cur || f.applied.CompareAndSwap(cur, n) {
			return
		}
	}
}

// observeBatch records the newest resourceVersion of an applied batch of deltas.
func observeBatch[T interface{ GetResourceVersion() string }](f *freshness, batch []deltafifo.Deltas[T]) {
	for _, deltas := range batch {
		for i := range deltas {
			d := &deltas[i]
			switch d.Type {
			case deltafifo.ReplacedAll:
				if d.All != nil {
					f.observe(d.All.ResourceVersion)
				}
			case deltafifo.ReplacedEnd:
				if d.End != nil {
					f.observe(d.End.ResourceVersion)
				}
			case deltafifo.Added, deltafifo.Updated, deltafifo.Deleted, deltafifo.Replaced:
				if !isZero(d.Object) {
					f.observe(d.Object.GetResourceVersion())
				}
			}
		}
	}
}

// notify wakes the waiters.
func (f *freshness) notify() {
	f.mu.Lock()
	if f.changed != nil {
		close(f.changed)
		f.changed = nil
	}
	f.mu.Unlock()
}

func (f *freshness) wait() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.changed == nil {
		f.changed = make(chan struct{})
	}
	return f.changed
}

// ErrStopped is the error of WaitUntil when the informer stops first, and is wrapped by the
// error of AddEventHandler (and its variants) on an informer that has stopped. Test with
// errors.Is; client-go's counterpart is unexported and matched by its message.
var ErrStopped = errors.New("informer: stopped")

// LastStoreSyncResourceVersion is client-go's name (cache.Store.LastStoreSyncResourceVersion,
// reached through GetStore there) for AppliedResourceVersion: the resourceVersion the cache
// has caught up with, "" before the first list. Here the indexer holds objects only, so the
// informer answers for it.
func (inf *Informer[T]) LastStoreSyncResourceVersion() string { return inf.AppliedResourceVersion() }

// AppliedResourceVersion returns the newest resourceVersion whose effect the cache shows: of
// the last list, or of the newest event applied ("" before the first list). Every event up
// to it has been applied, so an object cached now is at least as new as any write of it at
// or before that resourceVersion. The informer also advances it to the reflector's last
// resourceVersion (bookmarks included) whenever it has applied everything it was given, and,
// while a WaitUntil waits, through a marker queued behind the reflector's events.
func (inf *Informer[T]) AppliedResourceVersion() string {
	n := inf.fresh.applied.Load()
	if n == 0 {
		return ""
	}
	return strconv.FormatUint(n, 10)
}

// WaitUntil calls cond now and after every change the informer applies to its cache, until
// cond returns true (WaitUntil returns nil), ctx is done (it returns ctx's error) or the
// informer stops (ErrStopped). cond runs on the caller's goroutine and may read the cache.
func (inf *Informer[T]) WaitUntil(ctx context.Context, cond func() bool) error {
	inf.fresh.waiting.Add(1)
	defer inf.fresh.waiting.Add(-1)
	for {
		ch := inf.fresh.wait()
		if cond() {
			return nil
		}
		inf.requestMarker()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-inf.stoppedCh:
			if cond() {
				return nil
			}
			return ErrStopped
		}
	}
}

// requestMarker queues a marker (see freshness) if the reflector has a resourceVersion the
// cache has not applied and no marker is queued. Only the atomic FIFO has markers.
func (inf *Informer[T]) requestMarker() {
	if inf.opts.mode != fifoAtomic {
		return
	}
	inf.mu.Lock()
	refl, fifo := inf.refl, inf.fifo
	inf.mu.Unlock()
	if refl == nil || fifo == nil {
		return
	}
	n, err := strconv.ParseUint(refl.LastSyncResourceVersion(), 10, 64) // read before queueing
	if err != nil || n <= inf.fresh.applied.Load() || !inf.fresh.markerPending.CompareAndSwap(false, true) {
		return
	}
	inf.fresh.markerRV.Store(n)
	if err := fifo.Resync(); err != nil { // a relist in progress: its end will advance the cache
		inf.fresh.markerPending.Store(false)
	}
}

// afterBatch runs once a batch of deltas has been applied: if the FIFO is empty, the cache
// reflects everything the reflector has seen, up to its last resourceVersion (read first: the
// reflector records a resourceVersion after queueing its event, so an empty queue afterwards
// means that event was applied). Then the waiters wake.
func (inf *Informer[T]) afterBatch(fifo interface{ Len() int }) {
	inf.mu.Lock()
	refl := inf.refl
	inf.mu.Unlock()
	if refl != nil {
		rv := refl.LastSyncResourceVersion()
		if fifo.Len() == 0 {
			inf.fresh.observe(rv)
		}
	}
	inf.fresh.notify()
}
