package deltafifo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/informerkit/informerkit/indexer"
)

// Queue is the contract of the three layouts (FIFO, RealFIFO and AtomicFIFO): what a
// reflector writes and an informer pops. All methods are safe for concurrent use.
type Queue[T any] interface {
	// Add, Update and Delete enqueue one delta for obj. They fail with ErrReplaceInProgress
	// while an incremental replacement is open.
	Add(obj T) error
	Update(obj T) error
	Delete(obj T) error
	// Replace hands over a relist: list is the complete current state at resourceVersion.
	Replace(list []T, resourceVersion string) error
	// BeginReplace hands over a relist object by object; see Relist.
	BeginReplace() (*Relist[T], error)
	// Resync asks for every known object to be handed out again.
	Resync() error
	// Pop waits for the oldest queue position and calls process with it; PopBatch does so for
	// up to maxKeys positions of distinct keys at once.
	Pop(ctx context.Context, process func(deltas Deltas[T], isInInitialList bool) error) error
	PopBatch(ctx context.Context, maxKeys int, process func(batch []Deltas[T], isInInitialList bool) error) error
	// HasSynced reports whether the initial list has been handed out; Synced is closed then.
	HasSynced() bool
	Synced() <-chan struct{}
	// Close makes Pop return ErrClosed once the queue is empty.
	Close()
	IsClosed() bool
	// Len, ListKeys, List and GetByKey read the queue.
	Len() int
	ListKeys() []string
	List() []T
	GetByKey(key string) (deltas Deltas[T], exists bool, err error)
	// StampArrivals turns on (or off) the stamping of Delta.Arrived by Add, Update and
	// Delete: a clock read per watch event, for consumers that measure the time from an
	// event's arrival to its processing. Off by default.
	StampArrivals(on bool)
}

var (
	_ Queue[int] = (*FIFO[int])(nil)
	_ Queue[int] = (*RealFIFO[int])(nil)
	_ Queue[int] = (*AtomicFIFO[int])(nil)
)

// KnownObjects is the consumer's view of the objects it already has: FIFO and RealFIFO ask
// it which keys exist (Delete in FIFO, Replace, Resync) and for their last state
// (tombstones, Sync deltas). An indexer.Indexer[T] satisfies it.
type KnownObjects[T any] interface {
	ListKeys() []string
	GetByKey(key string) (item T, exists bool, err error)
}

// ErrReplaceInProgress is returned by BeginReplace, Add, Update, Delete, Replace and Resync
// while an incremental replacement is open (between BeginReplace and Finish or Abort): the
// reflector never writes anything else during a list, and a write in the middle of one
// would be ordered against the list in no meaningful way.
var ErrReplaceInProgress = errors.New("deltafifo: an incremental replacement is in progress")

// base is what the layouts share: the key function and transformer, the lock, the open
// replacement, the HasSynced bookkeeping and the waiting of Pop. The layouts pass their
// queue length where base needs it, so that the hot paths make no indirect calls.
type base[T any] struct {
	keyFunc   indexer.KeyFunc[T]
	transform func(T) (T, error)

	mu sync.Mutex

	// repl is the open incremental replacement, if any.
	repl *Relist[T]

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

	batchBuf []Deltas[T] // the batch handed to a PopBatch process function

	stamp atomic.Bool // StampArrivals
}

// StampArrivals implements Queue.
func (b *base[T]) StampArrivals(on bool) { b.stamp.Store(on) }

// newDelta returns the delta Add, Update or Delete queues for obj, stamped if asked.
func (b *base[T]) newDelta(t DeltaType, obj T) Delta[T] {
	d := Delta[T]{Type: t, Object: obj}
	if b.stamp.Load() {
		d.Arrived = time.Now()
	}
	return d
}

func (b *base[T]) init(keyFunc indexer.KeyFunc[T], transform func(T) (T, error)) {
	if keyFunc == nil {
		panic("deltafifo: nil key function")
	}
	b.keyFunc, b.transform = keyFunc, transform
	b.syncedCh = make(chan struct{})
	b.closedCh = make(chan struct{})
	b.wake = make(chan struct{}, 1)
}

func (b *base[T]) key(obj T) (string, error) {
	key, err := b.keyFunc(obj)
	if err != nil {
		return "", &indexer.KeyError{Obj: obj, Err: err}
	}
	return key, nil
}

func (b *base[T]) transformed(obj T) (T, error) {
	if b.transform == nil {
		return obj, nil
	}
	out, err := b.transform(obj)
	if err != nil {
		return out, fmt.Errorf("deltafifo: transform: %w", err)
	}
	return out, nil
}

// prepare computes obj's key and applies the transformer, before the lock is taken.
func (b *base[T]) prepare(obj T) (string, T, error) {
	key, err := b.key(obj)
	if err != nil {
		return "", obj, err
	}
	obj, err = b.transformed(obj)
	return key, obj, err
}

// markPopulatedLocked records that the first Add, Update or Delete happened.
func (b *base[T]) markPopulatedLocked() {
	if !b.populated {
		b.populated = true
		b.checkSyncedLocked()
	}
}

func (b *base[T]) checkSyncedLocked() {
	if !b.synced && b.populated && b.initialCount == 0 {
		b.synced = true
		close(b.syncedCh)
	}
}

// signalLocked wakes a waiting Pop, if any, when the queue holds n positions.
func (b *base[T]) signalLocked(n int) {
	if b.waiters > 0 && n > 0 {
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
}

// afterReplaceLocked does the HasSynced bookkeeping of a Replace that left n queue
// positions to count down, and wakes a Pop.
func (b *base[T]) afterReplaceLocked(n int) {
	if !b.populated {
		b.populated = true
		b.initialCount = n
		b.checkSyncedLocked()
	}
	b.signalLocked(n)
}

// waitLocked waits, with b.mu held on entry and return, until length() > 0. It returns
// ErrClosed if the FIFO is closed and empty, and ctx.Err() if ctx is done while it is empty.
func (b *base[T]) waitLocked(ctx context.Context, length func() int) error {
	for length() == 0 {
		if b.closed {
			return ErrClosed
		}
		b.waiters++
		b.mu.Unlock()
		select {
		case <-b.wake:
		case <-ctx.Done():
		case <-b.closedCh:
		}
		b.mu.Lock()
		b.waiters--
		if length() == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// popStartLocked returns whether the deltas about to be popped belong to the initial list,
// and limit lowered so that a batch never mixes them with later ones.
func (b *base[T]) popStartLocked(limit int) (bool, int) {
	if b.initialCount > 0 {
		limit = min(limit, b.initialCount)
	}
	return !b.synced, limit
}

// popWaitLocked waits until the queue holds a position (length() > 0), then returns what
// popStartLocked returns; the error is waitLocked's.
func (b *base[T]) popWaitLocked(ctx context.Context, length func() int, limit int) (bool, int, error) {
	if err := b.waitLocked(ctx, length); err != nil {
		return false, 0, err
	}
	isInInitialList, limit := b.popStartLocked(limit)
	return isInInitialList, limit, nil
}

// handOut gives n popped queue positions to the process function: one gets the first
// position's deltas, or batch gets every position's, deltas(i) being the i-th's. The batch
// slice is reused.
func (b *base[T]) handOut(n int, deltas func(i int) Deltas[T], isInInitialList bool, one func(Deltas[T], bool) error, batch func([]Deltas[T], bool) error) error {
	if batch == nil {
		return one(deltas(0), isInInitialList)
	}
	b.batchBuf = b.batchBuf[:0]
	for i := range n {
		b.batchBuf = append(b.batchBuf, deltas(i))
	}
	err := batch(b.batchBuf, isInInitialList)
	clear(b.batchBuf)
	return err
}

// queueKnown queues, through push, a delta of type t (Sync or Deleted) carrying the
// consumer's object for every key of known that skip does not exclude. A Sync needs the
// object, so a key that has gone (or that the store cannot read) is passed over; a tombstone
// (FinalStateUnknown) is queued anyway, without state (the zero object) when there is none.
// A nil known queues nothing.
func queueKnown[T any](known KnownObjects[T], t DeltaType, skip func(key string) bool, push func(key string, d Delta[T])) {
	if known == nil {
		return
	}
	for _, k := range known.ListKeys() {
		if skip(k) {
			continue
		}
		obj, exists, err := known.GetByKey(k)
		d := Delta[T]{Type: t, Object: obj}
		if t == Deleted {
			d.FinalStateUnknown = true
		} else if err != nil || !exists {
			continue
		}
		push(k, d)
	}
}

// popEndLocked counts n popped positions down for HasSynced unless process asked for a
// requeue, and wakes another Pop if left positions remain.
func (b *base[T]) popEndLocked(n int, err error, left int) {
	if !isRequeue(err) && b.initialCount > 0 {
		b.initialCount = max(b.initialCount-n, 0)
		b.checkSyncedLocked()
	}
	b.signalLocked(left)
}

func isRequeue(err error) bool {
	if err == nil {
		return false
	}
	var rq *RequeueError
	return errors.As(err, &rq)
}

// HasSynced reports whether the initial list has been handed out: true once an Add, Update
// or Delete came before any Replace, or once every queue position the first Replace (or
// replacement) left has been popped and processed without a requeue.
func (b *base[T]) HasSynced() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.synced
}

// Synced returns a channel that is closed when HasSynced becomes true.
func (b *base[T]) Synced() <-chan struct{} { return b.syncedCh }

// Close makes Pop return ErrClosed once the queue is empty (at once for a Pop waiting on an
// empty queue). Queued deltas are not discarded, and later writes are still accepted.
func (b *base[T]) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		close(b.closedCh)
	}
}

// IsClosed reports whether Close was called.
func (b *base[T]) IsClosed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}
