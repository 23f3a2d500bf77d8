// Package informer is client-go's shared informer, typed: a reflector lists and watches one
// collection into a DeltaFIFO (deltafifo.AtomicFIFO); the informer pops the deltas, updates
// an indexed cache and hands every change to each registered handler through the handler's
// own listener. The package also holds the Factory (client-go's SharedInformerFactory, with
// InformerFor[T] in place of generated code; Acquire for informers that stop when their last
// reference is released), ScopedInformer (namespaces and selector changed while it runs)
// and the Lister.
//
// As in client-go, a handler runs on its listener's goroutine, never concurrently with
// itself, and one added after the start first gets OnAdd(obj, true) for every cached object;
// a delete carries the last known state. Where it differs, in short (docs/informer.md lists
// every difference and the table of merged notifications):
//
//   - Delivery is bounded: past HandlerOptions.BufferSize pending notifications of one key
//     are merged so that the handler's view still converges to the cache, and
//     Registration.Backlog reports the backlog. client-go's buffer grows without limit.
//   - Registration.Synced waits until this handler has processed the initial list; a
//     handler's panic is recovered and counted; resyncs are made per handler from the cache.
//   - Relists reach the cache object by object, once complete: a failed list changes
//     nothing. Staleness tells readiness checks how old the cache's last confirmation is.
//
// Structural sharing: before an object is cached, every string, pointed-to value, slice and
// map in it that is equal by content to one an earlier object holds is replaced by that one
// (internal/share). Cached objects are read-only, as in client-go, and sharing makes the rule
// sharper: a shared sub-value may belong to hundreds of cached objects. DeepCopy (or copy the
// parts you change) before modifying anything the informer hands out; a value a transform
// puts into objects becomes part of the cache too.
// Figures: bench/README.md, "Shared informer", "Relist memory", "Informer lifecycle".
package informer
