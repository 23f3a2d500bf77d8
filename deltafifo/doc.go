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
//     consumer applies to its own store (package informer does, to its cache), and the FIFO
//     never reads that store, so processing may run unlocked. The informer uses it, with
//     UnlockWhileProcessing and PopBatch.
//
// In every layout Replace queues Replaced deltas and typed tombstones (a Delta with
// FinalStateUnknown, not a wrapper to type-switch on) for keys queued or known but not
// listed; the first Replace decides HasSynced; BeginReplace hands a relist over object by
// object (Relist): queued whole when it completes, nothing of it if it fails, and holding
// only the objects the consumer does not already have. Unlike client-go, Pop and PopBatch take
// a context, writes validate before queueing (an error leaves the queue unchanged), and the
// Deltas given to process are reused after it returns (Clone to keep them).
//
// docs/deltafifo.md has the full rules and differences; the figures behind the informer's
// choice of layout are in bench/README.md, "deltafifo".
package deltafifo
