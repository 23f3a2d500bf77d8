package informer

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/informerkit/informerkit/deltafifo"
	"github.com/informerkit/informerkit/indexer"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/reflector"
)

// incrementalFIFO is the informer's DeltaFIFO as its reflector sees it: a
// reflector.IncrementalReplacer, so that a relist reaches the FIFO object by object instead of
// as one slice next to the whole cache (see bench/README.md, "Relist memory"). The FIFO holds
// the transformed objects until the list completes, so that a list that fails changes
// neither the cache nor what handlers see; an object the cache already holds at the same
// resourceVersion is not even held (Relist.Keep). deltafifo cannot import reflector, so the
// adaptation lives here.
type incrementalFIFO[T meta.Object] struct {
	deltafifo.Queue[T]
	// keyFunc and cache tell the objects the cache holds unchanged.
	keyFunc indexer.KeyFunc[T]
	cache   indexer.Indexer[T]
	// finished and aborted count the replacements that ended either way (the informer's
	// figures).
	finished, aborted *atomic.Uint64
	// fresh hears every resourceVersion the reflector records (freshness.go).
	fresh *freshness
	// notFoundSince is the informer's start of a run of 404s (stats.go).
	notFoundSince *atomic.Int64
	// observe is Options.Observe (observe.go), nil without it.
	observe func(Observation[T])
}

// UpdateResourceVersion implements reflector.ResourceVersionUpdater.
func (f incrementalFIFO[T]) UpdateResourceVersion(string) {
	f.fresh.reflectorAdvanced()
	if f.notFoundSince.Load() != 0 {
		f.notFoundSince.Store(0) // the resource answers: a later 404 starts a new run
	}
}

var _ reflector.IncrementalReplacer[*meta.ObjectMeta] = incrementalFIFO[*meta.ObjectMeta]{}

// BeginReplace implements reflector.IncrementalReplacer.
func (f incrementalFIFO[T]) BeginReplace() (reflector.Replacement[T], error) {
	r, err := f.Queue.BeginReplace()
	if err != nil {
		return nil, err
	}
	return &countedReplacement[T]{Relist: r, f: f}, nil
}

// relistAdded, if set, is called for every object an incremental relist hands over, on the
// reflector's goroutine, before it is kept or held: BenchmarkRelistPeakHeap samples the live
// heap there, with the reflector paused. Set it only in tests.
var relistAdded func()

// countedReplacement is a deltafifo.Relist that keeps what the cache holds unchanged and
// counts how it ended.
type countedReplacement[T meta.Object] struct {
	*deltafifo.Relist[T]
	f     incrementalFIFO[T]
	ended bool // touched by the reflector's goroutine only
}

// Add implements reflector.Replacement. An object the cache holds at the same
// resourceVersion is kept, not held again: a resourceVersion names one state of an object,
// and the list is at least as new as anything the FIFO was given before, so the cached
// state is the listed one (once the deltas queued before the list are applied).
func (r *countedReplacement[T]) Add(obj T) error {
	if relistAdded != nil {
		relistAdded()
	}
	if rv := obj.GetResourceVersion(); rv != "" {
		if key, err := r.f.keyFunc(obj); err == nil {
			if old, ok, _ := r.f.cache.GetByKey(key); ok && old.GetResourceVersion() == rv {
				if r.f.observe != nil {
					r.f.observeQueued(Kept, obj)
				}
				return r.Relist.Keep(key)
			}
		}
	}
	if r.f.observe != nil {
		r.f.observeQueued(deltafifo.ReplacedChunk, obj)
	}
	return r.Relist.Add(obj)
}

// Finish implements reflector.Replacement. The count moves first, so that whoever sees the
// effects of the replacement (the end of the list reaching handlers) sees it counted.
func (r *countedReplacement[T]) Finish(resourceVersion string) error {
	if r.f.observe != nil {
		r.f.observe(Observation[T]{Stage: StageQueued, Delta: deltafifo.ReplacedEnd, ResourceVersion: resourceVersion})
	}
	r.f.finished.Add(1)
	if err := r.Relist.Finish(resourceVersion); err != nil {
		r.f.finished.Add(^uint64(0))
		return err
	}
	r.ended = true
	return nil
}

// Abort implements reflector.Replacement.
func (r *countedReplacement[T]) Abort() {
	if !r.ended {
		r.ended = true
		r.f.aborted.Add(1)
	}
	r.Relist.Abort()
}

// reflectorStore is what the informer hands its reflector: the FIFO, made an
// IncrementalReplacer unless Options.disableIncrementalRelist.
func (inf *Informer[T]) reflectorStore(fifo deltafifo.Queue[T]) reflector.Store[T] {
	if inf.opts.disableIncrementalRelist {
		return fifo
	}
	f := incrementalFIFO[T]{Queue: fifo, keyFunc: inf.keyFunc, cache: inf.cache,
		finished: &inf.incrementalLists, aborted: &inf.incrementalAborts, fresh: &inf.fresh, notFoundSince: &inf.notFoundSince}
	if inf.opts.Observe != nil {
		f.observe = inf.opts.Observe
		return observedFIFO[T]{f}
	}
	return f
}

// applyReplacedChunk applies part of an incremental relist (AtomicFIFO): every object is
// stored, in order, replacing what the cache held under its key (info.Keys: not computed
// again), and each handler hears OnAdd (isInInitialList during the first list) for a new key
// and OnUpdate(old, new) for a changed one, exactly as for the objects of a ReplacedAll.
// Nothing is deleted before the ReplacedEnd. An object the cache refuses (its index function
// failing) is skipped, not notified, and reported in the error, which joins all such errors;
// the cache keeps its previous object for that key, as when an Update is refused.
func (inf *Informer[T]) applyReplacedChunk(chunk *deltafifo.ReplacedChunkInfo[T], isInInitialList bool) error {
	if chunk == nil {
		return nil
	}
	var errs []error
	for i, obj := range chunk.Objects {
		old, existed, err := inf.cache.Upsert(obj)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		inf.notifyUpsert(chunk.Keys[i], old, obj, existed, isInInitialList, time.Time{})
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("informer %s: relist: %w", inf.name, err)
	}
	return nil
}

// applyReplacedEnd ends an incremental relist (AtomicFIFO): every cached key the list did
// not have is deleted, and each handler hears OnDelete(last known state,
// finalStateUnknown=true), as for the deletions of a ReplacedAll. With the chunks before it,
// the cache holds exactly what applyReplacedAll of the whole list would have left. Only the
// keys to delete are collected, never the list.
func (inf *Informer[T]) applyReplacedEnd(end *deltafifo.ReplacedEndInfo) {
	if end == nil {
		return
	}
	var gone []string
	inf.cache.Range(func(key string, _ T) bool {
		if _, ok := end.Keys[key]; !ok {
			gone = append(gone, key)
		}
		return true
	})
	for _, k := range gone {
		if old, ok := inf.cache.DeleteByKey(k); ok {
			inf.distribute(k, notification[T]{kind: kindDelete, old: old, unknown: true})
		}
	}
}
