package workqueue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// FuzzCauses runs operations on a queue with causes inside a synctest bubble and on a model
// of its causes, and compares them after every step: each hand-out must carry exactly the
// causes recorded for the item since its last hand-out (merged, bounded, dropped counted),
// a delayed cause must join when its delay ends and not before, ShutDown drops the delayed
// ones, and a plain Get loses them. The model does not decide which item a Get returns (the
// other fuzz targets check the order): it checks that the returned item was waiting.
//
// Input layout: byte 0 selects options (bit 0 priorities, bit 1 fairness, bit 2 compaction
// at a tiny size, bit 3 merge, bits 4-5 Max-1); then each operation is one byte (kind =
// byte % number of kinds) and two argument bytes.
func FuzzCauses(f *testing.F) {
	for _, seed := range causeSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		synctest.Test(t, func(t *testing.T) { runCausesFuzz(t, data) })
	})
}

var causeSeeds = [][]byte{
	{0, 0, 1, 0, 0, 1, 1, 0, 1, 2, 4, 0, 0},
	{9, 0, 1, 3, 2, 1, 5, 7, 2, 0, 4, 0, 0, 6, 0, 0, 4, 0, 0},
	{0x38, 0, 2, 1, 0, 2, 1, 0, 2, 2, 0, 2, 3, 4, 0, 0, 6, 0, 0, 0, 2, 1, 4, 0, 0},
	{8, 2, 3, 5, 2, 3, 6, 7, 3, 0, 4, 0, 0, 8, 0, 0, 4, 0, 0, 9, 4, 0, 7, 9, 0, 4, 0, 0},
}

// fuzzCause is the fuzz targets' cause: an id (repeats merge when Merge is on) and a count.
type fuzzCause struct{ id, n int }

func mergeFuzzCause(kept *fuzzCause, c fuzzCause) bool {
	if kept.id != c.id {
		return false
	}
	kept.n += c.n
	return true
}

// causeModel is the reference: the state of every item and its causes.
type causeModel struct {
	max        int
	merge      bool
	now        time.Duration
	shut       bool
	dirty      map[int]bool
	processing map[int]bool
	pending    map[int]*modelCauses
	delayed    map[int]*modelDelayed
}

type modelCauses struct {
	list    []fuzzCause
	dropped int
}

type modelDelayed struct {
	at     time.Duration
	causes modelCauses
}

func (s *modelCauses) add(c fuzzCause, max int, merge bool) {
	if merge {
		for i := range s.list {
			if s.list[i].id == c.id {
				s.list[i].n += c.n
				return
			}
		}
	}
	if len(s.list) < max {
		s.list = append(s.list, c)
	} else {
		s.dropped++
	}
}

func (m *causeModel) pendingOf(item int) *modelCauses {
	if m.pending[item] == nil {
		m.pending[item] = &modelCauses{}
	}
	return m.pending[item]
}

func (m *causeModel) add(item int, c *fuzzCause) {
	if m.shut {
		return
	}
	m.dirty[item] = true
	if c != nil {
		m.pendingOf(item).add(*c, m.max, m.merge)
	}
}

func (m *causeModel) addAfter(item int, d time.Duration, c *fuzzCause) {
	if m.shut {
		return
	}
	if d <= 0 {
		m.add(item, c)
		return
	}
	dl := m.delayed[item]
	if dl == nil {
		dl = &modelDelayed{at: m.now + d}
		m.delayed[item] = dl
	}
	dl.at = min(dl.at, m.now+d)
	if c != nil {
		dl.causes.add(*c, m.max, m.merge)
	}
}

func (m *causeModel) advance(d time.Duration) {
	m.now += d
	for item, dl := range m.delayed {
		if dl.at > m.now {
			continue
		}
		delete(m.delayed, item)
		m.add(item, nil)
		p := m.pendingOf(item)
		for _, c := range dl.causes.list {
			p.add(c, m.max, m.merge)
		}
		p.dropped += dl.causes.dropped
	}
}

func (m *causeModel) waiting() int {
	n := 0
	for item, d := range m.dirty {
		if d && !m.processing[item] {
			n++
		}
	}
	return n
}

// handOut checks that item may be handed out and returns the causes it must carry.
func (m *causeModel) handOut(t *testing.T, step int, item int) modelCauses {
	if !m.dirty[item] || m.processing[item] {
		t.Fatalf("step %d: item %d handed out while the model has it dirty=%v processing=%v", step, item, m.dirty[item], m.processing[item])
	}
	m.dirty[item], m.processing[item] = false, true
	var out modelCauses
	if p := m.pending[item]; p != nil {
		out = *p
		delete(m.pending, item)
	}
	return out
}

// fuzzConstDelay is the rate limiter of the target: every When is 2 ms.
type fuzzConstDelay struct{}

func (fuzzConstDelay) When(int) time.Duration { return 2 * time.Millisecond }
func (fuzzConstDelay) Forget(int)             {}
func (fuzzConstDelay) NumRequeues(int) int    { return 0 }

// Kept whole: one switch over the operations, each a few lines, reads better than a table
// of closures.
func runCausesFuzz(t *testing.T, data []byte) {
	opts := data[0]
	cfg := Config{Priorities: opts&1 != 0}
	if opts&2 != 0 {
		cfg.Fairness = FairBy(fuzzTenant)
	}
	co := CauseOptions[fuzzCause]{Max: int(opts>>4&3) + 1}
	if opts&8 != 0 {
		co.Merge = mergeFuzzCause
	}
	qi, err := NewRateLimitingWithCauses[int](fuzzConstDelay{}, cfg, co)
	if err != nil {
		t.Fatal(err)
	}
	cq := qi.(*causedQueue[int, fuzzCause])
	if opts&4 != 0 {
		cq.compactAt = 2
	}
	m := &causeModel{max: co.Max, merge: co.Merge != nil, dirty: map[int]bool{}, processing: map[int]bool{},
		pending: map[int]*modelCauses{}, delayed: map[int]*modelDelayed{}}
	var held []int
	var buf []fuzzCause
	seq := 0
	data = data[1:]
	arg := func(i int) byte {
		if i < len(data) {
			return data[i]
		}
		return 0
	}
	check := func(step int, what string, got Causes[fuzzCause], want modelCauses) {
		t.Helper()
		if !slices.Equal(got.List, want.list) || got.Dropped != want.dropped {
			t.Fatalf("step %d (%s): causes %v dropped %d, model %v dropped %d", step, what, got.List, got.Dropped, want.list, want.dropped)
		}
	}
	for step := 0; len(data) > 0 && step < fuzzMaxOps; step++ {
		op, a, b := data[0]%10, arg(1), arg(2)
		data = data[min(3, len(data)):]
		item := int(a) % fuzzItems
		seq++
		cause := fuzzCause{id: int(b) % 4, n: seq}
		switch op {
		case 0: // AddWithCause
			qi.AddWithCause(item, int(b%3)-1, cause)
			m.add(item, &cause)
		case 1: // Add
			qi.Add(item)
			m.add(item, nil)
		case 2: // AddAfterWithCause; 0 ms is an immediate add
			d := time.Duration(b%4) * time.Millisecond
			qi.AddAfterWithCause(item, d, cause)
			m.addAfter(item, d, &cause)
		case 3: // AddAfter
			d := time.Duration(b%4) * time.Millisecond
			qi.AddAfter(item, d)
			m.addAfter(item, d, nil)
		case 4, 5: // GetWithCauses, or a plain Get that loses the causes
			if m.waiting() == 0 {
				if m.shut {
					if _, _, shutdown, err := qi.GetWithCauses(context.Background(), nil); !shutdown || err != nil {
						t.Fatalf("step %d: GetWithCauses on a drained shut-down queue: shutdown %v err %v", step, shutdown, err)
					}
				} else if len(m.delayed) == 0 {
					ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
					_, _, _, err := qi.GetWithCauses(ctx, nil)
					cancel()
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Fatalf("step %d: GetWithCauses on an empty queue: %v", step, err)
					}
					m.now += time.Millisecond
				}
				break
			}
			if op == 5 {
				got, _ := qi.Get()
				m.handOut(t, step, got)
				held = append(held, got)
				break
			}
			got, causes, shutdown, err := qi.GetWithCauses(context.Background(), buf)
			if shutdown || err != nil {
				t.Fatalf("step %d: GetWithCauses: shutdown %v err %v with %d waiting", step, shutdown, err, m.waiting())
			}
			check(step, fmt.Sprintf("hand-out of %d", got), causes, m.handOut(t, step, got))
			buf = causes.List
			held = append(held, got)
		case 6: // Done of a held item
			if len(held) == 0 {
				break
			}
			i := int(a) % len(held)
			x := held[i]
			held = slices.Delete(held, i, i+1)
			qi.Done(x)
			m.processing[x] = false
		case 7: // time passes
			d := time.Duration(b%5) * time.Millisecond
			time.Sleep(d)
			synctest.Wait()
			m.advance(d)
		case 8: // ShutDown
			qi.ShutDown()
			m.shut = true
			m.delayed = map[int]*modelDelayed{}
		case 9: // AddRateLimitedWithCause (2 ms)
			qi.AddRateLimitedWithCause(item, cause)
			m.addAfter(item, 2*time.Millisecond, &cause)
		}
		if n := qi.Len(); n != m.waiting() {
			t.Fatalf("step %d (op %d): Len %d, model %d waiting", step, op, n, m.waiting())
		}
		checkCauseTable(t, step, cq)
	}
	// Hand out what is left: every cause recorded reaches a hand-out.
	for _, x := range held {
		qi.Done(x)
		m.processing[x] = false
	}
	time.Sleep(10 * time.Millisecond)
	synctest.Wait()
	m.advance(10 * time.Millisecond)
	for m.waiting() > 0 {
		got, causes, _, err := qi.GetWithCauses(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		check(-1, fmt.Sprintf("final hand-out of %d", got), causes, m.handOut(t, -1, got))
		qi.Done(got)
		m.processing[got] = false
	}
	qi.ShutDown()
}

// checkCauseTable checks the table follows the entries: as long as the slab, and empty for
// every free entry.
func checkCauseTable(t *testing.T, step int, q *causedQueue[int, fuzzCause]) {
	t.Helper()
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.t.pending) != len(q.slab) || (q.t.delayed != nil && len(q.t.delayed) != len(q.slab)) {
		t.Fatalf("step %d: cause tables of %d/%d entries, slab %d", step, len(q.t.pending), len(q.t.delayed), len(q.slab))
	}
	for _, idx := range q.free {
		if s := q.t.pending[idx]; s.n != 0 || s.dropped != 0 {
			t.Fatalf("step %d: free entry %d has pending causes", step, idx)
		}
		if q.t.delayed != nil {
			if s := q.t.delayed[idx]; s.n != 0 || s.dropped != 0 {
				t.Fatalf("step %d: free entry %d has delayed causes", step, idx)
			}
		}
	}
}
