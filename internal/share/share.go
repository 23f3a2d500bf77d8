package share

import (
	"hash/maphash"
	"math"
	"reflect"
	"strings"
	"sync"
	"unsafe"
	"weak"
)

const (
	// shareWindow is the number of lookups after which a site's policy is reviewed.
	shareWindow = 128
	// shareSkipWindows is how many windows' worth of visits a site that did not pay for
	// itself is skipped for (doubled on every further failure, up to shareMaxBackoff times).
	shareSkipWindows = 32
	shareMaxBackoff  = 6
	// shareEntryCost approximates the bytes a table entry costs: the map slot, the weak
	// handle and its runtime record.
	shareEntryCost = 96
	// shareMinSweep is the least number of insertions between two sweeps of dead entries.
	shareMinSweep = 1024
	// maxDynSites bounds the number of JSON paths an informer of dynamic objects
	// (interface{} values) keeps a policy for.
	maxDynSites = 4096
	// maxShareDepth bounds the recursion (values nested deeper are left as they are).
	maxShareDepth = 64
	// shareTrimMin is the least number of unused bytes for which a slice is reallocated to
	// its length.
	shareTrimMin = 16
)

// Table keys of values that are not identified by their Go type's plan.
var (
	keyString      = &sharePlan{} // string bytes, whatever the string type
	keyBoxedString = &sharePlan{} // a string stored in an interface{} (the box)
	keyBoxedFloat  = &sharePlan{} // a float64 stored in an interface{} (the box)
	keyBoxedInt    = &sharePlan{} // an int64 stored in an interface{} (the box)
)

var (
	planMapStringAny = sharePlanFor(typeMapStringAny)
	planAnySlice     = sharePlanFor(reflect.TypeFor[[]any]())
)

type shareKey struct {
	plan *sharePlan
	hash uint64
}

// shareEntry is a canonical value: a weak pointer to its memory (the string bytes, the
// slice's backing array, the map, the pointed-to value or an interface's box) and, for
// strings and slices, its length.
type shareEntry struct {
	ptr weak.Pointer[byte]
	n   int
}

type shareSite struct {
	lookups     uint32 // in the current window
	skip        uint32 // visits left to skip
	fails       uint8  // consecutive windows that did not pay
	saved, cost uint64 // bytes, in the current window
}

type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// Sharer shares the sub-values of the objects of type T given to it (the objects of one
// cache). All methods are safe for concurrent use.
type Sharer[T any] struct{ s *sharer }

// New returns a Sharer with an empty table.
func New[T any]() *Sharer[T] { return &Sharer[T]{newSharer(reflect.TypeFor[T]())} }

// Share replaces, in place, every sub-value of obj that is equal by content to one an object
// shared before holds with that one, trims slices to their length, and returns obj. The
// object itself (a pointer T) is never replaced, and nothing already shared is written.
func (s *Sharer[T]) Share(obj T) T { return shareObject(s.s, obj) }

// String returns the canonical string equal to b when the table holds one, else a new
// string: a decoder calls it instead of allocating, so that a value shared before is never
// allocated again (Share then finds it canonical already). It adds nothing to the table.
func (s *Sharer[T]) String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	h := maphash.Bytes(s.s.seed, b)
	s.s.mu.Lock()
	c, n := s.s.lookup(shareKey{keyString, h})
	s.s.mu.Unlock()
	if c != nil && n == len(b) && unsafe.String((*byte)(c), n) == string(b) {
		// The weak pointer kept the bytes alive until here; the returned string now does.
		return unsafe.String((*byte)(c), n)
	}
	return string(b)
}

// Stats returns the Sharer's figures.
func (s *Sharer[T]) Stats() Stats { return s.s.stats() }

// sharer is the untyped engine of a Sharer: the table, the per-site policies and the walk.
// One mutex guards it.
type sharer struct {
	mu          sync.Mutex
	seed        maphash.Seed
	root        *sharePlan // plan of T, or of *T's pointee when rootPointer
	rootPointer bool
	table       map[shareKey]shareEntry
	sites       []shareSite // indexed by plan site
	dynSites    []shareSite // indexed by -site-1
	dyn         map[dynSiteKey]int
	scratch     map[*sharePlan][]*mapScratch
	sinceSweep  int
	peak        int

	// scratch of hashOf
	hashSize   uintptr
	hashFailed bool

	hits, inserts, saved uint64
}

func newSharer(t reflect.Type) *sharer {
	s := &sharer{seed: maphash.MakeSeed(), table: map[shareKey]shareEntry{}}
	if t.Kind() == reflect.Pointer {
		s.root, s.rootPointer = sharePlanFor(t.Elem()), true
	} else {
		s.root = sharePlanFor(t)
	}
	s.sites = make([]shareSite, shareSiteNext.Load()+1)
	return s
}

// shareObject shares the sub-values of obj with those of the objects shared before, in
// place, and returns obj. The object itself (the pointer T) is never replaced.
func shareObject[T any](s *sharer, obj T) T {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rootPointer {
		if q := *(*unsafe.Pointer)(unsafe.Pointer(&obj)); q != nil {
			s.share(s.root, 0, q, 0)
		}
		return obj
	}
	s.share(s.root, 0, unsafe.Pointer(&obj), 0)
	return obj
}

// Stats are the figures of a Sharer.
type Stats struct {
	// Entries is the number of canonical values the table holds (including values already
	// freed that the next sweep drops).
	Entries int
	// Hits counts sub-values replaced by an identical canonical one; Inserts counts
	// canonical values added.
	Hits, Inserts uint64
	// SavedBytes approximates the bytes of the sub-values dropped by those hits.
	SavedBytes uint64
}

func (s *sharer) stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Entries: len(s.table), Hits: s.hits, Inserts: s.inserts, SavedBytes: s.saved}
}

// sweep drops the entries whose value was freed and returns how many are left.
func (s *sharer) sweep() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked()
	return len(s.table)
}

func (s *sharer) sweepLocked() {
	for k, e := range s.table {
		if e.ptr.Value() == nil {
			delete(s.table, k)
		}
	}
	s.sinceSweep = 0
	// Go maps do not shrink: start a new one when most of the table went away.
	if n := len(s.table); n < s.peak/4 {
		t := make(map[shareKey]shareEntry, n)
		for k, e := range s.table {
			t[k] = e
		}
		s.table, s.peak = t, n
	}
}

// site bookkeeping

// siteState returns the state of a site: a plan's site (≥ 0), or a site of this sharer's
// dynamic values (< 0; see childSite).
func (s *sharer) siteState(site int) *shareSite {
	if site < 0 {
		return &s.dynSites[-site-1]
	}
	if site >= len(s.sites) {
		s.sites = append(s.sites, make([]shareSite, int(shareSiteNext.Load())+1-len(s.sites))...)
	}
	return &s.sites[site]
}

// childSite returns the site of the value at key (a map key, or "[]" for the elements of a
// slice) below a dynamic value (in an interface{}, as in Unstructured objects) reached
// through site, so that the policy follows JSON paths: metadata.name is not
// spec.containers[].image. Past maxDynSites paths, children share their parent's site.
func (s *sharer) childSite(site int, key string) int {
	k := dynSiteKey{site, key}
	if c, ok := s.dyn[k]; ok {
		return c
	}
	if len(s.dynSites) >= maxDynSites {
		return site
	}
	if s.dyn == nil {
		s.dyn = map[dynSiteKey]int{}
	}
	s.dynSites = append(s.dynSites, shareSite{})
	c := -len(s.dynSites)
	s.dyn[dynSiteKey{site, strings.Clone(key)}] = c
	return c
}

type dynSiteKey struct {
	parent int
	key    string
}

func (s *sharer) enabled(site int) bool {
	st := s.siteState(site)
	if st.skip > 0 {
		st.skip--
		return false
	}
	return true
}

func (s *sharer) tick(site int) {
	st := s.siteState(site)
	if st.lookups++; st.lookups < shareWindow {
		return
	}
	if st.saved < st.cost {
		st.fails++
		st.skip = shareWindow * shareSkipWindows << min(st.fails-1, shareMaxBackoff)
	} else {
		st.fails = 0
	}
	st.lookups, st.saved, st.cost = 0, 0, 0
}

func (s *sharer) hit(site int, saved uintptr) {
	s.siteState(site).saved += uint64(saved)
	s.hits++
	s.saved += uint64(saved)
	s.tick(site)
}

func (s *sharer) insert(site int, key shareKey, p unsafe.Pointer, n int) {
	s.table[key] = shareEntry{ptr: weak.Make((*byte)(p)), n: n}
	s.siteState(site).cost += shareEntryCost
	s.inserts++
	s.tick(site)
	if len(s.table) > s.peak {
		s.peak = len(s.table)
	}
	if s.sinceSweep++; s.sinceSweep >= max(len(s.table), shareMinSweep) {
		s.sweepLocked()
	}
}

// lookup returns the live canonical value of key and its length, or nil.
func (s *sharer) lookup(key shareKey) (unsafe.Pointer, int) {
	e, ok := s.table[key]
	if !ok {
		return nil, 0
	}
	return unsafe.Pointer(e.ptr.Value()), e.n
}

// sharing

// share shares the value of plan p at ptr, reached through site.
func (s *sharer) share(p *sharePlan, site int, ptr unsafe.Pointer, depth int) {
	if !p.refs || depth > maxShareDepth {
		return
	}
	switch p.kind {
	case kindString:
		str := (*string)(ptr)
		// Writes only what changes: a value shared twice is not written to (handlers may
		// be reading it).
		if c := s.intern(site, *str); unsafe.StringData(c) != unsafe.StringData(*str) {
			*str = c
		}
	case kindStruct:
		for i := range p.fields {
			if f := &p.fields[i]; f.site != 0 {
				s.share(f.plan, f.site, unsafe.Add(ptr, f.off), depth+1)
			}
		}
	case kindArray:
		for i := range p.length {
			s.share(p.elem, p.elemSite, unsafe.Add(ptr, uintptr(i)*p.elem.size), depth+1)
		}
	case kindPointer:
		s.sharePointer(p, site, ptr, depth)
	case kindSlice:
		s.shareSlice(p, site, ptr, depth)
	case kindMap:
		s.shareMap(p, site, ptr, depth)
	case kindInterface:
		if p.emptyIfc {
			pv := (*any)(ptr)
			if v := s.shareAny(site, *pv, depth); *(*eface)(unsafe.Pointer(&v)) != *(*eface)(unsafe.Pointer(pv)) {
				*pv = v
			}
		}
	}
}

// intern returns the canonical string equal to str (str itself when it becomes canonical
// or the site is skipped).
func (s *sharer) intern(site int, str string) string {
	if len(str) == 0 || !s.enabled(site) {
		return str
	}
	key := shareKey{keyString, maphash.String(s.seed, str)}
	if c, n := s.lookup(key); c != nil && n == len(str) {
		if c == unsafe.Pointer(unsafe.StringData(str)) {
			s.tick(site)
			return str
		}
		if cs := unsafe.String((*byte)(c), n); cs == str {
			s.hit(site, uintptr(n))
			return cs
		}
	}
	// The canonical copy is the sharer's own: a string may live in read-only memory (a
	// constant set by a transform or a decoder), where no weak pointer can point.
	c := strings.Clone(str)
	s.insert(site, key, unsafe.Pointer(unsafe.StringData(c)), len(c))
	return c
}

// hashOf hashes the value at ptr by content and reports the bytes it holds; ok is false
// when it is nested too deep to hash.
func (s *sharer) hashOf(p *sharePlan, ptr unsafe.Pointer, depth int) (h uint64, size uintptr, ok bool) {
	s.hashSize, s.hashFailed = 0, false
	h = s.hash(p, ptr, false, depth)
	return h, s.hashSize, !s.hashFailed
}

func (s *sharer) sharePointer(p *sharePlan, site int, ptr unsafe.Pointer, depth int) {
	pp := (*unsafe.Pointer)(ptr)
	q := *pp
	if q == nil {
		return
	}
	if !s.enabled(site) {
		s.share(p.elem, p.elemSite, q, depth+1)
		return
	}
	h, size, ok := s.hashOf(p.elem, q, depth+1)
	key := shareKey{p, h}
	if ok {
		if c, _ := s.lookup(key); c != nil {
			if c == q {
				s.tick(site)
				return
			}
			if s.equal(p.elem, c, q, false, depth+1) {
				*pp = c
				s.hit(site, size+p.elem.size)
				return
			}
		}
	}
	s.share(p.elem, p.elemSite, q, depth+1)
	if ok {
		s.insert(site, key, q, 0)
	}
}

func (s *sharer) shareSlice(p *sharePlan, site int, ptr unsafe.Pointer, depth int) {
	sh := (*sliceHeader)(ptr)
	if sh.len == 0 {
		return
	}
	key, ok, done := s.lookupSlice(p, site, sh, depth)
	if done {
		return
	}
	if waste := uintptr(sh.cap-sh.len) * p.elem.size; waste >= shareTrimMin {
		v := reflect.NewAt(p.typ, ptr).Elem()
		nv := reflect.MakeSlice(p.typ, sh.len, sh.len)
		reflect.Copy(nv, v)
		v.Set(nv)
	}
	if p.elem.refs {
		for i := range sh.len {
			s.share(p.elem, p.elemSite, unsafe.Add(sh.data, uintptr(i)*p.elem.size), depth+1)
		}
	}
	if ok {
		s.insert(site, key, sh.data, sh.len)
	}
}

// lookupSlice looks the slice sh (of plan p) up among the shared ones. done: sh already is
// the shared copy or has just been pointed at it. Otherwise the caller shares the elements
// and, when ok, inserts the slice under key.
func (s *sharer) lookupSlice(p *sharePlan, site int, sh *sliceHeader, depth int) (key shareKey, ok, done bool) {
	if !s.enabled(site) {
		return key, false, false
	}
	h, size, ok := s.hashOf(p, unsafe.Pointer(sh), depth)
	key = shareKey{p, h}
	if c, n := s.lookup(key); ok && c != nil && n == sh.len {
		if c == sh.data {
			s.tick(site)
			return key, ok, true
		}
		if s.equalElems(p.elem, c, sh.data, n, depth+1) {
			sh.data, sh.cap = c, n
			s.hit(site, size)
			return key, ok, true
		}
	}
	return key, ok, false
}

// mapAt returns the map at ptr as a reflect.Value that can be set.
func mapAt(p *sharePlan, ptr unsafe.Pointer) reflect.Value { return reflect.NewAt(p.typ, ptr).Elem() }

func (s *sharer) shareMap(p *sharePlan, site int, ptr unsafe.Pointer, depth int) {
	switch p.fastMap {
	case mapStringString:
		m := (*map[string]string)(ptr)
		if c := s.shareStringString(p, site, *m); mapPointer(c) != mapPointer(*m) {
			*m = c
		}
		return
	case mapStringAny:
		m := (*map[string]any)(ptr)
		if c := s.shareStringAny(p, site, *m, depth); mapPointer(c) != mapPointer(*m) {
			*m = c
		}
		return
	}
	pm := (*unsafe.Pointer)(ptr) // a map value is one pointer
	if *pm == nil || mapAt(p, ptr).Len() == 0 {
		return
	}
	var key shareKey
	ok := s.enabled(site)
	if ok {
		var h uint64
		var size uintptr
		h, size, ok = s.hashOf(p, ptr, depth)
		key = shareKey{p, h}
		if c, _ := s.lookup(key); ok && c != nil {
			if c == *pm {
				s.tick(site)
				return
			}
			x := s.getScratch(p)
			x.slot = c
			equal := s.equalMaps(p, unsafe.Pointer(&x.slot), ptr, depth+1)
			s.putScratch(p, x)
			if equal {
				*pm = c
				s.hit(site, size)
				return
			}
		}
	}
	if p.key.refs || p.elem.refs {
		// Map entries cannot be changed in place: build a copy of exactly the map's size
		// whose keys and values are shared.
		m := mapAt(p, ptr)
		nm := reflect.MakeMapWithSize(p.typ, m.Len())
		x := s.getScratch(p)
		for x.it.Reset(m); x.it.Next(); {
			x.k.SetIterKey(&x.it)
			x.v.SetIterValue(&x.it)
			s.share(p.key, p.keySite, x.k.Addr().UnsafePointer(), depth+1)
			s.share(p.elem, p.elemSite, x.v.Addr().UnsafePointer(), depth+1)
			nm.SetMapIndex(x.k, x.v)
		}
		s.putScratch(p, x)
		m.Set(nm)
	}
	if ok {
		s.insert(site, key, *pm, 0)
	}
}

// mapPointer returns the pointer a map value is.
func mapPointer[K comparable, V any](m map[K]V) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&m))
}

// shareStringString is shareMap for map[string]string (labels, annotations, selectors).
func (s *sharer) shareStringString(p *sharePlan, site int, m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	var key shareKey
	ok := s.enabled(site)
	if ok {
		s.hashSize = 0
		key = shareKey{p, s.hashStringString(m)}
		if c, _ := s.lookup(key); c != nil {
			cm := *(*map[string]string)(unsafe.Pointer(&c))
			if c == mapPointer(m) {
				s.tick(site)
				return m
			}
			if equalStringString(cm, m) {
				s.hit(site, s.hashSize)
				return cm
			}
		}
	}
	nm := make(map[string]string, len(m))
	for k, v := range m {
		nm[s.intern(p.keySite, k)] = s.intern(p.elemSite, v)
	}
	if ok {
		s.insert(site, key, mapPointer(nm), 0)
	}
	return nm
}

// shareStringAny is shareMap for map[string]any (Unstructured objects).
func (s *sharer) shareStringAny(p *sharePlan, site int, m map[string]any, depth int) map[string]any {
	if len(m) == 0 || depth > maxShareDepth {
		return m
	}
	var key shareKey
	ok := s.enabled(site)
	if ok {
		s.hashSize, s.hashFailed = 0, false
		key = shareKey{p, s.hashStringAny(m, depth)}
		ok = !s.hashFailed
		if c, _ := s.lookup(key); ok && c != nil {
			cm := *(*map[string]any)(unsafe.Pointer(&c))
			if c == mapPointer(m) {
				s.tick(site)
				return m
			}
			if s.equalStringAny(cm, m, depth+1) {
				s.hit(site, s.hashSize)
				return cm
			}
		}
	}
	nm := make(map[string]any, len(m))
	for k, v := range m {
		k = s.intern(p.keySite, k)
		nm[k] = s.shareAny(s.childSite(site, k), v, depth+1)
	}
	if ok {
		s.insert(site, key, mapPointer(nm), 0)
	}
	return nm
}

// eface is the memory layout of an interface{} value.
type eface struct {
	typ, data unsafe.Pointer
}

// shareAny returns v with its JSON values shared: strings and float64s (their boxes),
// map[string]any and []any. Other dynamic types are returned as they are.
func (s *sharer) shareAny(site int, v any, depth int) any {
	e := (*eface)(unsafe.Pointer(&v))
	switch x := v.(type) {
	case string:
		if len(x) == 0 || !s.enabled(site) {
			return v
		}
		key := shareKey{keyBoxedString, maphash.String(s.seed, x)}
		if c, _ := s.lookup(key); c != nil {
			if c == e.data {
				s.tick(site)
				return v
			}
			if *(*string)(c) == x {
				e.data = c
				s.hit(site, uintptr(len(x))+16)
				return v
			}
		}
		// A fresh box: the one v has may be read-only (a constant converted to any).
		v = any(strings.Clone(x))
		s.insert(site, key, e.data, 0)
	case float64:
		return s.shareBoxed8(site, v, keyBoxedFloat, math.Float64bits(x))
	case int64:
		return s.shareBoxed8(site, v, keyBoxedInt, uint64(x))
	case map[string]any:
		return s.shareStringAny(planMapStringAny, site, x, depth)
	case []any:
		// The interface points to a box holding the slice header, owned like the rest of
		// the freshly decoded object.
		s.shareAnySlice(site, (*sliceHeader)(e.data), depth)
	}
	return v
}

// shareBoxed8 shares the box of v, a float64 or an int64 whose bits are bits.
func (s *sharer) shareBoxed8(site int, v any, kind *sharePlan, bits uint64) any {
	if !s.enabled(site) {
		return v
	}
	e := (*eface)(unsafe.Pointer(&v))
	key := shareKey{kind, mix(0, bits)}
	if c, _ := s.lookup(key); c != nil {
		if c == e.data {
			s.tick(site)
			return v
		}
		if *(*uint64)(c) == bits {
			e.data = c
			s.hit(site, 8)
			return v
		}
	}
	// A fresh box of the same 8 bytes: the one v has may be read-only (a constant
	// converted to any), where no weak pointer can point.
	nb := new(uint64)
	*nb = bits
	e.data = unsafe.Pointer(nb)
	s.insert(site, key, e.data, 0)
	return v
}

// shareAnySlice is shareSlice for a []any in an interface{}, whose elements get the child
// site "[]".
func (s *sharer) shareAnySlice(site int, sh *sliceHeader, depth int) {
	if sh.len == 0 || depth > maxShareDepth {
		return
	}
	key, ok, done := s.lookupSlice(planAnySlice, site, sh, depth)
	if done {
		return
	}
	x := *(*[]any)(unsafe.Pointer(sh))
	if cap(x) > len(x) {
		x = append([]any(nil), x...)
		*(*[]any)(unsafe.Pointer(sh)) = x
	}
	child := s.childSite(site, "[]")
	for i := range x {
		// Writes only what changes, as share does.
		if v := s.shareAny(child, x[i], depth+1); *(*eface)(unsafe.Pointer(&v)) != *(*eface)(unsafe.Pointer(&x[i])) {
			x[i] = v
		}
	}
	if ok {
		s.insert(site, key, sh.data, sh.len)
	}
}
