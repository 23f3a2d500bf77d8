package share

import (
	"hash/maphash"
	"reflect"
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
	// No lock: the strings are in their own table, whose readers need none (strtable.go).
	c, n := s.s.strs.lookup(maphash.Bytes(s.s.seed, b))
	if c != nil && n == len(b) && unsafe.String((*byte)(c), n) == string(b) {
		// The weak pointer kept the bytes alive until here; the returned string now does.
		return unsafe.String((*byte)(c), n)
	}
	return string(b)
}

// Stats returns the Sharer's figures.
func (s *Sharer[T]) Stats() Stats { return s.s.stats() }

// sharer is the untyped engine of a Sharer: the tables, the per-site policies and the walk.
// One mutex guards it, but for the reads of strs (Sharer.String).
type sharer struct {
	mu          sync.Mutex
	seed        maphash.Seed
	root        *sharePlan // plan of T, or of *T's pointee when rootPointer
	rootPointer bool
	table       map[shareKey]shareEntry // every canonical value but strings
	strs        strTable                // canonical strings (keyString)
	sites       []shareSite             // indexed by plan site
	dynSites    []shareSite             // indexed by -site-1
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
	return Stats{Entries: s.entries(), Hits: s.hits, Inserts: s.inserts, SavedBytes: s.saved}
}

// sweep drops the entries whose value was freed and returns how many are left.
func (s *sharer) sweep() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked()
	return s.entries()
}

// entries is the number of entries of both tables.
func (s *sharer) entries() int { return len(s.table) + s.strs.len() }

func (s *sharer) sweepLocked() {
	for k, e := range s.table {
		if e.ptr.Value() == nil {
			delete(s.table, k)
		}
	}
	s.strs.sweep()
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

func (s *sharer) insert(site int, key shareKey, p unsafe.Pointer, n int) {
	if key.plan == keyString {
		s.strs.insert(key.hash, p, n)
	} else {
		s.table[key] = shareEntry{ptr: weak.Make((*byte)(p)), n: n}
	}
	s.siteState(site).cost += shareEntryCost
	s.inserts++
	s.tick(site)
	if len(s.table) > s.peak {
		s.peak = len(s.table)
	}
	if s.sinceSweep++; s.sinceSweep >= max(s.entries(), shareMinSweep) {
		s.sweepLocked()
	}
}

// lookup returns the live canonical value of key and its length, or nil.
func (s *sharer) lookup(key shareKey) (unsafe.Pointer, int) {
	if key.plan == keyString {
		return s.strs.lookup(key.hash)
	}
	e, ok := s.table[key]
	if !ok {
		return nil, 0
	}
	return unsafe.Pointer(e.ptr.Value()), e.n
}
