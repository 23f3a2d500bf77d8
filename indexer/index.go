package indexer

import (
	"fmt"
	"slices"
	"strings"
)

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

// indexAllLocked adds every entry to the (empty) index sets.
func (s *store[T]) indexAllLocked() {
	n := len(s.sets)
	for id := range s.slab.len() {
		s.indexLocked(uint32(id), s.slab.at(uint32(id)), 0, n)
	}
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
