package workqueue

import (
	"context"
	"hash/maphash"
	"math"
	"sync"
	"time"
)

// Interface is a deduplicating FIFO work queue for items of type T (client-go's TypedInterface).
//
// Every method is safe for concurrent use. The rules (see the package doc): an item waits in
// the queue at most once; Get hands an item to exactly one worker, which must call Done when it
// has finished; an item added again while a worker processes it is handed out again after Done.
type Interface[T comparable] interface {
	// Add marks item as needing processing. It does nothing if the item is already waiting in
	// the queue or after ShutDown. If a worker is processing the item, the item is queued again
	// when that worker calls Done.
	Add(item T)

	// AddWithPriority is Add with a priority. On a queue created with Config.Priorities, Get
	// hands out items with a higher priority first, FIFO among equal priorities; adding an item
	// that is already waiting with a higher priority than it has moves it to the end of that
	// higher priority (a re-Add never lowers a priority); adding an item that is being processed
	// with a higher priority makes it wait with that priority after Done. Plain Add, AddAfter and
	// AddRateLimited use priority 0. Priorities beyond the int32 range count as the nearest
	// int32. Without Config.Priorities the queue is a strict FIFO and
	// AddWithPriority is the same as Add, so code that enqueues can always state a priority and
	// the owner of the queue decides whether it counts.
	AddWithPriority(item T, priority int)

	// Len returns how many items wait to be handed out by Get. Items being processed and items
	// with a pending delay are not counted. It is informational: another goroutine may change
	// the queue right after the call.
	Len() int

	// Get blocks until an item can be handed out and returns it; the caller must call Done(item)
	// once it has finished with it. After ShutDown, Get keeps handing out the items still
	// waiting and returns shutdown == true (and the zero T) once none is left.
	Get() (item T, shutdown bool)

	// GetWithContext is Get that gives up when ctx is done: it returns ctx.Err() (and the zero T)
	// if ctx is already done when it is called, or becomes done while no item is available. An
	// item that becomes available at the same moment as ctx is cancelled may be returned
	// instead; when err is nil the caller owns the item and must call Done as with Get.
	GetWithContext(ctx context.Context) (item T, shutdown bool, err error)

	// Done marks item as no longer being processed by the caller. If the item was added again
	// meanwhile, it goes to the end of the queue. Done of an item that is not being processed
	// does nothing.
	Done(item T)

	// ShutDown makes the queue ignore every later Add and drops pending delays. Workers blocked
	// in Get wake up; Get keeps handing out the items already waiting, then reports shutdown.
	// ShutDown does not wait for workers, but it does end a ShutDownWithDrain that is waiting.
	// It stops the queue's metrics timer and, if the MetricsProvider is a MetricsDeleter, lets
	// it forget the queue's metrics. Calling it again does nothing more.
	ShutDown()

	// ShutDownWithDrain is ShutDown that then waits until every item handed out by Get has been
	// marked Done, like client-go. Workers must keep calling Get and Done while it waits.
	//
	// While it waits, Add is ignored as after ShutDown, so an item re-added during the drain is
	// dropped. An item that was re-added while being processed before the shutdown is put back
	// in the queue by Done and handed out again by Get, but ShutDownWithDrain waits only for the
	// items in flight, not for the queue to become empty: it may return while such an item is
	// still waiting, and it never waits for items that no worker has taken. A call to ShutDown
	// from another goroutine ends the wait early.
	ShutDownWithDrain()

	// ShutDownWithDrainContext is ShutDownWithDrain that stops waiting when ctx is done and
	// then returns ctx.Err(). The queue stays shut down either way.
	ShutDownWithDrainContext(ctx context.Context) error

	// ShuttingDown reports whether ShutDown or ShutDownWithDrain has been called.
	ShuttingDown() bool
}

// Config holds the options of a queue. The zero Config gives a plain FIFO queue without
// metrics that runs no goroutine.
type Config struct {
	// Name identifies the queue in metrics. An unnamed queue reports no metrics.
	Name string

	// MetricsProvider creates the queue's metrics. It is used only when Name is set; without a
	// provider the queue reports no metrics (there is no global provider as in client-go).
	// A queue with metrics refreshes its unfinished-work gauges on a timer until ShutDown, so
	// it must be shut down to be released.
	MetricsProvider MetricsProvider

	// Priorities makes Get hand out items by priority (see Interface.AddWithPriority). Without
	// it the queue is a strict FIFO and priorities are ignored.
	Priorities bool

	// Fairness makes Get serve the items waiting at each priority round robin across their
	// fairness keys (FairByNamespace, FairBy), FIFO within one key, so that many items of one
	// namespace do not delay the items of another. The zero Fairness is off: one FIFO per
	// priority. See docs/workqueue.md, "Fair queueing".
	Fairness Fairness

	// Aging bounds how long priorities can hold an item back (with Priorities only): an item
	// that has waited Aging at a priority below the highest waiting one is aged, and while
	// any item is aged every second Get serves the priority whose oldest item is the oldest
	// aged one, instead of the highest. Zero or negative: no aging (strict priorities, as
	// controller-runtime's priority queue).
	Aging time.Duration

	// Observe, if set, is told every Add, Get and Done with the item's state before and
	// after it (see Observation): for tools that explain the queue, such as the generator
	// of docs/walkthrough.md. It is called under the queue's lock: it must return quickly
	// and must not call the queue. Default nil: nothing is reported or paid for.
	Observe func(Observation)
}

// New returns a work queue (client-go's NewTypedWithConfig). Without metrics it starts no
// goroutine and no timer, so a queue that is dropped without ShutDown leaves nothing behind.
// It panics if Config.Fairness does not fit T (see Fairness): a programming error, like a nil
// key function.
func New[T comparable](cfg Config) Interface[T] {
	return newQueue[T](cfg, nil)
}

// Entry flags.
const (
	flagDirty      uint8 = 1 << iota // needs processing: waiting in a ring, or re-added while processing
	flagProcessing                   // handed out by Get, not yet Done
)

// noTimer is queue.timerAt when the delay timer is not armed.
const noTimer = math.MaxInt64

// queue implements every interface of the package.
type queue[T comparable] struct {
	mu   sync.Mutex
	cond sync.Cond // Get waiters; L is &mu

	// Item index (index.go): item -> entry, for every item in any state.
	seed  maphash.Seed
	slots []uint64
	used  int

	slab []entry[T]
	free []uint32
	live int // entries in use
	peak int // highest live since the last compaction

	// Compaction backoff: an idle queue drops its tables when peak >= compactAt and at least
	// peak<<compactions entries were allocated since the last compaction, so that a queue that
	// keeps filling up and emptying does not pay for regrowing its tables every time.
	compactAt   int
	compactions uint
	churn       int // entries allocated since the last compaction

	levels     []level   // sorted by priority, highest first; FIFO queues have exactly one
	queued     int       // items waiting for Get (sum of levels' live)
	processing int       // items handed out and not Done
	recent     [4]uint32 // entries most recently handed out by Get (a hint for Done)
	recentPos  uint32
	waiters    int // goroutines waiting in Get
	// woken counts the waiters signalled that have not run yet. Each will take an item when
	// it runs, unless a worker that was running anyway takes it first; so an enqueue signals
	// only when there are more queued items than woken waiters. Without this, every Add of a
	// burst wakes a goroutine (a futex wake and a context switch on a busy machine) even when
	// the workers already running drain the queue, and the woken ones find nothing and park
	// again: see bench/README.md "Workqueue under contention".
	woken      int
	priorities bool

	// Fair queueing (fair.go), when Config.Fairness is set.
	fair *fairState[T]

	// Aging (aging.go), when Config.Aging is set with Config.Priorities: enqueuedAt[idx] is
	// when the entry entered its level's queue (queue.now units); the previous Get served an
	// aged level when agedTurn is set.
	aging      int64
	enqueuedAt []int64
	agedTurn   bool

	shuttingDown bool
	draining     bool
	drained      chan struct{} // closed when processing reaches 0 during a drain, or by ShutDown

	// Delays: one heap, one runtime timer.
	epoch   time.Time
	heap    []delayed
	timer   *time.Timer
	timerAt int64 // when the timer is armed for; noTimer if not armed
	seq     uint32

	rl RateLimiter[T]

	observer func(Observation) // Config.Observe

	metrics *queueMetrics // nil unless the queue is named and has a provider
	times   []itemTimes   // metrics only, parallel to slab

	// cs keeps the causes of a queue made by NewRateLimitingWithCauses (causes.go); nil
	// otherwise, and then no path below pays more than this nil check.
	cs causeHooks
}

func newQueue[T comparable](cfg Config, rl RateLimiter[T]) *queue[T] {
	q := &queue[T]{
		seed:       maphash.MakeSeed(),
		levels:     []level{{}},
		priorities: cfg.Priorities,
		timerAt:    noTimer,
		epoch:      time.Now(),
		rl:         rl,
		compactAt:  compactAbove,
		observer:   cfg.Observe,
	}
	q.cond.L = &q.mu
	if cfg.Fairness.on {
		q.fair = newFairState[T](cfg.Fairness)
	}
	if cfg.Priorities && cfg.Aging > 0 {
		q.aging = int64(cfg.Aging)
	}
	if cfg.Name != "" && cfg.MetricsProvider != nil {
		q.metrics = newQueueMetrics(cfg.Name, cfg.MetricsProvider)
		// The callback reads the timer under q.mu, on a goroutine that nothing else orders
		// after this one: storing the timer under the same lock is what orders the two.
		q.mu.Lock()
		q.metrics.timer = time.AfterFunc(unfinishedWorkUpdatePeriod, q.updateUnfinishedWork)
		q.mu.Unlock()
	}
	return q
}

// now is the monotonic time since the queue was created.
func (q *queue[T]) now() int64 { return int64(time.Since(q.epoch)) }

// markDirty applies Add(item, p) to the item's entry.
func (q *queue[T]) markDirty(idx uint32, p int32) {
	if q.observer == nil {
		q.setDirty(idx, p)
		return
	}
	before := q.slab[idx].flags
	q.setDirty(idx, p)
	q.observe(OpAdd, idx, before)
}

// setDirty is markDirty without observation.
func (q *queue[T]) setDirty(idx uint32, p int32) {
	e := &q.slab[idx]
	if e.flags&flagDirty != 0 {
		if p > e.prio {
			if e.flags&flagProcessing == 0 {
				q.raise(idx, p)
			} else {
				e.prio = p
			}
		}
		return
	}
	e.flags |= flagDirty
	e.prio = p
	now := int64(-1)
	if q.metrics != nil {
		now = q.metricsAdd(idx)
	}
	if e.flags&flagProcessing != 0 {
		return // Done will queue it
	}
	q.enqueue(idx, now)
	q.wake()
}

// wake signals a waiter for a newly queued item, unless enough woken waiters are on their way.
func (q *queue[T]) wake() {
	if q.waiters > q.woken && q.queued > q.woken {
		q.woken++
		q.cond.Signal()
	}
}

// wakeAll wakes every waiter (shutdown, a cancelled GetWithContext).
func (q *queue[T]) wakeAll() {
	q.woken = q.waiters
	q.cond.Broadcast()
}

// wait parks the caller until signalled; q.mu must be held.
func (q *queue[T]) wait() {
	q.waiters++
	q.cond.Wait()
	q.waiters--
	if q.woken > 0 {
		q.woken--
	}
}

func (q *queue[T]) Add(item T) { q.add(item, 0) }

func (q *queue[T]) AddWithPriority(item T, priority int) {
	var p int32
	if q.priorities {
		p = int32(min(max(priority, math.MinInt32), math.MaxInt32))
	}
	q.add(item, p)
}

// add is Add with priority p.
func (q *queue[T]) add(item T, p int32) {
	h := q.hash(item)
	q.mu.Lock()
	if !q.shuttingDown {
		q.markDirty(q.entryOf(item, h), p)
	}
	q.mu.Unlock()
}

func (q *queue[T]) Len() int {
	q.mu.Lock()
	n := q.queued
	q.mu.Unlock()
	return n
}

// take hands out the next entry and returns it. q.queued must be > 0.
func (q *queue[T]) take() uint32 {
	idx := q.dequeue()
	e := &q.slab[idx]
	if q.observer != nil {
		q.observer(Observation{Op: OpGet, Item: e.item, Priority: int(e.prio),
			Before: State{Dirty: true, Processing: e.flags&flagProcessing != 0}, After: State{Processing: true}})
	}
	e.flags = (e.flags &^ flagDirty) | flagProcessing
	q.processing++
	q.recent[q.recentPos%uint32(len(q.recent))] = idx
	q.recentPos++
	if q.metrics != nil {
		q.metricsGet(idx)
	}
	return idx
}

func (q *queue[T]) Get() (item T, shutdown bool) {
	q.mu.Lock()
	for q.queued == 0 {
		if q.shuttingDown {
			q.mu.Unlock()
			return item, true
		}
		q.wait()
	}
	// Inline rather than a helper: the call would cost a fifth of what take costs.
	idx := q.take()
	if q.cs != nil {
		q.cs.forget(idx) // only GetWithCauses hands the causes out
	}
	item = q.slab[idx].item
	q.mu.Unlock()
	return item, false
}

func (q *queue[T]) GetWithContext(ctx context.Context) (item T, shutdown bool, err error) {
	if err := ctx.Err(); err != nil {
		return item, false, err
	}
	q.mu.Lock()
	if shutdown, err := q.waitWithContext(ctx); shutdown || err != nil {
		q.mu.Unlock()
		return item, shutdown, err
	}
	idx := q.take()
	if q.cs != nil {
		q.cs.forget(idx) // only GetWithCauses hands the causes out
	}
	item = q.slab[idx].item
	q.mu.Unlock()
	return item, false, nil
}

// waitWithContext waits, with q.mu held, until an item is queued (it returns false, nil),
// the queue is shut down and empty (true, nil) or ctx is done (false, ctx.Err()).
func (q *queue[T]) waitWithContext(ctx context.Context) (shutdown bool, err error) {
	if q.queued == 0 && !q.shuttingDown && ctx.Done() != nil {
		// Wake every waiter when ctx is done; each one re-checks its own context. stop does
		// not wait for the function, which takes q.mu, so calling it with q.mu held is safe.
		stop := context.AfterFunc(ctx, func() {
			q.mu.Lock()
			q.wakeAll()
			q.mu.Unlock()
		})
		defer stop()
	}
	for q.queued == 0 {
		if q.shuttingDown {
			return true, nil
		}
		if err := ctx.Err(); err != nil {
			return false, err
		}
		q.wait()
	}
	return false, nil
}

// processingEntry finds the entry of an item being processed. The entries most recently handed
// out are checked first, which spares a map lookup in the usual Get-then-Done worker loop.
func (q *queue[T]) processingEntry(item T) (uint32, bool) {
	for i := range uint32(len(q.recent)) {
		idx := q.recent[(q.recentPos-1-i)%uint32(len(q.recent))]
		if int(idx) < len(q.slab) && q.slab[idx].flags&flagProcessing != 0 && q.slab[idx].item == item {
			return idx, true
		}
	}
	idx, _, ok := q.lookup(item)
	return idx, ok && q.slab[idx].flags&flagProcessing != 0
}

func (q *queue[T]) Done(item T) {
	q.mu.Lock()
	if idx, ok := q.processingEntry(item); ok {
		e := &q.slab[idx]
		if q.observer != nil {
			q.observer(Observation{Op: OpDone, Item: e.item, Priority: int(e.prio),
				Before: State{Dirty: e.flags&flagDirty != 0, Processing: true}, After: State{Dirty: e.flags&flagDirty != 0}})
		}
		e.flags &^= flagProcessing
		q.processing--
		now := int64(-1)
		if q.metrics != nil {
			now = q.metricsDone(idx)
		}
		if e.flags&flagDirty != 0 {
			q.enqueue(idx, now)
			q.wake()
		} else if e.heapPos < 0 {
			q.release(idx, q.hash(e.item))
			q.maybeCompact()
		}
		if q.processing == 0 && q.drained != nil {
			close(q.drained)
			q.drained = nil
		}
	}
	q.mu.Unlock()
}

func (q *queue[T]) ShuttingDown() bool {
	q.mu.Lock()
	s := q.shuttingDown
	q.mu.Unlock()
	return s
}

func (q *queue[T]) ShutDown() {
	q.mu.Lock()
	first := q.shutDownLocked()
	q.draining = false
	if q.drained != nil {
		close(q.drained)
		q.drained = nil
	}
	q.mu.Unlock()
	if first {
		q.deleteMetrics()
	}
}

func (q *queue[T]) ShutDownWithDrain() {
	_ = q.ShutDownWithDrainContext(context.Background())
}

func (q *queue[T]) ShutDownWithDrainContext(ctx context.Context) error {
	q.mu.Lock()
	first := q.shutDownLocked()
	q.draining = true
	var ch chan struct{}
	if q.processing > 0 {
		if q.drained == nil {
			q.drained = make(chan struct{})
		}
		ch = q.drained
	}
	q.mu.Unlock()
	if first {
		q.deleteMetrics()
	}
	// Wait until nothing is in flight or a ShutDown ends the drain.
	for ch != nil {
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		q.mu.Lock()
		ch = nil
		if q.draining && q.processing > 0 {
			if q.drained == nil {
				q.drained = make(chan struct{})
			}
			ch = q.drained
		}
		q.mu.Unlock()
	}
	return nil
}

// shutDownLocked marks the queue shut down, drops pending delays, stops the timers and wakes
// the waiters. It reports whether this was the first call.
func (q *queue[T]) shutDownLocked() bool {
	if q.shuttingDown {
		return false
	}
	q.shuttingDown = true
	q.dropDelays()
	if q.metrics != nil {
		q.metrics.timer.Stop()
	}
	q.wakeAll()
	return true
}
