package workqueue

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unsafe"
)

// Fairness is Config.Fairness: how a queue tells apart the tenants whose items it serves
// round robin. Make one with FairByNamespace or FairBy; the zero Fairness is off.
//
// Within one priority, a fair queue keeps one FIFO per fairness key and a rotation of the
// keys that have items waiting: Get serves the first key of the rotation, its oldest item,
// and moves the key to the end of the rotation if it still has items. A key joins the end of
// the rotation when an item of it starts waiting at that priority; a key whose items left the
// priority otherwise than through Get (moved up by a re-Add with a higher priority) keeps its
// place until Get reaches it, and the rotation is cleared whenever the priority has no item
// left. So one item of namespace B added behind 10,000 of namespace A is handed out by the
// second Get, not the 10,001st.
type Fairness struct {
	on  bool
	key any // func(T) string for the queue's T; nil: the namespace
}

// FairByNamespace returns the Fairness that serves namespaces round robin: the fairness key
// of an item is the part before the slash of a "namespace/name" string key (client-go's
// MetaNamespaceKeyFunc keys; "" for a cluster-scoped "name"), or what the item's
// GetNamespace() string method returns. A queue of items that are neither strings nor have
// that method panics when it is created: use FairBy.
func FairByNamespace() Fairness { return Fairness{on: true} }

// FairBy returns the Fairness that serves the items of each priority round robin across
// key(item). key must be quick and a pure function of the item; the queue calls it once each
// time an item it does not hold yet starts waiting. A queue created with the Fairness of
// another item type than its own panics (a programming error, like a nil key function).
func FairBy[T comparable](key func(item T) string) Fairness {
	if key == nil {
		panic("workqueue.FairBy: nil key function")
	}
	return Fairness{on: true, key: key}
}

// namespaced is an item whose fairness key FairByNamespace reads.
type namespaced interface{ GetNamespace() string }

// tenantRingKeep is the largest ring buffer (in slots) a tenant keeps when its FIFO empties:
// there may be very many tenants, each with a small buffer.
const tenantRingKeep = 64

// tenantIdleKeep is how many tenants without items a queue keeps (with their buffers)
// before it forgets them.
const tenantIdleKeep = 1024

// fairState is the fair queue's tables: tenants (one per fairness key), their FIFOs (one per
// tenant and priority), and per entry the tenant it belongs to. A level's rotation ring holds
// FIFO ids, so that a Get touches the rotation and one FIFO, not the tenant.
type fairState[T comparable] struct {
	key         func(T) string
	stringKeys  bool        // FairByNamespace of string items: namespaceOf without the call to key
	index       tenantIndex // name -> tenant id (fairindex.go)
	tenants     []tenant
	freeTenants []uint32
	idle        int // tenants with refs == 0
	fifos       []fifo
	freeFifos   []uint32
	// of holds, per entry (parallel to slab), the id of its tenant with ofCounted set (0
	// without the flag: not known yet).
	of []uint32
}

// ofCounted marks fairState.of values whose tenant counts the entry in its refs.
const ofCounted = 1 << 31

// tenant is one fairness key.
type tenant struct {
	name  string
	inUse bool // false once forgotten (its id is in fairState.freeTenants)
	refs  int  // entries whose tenant this is
	// f0 is the id + 1 of the tenant's first FIFO (0: none), more the ids of its FIFOs at
	// other priorities. FIFOs are kept for reuse until the tenant is forgotten.
	f0   uint32
	more []uint32
}

// fifo is a tenant's FIFO at one priority.
type fifo struct {
	prio       int32
	live       int  // slots in r that are not stale
	inRotation bool // its id is in the level's rotation ring
	r          ring
}

func newFairState[T comparable](f Fairness) *fairState[T] {
	fs := &fairState[T]{index: newTenantIndex()}
	switch k := f.key.(type) {
	case nil:
		fs.key = namespaceKey[T]()
		fs.stringKeys = reflect.TypeFor[T]().Kind() == reflect.String
	case func(T) string:
		fs.key = k
	default:
		panic(fmt.Sprintf("workqueue: Config.Fairness was made by FairBy for items of type %v; this queue's items are %v",
			reflect.TypeOf(k).In(0), reflect.TypeFor[T]()))
	}
	return fs
}

// namespaceKey returns FairByNamespace's key function for T.
func namespaceKey[T comparable]() func(T) string {
	t := reflect.TypeFor[T]()
	switch {
	case t.Kind() == reflect.String:
		// T's representation is a string's: read it without converting to an interface,
		// which would allocate for every new item.
		return func(item T) string { return namespaceOf(*(*string)(unsafe.Pointer(&item))) }
	case t.Implements(reflect.TypeFor[namespaced]()):
		return func(item T) string { return any(item).(namespaced).GetNamespace() }
	}
	panic(fmt.Sprintf("workqueue: FairByNamespace needs string items (\"namespace/name\") or items with a GetNamespace() string method; %v has neither: use FairBy", t))
}

// namespaceOf returns the namespace of a "namespace/name" key, "" for a "name".
func namespaceOf(key string) string {
	// A loop: namespaces are short (at most 63 bytes), and strings.IndexByte's vector setup
	// costs more than it saves on them.
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return key[:i]
		}
	}
	return ""
}

// fifoOf returns the id of the tenant's FIFO at priority p, creating it if needed.
func (fs *fairState[T]) fifoOf(id uint32, p int32) uint32 {
	t := &fs.tenants[id]
	if t.f0 != 0 && fs.fifos[t.f0-1].prio == p {
		return t.f0 - 1
	}
	for _, f := range t.more {
		if fs.fifos[f].prio == p {
			return f
		}
	}
	// Reuse an unused FIFO (with its buffer) before making one.
	unused := func(f uint32) bool { return fs.fifos[f].live == 0 && !fs.fifos[f].inRotation }
	if t.f0 != 0 && unused(t.f0-1) {
		fs.fifos[t.f0-1].prio = p
		return t.f0 - 1
	}
	for _, f := range t.more {
		if unused(f) {
			fs.fifos[f].prio = p
			return f
		}
	}
	var f uint32
	if n := len(fs.freeFifos); n > 0 {
		f = fs.freeFifos[n-1]
		fs.freeFifos = fs.freeFifos[:n-1]
		fs.fifos[f].prio = p
	} else {
		f = uint32(len(fs.fifos))
		fs.fifos = append(fs.fifos, fifo{prio: p})
	}
	if t.f0 == 0 {
		t.f0 = f + 1
	} else {
		t.more = append(t.more, f)
	}
	return f
}

// findFifo returns the id of the tenant's FIFO at priority p, which must exist.
func (fs *fairState[T]) findFifo(id uint32, p int32) uint32 {
	t := &fs.tenants[id]
	if t.f0 != 0 && fs.fifos[t.f0-1].prio == p {
		return t.f0 - 1
	}
	for _, f := range t.more {
		if fs.fifos[f].prio == p {
			return f
		}
	}
	panic("workqueue: internal error: tenant has no FIFO at the priority of its entry")
}

// tenantOf returns the tenant id of entry idx, finding it the first time: for string keys
// the namespace is found and hashed in one pass (namespaceHash), then looked up.
func (q *queue[T]) tenantOf(idx uint32) uint32 {
	fs := q.fair
	v := fs.of[idx]
	if v&ofCounted != 0 {
		return v &^ ofCounted
	}
	var id uint32
	if item := &q.slab[idx].item; fs.stringKeys {
		key := *(*string)(unsafe.Pointer(item))
		n, h, w := fs.index.namespaceHash(key)
		id = fs.lookupHashed(key[:n], h, w)
	} else {
		id = fs.lookupTenant(fs.key(*item))
	}
	t := &fs.tenants[id]
	if t.refs == 0 {
		fs.idle--
	}
	t.refs++
	fs.of[idx] = id | ofCounted
	return id
}

// newTenant records a tenant for name, without references yet.
func (fs *fairState[T]) newTenant(name string) uint32 {
	name = strings.Clone(name) // not a substring pinning the whole item
	var id uint32
	if n := len(fs.freeTenants); n > 0 {
		id = fs.freeTenants[n-1]
		fs.freeTenants = fs.freeTenants[:n-1]
		fs.tenants[id] = tenant{name: name, inUse: true}
	} else {
		id = uint32(len(fs.tenants))
		fs.tenants = append(fs.tenants, tenant{name: name, inUse: true})
	}
	fs.idle++
	return id
}

// fairEnqueue puts slot (of entry idx) at the end of its tenant's FIFO at level lv, and the
// FIFO at the end of the level's rotation if it is not in it.
func (q *queue[T]) fairEnqueue(lv *level, idx uint32, slot uint64) {
	fs := q.fair
	f := fs.fifoOf(q.tenantOf(idx), lv.prio)
	tl := &fs.fifos[f]
	tl.r.push(slot)
	tl.live++
	if !tl.inRotation {
		tl.inRotation = true
		lv.r.push(uint64(f))
	}
}

// fairDequeue takes the oldest item of the first tenant of the level's rotation that has
// one. The level must have a live item. The entry's generation moves on, so that its slot in
// the level's age ring becomes stale.
func (q *queue[T]) fairDequeue(lv *level) uint32 {
	fs := q.fair
	for {
		s := lv.r.pop()
		tl := &fs.fifos[s]
		if tl.live == 0 { // its items moved up: it leaves the rotation now
			tl.inRotation = false
			continue
		}
		idx := q.popLive(&tl.r)
		tl.live--
		if tl.live > 0 {
			lv.r.push(s)
		} else {
			tl.inRotation = false
			tl.r.resetKeep(tenantRingKeep)
		}
		q.slab[idx].gen++
		if q.aging != 0 {
			q.trimAge(lv)
		}
		return idx
	}
}

// trimAge drops the stale slots at the head of the level's age ring. The oldest waiting
// item's tenant is served within one turn of the rotation, so the ring holds about the
// waiting items plus the items handed out during one turn.
func (q *queue[T]) trimAge(lv *level) {
	r := &lv.age
	for r.n > 0 {
		s := r.buf[r.head]
		if q.slab[uint32(s)].gen == uint32(s>>32) {
			return
		}
		r.pop()
	}
}

// fairLeave accounts for entry idx leaving its tenant's FIFO at priority p other than by
// fairDequeue (a raise): its slot becomes stale, the tenant keeps its place in the rotation.
func (q *queue[T]) fairLeave(idx uint32, p int32) {
	fs := q.fair
	tl := &fs.fifos[fs.findFifo(fs.of[idx]&^ofCounted, p)]
	tl.live--
	if tl.live == 0 {
		tl.r.resetKeep(tenantRingKeep)
	}
}

// fairLevelEmptied clears the rotation of a level that has no live item left.
func (q *queue[T]) fairLevelEmptied(lv *level) {
	fs := q.fair
	for lv.r.n > 0 {
		tl := &fs.fifos[lv.r.pop()]
		tl.inRotation = false
		tl.r.resetKeep(tenantRingKeep)
	}
}

// fairRelease forgets the tenant of a released entry, and forgets idle tenants once there are
// many of them.
func (q *queue[T]) fairRelease(idx uint32) {
	fs := q.fair
	v := fs.of[idx]
	if v&ofCounted == 0 {
		return
	}
	fs.of[idx] = 0
	t := &fs.tenants[v&^ofCounted]
	t.refs--
	if t.refs > 0 {
		return
	}
	fs.idle++
	if fs.idle > tenantIdleKeep && fs.idle > fs.index.used/2 {
		fs.sweep()
	}
}

// sweep forgets every tenant without entries none of whose FIFOs is in a rotation, and
// those FIFOs.
func (fs *fairState[T]) sweep() {
	for id := range fs.tenants {
		t := &fs.tenants[id]
		if !t.inUse || t.refs != 0 {
			continue
		}
		ids := t.more
		if t.f0 != 0 {
			ids = append(ids, t.f0-1)
		}
		if slices.ContainsFunc(ids, func(f uint32) bool { return fs.fifos[f].inRotation }) {
			continue
		}
		for _, f := range ids {
			fs.fifos[f] = fifo{}
			fs.freeFifos = append(fs.freeFifos, f)
		}
		*t = tenant{}
		fs.freeTenants = append(fs.freeTenants, uint32(id))
		fs.idle--
	}
	fs.rebuildIndex()
}

// reset forgets every tenant (the queue compacts with no entry left).
func (fs *fairState[T]) reset() {
	fs.index = tenantIndex{seed: fs.index.seed}
	fs.tenants, fs.freeTenants, fs.fifos, fs.freeFifos, fs.of = nil, nil, nil, nil, nil
	fs.idle = 0
}
