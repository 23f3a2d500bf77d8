package indexer

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
