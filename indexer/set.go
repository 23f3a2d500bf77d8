package indexer

// Sizes of the small-set representation: a set grows into a map when it would exceed
// smallSetMax members and shrinks back into a slice when it falls below smallSetMin.
const (
	smallSetMax = 32
	smallSetMin = 8
)

// idSet is the set of slots whose objects produced one indexed value.
//
// Most sets in real indexes are tiny (one owner, one node, one label value among many), so a
// set starts as a slice that is scanned linearly; only large sets pay for a map.
type idSet struct {
	// one is []string{value}. Objects whose values for the index are exactly {value} store
	// this slice instead of their own, so the index value is held once per set.
	one   []string
	small []uint32
	big   map[uint32]struct{}
}

func newIDSet(value string) *idSet {
	return &idSet{one: []string{value}, small: make([]uint32, 0, 2)}
}

func (s *idSet) len() int {
	if s.big != nil {
		return len(s.big)
	}
	return len(s.small)
}

func (s *idSet) add(id uint32) {
	if s.big != nil {
		s.big[id] = struct{}{}
		return
	}
	for _, x := range s.small {
		if x == id {
			return
		}
	}
	if len(s.small) < smallSetMax {
		s.small = append(s.small, id)
		return
	}
	s.big = make(map[uint32]struct{}, 2*smallSetMax)
	for _, x := range s.small {
		s.big[x] = struct{}{}
	}
	s.big[id] = struct{}{}
	s.small = nil
}

// remove deletes id and reports whether the set is now empty.
func (s *idSet) remove(id uint32) (empty bool) {
	if s.big != nil {
		delete(s.big, id)
		if len(s.big) < smallSetMin {
			small := make([]uint32, 0, smallSetMin)
			for x := range s.big {
				small = append(small, x)
			}
			s.small, s.big = small, nil
		}
		return s.len() == 0
	}
	for i, x := range s.small {
		if x == id {
			last := len(s.small) - 1
			s.small[i] = s.small[last]
			s.small = s.small[:last]
			break
		}
	}
	return len(s.small) == 0
}

// each calls fn for every member until fn returns false, and reports whether it ran to the end.
func (s *idSet) each(fn func(id uint32) bool) bool {
	if s.big != nil {
		for id := range s.big {
			if !fn(id) {
				return false
			}
		}
		return true
	}
	for _, id := range s.small {
		if !fn(id) {
			return false
		}
	}
	return true
}
