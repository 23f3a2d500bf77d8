// Package informer is informerkit's shared informer: a reflector lists and watches one
// collection into a DeltaFIFO; handleDeltas pops the deltas, updates an indexed cache and hands
// a notification per change to every registered handler, each through its own listener. The
// package also holds the informer factory, listers and label selectors.
//
// # Correspondence with client-go
//
//	client-go                                       informerkit (package informer)
//	tools/cache/shared_informer.go
//	  SharedIndexInformer, NewSharedIndexInformer   SharedIndexInformer[T], *Informer[T], New
//	  RunWithContext, HasSynced, HasSyncedChecker   Run(ctx), HasSynced, Synced() <-chan
//	  LastSyncResourceVersion, GetStore/GetIndexer  same names
//	  AddIndexers, SetTransform, IsStopped          same names
//	  SetWatchErrorHandlerWithContext               SetWatchErrorHandler
//	  AddEventHandler[WithResyncPeriod|WithOptions] same names, returning *Registration[T]
//	  ResourceEventHandlerRegistration              *Registration[T]: HasSynced, Synced, Done,
//	                                                Backlog
//	  RemoveEventHandler                            RemoveEventHandler, RemoveEventHandlerAndWait
//	  sharedProcessor, processorListener            the informer's listener list, listener[T]
//	tools/cache/controller.go
//	  processDeltas (HandleDeltas)                  the informer's handleDeltas
//	  ResourceEventHandler[Funcs]                   ResourceEventHandler[T], ...Funcs[T]
//	  FilteringResourceEventHandler                 FilteringResourceEventHandler[T]
//	  DeletedFinalStateUnknown                      OnDelete(obj, finalStateUnknown bool)
//	tools/cache/listers.go, generated listers       Lister[T], NamespaceLister[T]
//	informers/factory.go (SharedInformerFactory)    Factory, NewFactory, For[T], Start,
//	                                                Shutdown, WaitForCacheSync
//	apimachinery/pkg/labels                         package labels
//
// # Behaviour (as client-go)
//
//   - One listener per handler, running the handler on its own goroutine; a handler never runs
//     concurrently with itself.
//   - A handler added after the informer started first gets OnAdd(obj, true) for every cached
//     object, then every later change.
//   - Per-handler resync periods (minimum one second): the handler gets OnUpdate(obj, obj) —
//     old and new with the same resourceVersion — for every cached object each period. An
//     update whose resourceVersion did not change for another reason (a relist returning an
//     unchanged object) reaches no handler.
//   - Deletes carry the last known state; a delete inferred by a relist (the watch missed it)
//     has finalStateUnknown set.
//   - SetTransform and SetWatchErrorHandler work only before Run.
//
// # Where it does better than client-go
//
//   - Bounded, coalescing delivery: a slow handler cannot grow memory without limit (client-go's
//     listener buffer is unbounded); see the next section.
//   - Handler panics are recovered, logged (slog, with the stack) and counted
//     (Backlog.Panics); the listener goes on with the next notification. client-go crashes.
//   - Registration.HasSynced and Synced() wait until this handler has processed every
//     initial-list object, not just until the cache is full. Done() closes when a removed (or
//     stopped) handler has returned from its last call, so removal can be awaited
//     (RemoveEventHandlerAndWait); a handler may remove itself.
//   - Resyncs are generated per handler from the cache, on each handler's own schedule, under
//     the same lock as handleDeltas, instead of Sync deltas through the DeltaFIFO at the
//     smallest period of all handlers.
//   - The default transform (DropManagedFields) removes metadata.managedFields before an
//     object is cached: for structs embedding apiclient.ObjectMeta, for
//     *apiclient.Unstructured (the metadata map's key), and for client-go typed objects.
//     Declaring only the fields a controller reads (a struct embedding TypeMeta and
//     ObjectMeta) keeps the cache several times smaller; see bench/README.md, section
//     "informer".
//   - Structural sharing: identical parts of cached objects are stored once (see the
//     section below), which halves the cache of a typical pod informer.
//   - A resource that is not served (404: a CRD not installed yet) is retried with the
//     reflector's backoff until it appears, logged at most once per NotFoundLogInterval and
//     counted in Stats().NotFound, instead of one error line per attempt.
//   - Staleness() tells readiness checks how long ago the cache was last confirmed current
//     (list, event, bookmark); Stats() has the reflector's figures.
//   - WaitForCacheSync returns a *NotSyncedError naming the informers that did not sync.
//
// # Bounded, coalescing delivery
//
// A listener delivers every notification in order while its handler is less than a buffer
// (HandlerOptions.BufferSize, default 1024) behind. Past that it merges each new notification
// into the pending one of the same key:
//
//	pending            + incoming     = delivered
//	add(a)             + update(→b)   = add(b)            (isInInitialList kept)
//	add(a)             + delete       = nothing           (the handler never saw the key)
//	update(o→a)        + update(→b)   = update(o→b)       (first old, last new)
//	update(o→a)        + delete(d)    = delete(d)         (a delete wins, with the final state)
//	delete(d)          + add(b)       = delete(d), add(b) (two calls: the object was replaced)
//	delete(d), add(b)  + update(→c)   = delete(d), add(c)
//	delete(d), add(b)  + delete(e)    = delete(d)         (b was never seen; d is what it knew)
//
// So the handler's replayed view (the objects it was told exist) always converges to the
// cache, every update's old object is the state the handler saw last, and no handler hears
// of an update or delete for a key it was not told exists. Per-key order is kept; different
// keys may be delivered out of their original interleaving. Coalescing stops when the backlog
// has drained to half the buffer. The queue never holds more than the buffer plus one entry
// per key (so at most the buffer plus the cache size plus pending deletes);
// Registration.Backlog reports pending, peak, coalesced, delivered and panicked counts.
//
// # Structural sharing
//
// By default every object is, after the transform and before it is queued for the cache,
// walked by the informer's sharer: each string, pointed-to value, slice and map in it that is
// equal by content to one an earlier object holds is replaced by that one (the object itself,
// the pointer T, never is), and slices whose capacity exceeds their length (JSON decoding
// doubles capacities) are reallocated to their length. The pods of one ReplicaSet then share
// their labels, annotations, owner references, container env, ports, resources, probes and
// volume sources, and all pods share their namespaces, images, node names, condition types
// and so on. Values in interface{} (Unstructured) are shared too, path by path. Unexported
// fields are compared (strings by content, references by address) but never changed.
//
// The sharer remembers canonical values through weak pointers: it never keeps a value alive
// that no object holds, so the values of deleted objects are freed as usual and their table
// entries dropped at the next sweep. Values that are nearly always unique (names, UIDs,
// IPs, timestamps) are detected per struct field (per JSON path for Unstructured) and no
// longer looked up, except for sparse probes. Stats().Sharing has the figures; the cost is a
// few microseconds of CPU per pod, on the reflector's goroutine (see bench/README.md, section
// "informer", for the cache size and sync time with and without it).
//
// Cached objects are read-only (as in client-go), and sharing makes the rule sharper:
// mutating a shared sub-value (a pod's labels map, a container's env slice) changes it in
// every cached object that shares it, possibly hundreds, and races with handlers reading
// them. Objects shared later are compared by content and do not pick the change up. DeepCopy
// (or copy the parts you change) before modifying anything the informer hands out. The
// sharer rewrites references inside the objects it is given, in place, with equal ones: a
// value a transform puts into objects (a package-level default, say) becomes part of the
// cache and must not be written by other code either. Turn sharing off with
// Options.DisableSharing or FactoryOptions.DisableSharing.
//
// # DeltaFIFO
//
// handleDeltas consumes deltafifo.Atomic with UnlockWhileProcessing, as client-go v0.36
// defaults to (RealFIFO with atomic events and unlocked processing): deltas in arrival order,
// a relist as one ReplacedAll delta that handleDeltas diffs against the cache
// (deltafifo.ApplyReplacedAll), and a reflector that keeps reading the watch while handlers
// are being fed, because the FIFO never reads the cache. Deltas are popped in batches
// (Options.BatchSize) under one lock acquisition. The package's tests and benchmarks also
// run the other deltafifo layouts.
package informer
