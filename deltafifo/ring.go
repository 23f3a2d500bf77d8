package deltafifo

// seqRing is a growable ring buffer addressed by absolute sequence numbers: the element with
// sequence s lives at buf[s & (len(buf)-1)] as long as head <= s < tail. Sequence numbers stay
// valid across growth and shrinking, so a map can point into the ring.
//
// Slots that fall out of the live range keep their content until overwritten; the users
// clear what must not be retained and reuse what is worth reusing (slices' capacity).
type seqRing[E any] struct {
	buf        []E
	head, tail uint64
}

const (
	ringMinCap    = 16
	ringShrinkMin = 1024
)

func (r *seqRing[E]) len() int { return int(r.tail - r.head) }

func (r *seqRing[E]) at(s uint64) *E { return &r.buf[s&uint64(len(r.buf)-1)] }

// pushBack makes room for a new last element and returns its sequence number.
func (r *seqRing[E]) pushBack() uint64 {
	if r.len() == len(r.buf) {
		r.resize(max(2*len(r.buf), ringMinCap))
	}
	s := r.tail
	r.tail++
	return s
}

// pushFront makes room for a new first element and returns its sequence number.
func (r *seqRing[E]) pushFront() uint64 {
	if r.len() == len(r.buf) {
		r.resize(max(2*len(r.buf), ringMinCap))
	}
	r.head--
	return r.head
}

// reserve makes room for n more elements.
func (r *seqRing[E]) reserve(n int) {
	need := r.len() + n
	if need <= len(r.buf) {
		return
	}
	c := max(len(r.buf), ringMinCap)
	for c < need {
		c *= 2
	}
	r.resize(c)
}

func (r *seqRing[E]) resize(n int) {
	nb := make([]E, n)
	mask := uint64(n - 1)
	for s := r.head; s != r.tail; s++ {
		nb[s&mask] = *r.at(s)
	}
	r.buf = nb
}

// shrink halves a large buffer that is at most a quarter full, and drops the buffer of an
// empty ring that grew large, so that a burst does not pin memory forever.
func (r *seqRing[E]) shrink() {
	c := len(r.buf)
	if c <= ringShrinkMin {
		return
	}
	if r.len() == 0 {
		r.buf = nil
		return
	}
	if 4*r.len() <= c {
		r.resize(c / 2)
	}
}
