// Package informer is client-go's shared informer, typed: a reflector lists and watches one
// collection into a DeltaFIFO (deltafifo.AtomicFIFO); the informer pops the deltas, updates
// an indexed cache and hands every change to each registered handler through the handler's
// own listener. The package also holds the Factory (client-go's SharedInformerFactory, with
// InformerFor[T] in place of generated code) and the Lister.
//
// As in client-go:
//
//   - A handler runs on its listener's goroutine, never concurrently with itself; one added
//     after the start first gets OnAdd(obj, true) for every cached object.
//   - Resync (at least a second) calls OnUpdate(obj, obj) for every cached object; an update
//     that does not change the resourceVersion reaches no handler.
//   - A delete carries the last known state; finalStateUnknown is set when a relist inferred
//     it. SetTransform and SetWatchErrorHandler work only before Run.
//
// Where it differs from client-go:
//
//   - Delivery is bounded: past HandlerOptions.BufferSize (DefaultBufferSize) pending
//     notifications of one key are merged, so that the handler's view still converges to
//     the cache (table below) and Registration.Backlog reports the backlog. client-go's
//     buffer grows without limit.
//   - A handler's panic is recovered, logged and counted (Backlog.Panics).
//   - Registration.Synced waits until this handler has processed the initial list; Done,
//     and RemoveEventHandlerAndWait, until a removed handler has returned.
//   - Resyncs are made per handler from the cache on each handler's schedule, not as Sync
//     deltas at the smallest period of all handlers.
//   - Objects are cached after DropManagedFields (the default transform) and structural
//     sharing (below); Options.DisableSharing turns sharing off.
//   - Relists are handed to the cache object by object (no second copy of the list).
//   - A resource that is not served (404) is retried quietly (Stats().NotFound); Staleness
//     tells readiness checks how old the cache's last confirmation is; WaitForCacheSync's
//     *NotSyncedError names the laggards.
//   - The transform runs once per object received, streaming-list syncs included (client-go
//     runs it twice there and recommends idempotent transforms); it need not be idempotent.
//   - RemoveEventHandler with a nil registration or another informer's returns
//     ErrForeignRegistration (client-go returns nil and removes nothing); AddEventHandler on
//     a stopped informer returns an error matching ErrStopped (client-go's is unexported).
//   - LastStoreSyncResourceVersion (AppliedResourceVersion) is the informer's: the indexer
//     holds objects only. client-go puts it on the store (GetStore()).
//
// Merging of pending notifications, per key, once a handler is BufferSize behind (until the
// backlog is down to half of it):
//
//	pending            + incoming     = delivered
//	add(a)             + update(→b)   = add(b)
//	add(a)             + delete       = nothing
//	update(o→a)        + update(→b)   = update(o→b)
//	update(o→a)        + delete(d)    = delete(d)
//	delete(d)          + add(b)       = delete(d), add(b)
//	delete(d), add(b)  + update(→c)   = delete(d), add(c)
//	delete(d), add(b)  + delete(e)    = delete(d)
//
// Structural sharing: before an object is cached, every string, pointed-to value, slice and
// map in it that is equal by content to one an earlier object holds is replaced by that one
// (internal/share). Cached objects are read-only, as in client-go, and sharing makes the rule
// sharper: a shared sub-value may belong to hundreds of cached objects. DeepCopy (or copy the
// parts you change) before modifying anything the informer hands out; a value a transform
// puts into objects becomes part of the cache too.
//
// The figures (cache size, time to sync, events per second, relist memory) are in
// bench/README.md, "Shared informer" and "Relist memory".
package informer
