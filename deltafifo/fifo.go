package deltafifo

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/informerkit/informerkit/indexer"
)

// KnownObjects is the consumer's view of the objects it already has: the FIFO asks it which
// keys exist (Delete in mode Coalescing, Replace, Resync) and for their last state
// (tombstones, Sync deltas). An indexer.Indexer[T] satisfies it.
type KnownObjects[T any] interface {
	ListKeys() []string
	GetByKey(key string) (item T, exists bool, err error)
}

// Options configures a FIFO. KeyFunction is required; everything else is optional.
type Options[T any] struct {
	// KeyFunction computes the key of an object, e.g. indexer.MetaNamespaceKeyFunc.
	KeyFunction indexer.KeyFunc[T]
	// KnownObjects is the consumer's store. Without it, Delete (mode Coalescing) drops every
	// delete of a key that is not queued, Replace detects no deletions beyond the queued
	// keys, and Resync does nothing. It must be nil in mode Atomic.
	KnownObjects KnownObjects[T]
	// Transformer, if set, is applied to every object as it is enqueued — by Add, Update,
	// Delete and Replace — but not to tombstones and Sync deltas, whose objects come from
	// the consumer's store and were transformed already. It may modify the object in place
	// and should be idempotent. An error fails the call and enqueues nothing.
	Transformer func(T) (T, error)
	// Mode selects the queueing discipline; the zero value is Coalescing.
	Mode Mode
	// UnlockWhileProcessing (mode Atomic only) releases the FIFO's lock while a process
	// function runs, so that the producer is never blocked by a slow consumer. Pops are then
	// serialised by the FIFO itself: a second concurrent Pop waits for the first.
	UnlockWhileProcessing bool
	// ChunkSize (mode Atomic only) is the largest number of objects an incremental
	// replacement (BeginReplace) puts in one ReplacedChunk delta; default DefaultChunkSize.
	// A chunk is handed to Pop when it is full, or earlier if the consumer asks while the
	// producer is still filling it.
	ChunkSize int
}

// DefaultChunkSize is the default of Options.ChunkSize: large enough that the per-chunk cost
// (one delta, one Pop) disappears next to the objects', small enough that the objects in
// flight between the reflector and the consumer (about two chunks: one being applied, one
// being filled) stay a tiny part of a cache.
const DefaultChunkSize = 64

// ErrReplaceInProgress is returned by BeginReplace, Add, Update, Delete, Replace and Resync
// while an incremental replacement is open (between BeginReplace and Finish or Abort): the
// reflector never writes anything else during a list, and a write in the middle of one
// would be ordered against the list in no meaningful way.
var ErrReplaceInProgress = errors.New("deltafifo: an incremental replacement is in progress")

// slot is a queue position of mode Coalescing: one key and its deltas.
type slot[T any] struct {
	key    string
	deltas Deltas[T]
	// gen is the Replace generation that last added a Replaced delta to this slot.
	gen uint64
}

// item is a queue position of modes InOrder and Atomic: one delta and its key.
type item[T any] struct {
	key string
	d   Delta[T]
}

// maxRetainedDeltas bounds the capacity of a slot's deltas slice kept for reuse.
const maxRetainedDeltas = 8

// FIFO is a queue of deltas between a producer (the reflector) and a consumer (the informer),
// in one of three modes (see Mode). All methods are safe for concurrent use.
type FIFO[T any] struct {
	keyFunc   indexer.KeyFunc[T]
	known     KnownObjects[T]
	transform func(T) (T, error)
	mode      Mode
	unlocked  bool
	chunkSize int

	mu sync.Mutex

	// repl is the open incremental replacement, if any.
	repl *Replacement[T]

	// Mode Coalescing.
	slots     seqRing[slot[T]]
	index     map[string]uint64 // key → sequence number in slots
	indexPeak int
	gen       uint64
	deltaPool Deltas[T] // during Replace: first deltas for new slots, carved from one block

	// Modes InOrder and Atomic.
	items     seqRing[item[T]]
	batchKeys map[string]struct{}

	// HasSynced bookkeeping, as in client-go: populated is set by the first Add, Update,
	// Delete or Replace; the first Replace sets initialCount, which Pop counts down.
	populated    bool
	initialCount int
	synced       bool
	syncedCh     chan struct{}

	closed   bool
	closedCh chan struct{}
	waiters  int
	wake     chan struct{}
	popSem   chan struct{} // serialises Pops when unlocked

	popBuf   Deltas[T]   // the deltas handed to process in modes InOrder and Atomic
	popKeys  []string    // their keys, for a requeue
	batchBuf []Deltas[T] // the batch handed to a PopBatch process function
}

// New returns an empty FIFO. It panics on a programming error in opts: a nil KeyFunction,
// an unknown Mode, KnownObjects in mode Atomic, or UnlockWhileProcessing outside mode Atomic.
func New[T any](opts Options[T]) *FIFO[T] {
	switch {
	case opts.KeyFunction == nil:
		panic("deltafifo.New: nil KeyFunction")
	case opts.Mode < Coalescing || opts.Mode > Atomic:
		panic(fmt.Sprintf("deltafifo.New: unknown mode %v", opts.Mode))
	case opts.Mode == Atomic && opts.KnownObjects != nil:
		panic("deltafifo.New: KnownObjects must be nil in mode Atomic (the consumer diffs ReplacedAll against its own store)")
	case opts.UnlockWhileProcessing && opts.Mode != Atomic:
		panic("deltafifo.New: UnlockWhileProcessing requires mode Atomic")
	}
	f := &FIFO[T]{
		keyFunc:   opts.KeyFunction,
		known:     opts.KnownObjects,
		transform: opts.Transformer,
		mode:      opts.Mode,
		unlocked:  opts.UnlockWhileProcessing,
		chunkSize: opts.ChunkSize,
		syncedCh:  make(chan struct{}),
		closedCh:  make(chan struct{}),
		wake:      make(chan struct{}, 1),
	}
	// Start with a small queue, as client-go does, so that the first writes do not grow it.
	if f.mode == Coalescing {
		f.index = map[string]uint64{}
		f.slots.resize(ringMinCap)
	} else {
		f.items.resize(ringMinCap)
	}
	if f.unlocked {
		f.popSem = make(chan struct{}, 1)
	}
	if f.chunkSize <= 0 {
		f.chunkSize = DefaultChunkSize
	}
	return f
}

// Mode returns the FIFO's mode.
func (f *FIFO[T]) Mode() Mode { return f.mode }

func (f *FIFO[T]) key(obj T) (string, error) {
	key, err := f.keyFunc(obj)
	if err != nil {
		return "", &indexer.KeyError{Obj: obj, Err: err}
	}
	return key, nil
}

func (f *FIFO[T]) transformed(obj T) (T, error) {
	if f.transform == nil {
		return obj, nil
	}
	out, err := f.transform(obj)
	if err != nil {
		return out, fmt.Errorf("deltafifo: transform: %w", err)
	}
	return out, nil
}

// markPopulatedLocked records that the first Add, Update or Delete happened.
func (f *FIFO[T]) markPopulatedLocked() {
	if !f.populated {
		f.populated = true
		f.checkSyncedLocked()
	}
}

func (f *FIFO[T]) checkSyncedLocked() {
	if !f.synced && f.populated && f.initialCount == 0 {
		f.synced = true
		close(f.syncedCh)
	}
}

// signalLocked wakes a waiting Pop, if any.
func (f *FIFO[T]) signalLocked() {
	if f.waiters > 0 && f.lenLocked() > 0 {
		select {
		case f.wake <- struct{}{}:
		default:
		}
	}
}

func (f *FIFO[T]) lenLocked() int {
	if f.mode == Coalescing {
		return f.slots.len()
	}
	return f.items.len()
}

// Add enqueues an Added delta for obj. Add, Update, Delete, Replace and Resync fail with
// ErrReplaceInProgress while an incremental replacement (BeginReplace) is open.
func (f *FIFO[T]) Add(obj T) error { return f.enqueue(Added, obj) }

// Update enqueues an Updated delta for obj.
func (f *FIFO[T]) Update(obj T) error { return f.enqueue(Updated, obj) }

// Delete enqueues a Deleted delta for obj (its last state, FinalStateUnknown false).
//
// In mode Coalescing a delete of a key that is neither queued nor known to KnownObjects is
// dropped (it was presumably reported already, e.g. as a tombstone by a relist), and a delete
// right after a queued delete of the same key merges with it (the older is kept, unless the
// older is a tombstone). In modes InOrder and Atomic every delete is queued.
func (f *FIFO[T]) Delete(obj T) error { return f.enqueue(Deleted, obj) }

func (f *FIFO[T]) enqueue(t DeltaType, obj T) error {
	key, err := f.key(obj)
	if err != nil {
		return err
	}
	if obj, err = f.transformed(obj); err != nil {
		return err
	}
	d := Delta[T]{Type: t, Object: obj}
	f.mu.Lock()
	if f.repl != nil {
		f.mu.Unlock()
		return ErrReplaceInProgress
	}
	f.markPopulatedLocked()
	if f.mode == Coalescing {
		if t == Deleted && !f.deletableLocked(key) {
			f.mu.Unlock()
			return nil
		}
		f.appendLocked(key, d)
	} else {
		f.pushLocked(key, d)
	}
	f.signalLocked()
	f.mu.Unlock()
	return nil
}

// deletableLocked reports whether a Delete of key must be queued in mode Coalescing: the key
// is queued, or KnownObjects has it (or cannot tell).
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

// appendLocked adds d to key's slot (mode Coalescing), creating the slot at the back of the
// queue if the key is not queued, and merging two consecutive deletes.
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

// pushLocked appends one entry to the queue of modes InOrder and Atomic.
func (f *FIFO[T]) pushLocked(key string, d Delta[T]) {
	it := f.items.at(f.items.pushBack())
	it.key, it.d = key, d
}

// Replace tells the FIFO that list is the complete current state (a relist), observed at
// resourceVersion. The FIFO keeps the objects of list, not the slice, except in mode Atomic
// without a Transformer, where the ReplacedAll delta carries list itself: the caller must not
// modify it afterwards.
//
// Modes Coalescing and InOrder queue a Replaced delta for every object and a tombstone
// (Deleted, FinalStateUnknown) for every key that is missing from list but queued (carrying
// the newest queued object) or known to KnownObjects (carrying the known object). Mode
// InOrder queues the tombstones first and skips a queued key whose newest delta is already a
// delete; mode Coalescing queues the Replaced deltas first. Mode Atomic queues one ReplacedAll
// delta.
//
// The first Replace, unless an Add, Update or Delete came earlier, sets the number of queue
// positions HasSynced waits to see popped. A failing key function or transformer fails the
// call with nothing queued.
func (f *FIFO[T]) Replace(list []T, resourceVersion string) error {
	if f.mode == Atomic {
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

	keys := make([]string, len(list))
	objs := list
	if f.transform != nil {
		objs = make([]T, len(list))
	}
	for i, obj := range list {
		var err error
		if keys[i], err = f.key(obj); err != nil {
			return err
		}
		if f.transform != nil {
			if objs[i], err = f.transformed(obj); err != nil {
				return err
			}
		}
	}
	if f.mode == Coalescing {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.repl != nil {
			return ErrReplaceInProgress
		}
		f.replaceCoalescingLocked(keys, objs)
		return nil
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
	f.replaceInOrderLocked(keys, objs, listed)
	return nil
}

// afterReplaceLocked does the HasSynced bookkeeping of a Replace that left count queue
// positions to count down, and wakes a Pop.
func (f *FIFO[T]) afterReplaceLocked(count int) {
	if !f.populated {
		f.populated = true
		f.initialCount = count
		f.checkSyncedLocked()
	}
	f.signalLocked()
}

func (f *FIFO[T]) replaceCoalescingLocked(keys []string, objs []T) {
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
	if f.known != nil {
		for _, k := range f.known.ListKeys() {
			if _, queued := f.index[k]; queued {
				continue
			}
			obj, _, _ := f.known.GetByKey(k) // zero object if unknown: a tombstone without state
			deletions++
			f.appendLocked(k, Delta[T]{Type: Deleted, Object: obj, FinalStateUnknown: true})
		}
	}
	f.afterReplaceLocked(distinct + deletions)
}

func (f *FIFO[T]) replaceInOrderLocked(keys []string, objs []T, listed map[string]struct{}) {
	f.queueTombstonesInOrderLocked(listed)
	for i, k := range keys {
		f.pushLocked(k, Delta[T]{Type: Replaced, Object: objs[i]})
	}
	f.afterReplaceLocked(f.items.len())
}

// Resync queues a Sync delta, carrying the known object untransformed, for every key of
// KnownObjects that has nothing queued; without KnownObjects it does nothing. In mode Atomic
// it queues one SyncAll delta instead (unless the newest queued delta is already a SyncAll).
func (f *FIFO[T]) Resync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.repl != nil {
		return ErrReplaceInProgress
	}
	if f.mode == Atomic {
		if n := f.items.len(); n == 0 || f.items.at(f.items.tail-1).d.Type != SyncAll {
			f.pushLocked("", Delta[T]{Type: SyncAll})
		}
		f.signalLocked()
		return nil
	}
	if f.known == nil {
		return nil
	}
	var queued map[string]struct{}
	if f.mode == InOrder {
		queued = make(map[string]struct{}, f.items.len())
		for s := f.items.head; s != f.items.tail; s++ {
			queued[f.items.at(s).key] = struct{}{}
		}
	}
	for _, k := range f.known.ListKeys() {
		var isQueued bool
		if f.mode == Coalescing {
			_, isQueued = f.index[k]
		} else {
			_, isQueued = queued[k]
		}
		if isQueued {
			continue
		}
		obj, exists, err := f.known.GetByKey(k)
		if err != nil || !exists {
			continue
		}
		d := Delta[T]{Type: Sync, Object: obj}
		if f.mode == Coalescing {
			f.appendLocked(k, d)
		} else {
			f.pushLocked(k, d)
			queued[k] = struct{}{}
		}
	}
	f.signalLocked()
	return nil
}

// Pop waits until a delta is queued and calls process with it, under the FIFO's lock (unless
// Options.UnlockWhileProcessing), so that process can update the consumer's store without
// racing with Delete, Replace and Resync, which read it. process must not call the FIFO's
// methods, and must not keep the Deltas slice after returning (keep a Clone if needed; the
// objects may be kept).
//
// In mode Coalescing process gets every delta queued for the oldest key; in modes InOrder and
// Atomic it gets the oldest delta alone. isInInitialList is true until HasSynced would be.
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

// PopBatch is Pop for up to maxKeys queue positions at once, under one lock acquisition: process
// gets one Deltas per key, all keys distinct, oldest first. In mode Coalescing that is the
// first maxKeys keys of the queue; in modes InOrder and Atomic the batch ends before the first
// delta whose key is already in it, and a ReplacedAll, SyncAll, ReplacedChunk or ReplacedEnd
// delta is always handed out alone. A batch never mixes deltas of the initial list with later ones. Requeue puts the
// whole batch back. maxKeys < 1 means 1. The batch slice is reused: do not keep it.
func (f *FIFO[T]) PopBatch(ctx context.Context, maxKeys int, process func(batch []Deltas[T], isInInitialList bool) error) error {
	return f.pop(ctx, max(maxKeys, 1), nil, process)
}

func (f *FIFO[T]) pop(ctx context.Context, limit int, one func(Deltas[T], bool) error, batch func([]Deltas[T], bool) error) error {
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
	for f.lenLocked() == 0 {
		if f.closed {
			return ErrClosed
		}
		f.waiters++
		f.mu.Unlock()
		select {
		case <-f.wake:
		case <-ctx.Done():
		case <-f.closedCh:
		}
		f.mu.Lock()
		f.waiters--
		if f.lenLocked() == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	isInInitialList := !f.synced
	if f.initialCount > 0 {
		limit = min(limit, f.initialCount)
	}
	var n int
	var err error
	if f.mode == Coalescing {
		n, err = f.popCoalescingLocked(limit, isInInitialList, one, batch)
	} else {
		n, err = f.popInOrderLocked(limit, isInInitialList, one, batch)
	}
	if !isRequeue(err) {
		if f.initialCount > 0 {
			f.initialCount = max(f.initialCount-n, 0)
			f.checkSyncedLocked()
		}
	}
	f.signalLocked()
	return err
}

func isRequeue(err error) bool {
	if err == nil {
		return false
	}
	var rq *RequeueError
	return errors.As(err, &rq)
}

func (f *FIFO[T]) popCoalescingLocked(limit int, isInInitialList bool, one func(Deltas[T], bool) error, batch func([]Deltas[T], bool) error) (int, error) {
	n := min(limit, f.slots.len())
	start := f.slots.head
	for s := start; s != start+uint64(n); s++ {
		delete(f.index, f.slots.at(s).key)
	}
	f.slots.head += uint64(n)
	var err error
	if batch == nil {
		err = one(f.slots.at(start).deltas, isInInitialList)
	} else {
		f.batchBuf = f.batchBuf[:0]
		for s := start; s != start+uint64(n); s++ {
			f.batchBuf = append(f.batchBuf, f.slots.at(s).deltas)
		}
		err = batch(f.batchBuf, isInInitialList)
		clear(f.batchBuf)
	}
	if isRequeue(err) {
		// Nothing could touch the ring while process ran (the lock was held): the slots are
		// intact behind head.
		f.slots.head = start
		for s := start; s != start+uint64(n); s++ {
			f.index[f.slots.at(s).key] = s
		}
		return n, err
	}
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
	return n, err
}

func (f *FIFO[T]) popInOrderLocked(limit int, isInInitialList bool, one func(Deltas[T], bool) error, batch func([]Deltas[T], bool) error) (int, error) {
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
	var err error
	if batch == nil {
		err = one(f.popBuf[:1:1], isInInitialList)
	} else {
		f.batchBuf = f.batchBuf[:0]
		for i := range n {
			f.batchBuf = append(f.batchBuf, f.popBuf[i:i+1:i+1])
		}
		err = batch(f.batchBuf, isInInitialList)
		clear(f.batchBuf)
	}
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
	return n, err
}

// HasSynced reports whether the initial list has been handed out: true once an Add, Update
// or Delete came before any Replace, or once every queue position the first Replace left has
// been popped (and processed without a requeue).
func (f *FIFO[T]) HasSynced() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.synced
}

// Synced returns a channel that is closed when HasSynced becomes true.
func (f *FIFO[T]) Synced() <-chan struct{} { return f.syncedCh }

// Close makes Pop return ErrClosed once the queue is empty (at once for a Pop waiting on an
// empty queue). Queued deltas are not discarded, and later writes are still accepted.
func (f *FIFO[T]) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		close(f.closedCh)
	}
}

// IsClosed reports whether Close was called.
func (f *FIFO[T]) IsClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// Len returns the number of queue positions: keys in mode Coalescing, deltas otherwise.
func (f *FIFO[T]) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lenLocked()
}

// ListKeys returns the keys with queued deltas, each once, in queue order (of first
// appearance in modes InOrder and Atomic). ReplacedAll, SyncAll, ReplacedChunk and
// ReplacedEnd deltas have no key.
func (f *FIFO[T]) ListKeys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mode == Coalescing {
		out := make([]string, 0, f.slots.len())
		for s := f.slots.head; s != f.slots.tail; s++ {
			out = append(out, f.slots.at(s).key)
		}
		return out
	}
	var out []string
	f.eachKeyLocked(func(key string, _ []uint64) { out = append(out, key) })
	return out
}

// eachKeyLocked calls fn, in order of first appearance, for every key of the in-order queue
// with the sequence numbers of its deltas.
func (f *FIFO[T]) eachKeyLocked(fn func(key string, seqs []uint64)) {
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

// List returns the newest queued object of every queued key, in the order of ListKeys
// (the zero value for a tombstone without state).
func (f *FIFO[T]) List() []T {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mode == Coalescing {
		out := make([]T, 0, f.slots.len())
		for s := f.slots.head; s != f.slots.tail; s++ {
			out = append(out, f.slots.at(s).deltas.Newest().Object)
		}
		return out
	}
	var out []T
	f.eachKeyLocked(func(_ string, seqs []uint64) {
		out = append(out, f.items.at(seqs[len(seqs)-1]).d.Object)
	})
	return out
}

// GetByKey returns a copy of the deltas queued for key, oldest first.
func (f *FIFO[T]) GetByKey(key string) (deltas Deltas[T], exists bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mode == Coalescing {
		s, ok := f.index[key]
		if !ok {
			return nil, false, nil
		}
		return f.slots.at(s).deltas.Clone(), true, nil
	}
	for s := f.items.head; s != f.items.tail; s++ {
		if it := f.items.at(s); it.key == key && !it.d.Type.keyless() {
			deltas = append(deltas, it.d)
		}
	}
	return deltas, len(deltas) > 0, nil
}
