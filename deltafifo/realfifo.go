package deltafifo

import (
	"context"

	"github.com/informerkit/informerkit/indexer"
)

// RealFIFOOptions are the optional settings of a RealFIFO (NewRealFIFO).
type RealFIFOOptions[T any] struct {
	// KnownObjects is the consumer's store. Default nil: Replace detects no deletions beyond
	// the queued keys, and Resync does nothing.
	KnownObjects KnownObjects[T]
	// Transform: see Options.Transform.
	Transform func(T) (T, error)
}

// AtomicFIFOOptions are the optional settings of an AtomicFIFO (NewAtomicFIFO). There is no
// KnownObjects: an AtomicFIFO never reads the consumer's store.
type AtomicFIFOOptions[T any] struct {
	// Transform: see Options.Transform.
	Transform func(T) (T, error)
	// UnlockWhileProcessing releases the FIFO's lock while a process function runs, so that
	// the producer is never blocked by a slow consumer. Pops are then serialised by the FIFO
	// itself: a second concurrent Pop waits for the first. Default false: process runs under
	// the lock, as in the other layouts.
	UnlockWhileProcessing bool
	// ChunkSize is the largest number of objects an incremental replacement (BeginReplace)
	// puts in one ReplacedChunk delta. Default (0 or less): DefaultChunkSize. A chunk is
	// handed to Pop when it is full, or earlier if the consumer asks while the producer is
	// still filling it.
	ChunkSize int
}

// DefaultChunkSize is the default of AtomicFIFOOptions.ChunkSize: large enough that the
// per-chunk cost (one delta, one Pop) disappears next to the objects', small enough that the
// objects in flight between the reflector and the consumer (about two chunks: one being
// applied, one being filled) stay a tiny part of a cache.
const DefaultChunkSize = 64

// RealFIFO is client-go's RealFIFO without atomic events: every delta is its own queue
// position, in the exact order received; nothing is merged and every Delete is queued.
// Replace queues tombstones then one Replaced per object; Resync consults KnownObjects. All
// methods are safe for concurrent use.
type RealFIFO[T any] struct{ seq[T] }

// AtomicFIFO is client-go's RealFIFO with atomic events: deltas in arrival order as in a
// RealFIFO, but Replace queues a single ReplacedAll delta carrying the whole list, Resync a
// single SyncAll delta, an incremental replacement ReplacedChunk and ReplacedEnd deltas, and
// the FIFO never reads the consumer's store: the consumer diffs against it (package
// informer does, on its cache). It is the only layout whose
// processing may run without the FIFO's lock (AtomicFIFOOptions.UnlockWhileProcessing). All
// methods are safe for concurrent use.
type AtomicFIFO[T any] struct{ seq[T] }

// NewRealFIFO returns an empty RealFIFO whose keys keyFunc computes. No option can be
// invalid; a nil keyFunc panics.
func NewRealFIFO[T any](keyFunc indexer.KeyFunc[T], opts RealFIFOOptions[T]) *RealFIFO[T] {
	f := &RealFIFO[T]{}
	f.seq.init(keyFunc, opts.Transform)
	f.known = opts.KnownObjects
	return f
}

// NewAtomicFIFO returns an empty AtomicFIFO whose keys keyFunc computes. No option can be
// invalid; a nil keyFunc panics.
func NewAtomicFIFO[T any](keyFunc indexer.KeyFunc[T], opts AtomicFIFOOptions[T]) *AtomicFIFO[T] {
	f := &AtomicFIFO[T]{}
	f.seq.init(keyFunc, opts.Transform)
	f.atomic = true
	f.chunkSize = opts.ChunkSize
	if f.chunkSize <= 0 {
		f.chunkSize = DefaultChunkSize
	}
	if opts.UnlockWhileProcessing {
		f.unlocked = true
		f.popSem = make(chan struct{}, 1)
	}
	return f
}

// seq is the layout of RealFIFO and AtomicFIFO: one queue position per delta, in arrival
// order. atomic selects AtomicFIFO's relists and resyncs.
type seq[T any] struct {
	base[T]
	known     KnownObjects[T] // RealFIFO only
	atomic    bool
	unlocked  bool          // AtomicFIFO with UnlockWhileProcessing
	popSem    chan struct{} // serialises Pops when unlocked
	chunkSize int           // AtomicFIFO

	items     seqRing[item[T]]
	batchKeys map[string]struct{}
	popBuf    Deltas[T] // the deltas handed to process
	popKeys   []string  // their keys, for a requeue
}

// item is a queue position of a seq: one delta and its key.
type item[T any] struct {
	key string
	d   Delta[T]
}

func (f *seq[T]) init(keyFunc indexer.KeyFunc[T], transform func(T) (T, error)) {
	f.base.init(keyFunc, transform)
	// Start with a small queue, as client-go does, so that the first writes do not grow it.
	f.items.resize(ringMinCap)
}

// Add enqueues an Added delta for obj. Add, Update, Delete, Replace and Resync fail with
// ErrReplaceInProgress while an incremental replacement (BeginReplace) is open.
func (f *seq[T]) Add(obj T) error { return f.enqueue(Added, obj) }

// Update enqueues an Updated delta for obj.
func (f *seq[T]) Update(obj T) error { return f.enqueue(Updated, obj) }

// Delete enqueues a Deleted delta for obj (its last state, FinalStateUnknown false). Every
// delete is queued.
func (f *seq[T]) Delete(obj T) error { return f.enqueue(Deleted, obj) }

func (f *seq[T]) enqueue(t DeltaType, obj T) error {
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
	f.pushLocked(key, d)
	f.signalLocked(f.items.len())
	f.mu.Unlock()
	return nil
}

// pushLocked appends one queue position.
func (f *seq[T]) pushLocked(key string, d Delta[T]) {
	it := f.items.at(f.items.pushBack())
	it.key, it.d = key, d
}

// Resync queues a Sync delta, carrying the known object untransformed, for every key of
// KnownObjects that has nothing queued (RealFIFO; without KnownObjects it does nothing), or
// one SyncAll delta unless the newest queued delta is already one (AtomicFIFO).
func (f *seq[T]) Resync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.repl != nil {
		return ErrReplaceInProgress
	}
	if f.atomic {
		if n := f.items.len(); n == 0 || f.items.at(f.items.tail-1).d.Type != SyncAll {
			f.pushLocked("", Delta[T]{Type: SyncAll})
		}
		f.signalLocked(f.items.len())
		return nil
	}
	if f.known == nil {
		return nil
	}
	queued := make(map[string]struct{}, f.items.len())
	for s := f.items.head; s != f.items.tail; s++ {
		queued[f.items.at(s).key] = struct{}{}
	}
	queueKnown(f.known, Sync, func(k string) bool { _, isQueued := queued[k]; return isQueued },
		func(k string, d Delta[T]) { f.pushLocked(k, d); queued[k] = struct{}{} })
	f.signalLocked(f.items.len())
	return nil
}

// Pop waits until a delta is queued and calls process with the oldest one alone, under the
// FIFO's lock (unless AtomicFIFOOptions.UnlockWhileProcessing), so that process can update
// the consumer's store without racing with Replace and Resync, which read it. process must
// not call the FIFO's methods, and must not keep the Deltas slice after returning (keep a
// Clone if needed; the objects may be kept). isInInitialList is true until HasSynced would
// be.
//
// If process returns nil, or an error not made by Requeue, the delta is consumed and Pop
// returns that error. If it returns an error made by Requeue, the delta goes back to the
// front of the queue and Pop returns the *RequeueError.
//
// When the queue is empty Pop waits; it returns ctx.Err() if ctx is done (also when it is done
// on entry) and ErrClosed once the FIFO is closed. Close does not discard queued deltas: Pop
// keeps handing them out and reports ErrClosed when none are left.
func (f *seq[T]) Pop(ctx context.Context, process func(deltas Deltas[T], isInInitialList bool) error) error {
	return f.pop(ctx, 1, process, nil)
}

// PopBatch is Pop for up to maxKeys deltas at once, under one lock acquisition: process gets
// one Deltas (of one delta) per key, all keys distinct, oldest first. The batch ends before
// the first delta whose key is already in it, and a ReplacedAll, SyncAll, ReplacedChunk or
// ReplacedEnd delta is always handed out alone. A batch never mixes deltas of the initial
// list with later ones. Requeue puts the whole batch back. maxKeys < 1 means 1. The batch
// slice is reused: do not keep it.
func (f *seq[T]) PopBatch(ctx context.Context, maxKeys int, process func(batch []Deltas[T], isInInitialList bool) error) error {
	return f.pop(ctx, max(maxKeys, 1), nil, process)
}

func (f *seq[T]) pop(ctx context.Context, limit int, one func(Deltas[T], bool) error, batch func([]Deltas[T], bool) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if f.unlocked {
		select {
		case f.popSem <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		defer func() { <-f.popSem }()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	isInInitialList, limit, err := f.popWaitLocked(ctx, f.items.len, limit)
	if err != nil {
		return err
	}

	f.popBuf = f.popBuf[:0]
	if limit > 1 && f.batchKeys == nil {
		f.batchKeys = map[string]struct{}{}
	}
	for s := f.items.head; s != f.items.tail && len(f.popBuf) < limit; s++ {
		it := f.items.at(s)
		if it.d.Type.keyless() {
			if len(f.popBuf) == 0 {
				f.popBuf = append(f.popBuf, it.d)
			}
			break
		}
		if limit > 1 {
			if _, dup := f.batchKeys[it.key]; dup {
				break
			}
			f.batchKeys[it.key] = struct{}{}
		}
		f.popBuf = append(f.popBuf, it.d)
	}
	if limit > 1 {
		clear(f.batchKeys)
	}
	n := len(f.popBuf)
	// Keep the keys for a requeue; clear the ring slots so they retain nothing.
	start := f.items.head
	f.popKeys = f.popKeys[:0]
	for i := range n {
		it := f.items.at(start + uint64(i))
		f.popKeys = append(f.popKeys, it.key)
		*it = item[T]{}
	}
	f.items.head += uint64(n)

	if f.unlocked {
		f.mu.Unlock()
	}
	err = f.handOut(n, func(i int) Deltas[T] { return f.popBuf[i : i+1 : i+1] }, isInInitialList, one, batch)
	if f.unlocked {
		f.mu.Lock()
	}
	if isRequeue(err) {
		for i := n - 1; i >= 0; i-- {
			it := f.items.at(f.items.pushFront())
			it.key, it.d = f.popKeys[i], f.popBuf[i]
		}
	}
	clear(f.popBuf)
	clear(f.popKeys)
	f.items.shrink()
	f.popEndLocked(n, err, f.items.len())
	return err
}

// Len returns the number of queued deltas.
func (f *seq[T]) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.items.len()
}

// ListKeys returns the keys with queued deltas, each once, in order of first appearance.
// ReplacedAll, SyncAll, ReplacedChunk and ReplacedEnd deltas have no key.
func (f *seq[T]) ListKeys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	f.eachKeyLocked(func(key string, _ []uint64) { out = append(out, key) })
	return out
}

// eachKeyLocked calls fn, in order of first appearance, for every queued key with the
// sequence numbers of its deltas.
func (f *seq[T]) eachKeyLocked(fn func(key string, seqs []uint64)) {
	byKey := map[string][]uint64{}
	var order []string
	for s := f.items.head; s != f.items.tail; s++ {
		it := f.items.at(s)
		if it.d.Type.keyless() {
			continue
		}
		if _, seen := byKey[it.key]; !seen {
			order = append(order, it.key)
		}
		byKey[it.key] = append(byKey[it.key], s)
	}
	for _, k := range order {
		fn(k, byKey[k])
	}
}

// List returns the newest queued object of every queued key, in the order of ListKeys (the
// zero value for a tombstone without state).
func (f *seq[T]) List() []T {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []T
	f.eachKeyLocked(func(_ string, seqs []uint64) {
		out = append(out, f.items.at(seqs[len(seqs)-1]).d.Object)
	})
	return out
}

// GetByKey returns a copy of the deltas queued for key, oldest first.
func (f *seq[T]) GetByKey(key string) (deltas Deltas[T], exists bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := f.items.head; s != f.items.tail; s++ {
		if it := f.items.at(s); it.key == key && !it.d.Type.keyless() {
			deltas = append(deltas, it.d)
		}
	}
	return deltas, len(deltas) > 0, nil
}
