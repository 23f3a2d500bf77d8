// Package indexer is informerkit's thread-safe, generic object store with named secondary
// indexes: the cache an informer fills and a lister reads.
//
// It is client-go's tools/cache threadSafeMap, Indexer and key functions, generic, with the
// same names (Indexer, IndexFunc, Indexers, NamespaceIndex, MetaNamespaceKeyFunc, ...).
//
//   - Keys are whatever the [KeyFunc] returns; [MetaNamespaceKeyFunc] gives "namespace/name",
//     or "name" for cluster-scoped objects.
//   - Every index maps each indexed value to the set of keys of the objects that produced it;
//     a value whose set becomes empty is removed.
//   - [Indexer.AddIndexers] back-fills new indexes; [Indexer.Replace] swaps the whole content.
//   - Objects are stored and returned as given (for pointer types: the same pointers) and are
//     shared with every reader: never mutate an object after handing it to the store or after
//     getting it back. Index values are computed when an object is written, not when read.
//
// Where it differs from client-go (docs/indexer.md has the details): a failing [IndexFunc] or
// [KeyFunc] makes the write return an error ([*IndexError], [*KeyError]) and leaves the store
// as it was, where client-go panics; index functions run outside the lock, and an update
// whose indexed values did not change does no index work; extra methods serve the informer
// ([Indexer.Upsert], [Indexer.DeleteByKey], [Indexer.Range], [Indexer.RangeByIndex]).
//
// The files follow the concepts: indexer.go the interface and errors, store.go the keyed
// store (objects in a slab of 32-bit slots, slab.go), index.go the indexes (sets of slots,
// set.go), replace.go Replace's merge.
package indexer
