package informer

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultBufferSize is the number of notifications a handler may fall behind by before its
// listener starts coalescing them by key (the size of client-go's initial listener buffer).
const DefaultBufferSize = 1024

// kind is the shape of a pending notification.
type kind uint8

const (
	kindAdd    kind = iota + 1 // new
	kindUpdate                 // old -> new
	kindDelete                 // old is the deleted object's last state
	// kindDeleteAdd is what coalescing makes of a delete followed by an add of the same key:
	// the handler is told that the object it knew is gone (old), then that a new one exists
	// (new). Keeping both tells a handler keyed by UID that the object was replaced.
	kindDeleteAdd
)

// notification is what the informer hands to a listener.
type notification[T any] struct {
	kind     kind
	old, new T
	unknown  bool // the delete's finalStateUnknown
	initial  bool // the add is part of an initial list
	// arrived is when the watch event behind it reached the informer (zero for lists,
	// resyncs and unstamped events); for a merge of several, the earliest.
	arrived time.Time
}

// entry is one pending notification in a listener's queue, possibly the merge of several.
type entry[T any] struct {
	prev, next *entry[T]
	key        string
	notification[T]
	// tracked counts the initial-list adds folded into this entry; the registration's
	// HasSynced waits for them to be delivered (or dropped by coalescing).
	tracked int
}

// Backlog describes a registration's delivery queue.
type Backlog struct {
	// Pending is the number of notifications waiting for the handler; a coalesced entry
	// counts once.
	Pending int
	// Peak is the highest Pending seen.
	Peak int
	// Coalescing is true while the listener merges new notifications into pending ones.
	Coalescing bool
	// Coalesced counts notifications merged into a pending one instead of being queued
	// (including those that cancelled a pending add: an add then a delete delivers nothing).
	Coalesced uint64
	// Delivered counts handler calls made.
	Delivered uint64
	// Panics counts handler calls that panicked; the panic was recovered and logged.
	Panics uint64
}

// maxFreeEntries bounds the listener's free list of recycled entries.
const maxFreeEntries = 128

// listener delivers notifications to one handler from its own goroutine, through a queue
// that is exact (every notification, in order) while the handler keeps up, and coalesces by
// key once the handler has fallen capacity notifications behind:
//
//	pending       + incoming        = pending
//	add(a)        + update(→b)      = add(b)            (isInInitialList kept)
//	add(a)        + delete          = nothing           (the handler never saw the key)
//	update(o→a)   + update(→b)      = update(o→b)       (first old, last new)
//	update(o→a)   + delete(d)       = delete(d)         (a delete wins, with the final state)
//	delete(d)     + add(b)          = delete(d), add(b) (two calls: the object was replaced)
//	delete(d),add(b) + update(→c)   = delete(d), add(c)
//	delete(d),add(b) + delete(e)    = delete(d)         (b was never seen; d is what it knew)
//
// The rules keep the handler's replayed view (the objects it was told exist) equal to the
// informer's cache once the queue drains, and every update's old object is the state the
// handler saw last. Coalescing merges into the latest pending entry of the key, so per-key
// order is kept; entries of different keys may be delivered in a different order than they
// happened. Coalescing stops once the backlog has drained to half the capacity.
//
// The queue holds at most capacity entries plus one per key, so its size is bounded by the
// buffer size plus the number of objects in the cache (and those whose delete is pending).
type listener[T any] struct {
	handler  ResourceEventHandler[T]
	info     EventInfoHandler[T] // handler, if it wants EventInfo
	name     string
	logger   *slog.Logger
	capacity int

	mu         sync.Mutex
	head, tail *entry[T]
	pending    int
	peak       int
	byKey      map[string]*entry[T] // the latest entry of each key, while coalescing
	free       *entry[T]
	nfree      int
	started    bool
	stopped    bool

	initialPending int
	upstreamSynced bool
	syncedClosed   bool
	synced         chan struct{}

	wake chan struct{}
	done chan struct{}

	coalesced atomic.Uint64
	delivered atomic.Uint64
	panics    atomic.Uint64

	// observe is the informer's Options.Observe (nil: nothing reported).
	observe func(Observation[T])

	// Resync bookkeeping, guarded by the informer's delivery lock.
	resyncPeriod time.Duration
	nextResync   time.Time
}

func newListener[T any](handler ResourceEventHandler[T], name string, logger *slog.Logger, capacity int) *listener[T] {
	if capacity <= 0 {
		capacity = DefaultBufferSize
	}
	if name == "" {
		name = fmt.Sprintf("%T", handler)
	}
	if logger == nil {
		logger = slog.Default()
	}
	info, _ := handler.(EventInfoHandler[T])
	return &listener[T]{
		handler:  handler,
		info:     info,
		name:     name,
		logger:   logger.With("handler", name),
		capacity: capacity,
		synced:   make(chan struct{}),
		wake:     make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
}

// add queues a notification for key. It never blocks on the handler.
func (l *listener[T]) add(key string, n notification[T]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	tracked := 0
	if n.kind == kindAdd && n.initial {
		tracked = 1
		l.initialPending++
	}
	if l.byKey == nil && l.pending >= l.capacity {
		l.startCoalescing()
	}
	if l.byKey != nil {
		if e := l.byKey[key]; e != nil {
			l.coalesced.Add(1)
			e.tracked += tracked
			if !merge(e, n) {
				l.remove(e)
				l.finishInitial(e.tracked)
				l.recycle(e)
				if l.observe != nil {
					l.observe(Observation[T]{Stage: StageCoalesced, Key: key, Handler: l.name, Pending: l.pending})
				}
				return
			}
			if l.observe != nil {
				l.observe(l.observation(StageCoalesced, key, e.kind, &e.notification, l.pending))
			}
			return
		}
	}
	e := l.newEntry()
	e.key = key
	e.notification = n
	e.tracked = tracked
	l.pushBack(e)
	if l.byKey != nil {
		l.byKey[key] = e
	}
	if l.observe != nil {
		l.observe(l.observation(StageNotified, key, n.kind, &n, l.pending))
	}
	if l.pending == 1 {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// merge folds n into the pending entry e of the same key. It returns false when the result
// is no notification at all (an add followed by a delete).
func merge[T any](e *entry[T], n notification[T]) bool {
	var zero T
	if e.arrived.IsZero() || (!n.arrived.IsZero() && n.arrived.Before(e.arrived)) {
		e.arrived = n.arrived // the oldest event the handler has not heard of yet
	}
	switch e.kind {
	case kindAdd:
		switch n.kind {
		case kindAdd, kindUpdate:
			e.new = n.new
		case kindDelete:
			return false
		}
	case kindUpdate:
		switch n.kind {
		case kindAdd, kindUpdate:
			e.new = n.new
		case kindDelete:
			e.kind, e.old, e.new, e.unknown = kindDelete, n.old, zero, n.unknown
		}
	case kindDelete:
		switch n.kind {
		case kindAdd, kindUpdate:
			e.kind, e.new, e.initial = kindDeleteAdd, n.new, n.initial
		case kindDelete:
			// Cannot follow a delete in a consistent stream; the first one stands.
		}
	case kindDeleteAdd:
		switch n.kind {
		case kindAdd, kindUpdate:
			e.new = n.new
		case kindDelete:
			e.kind, e.new, e.initial = kindDelete, zero, false
		}
	}
	return true
}

// startCoalescing indexes the queue by key, the latest entry of each key winning.
func (l *listener[T]) startCoalescing() {
	l.byKey = make(map[string]*entry[T], l.pending)
	for e := l.head; e != nil; e = e.next {
		l.byKey[e.key] = e
	}
}

func (l *listener[T]) pushBack(e *entry[T]) {
	e.prev = l.tail
	if l.tail == nil {
		l.head = e
	} else {
		l.tail.next = e
	}
	l.tail = e
	l.pending++
	if l.pending > l.peak {
		l.peak = l.pending
	}
}

func (l *listener[T]) remove(e *entry[T]) {
	if e.prev == nil {
		l.head = e.next
	} else {
		e.prev.next = e.next
	}
	if e.next == nil {
		l.tail = e.prev
	} else {
		e.next.prev = e.prev
	}
	l.pending--
	if l.byKey != nil {
		if l.byKey[e.key] == e {
			delete(l.byKey, e.key)
		}
		if l.pending <= l.capacity/2 {
			l.byKey = nil
		}
	}
}

func (l *listener[T]) newEntry() *entry[T] {
	if e := l.free; e != nil {
		l.free = e.next
		l.nfree--
		e.next = nil
		return e
	}
	return &entry[T]{}
}

func (l *listener[T]) recycle(e *entry[T]) {
	if l.nfree >= maxFreeEntries {
		return
	}
	*e = entry[T]{next: l.free}
	l.free = e
	l.nfree++
}

// finishInitial records that n initial-list adds were delivered or dropped. Caller holds mu.
func (l *listener[T]) finishInitial(n int) {
	if n == 0 {
		return
	}
	l.initialPending -= n
	l.checkSynced()
}

// checkSynced closes synced once the informer has synced and every initial-list add queued
// for this handler has been processed. Caller holds mu.
func (l *listener[T]) checkSynced() {
	if !l.syncedClosed && l.upstreamSynced && l.initialPending == 0 {
		l.syncedClosed = true
		close(l.synced)
	}
}

// setUpstreamSynced tells the listener that the informer has synced.
func (l *listener[T]) setUpstreamSynced() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.upstreamSynced = true
	l.checkSynced()
}

// start runs the delivery goroutine unless the listener was already stopped.
func (l *listener[T]) start() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started || l.stopped {
		return
	}
	l.started = true
	go l.run()
}

// stop drops the pending notifications and ends the delivery goroutine once the handler
// call in progress, if any, returns; done is closed then.
func (l *listener[T]) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	l.stopped = true
	l.head, l.tail, l.pending, l.byKey, l.free, l.nfree = nil, nil, 0, nil, nil, 0
	if !l.started {
		close(l.done)
		return
	}
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *listener[T]) run() {
	defer close(l.done)
	var n notification[T]
	var key string
	finished := 0
	for {
		l.mu.Lock()
		l.finishInitial(finished)
		for l.head == nil && !l.stopped {
			l.mu.Unlock()
			<-l.wake
			l.mu.Lock()
		}
		if l.stopped {
			l.mu.Unlock()
			return
		}
		e := l.head
		l.remove(e)
		key, n, finished = e.key, e.notification, e.tracked
		pending := l.pending
		l.recycle(e)
		l.mu.Unlock()

		switch n.kind {
		case kindDeleteAdd:
			l.call(key, kindDelete, &n, pending)
			l.call(key, kindAdd, &n, pending)
		default:
			l.call(key, n.kind, &n, pending)
		}
		n = notification[T]{}
	}
}

// call makes one handler call, recovering, logging and counting a panic.
func (l *listener[T]) call(key string, k kind, n *notification[T], pending int) {
	l.delivered.Add(1)
	defer func() {
		if r := recover(); r != nil {
			l.panics.Add(1)
			method := map[kind]string{kindAdd: "OnAdd", kindUpdate: "OnUpdate", kindDelete: "OnDelete"}[k]
			l.logger.Error("informer: event handler panicked; the notification is skipped",
				"method", method, "key", key, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	if l.observe != nil {
		l.observe(l.observation(StageDelivered, key, k, n, pending))
	}
	if l.info != nil {
		l.info.EventInfo(EventInfo{Arrived: n.arrived})
	}
	switch k {
	case kindAdd:
		l.handler.OnAdd(n.new, n.initial)
	case kindUpdate:
		l.handler.OnUpdate(n.old, n.new)
	case kindDelete:
		l.handler.OnDelete(n.old, n.unknown)
	}
}

func (l *listener[T]) backlog() Backlog {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Backlog{
		Pending:    l.pending,
		Peak:       l.peak,
		Coalescing: l.byKey != nil,
		Coalesced:  l.coalesced.Load(),
		Delivered:  l.delivered.Load(),
		Panics:     l.panics.Load(),
	}
}

func (l *listener[T]) hasSynced() bool {
	select {
	case <-l.synced:
		return true
	default:
		return false
	}
}

// stopListeners detaches the listeners (under mu, the lock their deliveries take), stops
// them all, then waits until each has finished: an Informer's and a ScopedInformer's Run
// end the same way.
func stopListeners[T any](mu *sync.Mutex, listeners *[]*listener[T]) {
	mu.Lock()
	ls := *listeners
	*listeners = nil
	mu.Unlock()
	for _, l := range ls {
		l.stop()
	}
	for _, l := range ls {
		<-l.done
	}
}
