package workqueue

// entry is the queue's whole knowledge of one item. Entries live in a dense table (slab)
// indexed by uint32; the item index (index.go) gives an item's entry.
type entry[T comparable] struct {
	item    T
	prio    int32  // priority it waits with (or will wait with after Done)
	gen     uint32 // bumped when the entry moves to another ring; stale ring slots carry an older gen
	heapPos int32  // position in the delay heap, -1 if no delay is pending
	flags   uint8
}

// compactAbove is the peak number of live entries above which an idle queue (no item
// queued, processing or delayed) drops its tables so that a burst does not pin memory.
const compactAbove = 4096

// alloc gives item, of hash h and not yet indexed, a fresh entry and indexes it.
func (q *queue[T]) alloc(item T, h uint32) uint32 {
	var idx uint32
	if n := len(q.free); n > 0 {
		idx = q.free[n-1]
		q.free = q.free[:n-1]
	} else {
		idx = uint32(len(q.slab))
		q.slab = grow(q.slab)
		if q.metrics != nil {
			q.times = grow(q.times)
		}
		if q.fair != nil {
			q.fair.of = grow(q.fair.of)
		}
		if q.aging != 0 {
			q.enqueuedAt = grow(q.enqueuedAt)
		}
		if q.cs != nil {
			q.cs.grown()
		}
	}
	e := &q.slab[idx]
	e.item = item
	e.heapPos = -1
	q.indexInsert(h, idx)
	q.live++
	q.churn++
	if q.live > q.peak {
		q.peak = q.live
	}
	return idx
}

// entryOf returns the entry of item, whose hash is h, giving it a fresh one if it has none.
func (q *queue[T]) entryOf(item T, h uint32) uint32 {
	if idx, ok := q.lookupHashed(item, h); ok {
		return idx
	}
	return q.alloc(item, h)
}

// grow appends a zero element, doubling the capacity when it is full (append grows large
// slices by only 1.25×, which copies a big table many times over).
func grow[E any](s []E) []E {
	if len(s) < cap(s) {
		return s[:len(s)+1]
	}
	ns := make([]E, len(s)+1, max(2*cap(s), 64))
	copy(ns, s)
	return ns
}

// release forgets the entry, whose item has hash h: the queue keeps no reference to the item
// afterwards. The generation survives so that stale ring slots stay recognisable.
func (q *queue[T]) release(idx, h uint32) {
	e := &q.slab[idx]
	q.indexDelete(h, idx)
	if q.fair != nil {
		q.fairRelease(idx)
	}
	var zero T
	e.item = zero
	e.flags = 0
	e.prio = 0
	q.free = append(q.free, idx)
	q.live--
}

// maybeCompact drops the tables of an idle queue that once held many items (see compactAt).
func (q *queue[T]) maybeCompact() {
	if q.live != 0 || q.peak < q.compactAt || q.churn>>min(q.compactions, 6) < q.peak {
		return
	}
	q.compactions++
	q.resetTables()
}

// resetTables forgets every entry at once. Only for a queue with no live entry, or one whose
// live entries are all being dropped.
func (q *queue[T]) resetTables() {
	q.slots, q.used = nil, 0
	q.slab, q.free, q.times, q.heap, q.enqueuedAt = nil, nil, nil, nil, nil
	if q.fair != nil {
		q.fair.reset()
	}
	if q.cs != nil {
		q.cs.reset()
	}
	q.levels = q.levels[:1]
	q.levels[0] = level{}
	q.live, q.peak, q.churn = 0, 0, 0
}
