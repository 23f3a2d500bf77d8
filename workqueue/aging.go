package workqueue

// Priority aging (Config.Aging). Strict priorities starve: a controller that gives the objects
// of its initial list a low priority never reaches them while live events keep its workers
// busy (controller-runtime#3496). With aging, an item that has waited Aging at a priority
// below the highest waiting one is aged, and while any item is aged, Gets alternate: one
// serves the highest priority as usual, the next serves the level whose oldest item is the
// oldest aged one (the higher priority on a tie). Within that level the usual order applies
// (FIFO, or the fair rotation), so in a FIFO queue the aged item itself is handed out.
//
// The bound: an item waits Aging, then at most twice as many Gets as there are items that
// are older than it at its priority and older aged items at other priorities (in a fair
// queue, times the rotation of tenants at its level). Live work keeps at least half of the
// Gets. Items do not move between levels, so the order within each level is unchanged.

// pickLevel returns the index of the level the next Get serves. q.queued must be > 0.
func (q *queue[T]) pickLevel() int {
	top := 0
	for q.levels[top].live == 0 {
		top++
	}
	if q.aging == 0 {
		return top
	}
	if q.agedTurn {
		q.agedTurn = false
		return top
	}
	lower := false
	for j := top + 1; j < len(q.levels) && !lower; j++ {
		lower = q.levels[j].live > 0
	}
	if !lower {
		return top // no clock read when one priority is waiting
	}
	now := q.now()
	best, bestAt := -1, int64(0)
	for j := top + 1; j < len(q.levels); j++ {
		if q.levels[j].live == 0 {
			continue
		}
		// Levels are sorted from high to low priority: a strict < keeps the higher priority
		// among equally old items.
		if at := q.oldestAt(j); now-at >= q.aging && (best < 0 || at < bestAt) {
			best, bestAt = j, at
		}
	}
	if best < 0 {
		return top
	}
	q.agedTurn = true
	return best
}

// oldestAt returns when the oldest item waiting at level i started to wait there. The level
// must have a live item. Stale slots at the head of the ring it reads are dropped.
func (q *queue[T]) oldestAt(i int) int64 {
	lv := &q.levels[i]
	r := &lv.r
	if q.fair != nil {
		r = &lv.age
	}
	for {
		s := r.buf[r.head]
		idx := uint32(s)
		if q.slab[idx].gen == uint32(s>>32) {
			return q.enqueuedAt[idx]
		}
		r.pop()
	}
}
