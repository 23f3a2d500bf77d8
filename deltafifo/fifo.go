package deltafifo

import (
	"context"

	"github.com/informerkit/informerkit/indexer"
)

// Options are the optional settings of a FIFO (New).
type Options[T any] struct {
	// KnownObjects is the consumer's store. Default nil: Delete drops every delete of a key
	// that is not queued, Replace detects no deletions beyond the queued keys, and Resync does
	// nothing.
	KnownObjects KnownObjects[T]
	// Transform, if set, is applied to every object as it is enqueued — by Add, Update,
	// Delete, Replace and Relist.Add — but not to tombstones and Sync deltas, whose
	// objects come from the consumer's store and were transformed already. It may modify the
	// object in place and should be idempotent. An error fails the call and enqueues nothing.
	// Default nil: objects are queued as given.
	Transform func(T) (T, error)
}

// FIFO is client-go's DeltaFIFO, generic: one queue position per key, holding every delta
// the key received since it was last popped, oldest first; Pop hands over all of them at
// once, keys in the order they were first queued. Deletes of unknown keys are dropped, two
// consecutive deletes merge, and Replace and Resync consult KnownObjects. All methods are
// safe for concurrent use.
type FIFO[T any] struct {
	base[T]
	known KnownObjects[T]

	slots     seqRing[slot[T]]
	index     map[string]uint64 // key → sequence number in slots
	indexPeak int
	gen       uint64
	deltaPool Deltas[T] // during Replace: first deltas for new slots, carved from one block
}

// slot is a queue position of a FIFO: one key and its deltas.
type slot[T any] struct {
	key    string
	deltas Deltas[T]
	// gen is the Replace generation that last added a Replaced delta to this slot.
	gen uint64
}

// maxRetainedDeltas bounds the capacity of a slot's deltas slice kept for reuse.
const maxRetainedDeltas = 8

// New returns an empty FIFO whose keys keyFunc computes (for example
// indexer.MetaNamespaceKeyFunc). No option can be invalid; a nil keyFunc panics.
func New[T any](keyFunc indexer.KeyFunc[T], opts Options[T]) *FIFO[T] {
	f := &FIFO[T]{known: opts.KnownObjects, index: map[string]uint64{}}
	f.init(keyFunc, opts.Transform)
	// Start with a small queue, as client-go does, so that the first writes do not grow it.
	f.slots.resize(ringMinCap)
	return f
}

// Add enqueues an Added delta for obj. Add, Update, Delete, Replace and Resync fail with
// ErrReplaceInProgress while an incremental replacement (BeginReplace) is open.
func (f *FIFO[T]) Add(obj T) error { return f.enqueue(Added, obj) }

// Update enqueues an Updated delta for obj.
func (f *FIFO[T]) Update(obj T) error { return f.enqueue(Updated, obj) }

// Delete enqueues a Deleted delta for obj (its last state, FinalStateUnknown false). A
// delete of a key that is neither queued nor known to KnownObjects is dropped (it was
// presumably reported already, e.g. as a tombstone by a relist), and a delete right after a
// queued delete of the same key merges with it (the older is kept, unless the older is a
// tombstone).
func (f *FIFO[T]) Delete(obj T) error { return f.enqueue(Deleted, obj) }

func (f *FIFO[T]) enqueue(t DeltaType, obj T) error {
	key, obj, err := f.prepare(obj)
	if err != nil {
		return err
	}
	d := f.newDelta(t, obj)
	f.mu.Lock()
	if f.repl != nil {
		f.mu.Unlock()
		return ErrReplaceInProgress
	}
	f.markPopulatedLocked()
	if t == Deleted && !f.deletableLocked(key) {
		f.mu.Unlock()
		return nil
	}
	f.appendLocked(key, d)
	f.signalLocked(f.slots.len())
	f.mu.Unlock()
	return nil
}

// deletableLocked reports whether a Delete of key must be queued: the key is queued, or
// KnownObjects has it (or cannot tell).
func (f *FIFO[T]) deletableLocked(key string) bool {
	if _, queued := f.index[key]; queued {
		return true
	}
	if f.known == nil {
		return false
	}
	_, exists, err := f.known.GetByKey(key)
	return err != nil || exists
}

// appendLocked adds d to key's slot, creating the slot at the back of the queue if the key is
// not queued, and merging two consecutive deletes.
func (f *FIFO[T]) appendLocked(key string, d Delta[T]) *slot[T] {
	if s, ok := f.index[key]; ok {
		sl := f.slots.at(s)
		if n := len(sl.deltas); d.Type == Deleted && n > 0 && sl.deltas[n-1].Type == Deleted {
			if sl.deltas[n-1].FinalStateUnknown {
				sl.deltas[n-1] = d
			}
			return sl
		}
		sl.deltas = append(sl.deltas, d)
		return sl
	}
	s := f.slots.pushBack()
	sl := f.slots.at(s)
	sl.key = key
	if cap(sl.deltas) == 0 && len(f.deltaPool) > 0 {
		sl.deltas = f.deltaPool[:0:1]
		f.deltaPool = f.deltaPool[1:]
	}
	sl.deltas = append(sl.deltas[:0], d)
	sl.gen = 0
	f.index[key] = s
	if len(f.index) > f.indexPeak {
		f.indexPeak = len(f.index)
	}
	return sl
}

// Resync queues a Sync delta, carrying the known object untransformed, for every key of
// KnownObjects that has nothing queued; without KnownObjects it does nothing.
func (f *FIFO[T]) Resync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.repl != nil {
		return ErrReplaceInProgress
	}
	if f.known == nil {
		return nil
	}
	queueKnown(f.known, Sync, f.queuedLocked, f.appendDeltaLocked)
	f.signalLocked(f.slots.len())
	return nil
}

// queuedLocked reports whether key has a queue position.
func (f *FIFO[T]) queuedLocked(key string) bool {
	_, queued := f.index[key]
	return queued
}

// appendDeltaLocked is appendLocked for queueKnown.
func (f *FIFO[T]) appendDeltaLocked(key string, d Delta[T]) { f.appendLocked(key, d) }

// Pop waits until a key is queued and calls process with every delta queued for the oldest
// key, under the FIFO's lock, so that process can update the consumer's store without racing
// with Delete, Replace and Resync, which read it. process must not call the FIFO's methods,
// and must not keep the Deltas slice after returning (keep a Clone if needed; the objects
// may be kept). isInInitialList is true until HasSynced would be.
//
// If process returns nil, or an error not made by Requeue, the deltas are consumed and Pop
// returns that error. If it returns an error made by Requeue, the deltas go back to the front
// of the queue and Pop returns the *RequeueError.
//
// When the queue is empty Pop waits; it returns ctx.Err() if ctx is done (also when it is done
// on entry) and ErrClosed once the FIFO is closed. Close does not discard queued deltas: Pop
// keeps handing them out and reports ErrClosed when none are left.
func (f *FIFO[T]) Pop(ctx context.Context, process func(deltas Deltas[T], isInInitialList bool) error) error {
	return f.pop(ctx, 1, process, nil)
}

// PopBatch is Pop for the first maxKeys keys of the queue at once, under one lock
// acquisition: process gets one Deltas per key, oldest first. A batch never mixes deltas of
// the initial list with later ones. Requeue puts the whole batch back. maxKeys < 1 means 1.
// The batch slice is reused: do not keep it.
func (f *FIFO[T]) PopBatch(ctx context.Context, maxKeys int, process func(batch []Deltas[T], isInInitialList bool) error) error {
	return f.pop(ctx, max(maxKeys, 1), nil, process)
}

func (f *FIFO[T]) pop(ctx context.Context, limit int, one func(Deltas[T], bool) error, batch func([]Deltas[T], bool) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	isInInitialList, limit, err := f.popWaitLocked(ctx, f.slots.len, limit)
	if err != nil {
		return err
	}
	n := min(limit, f.slots.len())
	start := f.slots.head
	for s := start; s != start+uint64(n); s++ {
		delete(f.index, f.slots.at(s).key)
	}
	f.slots.head += uint64(n)
	err = f.handOut(n, func(i int) Deltas[T] { return f.slots.at(start + uint64(i)).deltas }, isInInitialList, one, batch)
	if isRequeue(err) {
		// Nothing could touch the ring while process ran (the lock was held): the slots are
		// intact behind head.
		f.slots.head = start
		for s := start; s != start+uint64(n); s++ {
			f.index[f.slots.at(s).key] = s
		}
	} else {
		for s := start; s != start+uint64(n); s++ {
			sl := f.slots.at(s)
			sl.key = ""
			clear(sl.deltas)
			if cap(sl.deltas) > maxRetainedDeltas {
				sl.deltas = nil
			} else {
				sl.deltas = sl.deltas[:0]
			}
		}
		if f.slots.len() == 0 && f.indexPeak > ringShrinkMin {
			f.index, f.indexPeak = map[string]uint64{}, 0
		}
		f.slots.shrink()
	}
	f.popEndLocked(n, err, f.slots.len())
	return err
}

// Len returns the number of queued keys.
func (f *FIFO[T]) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.slots.len()
}

// ListKeys returns the queued keys in queue order.
func (f *FIFO[T]) ListKeys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, f.slots.len())
	for s := f.slots.head; s != f.slots.tail; s++ {
		out = append(out, f.slots.at(s).key)
	}
	return out
}

// List returns the newest queued object of every queued key, in the order of ListKeys (the
// zero value for a tombstone without state).
func (f *FIFO[T]) List() []T {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]T, 0, f.slots.len())
	for s := f.slots.head; s != f.slots.tail; s++ {
		out = append(out, f.slots.at(s).deltas.Newest().Object)
	}
	return out
}

// GetByKey returns a copy of the deltas queued for key, oldest first.
func (f *FIFO[T]) GetByKey(key string) (deltas Deltas[T], exists bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.index[key]
	if !ok {
		return nil, false, nil
	}
	return f.slots.at(s).deltas.Clone(), true, nil
}
