// Package listwatch lists and watches only one replica's share of a collection: the objects
// whose hash (package sharding: FNV-1a of the uid, the namespace, or the uid of the
// controller owner) falls in the ranges the replica holds now. The share comes from a Share
// (a sharding/ring Ring) and moves as replicas join and leave.
//
// Where the kube-apiserver serves shard selectors (1.36 with the ShardedListAndWatch feature
// gate), every LIST and WATCH carries the held ranges and the server sends only them; where
// it does not, the objects are filtered here, before the cache. Either way an informer over
// New's ListerWatcher caches about 1/N of the collection. When the held ranges change, an
// open watch moves to the new ranges without a relist: DELETED for the objects it gives up,
// ADDED for those it gains. docs/sharding.md has the design.
//
// It sits below package informer, whose Factory shards the informers of a resource with it
// (Factory.Shard), so that a controller Manager can shard its caches.
package listwatch
