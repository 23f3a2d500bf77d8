package workqueue

import (
	"math"
	"time"
)

// DelayingInterface is an Interface that can also add an item after a delay (client-go's
// TypedDelayingInterface), typically to retry a failed item later without a hot loop.
type DelayingInterface[T comparable] interface {
	Interface[T]

	// AddAfter adds item to the queue once d has passed. A d <= 0 is a plain Add. If the item
	// already has a pending delay, the earlier of the two ready times is kept, and the item still
	// has one pending delay. When the delay ends the item is added as by Add (so nothing happens
	// if it is still waiting in the queue). AddAfter is ignored after ShutDown, and ShutDown drops
	// every pending delay.
	//
	// All pending delays share one heap ordered by ready time (equal times in call order) and
	// one runtime timer armed for the earliest; no goroutine waits while nothing is due.
	AddAfter(item T, d time.Duration)
}

// NewDelaying returns a queue with AddAfter (client-go's NewTypedDelayingQueueWithConfig). No
// goroutine or timer exists until the first AddAfter with a positive delay (or unless the
// Config enables metrics).
func NewDelaying[T comparable](cfg Config) DelayingInterface[T] {
	return newQueue[T](cfg, nil)
}

func (q *queue[T]) AddAfter(item T, d time.Duration) {
	h := q.hash(item)
	q.mu.Lock()
	if !q.shuttingDown {
		q.addAfterLocked(item, h, d)
	}
	q.mu.Unlock()
}

// addAfterLocked is AddAfter of item, of hash h, on a queue that is not shut down, with q.mu
// held. It returns the item's entry and whether the item now has a pending delay (false: a
// d <= 0 added it at once).
func (q *queue[T]) addAfterLocked(item T, h uint32, d time.Duration) (idx uint32, delayedAdd bool) {
	if q.metrics != nil {
		q.metrics.retries.Inc()
	}
	idx = q.entryOf(item, h)
	if d <= 0 {
		q.markDirty(idx, 0)
		return idx, false
	}
	now := q.now()
	at := now + int64(d)
	if at < now {
		at = math.MaxInt64
	}
	q.seq++
	e := &q.slab[idx]
	if e.heapPos >= 0 {
		i := int(e.heapPos)
		if at >= q.heap[i].at {
			return idx, true
		}
		q.heap[i].at, q.heap[i].seq = at, q.seq
		q.siftUp(i)
	} else {
		q.heap = grow(q.heap)
		i := len(q.heap) - 1
		q.heap[i] = delayed{at: at, seq: q.seq, idx: idx}
		e.heapPos = int32(i)
		q.siftUp(i)
	}
	if at < q.timerAt {
		q.arm(at, now)
	}
	return idx, true
}

// arm sets the single timer to fire at at.
func (q *queue[T]) arm(at, now int64) {
	q.timerAt = at
	d := time.Duration(at - now)
	if q.timer == nil {
		q.timer = time.AfterFunc(d, q.fire)
	} else {
		q.timer.Reset(d)
	}
}

// fire runs on the timer: it adds every item whose delay has ended and re-arms the timer for
// the next one. A spurious call (after a Reset raced with the timer) finds nothing due.
func (q *queue[T]) fire() {
	q.mu.Lock()
	q.timerAt = noTimer
	if q.shuttingDown {
		q.mu.Unlock()
		return
	}
	now := q.now()
	for len(q.heap) > 0 && q.heap[0].at <= now {
		idx := q.heap[0].idx
		q.removeHeap(0)
		q.markDirty(idx, 0)
		if q.cs != nil {
			q.cs.promote(idx)
		}
	}
	if len(q.heap) > 0 {
		q.arm(q.heap[0].at, now)
	}
	q.mu.Unlock()
}

// dropDelays forgets every pending delay (ShutDown).
func (q *queue[T]) dropDelays() {
	if q.timer != nil {
		q.timer.Stop()
	}
	q.timerAt = noTimer
	delayedOnly := 0
	for _, d := range q.heap {
		if q.slab[d.idx].flags == 0 {
			delayedOnly++
		}
	}
	if delayedOnly == q.live {
		// Nothing but delays: drop the tables instead of deleting entry by entry.
		q.resetTables()
		return
	}
	for _, d := range q.heap {
		e := &q.slab[d.idx]
		e.heapPos = -1
		if q.cs != nil {
			q.cs.dropDelayed(d.idx)
		}
		if e.flags == 0 {
			q.release(d.idx, q.hash(e.item))
		}
	}
	q.heap = nil
	q.maybeCompact()
}

// The delay heap is 4-ary (half the depth of a binary heap, and a node's four children share
// a cache line) and sifts with a hole instead of swaps, so each level costs one element move
// and one heapPos update in the entry table.

func delayedLess(a, b *delayed) bool {
	return a.at < b.at || (a.at == b.at && int32(a.seq-b.seq) < 0)
}

// place puts x at position i of the heap and records the position in its entry.
func (q *queue[T]) place(i int, x delayed) {
	q.heap[i] = x
	q.slab[x.idx].heapPos = int32(i)
}

func (q *queue[T]) siftUp(i int) {
	x := q.heap[i]
	for i > 0 {
		p := (i - 1) / 4
		if !delayedLess(&x, &q.heap[p]) {
			break
		}
		q.place(i, q.heap[p])
		i = p
	}
	q.place(i, x)
}

func (q *queue[T]) siftDown(i int) {
	h := q.heap
	n := len(h)
	x := h[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for j := c + 1; j < min(c+4, n); j++ {
			if delayedLess(&h[j], &h[m]) {
				m = j
			}
		}
		if !delayedLess(&h[m], &x) {
			break
		}
		q.place(i, h[m])
		i = m
	}
	q.place(i, x)
}

// removeHeap removes the heap element at i and clears its entry's heap position.
func (q *queue[T]) removeHeap(i int) {
	last := len(q.heap) - 1
	q.slab[q.heap[i].idx].heapPos = -1
	x := q.heap[last]
	q.heap = q.heap[:last]
	if i != last {
		q.heap[i] = x
		q.siftDown(i)
		if q.slab[x.idx].heapPos == int32(i) {
			q.siftUp(i)
		}
	}
	if last == 0 && cap(q.heap) > ringKeep {
		q.heap = nil
	}
}

// delayed is one pending AddAfter in the delay heap.
type delayed struct {
	at  int64  // ready time, nanoseconds since queue.epoch (monotonic)
	seq uint32 // tie-breaker among equal times: earlier AddAfter first (compared modulo 2^32)
	idx uint32
}
