// Package indexer is informerkit's thread-safe, generic object store with named secondary
// indexes: the cache an informer fills and a lister reads.
//
// # Correspondence with client-go
//
// It covers what client-go spreads over four files of k8s.io/client-go/tools/cache:
//
//   - thread_safe_store.go (threadSafeMap, storeIndex): the locked map of key → object and the
//     indices indexName → indexedValue → set of keys. Here: the unexported store type behind
//     [New].
//   - index.go (Indexer, IndexFunc, Indexers, NamespaceIndex, MetaNamespaceIndexFunc): the same
//     names, generic over the object type: [Indexer], [IndexFunc], [Indexers],
//     [NamespaceIndex], [MetaNamespaceIndexFunc].
//   - store.go (KeyFunc, MetaNamespaceKeyFunc, SplitMetaNamespaceKey, NewIndexer): [KeyFunc],
//     [MetaNamespaceKeyFunc], [SplitMetaNamespaceKey], [New].
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
// # Representation
//
// Objects live in a slab ([]entry) addressed by a 32-bit slot number; a map translates keys to
// slots. Index sets hold slot numbers rather than key strings: a set of up to 32 members is a
// small slice scanned linearly, a larger one a map[uint32]struct{}. A lookup by index therefore
// reaches objects without a second hash lookup by key. A single-valued index result is
// interned: every object whose values are exactly {v} shares one []string{v}.
package indexer
