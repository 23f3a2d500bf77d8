package informer

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/informerkit/informerkit/deltafifo"
	"github.com/informerkit/informerkit/indexer"
)

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
	transform := withSharing(inf.transform, inf.sharer, inf.cached)
	switch inf.opts.mode {
	case fifoCoalescing:
		return deltafifo.New(inf.keyFunc, deltafifo.Options[T]{KnownObjects: inf.cache, Transform: transform})
	case fifoInOrder:
		return deltafifo.NewRealFIFO(inf.keyFunc, deltafifo.RealFIFOOptions[T]{KnownObjects: inf.cache, Transform: transform})
	}
	return deltafifo.NewAtomicFIFO(inf.keyFunc, deltafifo.AtomicFIFOOptions[T]{Transform: transform, UnlockWhileProcessing: true})
}

// cached returns the version of obj the cache holds, if any.
func (inf *Informer[T]) cached(obj T) (T, bool) {
	var zero T
	key, err := inf.keyFunc(obj)
	if err != nil {
		return zero, false
	}
	old, ok, err := inf.cache.GetByKey(key)
	return old, ok && err == nil
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
	if inf.opts.Observe != nil {
		inf.observePopped(batch)
	}
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
			inf.distribute(key, notification[T]{kind: kindDelete, old: obj, unknown: d.FinalStateUnknown, arrived: d.Arrived})
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
			inf.notifyUpsert(key, old, d.Object, existed, isInInitialList, d.Arrived)
		}
	}
	return errors.Join(errs...)
}

// notifyUpsert distributes the notification for an object that was stored: an add if the key
// was new, an update if it changed. An update whose resourceVersion did not change (a relist
// returning an unchanged object) reaches no handler: handlers that want periodic
// re-deliveries ask for a resync period. arrived is the watch event's (zero for a list).
func (inf *Informer[T]) notifyUpsert(key string, old, obj T, existed, isInInitialList bool, arrived time.Time) {
	if !existed {
		inf.distribute(key, notification[T]{kind: kindAdd, new: obj, initial: isInInitialList, arrived: arrived})
		return
	}
	if old.GetResourceVersion() == obj.GetResourceVersion() {
		return
	}
	inf.distribute(key, notification[T]{kind: kindUpdate, old: old, new: obj, arrived: arrived})
}

// applyReplacedAll applies an atomic relist (AtomicFIFO) to the cache in one step, with
// the indexer's ReplaceAndDiff (one merge under one write lock, each key computed once),
// and then notifies what a FIFO would have queued as separate deltas: first a tombstone
// (OnDelete, finalStateUnknown) for every cached key the list lacks, then, in list order, an
// add or an update for every listed object (a key listed twice is reported twice, the
// second time with the first as old). A failing key or index function changes nothing and
// notifies nothing, so the process function can requeue the delta. The cache is the
// informer's: applying a relist is the consumer's work, as in client-go.
func (inf *Informer[T]) applyReplacedAll(all *deltafifo.ReplacedAllInfo[T], isInInitialList bool) error {
	if all == nil {
		return nil
	}
	return inf.cache.ReplaceAndDiff(all.Objects, all.ResourceVersion, func(c indexer.Change[T]) {
		if c.Deleted {
			inf.distribute(c.Key, notification[T]{kind: kindDelete, old: c.Old, unknown: true})
			return
		}
		inf.notifyUpsert(c.Key, c.Old, c.New, c.Existed, isInInitialList, time.Time{})
	})
}

// distribute hands n to every listener. Caller holds deliverMu.
func (inf *Informer[T]) distribute(key string, n notification[T]) {
	if inf.opts.Observe != nil {
		o := Observation[T]{Stage: StageCached, Key: key, Notification: kindName(n.kind), Object: n.new,
			InitialList: n.initial, FinalStateUnknown: n.unknown}
		switch n.kind {
		case kindDelete:
			o.Object = n.old
		case kindUpdate:
			o.Old = n.old
		}
		inf.opts.Observe(o)
	}
	for _, l := range inf.listeners {
		l.add(key, n)
	}
	if inf.tap != nil {
		inf.tap(key, n)
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
