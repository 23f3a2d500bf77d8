package workqueue

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"unsafe"
)

// The tenant index maps a fairness key to its tenant id. A Go map[string]uint32 costs about
// half of what fairness adds to an Add on short namespace strings (measured with
// TestFairCostCPUTimeAB), so the fair queue keeps its own table, as index.go does for items:
// open addressing with linear probing, at most half full. A slot holds the name's 32-bit
// hash, its length, the tenant id plus one (0 is empty) and the name's first 16 bytes, so
// that a lookup compares names of up to 16 bytes (most namespaces) without leaving the
// table. For string keys, the namespace is found, hashed and loaded in one pass over the key,
// eight bytes at a time (namespaceHash). The hash is seeded per queue so that chosen names
// cannot pile up in one run. Tenants are removed only by sweep, which rebuilds the table.

type tenantIndex struct {
	seed  uint64
	slots []tenantSlot
	used  int
}

// tenantSlot is one slot of the tenant index.
type tenantSlot struct {
	hash uint32
	id   uint32 // tenant id + 1; 0: the slot is empty
	n    int    // the name's length
	w    nameWords
}

// nameWords are the first 16 bytes of a name, little endian, zero beyond its end.
type nameWords [2]uint64

func newTenantIndex() tenantIndex { return tenantIndex{seed: rand.Uint64() | 1} }

// hash returns the 32-bit hash and the first words of name, as namespaceHash does for a key
// whose namespace is name.
func (ti *tenantIndex) hash(name string) (uint32, nameWords) {
	b := unsafe.Slice(unsafe.StringData(name), len(name))
	h := ti.seed
	var w nameWords
	for i := 0; len(b) >= 8; i++ {
		x := binary.LittleEndian.Uint64(b)
		if i < 2 {
			w[i] = x
		}
		h = mixWord(h, x)
		b = b[8:]
	}
	var tail uint64
	for i, c := range b {
		tail |= uint64(c) << (8 * i)
	}
	if k := len(name) / 8; k < 2 {
		w[k] = tail
	}
	return finishHash(h, tail, len(name)), w
}

func mixWord(h, w uint64) uint64 {
	h = (h ^ w) * 0xbf58476d1ce4e5b9
	return h ^ h>>29
}

func finishHash(h, tail uint64, n int) uint32 {
	h = (h ^ tail ^ uint64(n)*0x9e3779b97f4a7c15) * 0x94d049bb133111eb
	return uint32(h>>32 ^ h)
}

// namespaceHash returns the length of the namespace of a "namespace/name" key (what
// namespaceOf returns: the bytes before the first slash, "" without one), its hash and its
// first words, in one pass that reads the key eight bytes at a time.
func (ti *tenantIndex) namespaceHash(key string) (n int, h uint32, w nameWords) {
	const ones, highs, slashes = 0x0101010101010101, 0x8080808080808080, 0x2f2f2f2f2f2f2f2f
	b := unsafe.Slice(unsafe.StringData(key), len(key))
	acc := ti.seed
	for ; len(b) >= 8; b = b[8:] {
		x := binary.LittleEndian.Uint64(b)
		// The lowest byte of x that is a slash is the lowest set high bit of m (a borrow
		// can flag bytes above it, never below).
		if y := x ^ slashes; (y-ones)&^y&highs != 0 {
			m := (y - ones) &^ y & highs
			i := bits.TrailingZeros64(m) / 8
			tail := x & (1<<(8*i) - 1)
			if n < 16 {
				w[n/8] = tail
			}
			n += i
			return n, finishHash(acc, tail, n), w
		}
		if n < 16 {
			w[n/8] = x
		}
		acc = mixWord(acc, x)
		n += 8
	}
	var tail uint64
	for i, c := range b {
		if c == '/' {
			if n < 16 {
				w[n/8] = tail
			}
			return n + i, finishHash(acc, tail, n+i), w
		}
		tail |= uint64(c) << (8 * i)
	}
	return 0, finishHash(ti.seed, 0, 0), nameWords{} // no slash: cluster-scoped, namespace ""
}

// insert records tenant id, whose name has length n, hash h and words w and is not in the
// table.
func (ti *tenantIndex) insert(h uint32, n int, w nameWords, id uint32) {
	if 2*(ti.used+1) > len(ti.slots) {
		old := ti.slots
		ti.slots = make([]tenantSlot, max(2*len(old), 16))
		ti.used = 0
		for _, s := range old {
			if s.id != 0 {
				ti.insert(s.hash, s.n, s.w, s.id-1)
			}
		}
	}
	mask := uint32(len(ti.slots) - 1)
	i := h & mask
	for ti.slots[i].id != 0 {
		i = (i + 1) & mask
	}
	ti.slots[i] = tenantSlot{hash: h, id: id + 1, n: n, w: w}
	ti.used++
}

// lookupTenant returns the id of the tenant named name, creating the tenant (without
// references) if there is none.
func (fs *fairState[T]) lookupTenant(name string) uint32 {
	h, w := fs.index.hash(name)
	return fs.lookupHashed(name, h, w)
}

// lookupHashed is lookupTenant for a name whose hash is h and first words w.
func (fs *fairState[T]) lookupHashed(name string, h uint32, w nameWords) uint32 {
	ti := &fs.index
	if ti.used > 0 {
		mask := uint32(len(ti.slots) - 1)
		for i := h & mask; ti.slots[i].id != 0; i = (i + 1) & mask {
			s := &ti.slots[i]
			if s.hash == h && s.n == len(name) && s.w == w && (s.n <= 16 || fs.tenants[s.id-1].name[16:] == name[16:]) {
				return s.id - 1
			}
		}
	}
	id := fs.newTenant(name)
	ti.insert(h, len(name), w, id)
	return id
}

// rebuildIndex makes the table anew from the tenants in use (after sweep).
func (fs *fairState[T]) rebuildIndex() {
	fs.index = tenantIndex{seed: fs.index.seed}
	for id := range fs.tenants {
		if t := &fs.tenants[id]; t.inUse {
			h, w := fs.index.hash(t.name)
			fs.index.insert(h, len(t.name), w, uint32(id))
		}
	}
}
