package workqueue

import (
	"encoding/binary"
	"math/rand/v2"
	"unsafe"
)

// The tenant index maps a fairness key to its tenant id. A Go map[string]uint32 costs about
// half of what fairness adds to an Add on short namespace strings (measured with
// TestFairCostCPUTimeAB), so the fair queue keeps its own table, as index.go does for items:
// open addressing with linear probing over []uint64 slots, each the name's 32-bit hash and
// the tenant id plus one (0 is empty), at most half full. The hash reads the name eight
// bytes at a time, seeded per queue so that chosen names cannot pile up in one run. Tenants
// are removed only by sweep, which rebuilds the table.

type tenantIndex struct {
	seed  uint64
	slots []uint64
	used  int
}

func newTenantIndex() tenantIndex { return tenantIndex{seed: rand.Uint64() | 1} }

// hash returns the 32-bit hash of name.
func (ti *tenantIndex) hash(name string) uint32 {
	b := unsafe.Slice(unsafe.StringData(name), len(name))
	h := ti.seed ^ uint64(len(name))*0x9e3779b97f4a7c15
	for len(b) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(b)) * 0xbf58476d1ce4e5b9
		h ^= h >> 29
		b = b[8:]
	}
	var tail uint64
	for i, c := range b {
		tail |= uint64(c) << (8 * i)
	}
	h = (h ^ tail) * 0x94d049bb133111eb
	return uint32(h>>32 ^ h)
}

// insert records tenant id, whose name has hash h and is not in the table.
func (ti *tenantIndex) insert(h, id uint32) {
	if 2*(ti.used+1) > len(ti.slots) {
		old := ti.slots
		ti.slots = make([]uint64, max(2*len(old), 16))
		ti.used = 0
		for _, s := range old {
			if s != 0 {
				ti.insert(uint32(s>>32), uint32(s)-1)
			}
		}
	}
	mask := uint32(len(ti.slots) - 1)
	i := h & mask
	for ti.slots[i] != 0 {
		i = (i + 1) & mask
	}
	ti.slots[i] = uint64(h)<<32 | uint64(id+1)
	ti.used++
}

// lookupTenant returns the id of the tenant named name, creating the tenant (without
// references) if there is none.
func (fs *fairState[T]) lookupTenant(name string) uint32 {
	ti := &fs.index
	h := ti.hash(name)
	if ti.used > 0 {
		mask := uint32(len(ti.slots) - 1)
		for i := h & mask; ti.slots[i] != 0; i = (i + 1) & mask {
			if s := ti.slots[i]; uint32(s>>32) == h && fs.tenants[uint32(s)-1].name == name {
				return uint32(s) - 1
			}
		}
	}
	id := fs.newTenant(name)
	fs.index.insert(h, id)
	return id
}

// rebuildIndex makes the table anew from the tenants in use (after sweep).
func (fs *fairState[T]) rebuildIndex() {
	fs.index = tenantIndex{seed: fs.index.seed}
	for id := range fs.tenants {
		if t := &fs.tenants[id]; t.inUse {
			fs.index.insert(fs.index.hash(t.name), uint32(id))
		}
	}
}
