package deltafifo

import "errors"

// This file holds the relists: the whole-list Replace of each layout and the incremental
// Relist they share.

// Replace tells the FIFO that list is the complete current state (a relist), observed at
// resourceVersion. It queues a Replaced delta for every object (first), then a tombstone
// (Deleted, FinalStateUnknown) for every key that is missing from list but queued (carrying
// the newest queued object) or known to KnownObjects (carrying the known object). The FIFO
// keeps the objects of list, not the slice.
//
// The first Replace, unless an Add, Update or Delete came earlier, sets the number of queue
// positions HasSynced waits to see popped. A failing key function or transformer fails the
// call with nothing queued.
func (f *FIFO[T]) Replace(list []T, resourceVersion string) error {
	keys, objs, err := f.prepareList(list)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.repl != nil {
		return ErrReplaceInProgress
	}
	// Size the queue for the list at once, and give new keys their first delta from one
	// block instead of one allocation each.
	if len(f.index) == 0 && len(keys) > len(f.slots.buf) {
		f.index = make(map[string]uint64, len(keys))
	}
	f.slots.reserve(len(keys))
	f.deltaPool = make(Deltas[T], len(keys))
	defer func() { f.deltaPool = nil }()
	f.gen++
	gen := f.gen
	distinct := 0
	for i, key := range keys {
		sl := f.appendLocked(key, Delta[T]{Type: Replaced, Object: objs[i]})
		if sl.gen != gen {
			sl.gen = gen
			distinct++
		}
	}
	// Queued keys missing from the list get a tombstone with their newest object. Appending
	// to an existing slot does not move the ring, so the scan can append as it goes.
	deletions := 0
	for s := f.slots.head; s != f.slots.tail; s++ {
		sl := f.slots.at(s)
		if sl.gen == gen {
			continue
		}
		deletions++
		f.appendLocked(sl.key, Delta[T]{Type: Deleted, Object: sl.deltas.Newest().Object, FinalStateUnknown: true})
	}
	// Known keys that are not queued are, after the loops above, exactly the known keys
	// missing from the list.
	queueKnown(f.known, Deleted, f.queuedLocked, func(k string, d Delta[T]) {
		deletions++
		f.appendLocked(k, d)
	})
	f.afterReplaceLocked(distinct + deletions)
	return nil
}

// prepareList computes the keys of list and applies the transformer, before the lock is
// taken. Without a transformer objs is list itself.
func (b *base[T]) prepareList(list []T) (keys []string, objs []T, err error) {
	keys = make([]string, len(list))
	objs = list
	if b.transform != nil {
		objs = make([]T, len(list))
	}
	for i, obj := range list {
		if keys[i], err = b.key(obj); err != nil {
			return nil, nil, err
		}
		if b.transform != nil {
			if objs[i], err = b.transformed(obj); err != nil {
				return nil, nil, err
			}
		}
	}
	return keys, objs, nil
}

// Replace tells the FIFO that list is the complete current state (a relist), observed at
// resourceVersion.
//
// A RealFIFO queues a tombstone (Deleted, FinalStateUnknown) for every key missing from
// list that is queued with a newest delta other than a delete (carrying that delta's object)
// or known to KnownObjects (carrying the known object), then a Replaced delta for every
// object; it keeps the objects of list, not the slice. An AtomicFIFO queues one ReplacedAll
// delta; without a transformer that delta carries list itself: the caller must not modify it
// afterwards.
//
// The first Replace, unless an Add, Update or Delete came earlier, sets the number of queue
// positions HasSynced waits to see popped. A failing key function or transformer fails the
// call with nothing queued.
func (f *seq[T]) Replace(list []T, resourceVersion string) error {
	if f.atomic {
		objs := list
		if f.transform != nil {
			objs = make([]T, len(list))
			for i, obj := range list {
				var err error
				if objs[i], err = f.transformed(obj); err != nil {
					return err
				}
			}
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.repl != nil {
			return ErrReplaceInProgress
		}
		f.pushLocked("", Delta[T]{Type: ReplacedAll, All: &ReplacedAllInfo[T]{ResourceVersion: resourceVersion, Objects: objs}})
		f.afterReplaceLocked(f.items.len())
		return nil
	}
	keys, objs, err := f.prepareList(list)
	if err != nil {
		return err
	}
	listed := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		listed[k] = struct{}{}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.repl != nil {
		return ErrReplaceInProgress
	}
	f.items.reserve(len(keys))
	f.queueTombstonesLocked(listed)
	for i, k := range keys {
		f.pushLocked(k, Delta[T]{Type: Replaced, Object: objs[i]})
	}
	f.afterReplaceLocked(f.items.len())
	return nil
}

// Relist is an incremental replacement: a relist handed to the FIFO object by object
// (Add), as a reflector decodes it, instead of as one slice (Replace). Begin one with
// BeginReplace and end it with exactly one of Finish or Abort.
//
// Everything observable once the queue has been drained after Finish is what
// Replace(list, resourceVersion) at the time of Finish would have produced, for list the
// objects given to Add (and the consumer's own objects of the keys given to Keep): the
// consumer's store ends up with exactly the listed objects, keys that were queued or known
// but not listed get tombstones (Deleted, FinalStateUnknown), the first replacement decides
// HasSynced like the first Replace, and the Transformer runs on every object given to Add.
//
// Nothing reaches the queue before Finish, so a list that fails part-way (Abort) changes
// nothing: the consumer's store and its handlers see none of it, as with client-go, which
// applies nothing from a failed list. Add transforms each object at once and holds it, in
// chunks, until Finish; Keep records a key whose listed object the consumer already holds
// unchanged (the same resourceVersion) and holds nothing. So a relist holds the objects that
// changed since the consumer's state and the set of listed keys, never the whole list
// before its transform, and never two copies of an unchanged object.
//
// What Finish queues, per layout:
//   - FIFO: a Replaced delta per added object in its key's queue position; then a tombstone
//     for every queued key neither added nor kept (carrying its newest queued object), then
//     for every key of KnownObjects neither queued, added nor kept (the known object).
//   - RealFIFO: a Replaced delta per added object; then the tombstones (queued keys neither
//     added nor kept whose newest delta is not a delete, then known keys neither queued,
//     added nor kept). Unlike Replace, which queues tombstones first, they come after the
//     listed objects; no key gets both, so the consumer's final state is the same.
//   - AtomicFIFO: the added objects in ReplacedChunk deltas (up to
//     AtomicFIFOOptions.ChunkSize objects each, with their keys), then a ReplacedEnd delta
//     carrying the resourceVersion and the set of added and kept keys, which tells the
//     consumer to delete every key it has that is not in the set. The FIFO never reads the
//     consumer's store.
//
// The first replacement to finish sets the count HasSynced waits for to the queue positions
// left at that moment, as the first Replace does.
//
// While a replacement is open, Add, Update, Delete, Replace, Resync and BeginReplace of the
// FIFO fail with ErrReplaceInProgress; Pop, PopBatch and Close work as usual.
//
// A Relist's methods are safe for concurrent use with the FIFO's, but the replacement
// itself is meant for one producer.
type Relist[T any] struct {
	b *base[T]
	l layout[T]
	// seen holds the keys added or kept so far. Guarded by b.mu.
	seen map[string]struct{}
	// staged holds the added objects, transformed, until Finish. Guarded by b.mu.
	staged []*ReplacedChunkInfo[T]
	size   int // objects per staged chunk
}

// layout is what a Relist needs of the FIFO it fills.
type layout[T any] interface {
	// replaceQueueLocked queues the staged objects of a finished replacement.
	replaceQueueLocked(staged []*ReplacedChunkInfo[T])
	// replaceFinishLocked queues what ends the replacement.
	replaceFinishLocked(seen map[string]struct{}, resourceVersion string)
	// lenLocked is the number of queue positions.
	lenLocked() int
	// stagedChunkSize is the number of objects per staged chunk.
	stagedChunkSize() int
}

func (f *FIFO[T]) lenLocked() int { return f.slots.len() }
func (f *seq[T]) lenLocked() int  { return f.items.len() }

func (f *FIFO[T]) stagedChunkSize() int { return DefaultChunkSize }
func (f *seq[T]) stagedChunkSize() int {
	if f.atomic {
		return f.chunkSize
	}
	return DefaultChunkSize
}

// ErrRelistEnded is returned by Relist.Add, Relist.Keep and Relist.Finish after Finish or
// Abort.
var ErrRelistEnded = errors.New("deltafifo: the relist has already ended")

// BeginReplace starts an incremental replacement; see Relist. It fails with
// ErrReplaceInProgress if one is open already.
func (f *FIFO[T]) BeginReplace() (*Relist[T], error) { return f.beginReplace(f) }

// BeginReplace starts an incremental replacement; see Relist. It fails with
// ErrReplaceInProgress if one is open already.
func (f *seq[T]) BeginReplace() (*Relist[T], error) { return f.beginReplace(f) }

func (b *base[T]) beginReplace(l layout[T]) (*Relist[T], error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.repl != nil {
		return nil, ErrReplaceInProgress
	}
	r := &Relist[T]{b: b, l: l, seen: map[string]struct{}{}, size: max(l.stagedChunkSize(), 1)}
	b.repl = r
	return r, nil
}

// Add hands over one listed object: it is transformed at once and held until Finish queues
// it (see Relist). A failing key function or transformer fails the call with nothing held
// for obj; the replacement stays open (the reflector then aborts it).
func (r *Relist[T]) Add(obj T) error {
	b := r.b
	key, obj, err := b.prepare(obj)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.repl != r {
		return ErrRelistEnded
	}
	r.seen[key] = struct{}{}
	var c *ReplacedChunkInfo[T]
	if n := len(r.staged); n > 0 && len(r.staged[n-1].Objects) < r.size {
		c = r.staged[n-1]
	} else {
		c = &ReplacedChunkInfo[T]{Objects: make([]T, 0, r.size), Keys: make([]string, 0, r.size)}
		r.staged = append(r.staged, c)
	}
	c.Objects = append(c.Objects, obj)
	c.Keys = append(c.Keys, key)
	return nil
}

// Keep hands over one listed key whose object the consumer already holds unchanged (the
// caller knows its store: the same resourceVersion): nothing is held or queued for it, and
// Finish leaves the consumer's object as it is, as a Replaced delta of an identical object
// would have.
func (r *Relist[T]) Keep(key string) error {
	b := r.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.repl != r {
		return ErrRelistEnded
	}
	r.seen[key] = struct{}{}
	return nil
}

func (f *FIFO[T]) replaceQueueLocked(staged []*ReplacedChunkInfo[T]) {
	for _, c := range staged {
		for i, obj := range c.Objects {
			f.appendLocked(c.Keys[i], Delta[T]{Type: Replaced, Object: obj})
		}
	}
}

func (f *seq[T]) replaceQueueLocked(staged []*ReplacedChunkInfo[T]) {
	for _, c := range staged {
		if f.atomic {
			f.pushLocked("", Delta[T]{Type: ReplacedChunk, Chunk: c})
			continue
		}
		for i, obj := range c.Objects {
			f.pushLocked(c.Keys[i], Delta[T]{Type: Replaced, Object: obj})
		}
	}
}

// Finish ends the replacement: it queues the added objects, then what Replace would have
// queued beyond the listed objects (tombstones, or in an AtomicFIFO the ReplacedEnd delta)
// and, if this is the FIFO's first replacement and nothing was written before it, sets the
// count HasSynced waits for.
func (r *Relist[T]) Finish(resourceVersion string) error {
	b := r.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.repl != r {
		return ErrRelistEnded
	}
	b.repl = nil
	seen, staged := r.seen, r.staged
	r.seen, r.staged = nil, nil
	r.l.replaceQueueLocked(staged)
	r.l.replaceFinishLocked(seen, resourceVersion)
	b.afterReplaceLocked(r.l.lenLocked())
	return nil
}

func (f *seq[T]) replaceFinishLocked(seen map[string]struct{}, resourceVersion string) {
	if f.atomic {
		f.pushLocked("", Delta[T]{Type: ReplacedEnd, End: &ReplacedEndInfo{ResourceVersion: resourceVersion, Keys: seen}})
		return
	}
	f.queueTombstonesLocked(seen)
}

// Abort ends the replacement without queuing anything: the objects held are dropped, the
// consumer sees nothing of the failed list, and HasSynced is not affected. It does nothing
// after Finish or a previous Abort.
func (r *Relist[T]) Abort() {
	b := r.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.repl != r {
		return
	}
	b.repl = nil
	r.seen, r.staged = nil, nil
}

// replaceFinishLocked queues the tombstones of a replacement of a FIFO: queued keys not seen
// (with their newest queued object), then known keys neither queued nor seen.
func (f *FIFO[T]) replaceFinishLocked(seen map[string]struct{}, _ string) {
	for s := f.slots.head; s != f.slots.tail; s++ {
		sl := f.slots.at(s)
		if _, ok := seen[sl.key]; ok {
			continue
		}
		f.appendLocked(sl.key, Delta[T]{Type: Deleted, Object: sl.deltas.Newest().Object, FinalStateUnknown: true})
	}
	queueKnown(f.known, Deleted, func(k string) bool {
		_, ok := seen[k]
		return ok || f.queuedLocked(k)
	}, f.appendDeltaLocked)
}

// queueTombstonesLocked queues the tombstones of a relist of a RealFIFO, listed being the
// keys the list had: queued keys not listed whose newest delta is not a delete (with that
// delta's object), in order of first appearance, then known keys neither queued nor listed.
// Both the whole-list Replace and an incremental Relist's Finish use it.
func (f *seq[T]) queueTombstonesLocked(listed map[string]struct{}) {
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
	queueKnown(f.known, Deleted, func(k string) bool {
		_, isListed := listed[k]
		_, queued := last[k]
		return isListed || queued
	}, f.pushLocked)
}
