package fieldpath

import (
	"sort"
	"strings"
)

// Set is a set of paths, kept as a tree: at each level the elements that are members
// (paths ending there) and the elements that have children, both sorted. The zero Set is
// empty and ready to use. Sets returned by the operations share no mutable state with
// their operands unless documented.
type Set struct {
	members  []PathElement
	children []child
}

type child struct {
	pe  PathElement
	set *Set
}

// NewSet returns a set holding paths.
func NewSet(paths ...Path) *Set {
	s := &Set{}
	for _, p := range paths {
		s.Insert(p)
	}
	return s
}

func searchMembers(m []PathElement, pe PathElement) (int, bool) {
	i := sort.Search(len(m), func(i int) bool { return m[i].Compare(pe) >= 0 })
	return i, i < len(m) && m[i].Compare(pe) == 0
}

func searchChildren(c []child, pe PathElement) (int, bool) {
	i := sort.Search(len(c), func(i int) bool { return c[i].pe.Compare(pe) >= 0 })
	return i, i < len(c) && c[i].pe.Compare(pe) == 0
}

// Insert adds p (the empty path is ignored).
func (s *Set) Insert(p Path) {
	cur := s
	for len(p) > 1 {
		cur = cur.descend(p[0])
		p = p[1:]
	}
	if len(p) == 1 {
		cur.addMember(p[0])
	}
}

func (s *Set) addMember(pe PathElement) {
	i, ok := searchMembers(s.members, pe)
	if ok {
		return
	}
	s.members = append(s.members, PathElement{})
	copy(s.members[i+1:], s.members[i:])
	s.members[i] = pe
}

// descend returns the child set under pe, creating it.
func (s *Set) descend(pe PathElement) *Set {
	i, ok := searchChildren(s.children, pe)
	if ok {
		return s.children[i].set
	}
	s.children = append(s.children, child{})
	copy(s.children[i+1:], s.children[i:])
	s.children[i] = child{pe: pe, set: &Set{}}
	return s.children[i].set
}

// Has reports whether p is a member.
func (s *Set) Has(p Path) bool {
	if s == nil || len(p) == 0 {
		return false
	}
	cur := s
	for len(p) > 1 {
		i, ok := searchChildren(cur.children, p[0])
		if !ok {
			return false
		}
		cur = cur.children[i].set
		p = p[1:]
	}
	_, ok := searchMembers(cur.members, p[0])
	return ok
}

// Empty reports whether the set has no member.
func (s *Set) Empty() bool {
	if s == nil {
		return true
	}
	if len(s.members) > 0 {
		return false
	}
	for _, c := range s.children {
		if !c.set.Empty() {
			return false
		}
	}
	return true
}

// Size returns the number of members.
func (s *Set) Size() int {
	if s == nil {
		return 0
	}
	n := len(s.members)
	for _, c := range s.children {
		n += c.set.Size()
	}
	return n
}

// Members returns the elements that are members at this level (do not modify).
func (s *Set) Members() []PathElement {
	if s == nil {
		return nil
	}
	return s.members
}

// Children calls fn for each element with children at this level, in order, with the
// set under it (do not modify it).
func (s *Set) Children(fn func(PathElement, *Set)) {
	if s == nil {
		return
	}
	for _, c := range s.children {
		fn(c.pe, c.set)
	}
}

// WithPrefix returns the paths under pe, without pe (an empty set if none; shared with s).
func (s *Set) WithPrefix(pe PathElement) *Set {
	if s != nil {
		if i, ok := searchChildren(s.children, pe); ok {
			return s.children[i].set
		}
	}
	return &Set{}
}

// Copy returns a deep copy.
func (s *Set) Copy() *Set {
	if s == nil {
		return &Set{}
	}
	out := &Set{members: append([]PathElement(nil), s.members...)}
	if len(s.children) > 0 {
		out.children = make([]child, len(s.children))
		for i, c := range s.children {
			out.children[i] = child{pe: c.pe, set: c.set.Copy()}
		}
	}
	return out
}

// Iterate calls fn for every member: at each level the members first, then the paths
// under each child in order (the order of apply's conflict lists). The path passed is
// reused; copy it to keep it.
func (s *Set) Iterate(fn func(Path)) {
	s.iterate(nil, fn)
}

func (s *Set) iterate(prefix Path, fn func(Path)) {
	if s == nil {
		return
	}
	for _, m := range s.members {
		fn(append(prefix, m))
	}
	for _, c := range s.children {
		c.set.iterate(append(prefix, c.pe), fn)
	}
}

// Paths returns every member, in Iterate's order.
func (s *Set) Paths() []Path {
	var out []Path
	s.Iterate(func(p Path) { out = append(out, p.Copy()) })
	return out
}

// Equal reports whether both sets have the same members.
func (s *Set) Equal(o *Set) bool {
	a, b := s.Paths(), o.Paths()
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Compare(b[i]) != 0 {
			return false
		}
	}
	return true
}

// String lists the members, one per line.
func (s *Set) String() string {
	var b strings.Builder
	s.Iterate(func(p Path) {
		b.WriteString(p.String())
		b.WriteByte('\n')
	})
	return b.String()
}

// compact drops empty children.
func (s *Set) compact() *Set {
	kept := s.children[:0]
	for _, c := range s.children {
		if !c.set.Empty() {
			kept = append(kept, c)
		}
	}
	s.children = kept
	return s
}

// Union returns the members of s or o.
func (s *Set) Union(o *Set) *Set {
	if s == nil {
		s = &Set{}
	}
	if o == nil {
		o = &Set{}
	}
	out := &Set{members: mergeMembers(s.members, o.members, true, true, true)}
	i, j := 0, 0
	for i < len(s.children) || j < len(o.children) {
		switch {
		case j >= len(o.children) || (i < len(s.children) && s.children[i].pe.Compare(o.children[j].pe) < 0):
			out.children = append(out.children, child{s.children[i].pe, s.children[i].set.Copy()})
			i++
		case i >= len(s.children) || s.children[i].pe.Compare(o.children[j].pe) > 0:
			out.children = append(out.children, child{o.children[j].pe, o.children[j].set.Copy()})
			j++
		default:
			out.children = append(out.children, child{s.children[i].pe, s.children[i].set.Union(o.children[j].set)})
			i++
			j++
		}
	}
	return out.compact()
}

// Intersection returns the members of both s and o.
func (s *Set) Intersection(o *Set) *Set {
	out := &Set{}
	if s == nil || o == nil {
		return out
	}
	out.members = mergeMembers(s.members, o.members, false, true, false)
	i, j := 0, 0
	for i < len(s.children) && j < len(o.children) {
		switch c := s.children[i].pe.Compare(o.children[j].pe); {
		case c < 0:
			i++
		case c > 0:
			j++
		default:
			out.children = append(out.children, child{s.children[i].pe, s.children[i].set.Intersection(o.children[j].set)})
			i++
			j++
		}
	}
	return out.compact()
}

// Difference returns the members of s that are not members of o. A member of o does not
// remove the paths under it (see RecursiveDifference).
func (s *Set) Difference(o *Set) *Set {
	if s == nil {
		return &Set{}
	}
	if o == nil {
		return s.Copy()
	}
	out := &Set{members: mergeMembers(s.members, o.members, true, false, false)}
	j := 0
	for _, c := range s.children {
		for j < len(o.children) && o.children[j].pe.Compare(c.pe) < 0 {
			j++
		}
		if j < len(o.children) && o.children[j].pe.Compare(c.pe) == 0 {
			out.children = append(out.children, child{c.pe, c.set.Difference(o.children[j].set)})
		} else {
			out.children = append(out.children, child{c.pe, c.set.Copy()})
		}
	}
	return out.compact()
}

// RecursiveDifference returns the members of s that are neither members of o nor under
// one of o's members.
func (s *Set) RecursiveDifference(o *Set) *Set {
	if s == nil {
		return &Set{}
	}
	if o == nil {
		return s.Copy()
	}
	out := &Set{members: mergeMembers(s.members, o.members, true, false, false)}
	for _, c := range s.children {
		if _, ok := searchMembers(o.members, c.pe); ok {
			continue
		}
		if k, ok := searchChildren(o.children, c.pe); ok {
			out.children = append(out.children, child{c.pe, c.set.RecursiveDifference(o.children[k].set)})
		} else {
			out.children = append(out.children, child{c.pe, c.set.Copy()})
		}
	}
	return out.compact()
}

// mergeMembers walks two sorted lists and keeps the elements only in a (onlyA), in both
// (both) or only in b (onlyB).
func mergeMembers(a, b []PathElement, onlyA, both, onlyB bool) []PathElement {
	var out []PathElement
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j >= len(b) || (i < len(a) && a[i].Compare(b[j]) < 0):
			if onlyA {
				out = append(out, a[i])
			}
			i++
		case i >= len(a) || a[i].Compare(b[j]) > 0:
			if onlyB {
				out = append(out, b[j])
			}
			j++
		default:
			if both {
				out = append(out, a[i])
			}
			i++
			j++
		}
	}
	return out
}
