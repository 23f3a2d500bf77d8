package deltafifo

import (
	"errors"
	"fmt"
	"time"
)

// DeltaType says what happened to an object.
type DeltaType string

// The delta types.
const (
	// Added: the object was created (a watch ADDED event).
	Added DeltaType = "Added"
	// Updated: the object changed (a watch MODIFIED event).
	Updated DeltaType = "Updated"
	// Deleted: the object is gone. Object is its last known state; FinalStateUnknown is true
	// when the deletion was inferred by Replace rather than observed (a tombstone).
	Deleted DeltaType = "Deleted"
	// Replaced: the object was listed by a relist (or the initial list). It may or may not
	// have changed.
	Replaced DeltaType = "Replaced"
	// Sync: a periodic resync of an object the consumer already knows. Object is the
	// consumer's own copy (from KnownObjects).
	Sync DeltaType = "Sync"
	// ReplacedAll (AtomicFIFO only): a whole relist in one delta. Object is the zero value;
	// Delta.All carries the listed objects and the resourceVersion. The consumer diffs it
	// against its store: tombstones for the keys the list lacks, then the listed objects.
	ReplacedAll DeltaType = "ReplacedAll"
	// SyncAll (AtomicFIFO only): resync every object of the consumer's store. Object is the
	// zero value.
	SyncAll DeltaType = "SyncAll"
	// ReplacedChunk (AtomicFIFO only): part of a relist handed over incrementally
	// (BeginReplace): Delta.Chunk carries up to AtomicFIFOOptions.ChunkSize listed objects and
	// their keys. The consumer stores each object (an update of an existing key, an add of
	// a new one); nothing is deleted yet.
	ReplacedChunk DeltaType = "ReplacedChunk"
	// ReplacedEnd (AtomicFIFO only): the end of an incremental relist. Delta.End carries the
	// list's resourceVersion and the set of every key the list had; the consumer deletes
	// every object of its store whose key is not in the set, as tombstones.
	ReplacedEnd DeltaType = "ReplacedEnd"
)

// keyless reports the delta types that concern many keys (or all) and have none of their
// own: they are queued under no key and always handed out alone.
func (t DeltaType) keyless() bool {
	return t == ReplacedAll || t == SyncAll || t == ReplacedChunk || t == ReplacedEnd
}

// Delta is one change to one object (or, for ReplacedAll and SyncAll, to the whole set).
//
// A deletion whose final state is unknown (the object vanished from a relist) is a typed
// tombstone: Type Deleted, FinalStateUnknown true, and Object the last known state — which
// is the zero value when not even that is known (the consumer's store could not produce it).
type Delta[T any] struct {
	Type              DeltaType
	Object            T
	FinalStateUnknown bool
	// Arrived is when Add, Update or Delete queued the delta (a watch event reaching the
	// queue), once StampArrivals(true) was called; zero otherwise, and for every delta a
	// relist or a resync makes.
	Arrived time.Time
	// All is set on ReplacedAll deltas only.
	All *ReplacedAllInfo[T]
	// Chunk is set on ReplacedChunk deltas only.
	Chunk *ReplacedChunkInfo[T]
	// End is set on ReplacedEnd deltas only.
	End *ReplacedEndInfo
}

// ReplacedAllInfo is the payload of a ReplacedAll delta: the arguments of the Replace call
// that produced it, with the transformer already applied to every object.
type ReplacedAllInfo[T any] struct {
	ResourceVersion string
	Objects         []T
}

// ReplacedChunkInfo is the payload of a ReplacedChunk delta: consecutive objects of an
// incremental relist, in arrival order, with the transformer already applied, and their
// keys (Keys[i] is the key of Objects[i], computed by the FIFO's key function).
type ReplacedChunkInfo[T any] struct {
	Objects []T
	Keys    []string
}

// ReplacedEndInfo is the payload of a ReplacedEnd delta: the resourceVersion of an
// incremental relist and the set of the keys it listed. The consumer owns it and must treat
// it as read-only.
type ReplacedEndInfo struct {
	ResourceVersion string
	Keys            map[string]struct{}
}

// Deltas is the list of deltas handed to a consumer for one key, oldest first.
type Deltas[T any] []Delta[T]

// Oldest returns the oldest delta, or nil for an empty list.
func (d Deltas[T]) Oldest() *Delta[T] {
	if len(d) == 0 {
		return nil
	}
	return &d[0]
}

// Newest returns the newest delta, or nil for an empty list.
func (d Deltas[T]) Newest() *Delta[T] {
	if len(d) == 0 {
		return nil
	}
	return &d[len(d)-1]
}

// Clone returns a copy of the list (the objects are shared). A process function that wants
// to keep the Deltas it was given beyond its return must keep a clone: the FIFO reuses the
// slice it passed.
func (d Deltas[T]) Clone() Deltas[T] {
	if d == nil {
		return nil
	}
	return append(Deltas[T](nil), d...)
}

// ErrClosed is returned by Pop and PopBatch once the FIFO is closed and empty.
var ErrClosed = errors.New("deltafifo: closed")

// RequeueError asks Pop to put the deltas it handed to the process function back at the
// front of the queue. Create one with [Requeue]; Pop returns it as is.
type RequeueError struct {
	// Err is the reason; it may be nil.
	Err error
}

// Requeue wraps err so that, returned from a process function, it makes Pop put the popped
// deltas back where they were (the front of the queue) instead of dropping them. Pop then
// returns the *RequeueError, so that errors.Is(popErr, err) holds and errors.As(popErr,
// new(*RequeueError)) tells the caller the deltas were kept. The next Pop hands out the same
// deltas (merged, in a FIFO, with any that arrived meanwhile): the caller should
// back off before calling Pop again.
func Requeue(err error) error { return &RequeueError{Err: err} }

// Error implements error.
func (e *RequeueError) Error() string {
	if e.Err == nil {
		return "deltafifo: requeue requested"
	}
	return fmt.Sprintf("deltafifo: requeued: %v", e.Err)
}

// Unwrap returns the wrapped error.
func (e *RequeueError) Unwrap() error { return e.Err }
