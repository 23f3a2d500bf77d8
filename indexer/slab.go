package indexer

// slabChunkBits sets the chunk size of the slab: 1024 entries.
const slabChunkBits = 10

const slabChunkSize = 1 << slabChunkBits

// slab stores entries in fixed-size chunks addressed by a 32-bit slot number. Growing it
// allocates a new chunk instead of copying the existing entries, so that an Add never moves
// the whole store, and an entry's address is stable.
type slab[T any] struct {
	chunks []*[slabChunkSize]entry[T]
	n      int // slots handed out so far: [0, n) are valid slot numbers
}

func (s *slab[T]) at(id uint32) *entry[T] {
	return &s.chunks[id>>slabChunkBits][id&(slabChunkSize-1)]
}

// grow hands out a new slot at the end.
func (s *slab[T]) grow() uint32 {
	if s.n == len(s.chunks)*slabChunkSize {
		s.chunks = append(s.chunks, new([slabChunkSize]entry[T]))
	}
	id := uint32(s.n)
	s.n++
	return id
}

// len returns the number of slots handed out (live or free).
func (s *slab[T]) len() int { return s.n }
