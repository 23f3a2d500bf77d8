package indexer

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
)

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
