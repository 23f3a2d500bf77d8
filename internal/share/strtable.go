package share

import (
	"sync/atomic"
	"unsafe"
	"weak"
)

// strTable holds the canonical strings of a sharer, apart from its other values, so that
// Sharer.String can look them up without the sharer's mutex: the decoders of a watch or a
// list call it for every string they decode, from several goroutines, while the informer
// shares objects on another. It is an open-addressed hash table (linear probing) of
// immutable entries, keyed by the string's hash as the main table is: one writer (the
// sharer, under its mutex) and any number of lock-free readers. The writer never frees a
// slot in place: dropping entries (a sweep) or growing builds a new slot array and
// publishes it whole, so a reader sees either the old array or the new one, each complete.
type strTable struct {
	cur   atomic.Pointer[strSlots]
	count int // entries in cur, live or not (writer only)
}

type strSlots struct {
	mask  uint64
	slots []atomic.Pointer[strEntry]
}

// strEntry is a canonical string: its hash, a weak pointer to its bytes and its length.
type strEntry struct {
	hash uint64
	ptr  weak.Pointer[byte]
	n    int
}

// strMinSlots is the least size of a slot array; the table is kept at most half full.
const strMinSlots = 64

// lookup returns the live canonical string of hash h and its length, or nil. It is safe to
// call concurrently with the writer.
func (t *strTable) lookup(h uint64) (unsafe.Pointer, int) {
	tab := t.cur.Load()
	if tab == nil {
		return nil, 0
	}
	for i := h & tab.mask; ; i = (i + 1) & tab.mask {
		e := tab.slots[i].Load()
		if e == nil {
			return nil, 0
		}
		if e.hash == h {
			return unsafe.Pointer(e.ptr.Value()), e.n
		}
	}
}

// insert makes the n bytes at p the canonical string of hash h, replacing the one of that
// hash if any (as the main table's map assignment does). Writer only.
func (t *strTable) insert(h uint64, p unsafe.Pointer, n int) {
	e := &strEntry{hash: h, ptr: weak.Make((*byte)(p)), n: n}
	tab := t.cur.Load()
	if tab == nil || 2*(t.count+1) > len(tab.slots) {
		tab = t.rebuild(t.count + 1)
	}
	for i := h & tab.mask; ; i = (i + 1) & tab.mask {
		old := tab.slots[i].Load()
		if old == nil {
			t.count++
			tab.slots[i].Store(e)
			return
		}
		if old.hash == h {
			tab.slots[i].Store(e)
			return
		}
	}
}

// sweep drops the entries whose string was freed (a new slot array, sized for what is
// left). Writer only.
func (t *strTable) sweep() {
	if t.cur.Load() != nil {
		t.rebuild(0)
	}
}

// rebuild publishes a new slot array holding the live entries, with room for at least want
// entries (and for what is live), and returns it. Writer only.
func (t *strTable) rebuild(want int) *strSlots {
	old := t.cur.Load()
	var live []*strEntry
	if old != nil {
		live = make([]*strEntry, 0, t.count)
		for i := range old.slots {
			if e := old.slots[i].Load(); e != nil && e.ptr.Value() != nil {
				live = append(live, e)
			}
		}
	}
	size := strMinSlots
	for size < 4*max(want, len(live)) {
		size *= 2
	}
	tab := &strSlots{mask: uint64(size - 1), slots: make([]atomic.Pointer[strEntry], size)}
	for _, e := range live {
		i := e.hash & tab.mask
		for tab.slots[i].Load() != nil {
			i = (i + 1) & tab.mask
		}
		tab.slots[i].Store(e)
	}
	t.count = len(live)
	t.cur.Store(tab)
	return tab
}

// len returns the number of entries, live or not. Writer only (or under the sharer's mutex).
func (t *strTable) len() int { return t.count }
