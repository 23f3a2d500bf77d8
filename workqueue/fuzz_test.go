package workqueue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// The fuzz targets decode their input into operations by a few simulated workers, run them on
// a real queue inside a synctest bubble (so delays are exact), run the same operations on a
// small reference model, and compare after every step: Len, the item every Get returns (FIFO,
// priorities, dedup), that no item is held by two workers, blocked workers, drains, the delay
// heap, internal counters, and at the end that every item added before ShutDown is handed out.
//
// Input layout: byte 0 selects options (bit 0 priorities, bit 1 metrics, bit 2 compaction at
// a tiny size; FuzzFairQueue: bit 3 aging, bit 4 no fairness); then each operation is one byte (kind = byte % number of kinds of the target)
// followed by its argument bytes (missing bytes read as 0).

const (
	fuzzItems   = 8
	fuzzWorkers = 3
	fuzzMaxOps  = 400
	fuzzBase    = time.Millisecond // exponential limiter of the rate-limiting target
	fuzzMax     = 64 * time.Millisecond
)

type opKind int

const (
	opAdd opKind = iota
	opAddWithPriority
	opGet
	opDone
	opDoneStray
	opGetCancelled
	opShutDown
	opShutDownWithDrain
	opAddAfter
	opAdvance
	opAddRateLimited
	opForget
	opNumRequeues
)

var opNames = [...]string{"Add", "AddWithPriority", "Get", "Done", "DoneStray", "GetCancelled",
	"ShutDown", "ShutDownWithDrain", "AddAfter", "Advance", "AddRateLimited", "Forget", "NumRequeues"}

var (
	plainOps        = []opKind{opAdd, opAddWithPriority, opGet, opDone, opDoneStray, opGetCancelled, opShutDown, opShutDownWithDrain, opAdd, opGet, opDone}
	delayingOps     = append(slices.Clone(plainOps), opAddAfter, opAdvance, opAddAfter, opAdvance)
	rateLimitingOps = append(slices.Clone(delayingOps), opAddRateLimited, opForget, opNumRequeues, opAddRateLimited)
)

// ---- reference model ----

type modelWaiting struct {
	item, prio, seq int
	at              time.Duration // when it started to wait at its priority
}

type modelDelay struct {
	at  time.Duration
	seq int
}

type model struct {
	priorities bool
	fair       bool          // Config.Fairness: FairBy(fuzzTenant)
	aging      time.Duration // Config.Aging (0 without priorities)
	seq        int
	waiting    []modelWaiting // items waiting for Get
	dirty      map[int]bool
	prio       map[int]int
	holder     map[int]int // item -> worker processing it
	delayed    map[int]modelDelay
	now        time.Duration
	shut       bool
	draining   bool
	failures   map[int]int
	rotation   map[int][]int // fair: priority -> tenants in rotation order
	agedTurn   bool          // the last Get served an aged priority
	blocked    int           // workers blocked in Get, not yet served
	given      []int         // items handed to blocked workers, not yet seen by the harness
	shutdowns  int           // blocked Gets that must report shutdown, not yet seen
}

func newModel(priorities bool) *model {
	return &model{
		priorities: priorities,
		dirty:      map[int]bool{},
		prio:       map[int]int{},
		holder:     map[int]int{},
		delayed:    map[int]modelDelay{},
		failures:   map[int]int{},
		rotation:   map[int][]int{},
	}
}

func (m *model) next() int { m.seq++; return m.seq }

// fuzzTenant is the fairness key of the fuzz targets' items: three tenants.
func fuzzTenant(item int) string { return [...]string{"a", "b", "c"}[item%3] }

// enter makes item wait at priority p: at the end of its tenant's FIFO, and the tenant at the
// end of the rotation unless it is in it.
func (m *model) enter(item, p int) {
	m.waiting = append(m.waiting, modelWaiting{item, p, m.next(), m.now})
	if m.fair && !slices.Contains(m.rotation[p], item%3) {
		m.rotation[p] = append(m.rotation[p], item%3)
	}
}

// left is called after an item stopped waiting at priority p: an empty priority forgets its
// rotation.
func (m *model) left(p int) {
	if !slices.ContainsFunc(m.waiting, func(w modelWaiting) bool { return w.prio == p }) {
		delete(m.rotation, p)
	}
}

func (m *model) add(item, p int) {
	if m.shut {
		return
	}
	if !m.priorities {
		p = 0
	}
	if m.dirty[item] {
		if p > m.prio[item] {
			m.prio[item] = p
			if _, processing := m.holder[item]; !processing {
				i := slices.IndexFunc(m.waiting, func(w modelWaiting) bool { return w.item == item })
				old := m.waiting[i].prio
				m.waiting = slices.Delete(m.waiting, i, i+1)
				m.left(old)
				m.enter(item, p)
			}
		}
		return
	}
	m.dirty[item] = true
	m.prio[item] = p
	if _, processing := m.holder[item]; processing {
		return
	}
	m.enter(item, p)
}

// oldestAt returns when the oldest item waiting at priority p (which has one) started to wait.
func (m *model) oldestAt(p int) time.Duration {
	at := time.Duration(-1)
	for _, w := range m.waiting {
		if w.prio == p && (at < 0 || w.at < at) {
			at = w.at
		}
	}
	return at
}

// pickPriority returns the priority the next Get serves: the highest, or with aging every
// second Get while an item is aged, the one whose oldest item is the oldest aged one.
func (m *model) pickPriority() int {
	top := m.waiting[0].prio
	for _, w := range m.waiting {
		top = max(top, w.prio)
	}
	if m.aging == 0 {
		return top
	}
	if m.agedTurn {
		m.agedTurn = false
		return top
	}
	best, bestAt, found := 0, time.Duration(0), false
	for _, w := range m.waiting {
		p := w.prio
		if p >= top {
			continue
		}
		at := m.oldestAt(p)
		if m.now-at < m.aging {
			continue
		}
		if !found || at < bestAt || (at == bestAt && p > best) {
			best, bestAt, found = p, at, true
		}
	}
	if !found {
		return top
	}
	m.agedTurn = true
	return best
}

// pick removes and returns the item Get must hand out next.
func (m *model) pick(worker int) int {
	p := m.pickPriority()
	first := func(tenant int) int { // oldest item at p (of tenant, if >= 0), or -1
		best := -1
		for i, w := range m.waiting {
			if w.prio == p && (tenant < 0 || w.item%3 == tenant) && (best < 0 || w.seq < m.waiting[best].seq) {
				best = i
			}
		}
		return best
	}
	var best int
	if !m.fair {
		best = first(-1)
	} else {
		for {
			t := m.rotation[p][0]
			m.rotation[p] = m.rotation[p][1:]
			if best = first(t); best < 0 {
				continue // its items moved up: it leaves the rotation
			}
			if slices.ContainsFunc(m.waiting, func(w modelWaiting) bool {
				return w.prio == p && w.item%3 == t && w.item != m.waiting[best].item
			}) {
				m.rotation[p] = append(m.rotation[p], t)
			}
			break
		}
	}
	item := m.waiting[best].item
	m.waiting = slices.Delete(m.waiting, best, best+1)
	m.left(p)
	m.dirty[item] = false
	m.holder[item] = worker
	return item
}

func (m *model) done(item int) {
	if _, ok := m.holder[item]; !ok {
		return
	}
	delete(m.holder, item)
	if m.dirty[item] {
		m.enter(item, m.prio[item])
	}
}

func (m *model) addAfter(item int, d time.Duration) {
	if m.shut {
		return
	}
	if d <= 0 {
		m.add(item, 0)
		return
	}
	at := m.now + d
	if old, ok := m.delayed[item]; ok && old.at <= at {
		return
	}
	m.delayed[item] = modelDelay{at, m.next()}
}

func (m *model) advance(d time.Duration) {
	end := m.now + d
	for {
		first, found := 0, false
		for item, dl := range m.delayed {
			if dl.at > end {
				continue
			}
			if f := m.delayed[first]; !found || dl.at < f.at || (dl.at == f.at && dl.seq < f.seq) {
				first, found = item, true
			}
		}
		if !found {
			break
		}
		// The queue's timer adds every item due at this instant under one lock; the workers
		// blocked in Get take items only after that, before the clock moves on.
		if at := m.delayed[first].at; at != m.now {
			m.serveBlocked()
			m.now = at
		}
		delete(m.delayed, first)
		m.add(first, 0)
	}
	m.serveBlocked()
	m.now = end
}

// serveBlocked hands waiting items to the workers blocked in Get, as the queue does when
// they wake up: the order of picks decides the fair rotation and the aged turns.
func (m *model) serveBlocked() {
	for m.blocked > 0 && len(m.waiting) > 0 {
		m.given = append(m.given, m.pick(-1))
		m.blocked--
	}
}

func (m *model) shutDown() {
	m.shut = true
	clear(m.delayed)
	// Nothing waits while a worker is blocked, so every blocked Get reports shutdown.
	m.shutdowns += m.blocked
	m.blocked = 0
}

func (m *model) when(item int) time.Duration {
	n := m.failures[item]
	m.failures[item] = n + 1
	d := fuzzMax
	if n < 20 {
		d = min(fuzzBase<<n, fuzzMax)
	}
	return d
}

func (m *model) dirtyCount() int {
	n := 0
	for _, d := range m.dirty {
		if d {
			n++
		}
	}
	return n
}

// ---- harness ----

type fuzzWorker struct {
	held    []int
	waiting chan getResult[int] // a Get blocked in a goroutine, or nil
}

type harness struct {
	t       *testing.T
	q       *queue[int]
	m       *model
	rec     *recorder
	workers [fuzzWorkers]fuzzWorker
	drains  []chan struct{}
	trace   []string
}

func (h *harness) fatalf(format string, args ...any) {
	h.t.Helper()
	h.t.Fatalf("%s\nafter: %s", fmt.Sprintf(format, args...), strings.Join(h.trace, "; "))
}

func (h *harness) getBlocking(w int, withContext bool) {
	ch := make(chan getResult[int], 1)
	h.workers[w].waiting = ch
	go func() {
		if withContext {
			item, shutdown, err := h.q.GetWithContext(context.Background())
			ch <- getResult[int]{item, shutdown, err}
			return
		}
		item, shutdown := h.q.Get()
		ch <- getResult[int]{item: item, shutdown: shutdown}
	}()
}

// settle lets every goroutine run, then checks what blocked workers and drains did.
func (h *harness) settle() {
	h.t.Helper()
	synctest.Wait()
	m := h.m
	var blocked []int
	for w := range h.workers {
		if h.workers[w].waiting != nil {
			blocked = append(blocked, w)
		}
	}
	// Blocked workers took the items the model handed them, one each; after a shutdown the
	// rest gave up.
	expect := m.given
	m.given = nil
	wantShutdown := m.shutdowns
	m.shutdowns = 0
	gotItems, gotShutdown := 0, 0
	for _, w := range blocked {
		select {
		case r := <-h.workers[w].waiting:
			h.workers[w].waiting = nil
			if r.err != nil {
				h.fatalf("blocked Get of worker %d: %v", w, r.err)
			}
			if r.shutdown {
				gotShutdown++
				continue
			}
			i := slices.Index(expect, r.item)
			if i < 0 {
				h.fatalf("blocked worker %d got %d, want one of %v", w, r.item, expect)
			}
			expect = slices.Delete(expect, i, i+1)
			m.holder[r.item] = w
			h.workers[w].held = append(h.workers[w].held, r.item)
			gotItems++
		default:
		}
	}
	if len(expect) != 0 || gotShutdown != wantShutdown {
		h.fatalf("blocked workers: %d items not handed out (%v), %d shutdowns, want %d", len(expect), expect, gotShutdown, wantShutdown)
	}
	// Drains finish once nothing is in flight, or when ShutDown ends them.
	finished := !m.draining || len(m.holder) == 0
	for _, ch := range h.drains {
		select {
		case <-ch:
			if !finished {
				h.fatalf("ShutDownWithDrain returned with %d items in flight", len(m.holder))
			}
		default:
			if finished {
				h.fatalf("ShutDownWithDrain still waiting with %d items in flight", len(m.holder))
			}
		}
	}
	if finished {
		h.drains = nil
	}
	h.check()
}

// check compares the queue with the model.
func (h *harness) check() {
	h.t.Helper()
	q, m := h.q, h.m
	if got := q.Len(); got != len(m.waiting) {
		h.fatalf("Len = %d, model has %d waiting", got, len(m.waiting))
	}
	for w := range h.workers {
		if h.workers[w].waiting != nil && len(m.waiting) > 0 {
			h.fatalf("worker %d blocked while %d items wait", w, len(m.waiting))
		}
	}
	for item, w := range m.holder {
		for v := range h.workers {
			if v != w && slices.Contains(h.workers[v].held, item) {
				h.fatalf("item %d held by workers %d and %d", item, w, v)
			}
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	known := map[int]bool{}
	for item, d := range m.dirty {
		if d {
			known[item] = true
		}
	}
	for item := range m.holder {
		known[item] = true
	}
	for item := range m.delayed {
		known[item] = true
	}
	if q.live != len(known) || q.used != len(known) {
		h.fatalf("queue knows %d items (index %d), model %d", q.live, q.used, len(known))
	}
	if q.processing != len(m.holder) || len(q.heap) != len(m.delayed) {
		h.fatalf("processing %d heap %d, model %d and %d", q.processing, len(q.heap), len(m.holder), len(m.delayed))
	}
	sum := 0
	for _, lv := range q.levels {
		sum += lv.live
	}
	if sum != q.queued {
		h.fatalf("levels hold %d live items, queued = %d", sum, q.queued)
	}
	for item, dl := range m.delayed {
		idx, _, ok := q.lookup(item)
		if !ok || q.slab[idx].heapPos < 0 || q.heap[q.slab[idx].heapPos].at != int64(dl.at) {
			h.fatalf("item %d: delay at %v in the model, not in the heap", item, dl.at)
		}
	}
	if len(q.heap) > 0 && q.timerAt > q.heap[0].at {
		h.fatalf("timer armed for %d, first delay at %d", q.timerAt, q.heap[0].at)
	}
	if h.rec != nil {
		if got := h.rec.get("depth", "fuzz").value; int(got) != m.dirtyCount() {
			h.fatalf("depth metric %v, model has %d dirty items", got, m.dirtyCount())
		}
	}
}

func (h *harness) step(kind opKind, a, b byte) {
	h.t.Helper()
	q, m := h.q, h.m
	item := int(a % fuzzItems)
	w := int(a/fuzzItems) % fuzzWorkers
	h.trace = append(h.trace, fmt.Sprintf("%s(%d,%d)", opNames[kind], a, b))
	switch kind {
	case opAdd:
		q.Add(item)
		m.add(item, 0)
	case opAddWithPriority:
		p := int(b%8) - 3
		q.AddWithPriority(item, p)
		m.add(item, p)
	case opGet:
		if h.workers[w].waiting != nil {
			return
		}
		if len(m.waiting) == 0 && !m.shut {
			h.getBlocking(w, b&1 == 1)
			m.blocked++
			break
		}
		got, shutdown := q.Get()
		if len(m.waiting) == 0 {
			if !shutdown {
				h.fatalf("Get = %d, want shutdown", got)
			}
			break
		}
		want := m.pick(w)
		if shutdown || got != want {
			h.fatalf("worker %d: Get = %d, %v; want %d", w, got, shutdown, want)
		}
		h.workers[w].held = append(h.workers[w].held, got)
	case opDone:
		held := h.workers[w].held
		if len(held) == 0 {
			return
		}
		i := int(b) % len(held)
		x := held[i]
		h.workers[w].held = slices.Delete(held, i, i+1)
		q.Done(x)
		m.done(x)
	case opDoneStray:
		if _, ok := m.holder[item]; ok {
			return
		}
		q.Done(item)
	case opGetCancelled:
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if got, shutdown, err := q.GetWithContext(ctx); !errors.Is(err, context.Canceled) || shutdown || got != 0 {
			h.fatalf("GetWithContext(cancelled) = %d, %v, %v", got, shutdown, err)
		}
	case opShutDown:
		q.ShutDown()
		m.shutDown()
		m.draining = false
	case opShutDownWithDrain:
		ch := make(chan struct{})
		h.drains = append(h.drains, ch)
		go func() {
			q.ShutDownWithDrain()
			close(ch)
		}()
		m.shutDown()
		m.draining = true
	case opAddAfter:
		d := time.Duration(int(b%40)-4) * time.Millisecond
		q.AddAfter(item, d)
		m.addAfter(item, d)
	case opAdvance:
		d := time.Duration(b%64) * time.Millisecond
		if b >= 240 {
			d = time.Second // beyond every delay; not longer, as the metrics timer ticks every 500 ms
		}
		time.Sleep(d)
		m.advance(d)
	case opAddRateLimited:
		q.AddRateLimited(item)
		m.addAfter(item, m.when(item))
	case opForget:
		q.Forget(item)
		delete(m.failures, item)
	case opNumRequeues:
		if got := q.NumRequeues(item); got != m.failures[item] {
			h.fatalf("NumRequeues(%d) = %d, want %d", item, got, m.failures[item])
		}
	}
	m.serveBlocked()
	h.settle()
}

// finish shuts the queue down, finishes every held item and drains the queue: everything the
// model still owes must come out, in order, and the queue must forget every item.
func (h *harness) finish() {
	h.t.Helper()
	q, m := h.q, h.m
	h.trace = append(h.trace, "finish")
	if !m.shut {
		q.ShutDown()
		m.shutDown()
		m.draining = false
	}
	h.settle()
	for w := range h.workers {
		for _, x := range h.workers[w].held {
			q.Done(x)
			m.done(x)
			h.settle()
		}
		h.workers[w].held = nil
	}
	for {
		got, shutdown := q.Get()
		if shutdown {
			if len(m.waiting) != 0 {
				h.fatalf("Get reported shutdown, model still has %v waiting: items lost", m.waiting)
			}
			break
		}
		if len(m.waiting) == 0 {
			h.fatalf("Get = %d after the model drained", got)
		}
		if want := m.pick(0); got != want {
			h.fatalf("drain: Get = %d, want %d", got, want)
		}
		q.Done(got)
		m.done(got)
		h.check()
	}
	if m.dirtyCount() != 0 || len(m.holder) != 0 {
		h.fatalf("model not drained: dirty %d, held %d", m.dirtyCount(), len(m.holder))
	}
	if q.live != 0 || q.used != 0 {
		h.fatalf("queue still knows %d items after the drain", q.live)
	}
	for i := range q.slab {
		if q.slab[i].item != 0 {
			h.fatalf("slab slot %d still holds item %d", i, q.slab[i].item)
		}
	}
	synctest.Wait()
	if len(h.drains) != 0 {
		h.fatalf("%d drains still waiting", len(h.drains))
	}
}

// fuzzAging is Config.Aging in FuzzFairQueue.
const fuzzAging = 10 * time.Millisecond

func runFuzz(t *testing.T, ops []opKind, rateLimited, fairTarget bool, data []byte) {
	if len(data) == 0 {
		return
	}
	synctest.Test(t, func(t *testing.T) {
		opts := data[0]
		cfg := Config{Priorities: opts&1 != 0}
		if fairTarget {
			if opts&8 != 0 {
				cfg.Aging = fuzzAging
			}
			if opts&16 == 0 {
				cfg.Fairness = FairBy(fuzzTenant)
			}
		}
		var rec *recorder
		if opts&2 != 0 {
			rec = newRecorder()
			cfg.Name, cfg.MetricsProvider = "fuzz", rec
		}
		var rl RateLimiter[int]
		if rateLimited {
			rl = NewItemExponentialFailureRateLimiter[int](fuzzBase, fuzzMax)
		}
		q := newQueue(cfg, rl)
		if opts&4 != 0 {
			q.compactAt = 2
		}
		m := newModel(cfg.Priorities)
		m.fair = cfg.Fairness.on
		if cfg.Priorities {
			m.aging = cfg.Aging
		}
		h := &harness{t: t, q: q, m: m, rec: rec}
		data = data[1:]
		arg := func(i int) byte {
			if i < len(data) {
				return data[i]
			}
			return 0
		}
		for n := 0; len(data) > 0 && n < fuzzMaxOps; n++ {
			kind := ops[int(data[0])%len(ops)]
			h.step(kind, arg(1), arg(2))
			data = data[min(3, len(data)):]
		}
		h.finish()
	})
}

func FuzzQueue(f *testing.F) {
	for _, seed := range fuzzSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) { runFuzz(t, plainOps, false, false, data) })
}

func FuzzDelayingQueue(f *testing.F) {
	for _, seed := range fuzzSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) { runFuzz(t, delayingOps, false, false, data) })
}

func FuzzRateLimitingQueue(f *testing.F) {
	for _, seed := range fuzzSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) { runFuzz(t, rateLimitingOps, true, false, data) })
}

// FuzzFairQueue runs the delaying queue's operations on a fair queue (three tenants, unless
// bit 4 of the options turns fairness off) with priority aging when bit 3 is set (and
// priorities, bit 0): the model says which tenant and which priority each Get serves.
func FuzzFairQueue(f *testing.F) {
	for _, seed := range fuzzSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) { runFuzz(t, delayingOps, false, true, data) })
}

// fuzzSeeds are a few inputs that mean something for every target (the corpora under
// testdata/fuzz hold more).
var fuzzSeeds = [][]byte{
	{0, 0, 1, 0, 0, 2, 0, 2, 0, 0, 3, 0, 0},
	{1, 1, 1, 7, 1, 2, 2, 2, 0, 0, 2, 8, 0},
	{7, 0, 3, 0, 2, 9, 0, 0, 3, 0, 3, 9, 0, 7, 0, 0, 3, 9, 0, 2, 0, 0},
}
