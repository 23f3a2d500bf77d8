package indexer

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// KeyFunc computes the key under which an object is stored. It must be deterministic.
type KeyFunc[T any] func(obj T) (string, error)

// IndexFunc computes the indexed values of an object for one index. It must be deterministic
// and must not modify the returned slice afterwards: the store keeps it to know, on the next
// update or delete, which index entries to remove.
type IndexFunc[T any] func(obj T) ([]string, error)

// Indexers maps index names to index functions.
type Indexers[T any] map[string]IndexFunc[T]

// Indexer is a thread-safe store of objects of type T with named secondary indexes.
//
// Every method may be called from any goroutine. Objects are shared, not copied: callers must
// not modify an object after storing it or after reading it back.
type Indexer[T any] interface {
	// Add stores obj under its key, replacing any object stored under that key.
	Add(obj T) error
	// Update is the same as Add: it stores obj under its key whether or not the key exists.
	Update(obj T) error
	// Delete removes the object stored under obj's key. Deleting an absent key is not an error.
	Delete(obj T) error
	// List returns every stored object, in no particular order, in a new slice.
	List() []T
	// ListKeys returns every key, in no particular order, in a new slice.
	ListKeys() []string
	// Get returns the object stored under obj's key.
	Get(obj T) (item T, exists bool, err error)
	// GetByKey returns the object stored under key. The error is always nil; it is there for
	// interface compatibility with stores that can fail.
	GetByKey(key string) (item T, exists bool, err error)
	// Replace makes list the whole content (a later duplicate key wins) and remembers
	// resourceVersion (see LastSyncResourceVersion), atomically for readers. It merges rather
	// than rebuilds: a listed key that is stored is updated in place, with index work only
	// where its values changed, so a relist of an unchanged collection costs little more
	// than computing the keys and index values, and memory is not doubled. The store keeps
	// the objects, not the slice. If a key or index function fails nothing changes.
	Replace(list []T, resourceVersion string) error
	// ReplaceAndDiff is Replace that also reports what it did, after releasing the lock:
	// first one Change with Deleted for every stored key the list lacks, then one Change per
	// listed object, in list order, with the object it replaced (Existed) if any. A key listed
	// twice is reported twice, the second time replacing the first.
	ReplaceAndDiff(list []T, resourceVersion string, fn func(Change[T])) error
	// Resync does nothing; it exists so that an Indexer satisfies the reflector's store
	// interface.
	Resync() error
	// Index returns the stored objects whose values for the named index intersect the
	// values of obj (computed with the same index function).
	Index(indexName string, obj T) ([]T, error)
	// IndexKeys returns the keys of the objects whose values for the named index include
	// indexedValue.
	IndexKeys(indexName, indexedValue string) ([]string, error)
	// ListIndexFuncValues returns every value present in the named index (none for an
	// unknown index).
	ListIndexFuncValues(indexName string) []string
	// ByIndex returns the objects whose values for the named index include indexedValue.
	ByIndex(indexName, indexedValue string) ([]T, error)
	// GetIndexers returns a copy of the registered index functions.
	GetIndexers() Indexers[T]
	// AddIndexers registers more indexes and indexes the objects already stored with them.
	// A name already registered is an error ([ErrDuplicateIndex]); so is an index function
	// failing on a stored object ([*IndexError]). On error nothing changes.
	AddIndexers(newIndexers Indexers[T]) error

	// Upsert stores obj like Add and returns the object it replaced, if any, in the same
	// critical section: what an informer needs to decide between OnAdd and OnUpdate without a
	// second key computation and lookup.
	Upsert(obj T) (old T, existed bool, err error)
	// DeleteByKey removes the object stored under key and returns it. It needs no object, so
	// it suits tombstones whose last state is unknown.
	DeleteByKey(key string) (old T, existed bool)
	// Range calls fn for every stored object, in no particular order, until fn returns false.
	// It allocates nothing. fn runs under the store's read lock: it must not write to this
	// store, and should be quick.
	Range(fn func(key string, obj T) bool)
	// RangeByIndex calls fn for every object whose values for the named index include
	// indexedValue, until fn returns false; like Range it allocates nothing and runs under the
	// read lock. The error reports an unknown index.
	RangeByIndex(indexName, indexedValue string, fn func(key string, obj T) bool) error
	// Len returns the number of stored objects.
	Len() int
	// LastSyncResourceVersion returns the resourceVersion given to the last Replace.
	LastSyncResourceVersion() string
}

// Change is one difference ReplaceAndDiff made to the store.
type Change[T any] struct {
	Key string
	// Old is the object stored under Key before the change, if Existed.
	Old     T
	Existed bool
	// New is the listed object; the zero value when Deleted.
	New T
	// Deleted reports that Key was stored and is not in the list.
	Deleted bool
}

// ErrNoSuchIndex is wrapped by the errors of lookups that name an unregistered index.
var ErrNoSuchIndex = errors.New("indexer: no such index")

// ErrDuplicateIndex is wrapped by the error of AddIndexers when a name is already registered.
var ErrDuplicateIndex = errors.New("indexer: index already registered")

// KeyError reports that the key function failed for an object.
type KeyError struct {
	Obj any
	Err error
}

// Error implements error.
func (e *KeyError) Error() string {
	return fmt.Sprintf("indexer: cannot compute the key of %T: %v", e.Obj, e.Err)
}

// Unwrap returns the key function's error.
func (e *KeyError) Unwrap() error { return e.Err }

// IndexError reports that an index function failed for the object stored (or about to be
// stored) under Key. The store is unchanged when a write returns it.
type IndexError struct {
	Index string
	Key   string
	Err   error
}

// Error implements error.
func (e *IndexError) Error() string {
	return fmt.Sprintf("indexer: index function %q failed for key %q: %v", e.Index, e.Key, e.Err)
}

// Unwrap returns the index function's error.
func (e *IndexError) Unwrap() error { return e.Err }

// inlineIndexes is how many indexes' values an entry holds without a separate allocation.
const inlineIndexes = 3

// vals holds an object's values for every index, by index position.
type vals struct {
	in   [inlineIndexes][]string
	more [][]string
}

func (v *vals) at(i int) []string {
	if i < inlineIndexes {
		return v.in[i]
	}
	return v.more[i-inlineIndexes]
}

func (v *vals) set(i int, x []string) {
	if i < inlineIndexes {
		v.in[i] = x
		return
	}
	j := i - inlineIndexes
	for len(v.more) <= j {
		v.more = append(v.more, nil)
	}
	v.more[j] = x
}

// indexDefs is an immutable snapshot of the registered indexes. A new snapshot, extending the
// previous one, is published by AddIndexers; index positions never change.
type indexDefs[T any] struct {
	names []string
	fns   []IndexFunc[T]
	pos   map[string]int
}

func (d *indexDefs[T]) extend(ix Indexers[T], names []string) *indexDefs[T] {
	nd := &indexDefs[T]{
		names: append(slices.Clip(d.names), names...),
		fns:   slices.Clip(d.fns),
		pos:   make(map[string]int, len(d.pos)+len(names)),
	}
	for n, p := range d.pos {
		nd.pos[n] = p
	}
	for _, n := range names {
		nd.pos[n] = len(nd.fns)
		nd.fns = append(nd.fns, ix[n])
	}
	return nd
}

// computeVals fills v with obj's values for the indexes d.fns[from:].
func computeVals[T any](d *indexDefs[T], from int, key string, obj T, v *vals) error {
	for i := from; i < len(d.fns); i++ {
		x, err := d.fns[i](obj)
		if err != nil {
			return &IndexError{Index: d.names[i], Key: key, Err: err}
		}
		v.set(i, x)
	}
	return nil
}

type entry[T any] struct {
	key  string
	obj  T
	vals vals
	live bool
	// gen is the Replace generation that last listed this entry.
	gen uint32
}

// store implements Indexer.
type store[T any] struct {
	keyFunc KeyFunc[T]
	// defs is written only with mu held for writing; it is an atomic pointer so that writers
	// can compute index values before taking the lock.
	defs atomic.Pointer[indexDefs[T]]

	mu   sync.RWMutex
	keys map[string]uint32 // key → slot
	slab slab[T]           // slots; free ones have live == false
	free []uint32          // free slots
	sets []map[string]*idSet
	rv   string
	gen  uint32 // Replace generation
}

var _ Indexer[int] = (*store[int])(nil)

// New returns an empty [Indexer] that stores objects under keyFunc(obj) and maintains the
// given indexes. It panics if keyFunc or one of the index functions is nil.
func New[T any](keyFunc KeyFunc[T], indexers Indexers[T]) Indexer[T] {
	if keyFunc == nil {
		panic("indexer.New: nil KeyFunc")
	}
	names := sortedNames(indexers)
	for _, n := range names {
		if indexers[n] == nil {
			panic(fmt.Sprintf("indexer.New: nil IndexFunc for index %q", n))
		}
	}
	s := &store[T]{keyFunc: keyFunc, keys: map[string]uint32{}}
	s.defs.Store((&indexDefs[T]{}).extend(indexers, names))
	s.sets = make([]map[string]*idSet, len(names))
	for i := range s.sets {
		s.sets[i] = map[string]*idSet{}
	}
	return s
}

func sortedNames[T any](ix Indexers[T]) []string {
	names := make([]string, 0, len(ix))
	for n := range ix {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (s *store[T]) key(obj T) (string, error) {
	key, err := s.keyFunc(obj)
	if err != nil {
		return "", &KeyError{Obj: obj, Err: err}
	}
	return key, nil
}

// Add implements Indexer.
func (s *store[T]) Add(obj T) error {
	_, _, err := s.Upsert(obj)
	return err
}

// Update implements Indexer.
func (s *store[T]) Update(obj T) error {
	_, _, err := s.Upsert(obj)
	return err
}

// Upsert implements Indexer.
func (s *store[T]) Upsert(obj T) (old T, existed bool, err error) {
	key, err := s.key(obj)
	if err != nil {
		return old, false, err
	}
	d := s.defs.Load()
	var v vals
	if err := computeVals(d, 0, key, obj, &v); err != nil {
		return old, false, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if cur := s.defs.Load(); cur != d {
		// AddIndexers ran meanwhile: compute the values of the indexes it added.
		if err := computeVals(cur, len(d.fns), key, obj, &v); err != nil {
			return old, false, err
		}
		d = cur
	}
	n := len(d.fns)
	if id, ok := s.keys[key]; ok {
		e := s.slab.at(id)
		old, existed = e.obj, true
		e.obj = obj
		s.reindexLocked(id, e, &v, n)
		return old, true, nil
	}
	id := s.allocLocked()
	e := s.slab.at(id)
	*e = entry[T]{key: key, obj: obj, vals: v, live: true}
	s.indexLocked(id, e, 0, n)
	s.keys[key] = id
	return old, false, nil
}

func (s *store[T]) allocLocked() uint32 {
	if n := len(s.free); n > 0 {
		id := s.free[n-1]
		s.free = s.free[:n-1]
		return id
	}
	return s.slab.grow()
}

// indexLocked adds slot id to the sets of e's values for the indexes [from, to), interning
// single values.
func (s *store[T]) indexLocked(id uint32, e *entry[T], from, to int) {
	for i := from; i < to; i++ {
		e.vals.set(i, s.addValuesLocked(i, id, e.vals.at(i)))
	}
}

// addValuesLocked adds id to the sets of index i for values, and returns what the entry
// should keep: the interned slice for a single value, values otherwise.
func (s *store[T]) addValuesLocked(i int, id uint32, values []string) []string {
	m := s.sets[i]
	for _, value := range values {
		set := m[value]
		if set == nil {
			set = newIDSet(value)
			m[value] = set
		}
		set.add(id)
		if len(values) == 1 {
			return set.one
		}
	}
	return values
}

func (s *store[T]) removeValuesLocked(i int, id uint32, values []string) {
	m := s.sets[i]
	for _, value := range values {
		if set := m[value]; set != nil && set.remove(id) {
			delete(m, value)
		}
	}
}

// reindexLocked moves slot id from e's current values to the values in nv, index by index,
// touching only the indexes whose values changed.
func (s *store[T]) reindexLocked(id uint32, e *entry[T], nv *vals, n int) {
	for i := range n {
		oldVals, newVals := e.vals.at(i), nv.at(i)
		if slices.Equal(oldVals, newVals) {
			continue
		}
		s.removeValuesLocked(i, id, oldVals)
		e.vals.set(i, s.addValuesLocked(i, id, newVals))
	}
}

// Delete implements Indexer.
func (s *store[T]) Delete(obj T) error {
	key, err := s.key(obj)
	if err != nil {
		return err
	}
	s.DeleteByKey(key)
	return nil
}

// DeleteByKey implements Indexer.
func (s *store[T]) DeleteByKey(key string) (old T, existed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.keys[key]
	if !ok {
		return old, false
	}
	e := s.slab.at(id)
	old = e.obj
	s.deleteLocked(id, e)
	s.maybeCompactLocked()
	return old, true
}

// deleteLocked removes the live entry e in slot id from the key map and every index, and
// frees the slot.
func (s *store[T]) deleteLocked(id uint32, e *entry[T]) {
	for i := range s.sets {
		s.removeValuesLocked(i, id, e.vals.at(i))
	}
	delete(s.keys, e.key)
	*e = entry[T]{}
	s.free = append(s.free, id)
}

// compactMinFree is the number of free slots below which the slab is never compacted.
const compactMinFree = 1024

// maybeCompactLocked gives memory back after mass deletions: when the store is empty it starts
// afresh, and when three quarters of the slots are free it moves the live entries together
// and rebuilds the key map and the index sets (from the remembered values: no index function
// runs). Free slots are otherwise reused by later adds.
func (s *store[T]) maybeCompactLocked() {
	if len(s.keys) == 0 {
		if s.slab.len() > compactMinFree {
			s.keys = map[string]uint32{}
		}
		s.slab, s.free = slab[T]{}, nil
		return
	}
	if len(s.free) < compactMinFree || 4*len(s.free) < 3*s.slab.len() {
		return
	}
	var sl slab[T]
	keys := make(map[string]uint32, len(s.keys))
	for i := range s.slab.len() {
		if e := s.slab.at(uint32(i)); e.live {
			id := sl.grow()
			*sl.at(id) = *e
			keys[e.key] = id
		}
	}
	sets := make([]map[string]*idSet, len(s.sets))
	for i := range sets {
		sets[i] = map[string]*idSet{}
	}
	s.keys, s.slab, s.free, s.sets = keys, sl, nil, sets
	s.indexAllLocked()
}

// indexAllLocked adds every entry to the (empty) index sets.
func (s *store[T]) indexAllLocked() {
	n := len(s.sets)
	for id := range s.slab.len() {
		s.indexLocked(uint32(id), s.slab.at(uint32(id)), 0, n)
	}
}

// Get implements Indexer.
func (s *store[T]) Get(obj T) (item T, exists bool, err error) {
	key, err := s.key(obj)
	if err != nil {
		return item, false, err
	}
	return s.GetByKey(key)
}

// GetByKey implements Indexer.
func (s *store[T]) GetByKey(key string) (item T, exists bool, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if id, ok := s.keys[key]; ok {
		return s.slab.at(id).obj, true, nil
	}
	return item, false, nil
}

// List implements Indexer.
func (s *store[T]) List() []T {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]T, 0, len(s.keys))
	for i := range s.slab.len() {
		if e := s.slab.at(uint32(i)); e.live {
			out = append(out, e.obj)
		}
	}
	return out
}

// ListKeys implements Indexer.
func (s *store[T]) ListKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.keys))
	for i := range s.slab.len() {
		if e := s.slab.at(uint32(i)); e.live {
			out = append(out, e.key)
		}
	}
	return out
}

// Len implements Indexer.
func (s *store[T]) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.keys)
}

// Range implements Indexer.
func (s *store[T]) Range(fn func(key string, obj T) bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for i := range s.slab.len() {
		if e := s.slab.at(uint32(i)); e.live && !fn(e.key, e.obj) {
			return
		}
	}
}

// LastSyncResourceVersion implements Indexer.
func (s *store[T]) LastSyncResourceVersion() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rv
}

// Resync implements Indexer.
func (s *store[T]) Resync() error { return nil }

// Replace implements Indexer.
func (s *store[T]) Replace(list []T, resourceVersion string) error {
	return s.replace(list, resourceVersion, nil)
}

// ReplaceAndDiff implements Indexer.
func (s *store[T]) ReplaceAndDiff(list []T, resourceVersion string, fn func(Change[T])) error {
	if fn == nil {
		fn = func(Change[T]) {}
	}
	return s.replace(list, resourceVersion, fn)
}

// pending is a listed object with its key and index values, computed before the lock.
type pending[T any] struct {
	key  string
	obj  T
	vals vals
}

// replace merges list into the store under one write lock: listed keys are updated in place
// (index work only where values changed), new keys added, unlisted keys deleted. Keys and index
// values are computed first, without the lock; a failure there changes nothing. With fn, the
// changes are reported after the lock is released: deletions first, then the listed objects.
func (s *store[T]) replace(list []T, resourceVersion string, fn func(Change[T])) error {
	d := s.defs.Load()
	items := make([]pending[T], len(list))
	for i, obj := range list {
		key, err := s.key(obj)
		if err != nil {
			return err
		}
		it := &items[i]
		it.key, it.obj = key, obj
		if err := computeVals(d, 0, key, obj, &it.vals); err != nil {
			return err
		}
	}
	var upserts, deletions []Change[T]
	if fn != nil {
		upserts = make([]Change[T], 0, len(items))
	}

	s.mu.Lock()
	if cur := s.defs.Load(); cur != d {
		for i := range items {
			it := &items[i]
			if err := computeVals(cur, len(d.fns), it.key, it.obj, &it.vals); err != nil {
				s.mu.Unlock()
				return err
			}
		}
		d = cur
	}
	n := len(d.fns)
	s.gen++
	gen := s.gen
	for i := range items {
		it := &items[i]
		if id, ok := s.keys[it.key]; ok {
			e := s.slab.at(id)
			if fn != nil {
				upserts = append(upserts, Change[T]{Key: it.key, Old: e.obj, Existed: true, New: it.obj})
			}
			e.obj, e.gen = it.obj, gen
			s.reindexLocked(id, e, &it.vals, n)
			continue
		}
		id := s.allocLocked()
		e := s.slab.at(id)
		*e = entry[T]{key: it.key, obj: it.obj, vals: it.vals, live: true, gen: gen}
		s.indexLocked(id, e, 0, n)
		s.keys[it.key] = id
		if fn != nil {
			upserts = append(upserts, Change[T]{Key: it.key, New: it.obj})
		}
	}
	for id := range s.slab.len() {
		e := s.slab.at(uint32(id))
		if !e.live || e.gen == gen {
			continue
		}
		if fn != nil {
			deletions = append(deletions, Change[T]{Key: e.key, Old: e.obj, Existed: true, Deleted: true})
		}
		s.deleteLocked(uint32(id), e)
	}
	s.rv = resourceVersion
	s.maybeCompactLocked()
	s.mu.Unlock()

	if fn != nil {
		for _, c := range deletions {
			fn(c)
		}
		for _, c := range upserts {
			fn(c)
		}
	}
	return nil
}

// position returns the position of the named index; mu must be held (read or write).
func (s *store[T]) position(indexName string) (int, error) {
	p, ok := s.defs.Load().pos[indexName]
	if !ok {
		return 0, fmt.Errorf("%w: %q", ErrNoSuchIndex, indexName)
	}
	return p, nil
}

// Index implements Indexer.
func (s *store[T]) Index(indexName string, obj T) ([]T, error) {
	d := s.defs.Load()
	p, ok := d.pos[indexName]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNoSuchIndex, indexName)
	}
	values, err := d.fns[p](obj)
	if err != nil {
		return nil, fmt.Errorf("indexer: index function %q failed for the queried object: %w", indexName, err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	m := s.sets[p]
	if len(values) == 1 {
		return s.objectsLocked(m[values[0]]), nil
	}
	var ids []uint32
	for _, value := range values {
		if set := m[value]; set != nil {
			set.each(func(id uint32) bool { ids = append(ids, id); return true })
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	out := make([]T, len(ids))
	for i, id := range ids {
		out[i] = s.slab.at(id).obj
	}
	return out, nil
}

func (s *store[T]) objectsLocked(set *idSet) []T {
	if set == nil {
		return []T{}
	}
	out := make([]T, 0, set.len())
	set.each(func(id uint32) bool { out = append(out, s.slab.at(id).obj); return true })
	return out
}

// ByIndex implements Indexer.
func (s *store[T]) ByIndex(indexName, indexedValue string) ([]T, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, err := s.position(indexName)
	if err != nil {
		return nil, err
	}
	return s.objectsLocked(s.sets[p][indexedValue]), nil
}

// IndexKeys implements Indexer.
func (s *store[T]) IndexKeys(indexName, indexedValue string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, err := s.position(indexName)
	if err != nil {
		return nil, err
	}
	set := s.sets[p][indexedValue]
	if set == nil {
		return []string{}, nil
	}
	out := make([]string, 0, set.len())
	set.each(func(id uint32) bool { out = append(out, s.slab.at(id).key); return true })
	return out, nil
}

// RangeByIndex implements Indexer.
func (s *store[T]) RangeByIndex(indexName, indexedValue string, fn func(key string, obj T) bool) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, err := s.position(indexName)
	if err != nil {
		return err
	}
	if set := s.sets[p][indexedValue]; set != nil {
		set.each(func(id uint32) bool { e := s.slab.at(id); return fn(e.key, e.obj) })
	}
	return nil
}

// ListIndexFuncValues implements Indexer.
func (s *store[T]) ListIndexFuncValues(indexName string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, err := s.position(indexName)
	if err != nil {
		return []string{}
	}
	out := make([]string, 0, len(s.sets[p]))
	for value := range s.sets[p] {
		out = append(out, value)
	}
	return out
}

// GetIndexers implements Indexer.
func (s *store[T]) GetIndexers() Indexers[T] {
	d := s.defs.Load()
	out := make(Indexers[T], len(d.fns))
	for i, n := range d.names {
		out[n] = d.fns[i]
	}
	return out
}

// AddIndexers implements Indexer.
func (s *store[T]) AddIndexers(newIndexers Indexers[T]) error {
	if len(newIndexers) == 0 {
		return nil
	}
	names := sortedNames(newIndexers)
	for _, n := range names {
		if newIndexers[n] == nil {
			return fmt.Errorf("indexer: nil IndexFunc for index %q", n)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.defs.Load()
	var dups []string
	for _, n := range names {
		if _, ok := cur.pos[n]; ok {
			dups = append(dups, n)
		}
	}
	if len(dups) > 0 {
		return fmt.Errorf("%w: %s", ErrDuplicateIndex, strings.Join(quoteAll(dups), ", "))
	}
	// Compute every new value before changing anything.
	computed := make([][][]string, len(names))
	for j, n := range names {
		fn := newIndexers[n]
		computed[j] = make([][]string, s.slab.len())
		for id := range s.slab.len() {
			e := s.slab.at(uint32(id))
			if !e.live {
				continue
			}
			x, err := fn(e.obj)
			if err != nil {
				return &IndexError{Index: n, Key: e.key, Err: err}
			}
			computed[j][id] = x
		}
	}
	nd := cur.extend(newIndexers, names)
	base := len(cur.fns)
	for j := range names {
		s.sets = append(s.sets, map[string]*idSet{})
		for id := range s.slab.len() {
			e := s.slab.at(uint32(id))
			if e.live {
				e.vals.set(base+j, s.addValuesLocked(base+j, uint32(id), computed[j][id]))
			}
		}
	}
	s.defs.Store(nd)
	return nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
