// Package deltafifo is the queue between a reflector (the producer: Add, Update, Delete,
// Replace, Resync) and an informer (the consumer: Pop), generic over the object type. It has
// three layouts behind one contract, Queue:
//
//   - FIFO (New) is client-go's DeltaFIFO: one queue position per key holding all its
//     deltas, oldest first. A delete of a key neither queued nor in KnownObjects is dropped;
//     two consecutive deletes merge.
//   - RealFIFO (NewRealFIFO) is client-go's RealFIFO: one position per delta, in arrival
//     order; every delete is queued.
//   - AtomicFIFO (NewAtomicFIFO) is client-go's RealFIFO with AtomicEvents: a relist is one
//     ReplacedAll delta (or, incrementally, ReplacedChunk deltas and a ReplacedEnd) that the
//     consumer applies with ApplyReplacedAll (ApplyReplacedChunk, ApplyReplacedEnd), and the
//     FIFO never reads the consumer's store, so processing may run unlocked. The informer
//     uses it, with UnlockWhileProcessing and PopBatch.
//
// Rules common to the layouts:
//
//   - Replace queues Replaced deltas for the listed objects and typed tombstones (Deleted,
//     FinalStateUnknown) for keys that are queued or known but not listed; Resync queues Sync
//     deltas for known keys with nothing queued (SyncAll in an AtomicFIFO).
//   - HasSynced: the first Replace sets the count of queue positions to pop; an Add, Update
//     or Delete before any Replace marks the queue synced at once.
//   - The transformer runs on enqueue, never on tombstones and Sync deltas. A failing key
//     function or transformer fails the call with nothing queued.
//   - BeginReplace hands a relist over object by object (Relist); once drained after
//     Finish the consumer is where Replace would have left it, but the list is never held
//     whole. While a replacement is open every other write fails with ErrReplaceInProgress.
//
// Where informerkit differs from client-go:
//
//   - Tombstones are typed: a Delta with FinalStateUnknown, not a DeletedFinalStateUnknown
//     wrapper to type-switch on.
//   - Pop and PopBatch take a context; a process function can keep its deltas with Requeue.
//   - Replace and Add validate before queueing: an error leaves the queue unchanged.
//   - The Deltas slice given to process is reused after it returns (Clone to keep it): Add
//     plus Pop allocates nothing beyond the key.
//   - Synced is a channel; relists can be incremental (BeginReplace), where client-go holds
//     the whole new list next to the whole cache.
//
// The figures behind the informer's choice of layout are in bench/README.md, "deltafifo".
package deltafifo
