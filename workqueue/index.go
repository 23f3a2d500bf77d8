package workqueue

import "hash/maphash"

// The item index maps an item to its entry. It is an open-addressing hash table with linear
// probing over a []uint64 of slots, each holding the low 32 bits of the item's hash and the
// entry number plus one (0 is an empty slot). Compared with a Go map[T]uint32 it hashes an
// item once per Add (lookup and insert share the hash), finds a known entry's slot by entry
// number without comparing items, holds no pointers (the GC never scans it), costs 8 bytes
// per slot, and is dropped when an idle queue compacts.
//
// Deletion shifts later slots of the probe run back (Knuth's algorithm R), so there are no
// tombstones and lookups stay short however many items come and go.

const indexMinSlots = 16

// hash returns the index hash of item.
func (q *queue[T]) hash(item T) uint32 {
	return uint32(maphash.Comparable(q.seed, item))
}

// lookup returns item's entry, or ok == false. It also returns the item's hash for insert.
func (q *queue[T]) lookup(item T) (idx uint32, h uint32, ok bool) {
	h = q.hash(item)
	idx, ok = q.lookupHashed(item, h)
	return idx, h, ok
}

// lookupHashed is lookup for an item whose hash h the caller computed (before taking the
// lock: hashing needs none, and the lock is held for less time).
func (q *queue[T]) lookupHashed(item T, h uint32) (idx uint32, ok bool) {
	if q.used == 0 {
		return 0, false
	}
	mask := uint32(len(q.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := q.slots[i]
		if s == 0 {
			return 0, false
		}
		if uint32(s>>32) == h {
			idx = uint32(s) - 1
			if q.slab[idx].item == item {
				return idx, true
			}
		}
	}
}

// indexInsert records entry idx for an item of hash h that is not in the index.
func (q *queue[T]) indexInsert(h, idx uint32) {
	if 2*(q.used+1) > len(q.slots) { // keep the load at most 1/2
		q.growIndex()
	}
	mask := uint32(len(q.slots) - 1)
	i := h & mask
	for q.slots[i] != 0 {
		i = (i + 1) & mask
	}
	q.slots[i] = uint64(h)<<32 | uint64(idx+1)
	q.used++
}

// indexDelete removes entry idx, whose item has hash h.
func (q *queue[T]) indexDelete(h, idx uint32) {
	mask := uint32(len(q.slots) - 1)
	i := h & mask
	for uint32(q.slots[i]) != idx+1 {
		i = (i + 1) & mask
	}
	// Move back every later slot of the run whose home is not in (i, j].
	for j := (i + 1) & mask; q.slots[j] != 0; j = (j + 1) & mask {
		home := uint32(q.slots[j]>>32) & mask
		if (j-home)&mask >= (j-i)&mask {
			q.slots[i] = q.slots[j]
			i = j
		}
	}
	q.slots[i] = 0
	q.used--
}

// growIndex doubles the slot table; the stored hash bits give every slot's new home.
func (q *queue[T]) growIndex() {
	old := q.slots
	q.slots = make([]uint64, max(2*len(old), indexMinSlots))
	mask := uint32(len(q.slots) - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := uint32(s>>32) & mask
		for q.slots[i] != 0 {
			i = (i + 1) & mask
		}
		q.slots[i] = s
	}
}
