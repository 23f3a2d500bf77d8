package informer

import (
	"github.com/informerkit/informerkit/deltafifo"
	"github.com/informerkit/informerkit/meta"
)

// Stage names what an informer did in an Observation.
type Stage uint8

// The stages an informer reports to Options.Observe, in the order an object passes them.
const (
	// StageQueued: the reflector handed the DeltaFIFO a delta: a watch event (Added,
	// Updated, Deleted), an object of a relist (ReplacedChunk; Kept when the cache already
	// holds it at that resourceVersion, so nothing of it is queued), or a relist's end
	// (ReplacedEnd, no object). Reported on the reflector's goroutine, just before the call.
	StageQueued Stage = iota + 1
	// StagePopped: PopBatch handed the delta to the informer (one Observation per object of
	// a ReplacedChunk or ReplacedAll, one without an object for a ReplacedEnd).
	StagePopped
	// StageCached: the cache was written and every handler is about to be told
	// (Notification: add, update or delete).
	StageCached
	// StageResync: a resync is due for Handler: it is about to hear OnUpdate(obj, obj) for
	// Key, from the cache (a resync never reaches the DeltaFIFO nor the server).
	StageResync
	// StageNotified: Handler's listener queued a notification (Pending counts the queue
	// after it).
	StageNotified
	// StageCoalesced: Handler's listener, coalescing because the handler fell BufferSize
	// behind, merged the notification into the one pending for Key (Notification is what
	// the pending one became, "" when an add and a delete cancelled out).
	StageCoalesced
	// StageDelivered: Handler is about to be called with the notification, on its
	// listener's goroutine.
	StageDelivered
)

// String returns the stage's name: "queued", "popped", ...
func (s Stage) String() string {
	switch s {
	case StageQueued:
		return "queued"
	case StagePopped:
		return "popped"
	case StageCached:
		return "cached"
	case StageResync:
		return "resync"
	case StageNotified:
		return "notified"
	case StageCoalesced:
		return "coalesced"
	case StageDelivered:
		return "delivered"
	}
	return "Stage(?)"
}

// Kept is the Observation.Delta of a relist's object that the cache already holds at the
// same resourceVersion: the DeltaFIFO keeps the key and holds nothing of the object.
const Kept deltafifo.DeltaType = "Kept"

// Observation is one thing an informer did, reported to Options.Observe: what a tool that
// explains an informer needs (cmd/walkthrough draws docs/walkthrough.md from them). The
// objects are the informer's own: read them, never change them.
type Observation[T any] struct {
	Stage Stage
	// Delta is the delta's type (StageQueued, StagePopped).
	Delta deltafifo.DeltaType
	// Key is the object's key ("" for a ReplacedEnd).
	Key string
	// Object is the object concerned: the new state, or for a delete the last known one
	// (zero for a ReplacedEnd, and for a coalesced add and delete that cancelled out).
	Object T
	// Old is an update's old state (StageCached and the listener stages).
	Old T
	// ResourceVersion is that of the list a ReplacedEnd ends.
	ResourceVersion string
	// Handler is the registration's name (StageResync and the listener stages).
	Handler string
	// Notification is "add", "update", "delete" or "delete+add" (StageCached and the
	// listener stages).
	Notification string
	// InitialList is the add's isInInitialList; FinalStateUnknown the delete's.
	InitialList, FinalStateUnknown bool
	// Pending is the number of notifications waiting for Handler after this one (listener
	// stages).
	Pending int
}

// kindName returns the Observation.Notification of a notification kind.
func kindName(k kind) string {
	switch k {
	case kindAdd:
		return "add"
	case kindUpdate:
		return "update"
	case kindDelete:
		return "delete"
	case kindDeleteAdd:
		return "delete+add"
	}
	return ""
}

// observation returns the listener-stage Observation of n (as a notification of kind k)
// for key, with pending notifications left.
func (l *listener[T]) observation(s Stage, key string, k kind, n *notification[T], pending int) Observation[T] {
	o := Observation[T]{Stage: s, Key: key, Handler: l.name, Notification: kindName(k),
		InitialList: n.initial, FinalStateUnknown: n.unknown, Object: n.new, Pending: pending}
	switch k {
	case kindDelete:
		o.Object = n.old
	case kindUpdate:
		o.Old = n.old
	}
	return o
}

// observePopped reports the deltas of a batch PopBatch handed out.
func (inf *Informer[T]) observePopped(batch []deltafifo.Deltas[T]) {
	for _, deltas := range batch {
		for i := range deltas {
			d := &deltas[i]
			switch {
			case d.Type == deltafifo.ReplacedChunk && d.Chunk != nil:
				for _, obj := range d.Chunk.Objects {
					inf.observeObject(StagePopped, d.Type, obj)
				}
			case d.Type == deltafifo.ReplacedAll && d.All != nil:
				for _, obj := range d.All.Objects {
					inf.observeObject(StagePopped, d.Type, obj)
				}
			case d.Type == deltafifo.ReplacedEnd && d.End != nil:
				inf.opts.Observe(Observation[T]{Stage: StagePopped, Delta: d.Type, ResourceVersion: d.End.ResourceVersion})
			case d.Type == deltafifo.SyncAll:
				inf.opts.Observe(Observation[T]{Stage: StagePopped, Delta: d.Type})
			default:
				inf.observeObject(StagePopped, d.Type, d.Object)
			}
		}
	}
}

// observeObject reports one object at stage s.
func (inf *Informer[T]) observeObject(s Stage, t deltafifo.DeltaType, obj T) {
	key, _ := inf.keyFunc(obj)
	inf.opts.Observe(Observation[T]{Stage: s, Delta: t, Key: key, Object: obj})
}

// observedFIFO is the reflector's store of an informer with Options.Observe: the
// informer's incrementalFIFO, reporting every watch event handed to it (a relist's objects
// are reported by countedReplacement). Without Observe the reflector gets the
// incrementalFIFO itself, so that nothing is paid for observing.
type observedFIFO[T meta.Object] struct {
	incrementalFIFO[T]
}

// Add implements reflector.Store.
func (f observedFIFO[T]) Add(obj T) error {
	f.observeQueued(deltafifo.Added, obj)
	return f.incrementalFIFO.Add(obj)
}

// Update implements reflector.Store.
func (f observedFIFO[T]) Update(obj T) error {
	f.observeQueued(deltafifo.Updated, obj)
	return f.incrementalFIFO.Update(obj)
}

// Delete implements reflector.Store.
func (f observedFIFO[T]) Delete(obj T) error {
	f.observeQueued(deltafifo.Deleted, obj)
	return f.incrementalFIFO.Delete(obj)
}

// observeQueued reports a delta of type t for obj handed to the FIFO.
func (f incrementalFIFO[T]) observeQueued(t deltafifo.DeltaType, obj T) {
	key, _ := f.keyFunc(obj)
	f.observe(Observation[T]{Stage: StageQueued, Delta: t, Key: key, Object: obj})
}
