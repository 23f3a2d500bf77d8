package workqueue

import (
	"context"
	"fmt"
	"time"
)

// DefaultMaxCauses is how many causes a queue made by NewRateLimitingWithCauses keeps per
// item by default (CauseOptions.Max).
const DefaultMaxCauses = 8

// maxCausesLimit bounds CauseOptions.Max: the causes of an item are scanned at every add.
const maxCausesLimit = 256

// CausesInterface is a RateLimitingInterface whose items carry what added them: each add
// may record a cause (a value of type C, such as the watch event behind it), and
// GetWithCauses hands out, with the item, every cause recorded since the item was last handed
// out. The queue coalesces an item's adds as any queue does, and merges their causes with
// it: an item added three times while it waits is handed out once with three causes (or
// fewer, merged by CauseOptions.Merge). A cause recorded while the item is being processed
// goes with its next hand-out, like the add itself. At most CauseOptions.Max causes are
// kept per hand-out; later ones are counted in Causes.Dropped.
//
// The plain methods (Add, AddAfter, Get, ...) work as on any queue: an add without a cause
// records none, and an item handed out by Get or GetWithContext loses its causes.
type CausesInterface[T comparable, C any] interface {
	RateLimitingInterface[T]

	// AddWithCause is AddWithPriority that also records cause for the item's next hand-out.
	// It is ignored, cause included, after ShutDown.
	AddWithCause(item T, priority int, cause C)

	// AddAfterWithCause is AddAfter that also records cause, when the delay ends: a cause
	// given with a delay joins the item's causes when the item is added, not before, so an
	// item handed out while the delay is pending does not carry it. Causes given to several
	// AddAfterWithCause calls of one item join together when its one pending delay ends (at
	// the earliest of the ready times). ShutDown drops them with the delays.
	AddAfterWithCause(item T, d time.Duration, cause C)

	// AddRateLimitedWithCause is AddRateLimited that records cause as AddAfterWithCause does.
	AddRateLimitedWithCause(item T, cause C)

	// GetWithCauses is GetWithContext that also returns the item's causes, appended to
	// buf[:0] (pass a buffer to reuse its memory, or nil: a slice of the exact size is made
	// when there are causes). The queue keeps no reference to them afterwards.
	GetWithCauses(ctx context.Context, buf []C) (item T, causes Causes[C], shutdown bool, err error)
}

// Causes are the causes of one hand-out of an item.
type Causes[C any] struct {
	// List holds the causes kept, in the order they were recorded (a merged cause at the
	// place of the first of those it merged).
	List []C
	// Dropped counts the causes recorded past CauseOptions.Max and not kept.
	Dropped int
}

// CauseOptions are the optional settings of NewRateLimitingWithCauses.
type CauseOptions[C any] struct {
	// Max bounds the causes kept per hand-out of an item (default DefaultMaxCauses, at most
	// 256): the first Max distinct causes are kept and the rest counted, so the memory of a
	// queue stays bounded however often its items are added.
	Max int
	// Merge, if set, is asked whether a new cause repeats one already kept for the item
	// (for example another update of the same object); if it returns true it has folded c
	// into *kept (a count, the newest version) and c is not kept apart. It runs under the
	// queue's lock, once per kept cause at most: it must be quick and must not call the
	// queue. Default nil: every cause is kept apart until Max.
	Merge func(kept *C, c C) bool
}

// NewRateLimitingWithCauses returns a rate-limiting queue whose items carry their causes
// (see CausesInterface). A nil limiter means DefaultControllerRateLimiter. It fails if
// opts.Max is negative or above 256.
//
// The causes live in a table parallel to the queue's entries, so recording one allocates
// nothing once the table has grown (a merged cause, or the first of an item, never does).
func NewRateLimitingWithCauses[T comparable, C any](limiter RateLimiter[T], cfg Config, opts CauseOptions[C]) (CausesInterface[T, C], error) {
	if opts.Max < 0 || opts.Max > maxCausesLimit {
		return nil, fmt.Errorf("workqueue: CauseOptions.Max %d is not within [0, %d]", opts.Max, maxCausesLimit)
	}
	if opts.Max == 0 {
		opts.Max = DefaultMaxCauses
	}
	if limiter == nil {
		limiter = DefaultControllerRateLimiter[T]()
	}
	q := &causedQueue[T, C]{queue: newQueue(cfg, limiter)}
	q.t.max, q.t.merge = opts.Max, opts.Merge
	q.mu.Lock() // orders the hooks' installation before any use by another goroutine
	q.cs = &q.t
	q.mu.Unlock()
	return q, nil
}

// causedQueue is a queue with a cause table.
type causedQueue[T comparable, C any] struct {
	*queue[T]
	t causeTable[C]
}

func (q *causedQueue[T, C]) AddWithCause(item T, priority int, cause C) {
	var p int32
	if q.priorities {
		p = int32(min(max(priority, -1<<31), 1<<31-1))
	}
	h := q.hash(item)
	q.mu.Lock()
	if !q.shuttingDown {
		idx := q.entryOf(item, h)
		q.markDirty(idx, p)
		q.t.add(&q.t.pending[idx], cause)
	}
	q.mu.Unlock()
}

func (q *causedQueue[T, C]) AddAfterWithCause(item T, d time.Duration, cause C) {
	h := q.hash(item)
	q.mu.Lock()
	if !q.shuttingDown {
		idx, delayed := q.addAfterLocked(item, h, d)
		if delayed {
			q.t.add(q.t.delayedSet(idx), cause)
		} else {
			q.t.add(&q.t.pending[idx], cause)
		}
	}
	q.mu.Unlock()
}

func (q *causedQueue[T, C]) AddRateLimitedWithCause(item T, cause C) {
	q.AddAfterWithCause(item, q.rl.When(item), cause)
}

func (q *causedQueue[T, C]) GetWithCauses(ctx context.Context, buf []C) (item T, causes Causes[C], shutdown bool, err error) {
	if err := ctx.Err(); err != nil {
		return item, causes, false, err
	}
	q.mu.Lock()
	if shutdown, err := q.waitWithContext(ctx); shutdown || err != nil {
		q.mu.Unlock()
		return item, causes, shutdown, err
	}
	idx := q.take()
	s := &q.t.pending[idx]
	causes.List = buf[:0]
	if cap(buf) < s.n {
		causes.List = make([]C, 0, s.n)
	}
	for i := range s.n {
		causes.List = append(causes.List, *s.at(i))
	}
	causes.Dropped = s.dropped
	s.clear()
	item = q.slab[idx].item
	q.mu.Unlock()
	return item, causes, false, nil
}

// causeHooks are the calls the queue makes into its cause table, under q.mu, at the moments
// the table must follow the entries.
type causeHooks interface {
	grown()                 // the entry table grew by one entry
	promote(idx uint32)     // the delay of entry idx ended: its delayed causes join the pending ones
	dropDelayed(idx uint32) // ShutDown dropped the delay of entry idx
	forget(idx uint32)      // entry idx was handed out without its causes
	reset()                 // every entry was dropped
}

// causeTable holds the causes of every entry: those pending for its next hand-out and those
// waiting for its delay to end (allocated at the first delayed cause). An entry with pending
// causes is dirty and one with delayed causes has a pending delay, so the sets of a released
// entry are always empty and a reused entry starts clean.
type causeTable[C any] struct {
	max     int
	merge   func(*C, C) bool
	pending []causeSet[C] // parallel to the queue's slab
	delayed []causeSet[C] // parallel to the slab once a delayed cause was recorded, else nil
}

// causeSet is the causes of one entry: the first inline, so that the usual single cause
// needs no slice.
type causeSet[C any] struct {
	first   C
	more    []C // capacity kept across hand-outs: a warm entry records without allocating
	n       int
	dropped int
}

func (s *causeSet[C]) at(i int) *C {
	if i == 0 {
		return &s.first
	}
	return &s.more[i-1]
}

// clear empties the set, dropping its references (causes may hold contexts and strings)
// but keeping the slice's memory.
func (s *causeSet[C]) clear() {
	var zero C
	s.first = zero
	clear(s.more)
	s.more = s.more[:0]
	s.n, s.dropped = 0, 0
}

// add records c in s: merged into a kept cause, kept, or counted as dropped.
func (t *causeTable[C]) add(s *causeSet[C], c C) {
	if t.merge != nil {
		for i := range s.n {
			if t.merge(s.at(i), c) {
				return
			}
		}
	}
	switch {
	case s.n == 0:
		s.first = c
	case s.n < t.max:
		s.more = append(s.more, c)
	default:
		s.dropped++
		return
	}
	s.n++
}

// delayedSet returns the delayed causes of entry idx, allocating the table on first use.
func (t *causeTable[C]) delayedSet(idx uint32) *causeSet[C] {
	if t.delayed == nil {
		t.delayed = make([]causeSet[C], len(t.pending), cap(t.pending))
	}
	return &t.delayed[idx]
}

func (t *causeTable[C]) grown() {
	t.pending = grow(t.pending)
	if t.delayed != nil {
		t.delayed = grow(t.delayed)
	}
}

func (t *causeTable[C]) promote(idx uint32) {
	if t.delayed == nil {
		return
	}
	d := &t.delayed[idx]
	if d.n == 0 && d.dropped == 0 {
		return
	}
	p := &t.pending[idx]
	for i := range d.n {
		t.add(p, *d.at(i))
	}
	p.dropped += d.dropped
	d.clear()
}

func (t *causeTable[C]) dropDelayed(idx uint32) {
	if t.delayed != nil {
		t.delayed[idx].clear()
	}
}

func (t *causeTable[C]) forget(idx uint32) { t.pending[idx].clear() }

func (t *causeTable[C]) reset() { t.pending, t.delayed = nil, nil }
