package deltafifo

import "errors"

// Replacement is an incremental replacement: a relist handed to the FIFO object by object
// (Add), as a reflector decodes it, instead of as one slice (Replace). Begin one with
// FIFO.BeginReplace and end it with exactly one of Finish or Abort.
//
// Everything observable once the queue has been drained after Finish is what
// Replace(list, resourceVersion) at the time of Finish would have produced, for list the
// objects given to Add: the consumer's store ends up with exactly the listed objects, keys
// that were queued or known but not listed get tombstones (Deleted, FinalStateUnknown), the
// first replacement decides HasSynced like the first Replace, and the Transformer runs on
// every listed object. The difference is when: listed objects are queued as they arrive, so
// the consumer can store them (and the producer drop them) long before the list ends, and the
// FIFO never holds the whole list, only the set of keys seen so far.
//
// Per mode:
//   - Coalescing: Add appends a Replaced delta to the key's queue position; Finish queues a
//     tombstone for every queued key not added (carrying its newest queued object) and then
//     for every key of KnownObjects neither queued nor added (carrying the known object).
//   - InOrder: Add queues a Replaced delta; Finish queues the tombstones (queued keys not
//     added whose newest delta is not a delete, then known keys neither queued nor added).
//     Unlike Replace, which queues tombstones first, they come after the listed objects; no
//     key gets both, so the consumer's final state is the same.
//   - Atomic: Add puts the object into a ReplacedChunk delta (up to Options.ChunkSize objects
//     each, with their keys); Finish queues a ReplacedEnd delta carrying the resourceVersion
//     and the set of added keys, which tells the consumer to delete every key it has that is
//     not in the set (see ApplyReplacedChunk and ApplyReplacedEnd). The FIFO never reads
//     the consumer's store.
//
// Deltas popped before Finish report isInInitialList true while the FIFO has not synced; the
// first replacement to finish sets the count HasSynced waits for to the queue positions left
// at that moment, as the first Replace does.
//
// While a replacement is open, Add, Update, Delete, Replace, Resync and BeginReplace of the
// FIFO fail with ErrReplaceInProgress; Pop, PopBatch and Close work as usual.
//
// A Replacement's methods are safe for concurrent use with the FIFO's, but the replacement
// itself is meant for one producer.
type Replacement[T any] struct {
	f *FIFO[T]
	// seen holds the keys added so far. Guarded by f.mu.
	seen map[string]struct{}
	// chunk (mode Atomic) is the newest ReplacedChunk of this replacement; Add appends to it
	// while it is still the last queued delta and not full. Guarded by f.mu.
	chunk *ReplacedChunkInfo[T]
}

// ErrReplacementEnded is returned by Replacement.Add and Replacement.Finish after Finish or
// Abort.
var ErrReplacementEnded = errors.New("deltafifo: the replacement has already ended")

// BeginReplace starts an incremental replacement; see Replacement. It fails with
// ErrReplaceInProgress if one is open already.
func (f *FIFO[T]) BeginReplace() (*Replacement[T], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.repl != nil {
		return nil, ErrReplaceInProgress
	}
	r := &Replacement[T]{f: f, seen: map[string]struct{}{}}
	f.repl = r
	return r, nil
}

// Add hands over one listed object: it is transformed and queued at once (see Replacement
// for the delta each mode queues). A failing key function or transformer fails the call with
// nothing queued for obj; the replacement stays open (the reflector then aborts it).
func (r *Replacement[T]) Add(obj T) error {
	f := r.f
	key, err := f.key(obj)
	if err != nil {
		return err
	}
	if obj, err = f.transformed(obj); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.repl != r {
		return ErrReplacementEnded
	}
	r.seen[key] = struct{}{}
	switch f.mode {
	case Coalescing:
		f.appendLocked(key, Delta[T]{Type: Replaced, Object: obj})
	case InOrder:
		f.pushLocked(key, Delta[T]{Type: Replaced, Object: obj})
	case Atomic:
		if !r.appendToChunkLocked(key, obj) {
			return nil // a waiting Pop is woken when the chunk is full, or by Finish or Abort
		}
	}
	f.signalLocked()
	return nil
}

// appendToChunkLocked adds obj to the chunk at the end of the queue, or to a new one, and
// reports whether the chunk is now full.
func (r *Replacement[T]) appendToChunkLocked(key string, obj T) bool {
	f := r.f
	c := r.chunk
	if c == nil || len(c.Objects) >= f.chunkSize || f.items.len() == 0 || f.items.at(f.items.tail-1).d.Chunk != c {
		c = &ReplacedChunkInfo[T]{Objects: make([]T, 0, f.chunkSize), Keys: make([]string, 0, f.chunkSize)}
		r.chunk = c
		f.pushLocked("", Delta[T]{Type: ReplacedChunk, Chunk: c})
	}
	c.Objects = append(c.Objects, obj)
	c.Keys = append(c.Keys, key)
	return len(c.Objects) >= f.chunkSize
}

// Finish ends the replacement: it queues what Replace would have queued beyond the listed
// objects (tombstones, or in mode Atomic the ReplacedEnd delta) and, if this is the FIFO's
// first replacement and nothing was written before it, sets the count HasSynced waits for.
func (r *Replacement[T]) Finish(resourceVersion string) error {
	f := r.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.repl != r {
		return ErrReplacementEnded
	}
	f.repl = nil
	seen := r.seen
	r.seen, r.chunk = nil, nil
	switch f.mode {
	case Coalescing:
		f.finishCoalescingLocked(seen)
	case InOrder:
		f.queueTombstonesInOrderLocked(seen)
	case Atomic:
		f.pushLocked("", Delta[T]{Type: ReplacedEnd, End: &ReplacedEndInfo{ResourceVersion: resourceVersion, Keys: seen}})
	}
	f.afterReplaceLocked(f.lenLocked())
	return nil
}

// Abort ends the replacement without any deletion: what was added stays queued (those are
// genuine states of the objects), nothing else is queued, and HasSynced is not affected. It
// does nothing after Finish or a previous Abort.
func (r *Replacement[T]) Abort() {
	f := r.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.repl != r {
		return
	}
	f.repl = nil
	r.seen, r.chunk = nil, nil
	f.signalLocked()
}

// finishCoalescingLocked queues the tombstones of a replacement in mode Coalescing: queued
// keys not seen (with their newest queued object), then known keys neither queued nor seen.
func (f *FIFO[T]) finishCoalescingLocked(seen map[string]struct{}) {
	for s := f.slots.head; s != f.slots.tail; s++ {
		sl := f.slots.at(s)
		if _, ok := seen[sl.key]; ok {
			continue
		}
		f.appendLocked(sl.key, Delta[T]{Type: Deleted, Object: sl.deltas.Newest().Object, FinalStateUnknown: true})
	}
	if f.known == nil {
		return
	}
	for _, k := range f.known.ListKeys() {
		if _, ok := seen[k]; ok {
			continue
		}
		if _, queued := f.index[k]; queued {
			continue
		}
		obj, _, _ := f.known.GetByKey(k) // zero object if unknown: a tombstone without state
		f.appendLocked(k, Delta[T]{Type: Deleted, Object: obj, FinalStateUnknown: true})
	}
}

// queueTombstonesInOrderLocked queues the tombstones of a replacement in mode InOrder, listed
// being the keys the list had: queued keys not listed whose newest delta is not a delete
// (with that delta's object), in order of first appearance, then known keys neither queued
// nor listed. Both the whole-list Replace and an incremental Replacement's Finish use it.
func (f *FIFO[T]) queueTombstonesInOrderLocked(listed map[string]struct{}) {
	// The newest queued delta of every unlisted queued key.
	last := map[string]uint64{}
	var order []string
	for s := f.items.head; s != f.items.tail; s++ {
		it := f.items.at(s)
		if it.d.Type.keyless() {
			continue
		}
		if _, ok := listed[it.key]; ok {
			continue
		}
		if _, dup := last[it.key]; !dup {
			order = append(order, it.key)
		}
		last[it.key] = s
	}
	for _, k := range order {
		if d := f.items.at(last[k]).d; d.Type != Deleted {
			f.pushLocked(k, Delta[T]{Type: Deleted, Object: d.Object, FinalStateUnknown: true})
		}
	}
	if f.known == nil {
		return
	}
	for _, k := range f.known.ListKeys() {
		if _, ok := listed[k]; ok {
			continue
		}
		if _, queued := last[k]; queued {
			continue
		}
		obj, _, _ := f.known.GetByKey(k) // zero object if unknown: a tombstone without state
		f.pushLocked(k, Delta[T]{Type: Deleted, Object: obj, FinalStateUnknown: true})
	}
}
