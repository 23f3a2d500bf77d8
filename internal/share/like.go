package share

import "unsafe"

// Sharing an update with the version it replaces: most of an updated object is what the
// object was (a status changed, an annotation added), and the version the cache holds is
// shared already. Walking the two side by side, an equal sub-value is replaced by the old
// one after one comparison, without hashing it or looking it up; only what changed goes
// through the table.

// ShareLike is Share for obj, a new version of prev (an object this Sharer shared before,
// which it reads and never writes): the sub-values of obj equal to prev's become prev's,
// and the others are shared as Share shares them.
func (s *Sharer[T]) ShareLike(obj, prev T) T {
	s.s.mu.Lock()
	defer s.s.mu.Unlock()
	if s.s.rootPointer {
		q, r := *(*unsafe.Pointer)(unsafe.Pointer(&obj)), *(*unsafe.Pointer)(unsafe.Pointer(&prev))
		switch {
		case q == nil:
		case r == nil || q == r:
			s.s.share(s.s.root, 0, q, 0)
		default:
			s.s.shareLike(s.s.root, 0, q, r, 0)
		}
		return obj
	}
	s.s.shareLike(s.s.root, 0, unsafe.Pointer(&obj), unsafe.Pointer(&prev), 0)
	return obj
}

// shareLike shares the value of plan p at a, whose old version is at b.
func (s *sharer) shareLike(p *sharePlan, site int, a, b unsafe.Pointer, depth int) {
	if !p.refs || depth > maxShareDepth {
		return
	}
	switch p.kind {
	case kindStruct:
		for i := range p.fields {
			if f := &p.fields[i]; f.site != 0 && !f.opaque {
				s.shareLike(f.plan, f.site, unsafe.Add(a, f.off), unsafe.Add(b, f.off), depth+1)
			}
		}
		return
	case kindArray:
		for i := range p.length {
			off := uintptr(i) * p.elem.size
			s.shareLike(p.elem, p.elemSite, unsafe.Add(a, off), unsafe.Add(b, off), depth+1)
		}
		return
	case kindString:
		if sa, sb := (*string)(a), (*string)(b); *sa == *sb {
			if unsafe.StringData(*sa) != unsafe.StringData(*sb) {
				*sa = *sb
			}
			return
		}
	case kindPointer, kindSlice, kindMap:
		if s.equal(p, a, b, false, depth) {
			s.takeOld(p, a, b)
			return
		}
		if p.kind == kindPointer {
			qa, qb := *(*unsafe.Pointer)(a), *(*unsafe.Pointer)(b)
			if qa != nil && qb != nil && p.elem.kind == kindStruct {
				// A changed struct behind a pointer: what did not change in it is still
				// the old version's.
				s.shareLike(p.elem, p.elemSite, qa, qb, depth+1)
				s.share(p, site, a, depth)
				return
			}
		}
	}
	s.share(p, site, a, depth)
}

// takeOld points the reference at a to the old version's at b (they are equal).
func (s *sharer) takeOld(p *sharePlan, a, b unsafe.Pointer) {
	switch p.kind {
	case kindPointer, kindMap:
		if pa, pb := (*unsafe.Pointer)(a), (*unsafe.Pointer)(b); *pa != *pb {
			*pa = *pb
		}
	case kindSlice:
		if sa, sb := (*sliceHeader)(a), (*sliceHeader)(b); sa.data != sb.data {
			*sa = *sb
		}
	}
}
