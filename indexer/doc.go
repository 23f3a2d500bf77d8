// Package indexer is informerkit's thread-safe, generic object store with named secondary
// indexes: the cache an informer fills and a lister reads.
//
// It is client-go's tools/cache threadSafeMap, Indexer and key functions, generic, with the
// same names (Indexer, IndexFunc, Indexers, NamespaceIndex, MetaNamespaceKeyFunc, ...).
//
// # Semantics
//
//   - Keys are whatever the [KeyFunc] returns; [MetaNamespaceKeyFunc] gives "namespace/name",
//     or "name" for cluster-scoped objects.
//   - Every index maps each indexed value to the set of keys of the objects that produced it.
//     A value whose set becomes empty is removed, so [Indexer.ListIndexFuncValues] only ever
//     lists values some stored object has.
//   - [Indexer.AddIndexers] back-fills the new indexes from the objects already stored and
//     rejects a name that is already in use.
//   - [Indexer.Replace] swaps the whole content and rebuilds every index.
//   - Objects are stored and returned as given (for pointer types: the same pointers). They are
//     shared with every reader: never mutate an object after handing it to the store or after
//     getting it back. Index values are computed when an object is written, not when it is read.
//
// # Where informerkit differs from client-go
//
//   - An [IndexFunc] or [KeyFunc] that fails makes the write return an error (an [*IndexError]
//     naming the index and the key, or a [*KeyError]) and leaves the store exactly as it was.
//     client-go panics in that case. All index values of a write are computed before anything
//     is changed.
//   - The indexed values of each stored object are remembered, so an update or delete never
//     calls the index functions on the old object, and an update whose indexed values did not
//     change does no index work at all.
//   - Index functions run outside the store's lock, so a slow index function does not block
//     readers.
//   - [Indexer.GetIndexers] returns a copy, not the live map.
//   - Extra methods for the informer: [Indexer.Upsert] (Get+Add/Update in one step),
//     [Indexer.DeleteByKey], non-allocating iteration with [Indexer.Range] and
//     [Indexer.RangeByIndex], [Indexer.Len] and [Indexer.LastSyncResourceVersion].
//
// Objects live in a slab addressed by 32-bit slots (slab.go); index sets hold slots, small
// ones as slices and large ones as maps (set.go), so a lookup by index reaches objects
// without a second hash lookup by key.
package indexer
