package workqueue

// ringKeep is the largest ring buffer (in slots) kept when a ring empties.
const ringKeep = 4096

// ring is a growable circular buffer of slots (gen<<32 | index).
type ring struct {
	buf  []uint64
	head int
	n    int
}

func (r *ring) push(v uint64) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = v
	r.n++
}

func (r *ring) pop() uint64 {
	v := r.buf[r.head]
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	return v
}

func (r *ring) grow() {
	size := 2 * len(r.buf)
	if size == 0 {
		size = 16
	}
	nb := make([]uint64, size)
	k := copy(nb, r.buf[r.head:])
	copy(nb[k:], r.buf[:r.head])
	r.buf, r.head = nb, 0
}

// reset empties the ring, dropping a large buffer.
func (r *ring) reset() { r.resetKeep(ringKeep) }

// resetKeep empties the ring, dropping a buffer of more than keep slots.
func (r *ring) resetKeep(keep int) {
	r.head, r.n = 0, 0
	if len(r.buf) > keep {
		r.buf = nil
	}
}

// keepLevels is how many priority levels a queue keeps when some are empty.
const keepLevels = 8

// level is the queue of one priority: a FIFO of slots, or in a fair queue (fair.go) the
// rotation of tenant ids, each tenant holding its own FIFO.
type level struct {
	prio int32
	live int // items waiting at this priority (FIFO: slots in r that are not stale)
	r    ring
	// age holds the slots in arrival order in a fair queue with aging (aging.go); stale
	// slots are skipped.
	age ring
}

// levelFor returns the level of priority p, creating it if needed. The pointer is valid until
// the next change to q.levels.
func (q *queue[T]) levelFor(p int32) *level {
	if len(q.levels) == 1 && p == 0 {
		return &q.levels[0]
	}
	i, ok := q.levelIndex(p)
	if !ok {
		q.levels = append(q.levels, level{})
		copy(q.levels[i+1:], q.levels[i:])
		q.levels[i] = level{prio: p}
	}
	return &q.levels[i]
}

// levelIndex finds priority p in the levels (sorted high to low), or where it belongs.
func (q *queue[T]) levelIndex(p int32) (int, bool) {
	lo, hi := 0, len(q.levels)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if q.levels[m].prio > p {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(q.levels) && q.levels[lo].prio == p
}

// levelEmptied is called when level i has no live slot left: its remaining slots are stale.
// Up to keepLevels empty levels are kept (with their buffers) for reuse; beyond that, empty
// levels other than 0 are removed so that many distinct priorities do not pile up.
func (q *queue[T]) levelEmptied(i int) {
	if q.fair != nil {
		q.fairLevelEmptied(&q.levels[i])
		q.levels[i].age.reset()
	}
	q.levels[i].r.reset()
	if q.levels[i].prio != 0 && len(q.levels) > keepLevels {
		copy(q.levels[i:], q.levels[i+1:])
		q.levels[len(q.levels)-1] = level{}
		q.levels = q.levels[:len(q.levels)-1]
	}
}

// enqueue puts the entry at the end of the level of its priority (of its tenant's FIFO there,
// in a fair queue). now is q.now() if the caller has read it, else negative: the clock is
// read only if aging needs it.
func (q *queue[T]) enqueue(idx uint32, now int64) {
	e := &q.slab[idx]
	lv := q.levelFor(e.prio)
	slot := uint64(e.gen)<<32 | uint64(idx)
	if q.fair != nil {
		q.fairEnqueue(lv, idx, slot)
	} else {
		lv.r.push(slot)
	}
	if q.aging != 0 {
		if now < 0 {
			now = q.now()
		}
		q.enqueuedAt[idx] = now
		if q.fair != nil {
			lv.age.push(slot)
		}
	}
	lv.live++
	q.queued++
}

// popLive pops the first slot of r that is not stale and returns its entry. r must hold one.
func (q *queue[T]) popLive(r *ring) uint32 {
	for {
		s := r.pop()
		idx := uint32(s)
		if q.slab[idx].gen == uint32(s>>32) {
			return idx
		}
		// stale: the entry moved to another priority (or, in an age ring, was handed out)
	}
}

// dequeue takes the next item: from the highest non-empty level, or from an aged one
// (aging.go). q.queued must be > 0.
func (q *queue[T]) dequeue() uint32 {
	i := q.pickLevel()
	lv := &q.levels[i]
	var idx uint32
	if q.fair != nil {
		idx = q.fairDequeue(lv)
	} else {
		idx = q.popLive(&lv.r)
	}
	lv.live--
	q.queued--
	if lv.live == 0 {
		q.levelEmptied(i)
	}
	return idx
}

// raise moves a waiting entry to the end of the higher priority p.
func (q *queue[T]) raise(idx uint32, p int32) {
	e := &q.slab[idx]
	i, _ := q.levelIndex(e.prio)
	if q.fair != nil {
		q.fairLeave(idx, e.prio)
	}
	q.levels[i].live--
	q.queued--
	if q.levels[i].live == 0 {
		q.levelEmptied(i)
	}
	e.gen++
	e.prio = p
	q.enqueue(idx, -1)
}
