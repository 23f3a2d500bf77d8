package reflector

import (
	"context"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/meta"
)

// Store is what a Reflector writes into. Every deltafifo.Queue[T] and indexer.Indexer[T] satisfy it.
// Implementations must be safe for concurrent use: the reflector calls Resync from its resync
// timer while events are being applied.
//
// It is client-go's ReflectorStore, typed.
type Store[T any] interface {
	// Add records an object the watch reported as ADDED.
	Add(obj T) error
	// Update records an object the watch reported as MODIFIED.
	Update(obj T) error
	// Delete records an object the watch reported as DELETED; obj is its last state.
	Delete(obj T) error
	// Replace makes list the whole content of the store, as of resourceVersion. The store
	// takes ownership of the slice. A Store that also implements IncrementalReplacer is
	// handed relists through that interface instead.
	Replace(list []T, resourceVersion string) error
	// Resync asks the store to re-deliver what it holds (deltafifo queues a Sync delta per
	// known object); it is called by the resync timer and never causes server traffic.
	Resync() error
}

// IncrementalReplacer is an optional interface of a Store: it receives the result of a
// (re)list item by item instead of as one slice.
//
// With Replace, a relist holds the whole new list (decoded objects and the slice) next to
// the whole old content of the store, so the peak heap of a relist is about twice the cache.
// With IncrementalReplacer the reflector never holds more than one LIST page (or, with
// WatchList, one event): each item goes to the store as soon as it is decoded, and the store
// can shrink it at once (a transform, structural sharing) or, when it already holds the same
// state, keep nothing of it. See bench/README.md, "Relist memory", for the figures.
//
// The reflector calls BeginReplace when it has the first item of a list (or the empty end
// of one), then Replacement.Add for every item, then exactly one of Replacement.Finish or
// Replacement.Abort. It never begins a second replacement before the first one is finished
// or aborted, and it calls no other Store method in between.
type IncrementalReplacer[T any] interface {
	BeginReplace() (Replacement[T], error)
}

// Replacement receives one list, item by item. See IncrementalReplacer.
//
// A list that fails part-way (a cut connection, a body that does not decode) ends with
// Abort, and must change nothing that the store's readers see: client-go applies nothing
// of a list that did not complete. So a store holds what Add gives it until Finish (the
// informer's DeltaFIFO holds the objects transformed, and only those it does not already
// have; deltafifo.Relist), and Abort drops it.
type Replacement[T any] interface {
	// Add hands over one object of the new list. Within one replacement each key is added
	// at most once and all objects come from one consistent snapshot of the collection,
	// at least as new as anything the store was given before.
	Add(obj T) error
	// Finish ends the replacement: the added objects become the store's content, every
	// object the store holds whose key was not added since BeginReplace is deleted, exactly
	// as Replace(list, resourceVersion) would have done, and resourceVersion is the list's.
	Finish(resourceVersion string) error
	// Abort ends the replacement without any effect: the list failed part-way, and the
	// store stays as it was before BeginReplace. The reflector then starts a new list.
	Abort()
}

// ResourceVersionUpdater is an optional interface of a Store: UpdateResourceVersion is called
// every time the reflector records a last synced resourceVersion (after each list, and each
// watch event and bookmark that advances it), in order, after LastSyncResourceVersion and
// Stats already reflect it. It is client-go's ResourceVersionUpdater, which client-go calls
// for watch events and bookmarks only, not after lists.
type ResourceVersionUpdater interface {
	UpdateResourceVersion(resourceVersion string)
}

// StreamingLister is an optional interface of an apiclient.ListerWatcher: ListEach lists one
// page exactly like List, but hands each item to fn as soon as it is decoded instead of
// returning a slice. When the Store implements IncrementalReplacer and the ListerWatcher
// implements StreamingLister, even an unpaged relist never holds the whole list in memory.
//
// If fn returns an error, ListEach stops decoding and returns that error. The returned
// ListMeta carries the page's resourceVersion and continue token.
type StreamingLister[T any] interface {
	ListEach(ctx context.Context, opts apiclient.ListOptions, fn func(T) error) (meta.ListMeta, error)
}
