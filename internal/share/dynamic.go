package share

import (
	"hash/maphash"
	"math"
	"strings"
	"unsafe"
)

// eface is the memory layout of an interface{} value.
type eface struct {
	typ, data unsafe.Pointer
}

// shareAny returns v with its JSON values shared: strings and float64s (their boxes),
// map[string]any and []any. Other dynamic types are returned as they are.
func (s *sharer) shareAny(site int, v any, depth int) any {
	e := (*eface)(unsafe.Pointer(&v))
	switch x := v.(type) {
	case string:
		if len(x) == 0 || !s.enabled(site) {
			return v
		}
		key := shareKey{keyBoxedString, maphash.String(s.seed, x)}
		if c, _ := s.lookup(key); c != nil {
			if c == e.data {
				s.tick(site)
				return v
			}
			if *(*string)(c) == x {
				e.data = c
				s.hit(site, uintptr(len(x))+16)
				return v
			}
		}
		// A fresh box: the one v has may be read-only (a constant converted to any).
		v = any(strings.Clone(x))
		s.insert(site, key, e.data, 0)
	case float64:
		return s.shareBoxed8(site, v, keyBoxedFloat, math.Float64bits(x))
	case int64:
		return s.shareBoxed8(site, v, keyBoxedInt, uint64(x))
	case map[string]any:
		return s.shareStringAny(planMapStringAny, site, x, depth)
	case []any:
		// The interface points to a box holding the slice header, owned like the rest of
		// the freshly decoded object.
		s.shareAnySlice(site, (*sliceHeader)(e.data), depth)
	}
	return v
}

// shareBoxed8 shares the box of v, a float64 or an int64 whose bits are bits.
func (s *sharer) shareBoxed8(site int, v any, kind *sharePlan, bits uint64) any {
	if !s.enabled(site) {
		return v
	}
	e := (*eface)(unsafe.Pointer(&v))
	key := shareKey{kind, mix(0, bits)}
	if c, _ := s.lookup(key); c != nil {
		if c == e.data {
			s.tick(site)
			return v
		}
		if *(*uint64)(c) == bits {
			e.data = c
			s.hit(site, 8)
			return v
		}
	}
	// A fresh box of the same 8 bytes: the one v has may be read-only (a constant
	// converted to any), where no weak pointer can point.
	nb := new(uint64)
	*nb = bits
	e.data = unsafe.Pointer(nb)
	s.insert(site, key, e.data, 0)
	return v
}

// shareAnySlice is shareSlice for a []any in an interface{}, whose elements get the child
// site "[]".
func (s *sharer) shareAnySlice(site int, sh *sliceHeader, depth int) {
	if sh.len == 0 || depth > maxShareDepth {
		return
	}
	key, ok, done := s.lookupSlice(planAnySlice, site, sh, depth)
	if done {
		return
	}
	x := *(*[]any)(unsafe.Pointer(sh))
	if cap(x) > len(x) {
		x = append([]any(nil), x...)
		*(*[]any)(unsafe.Pointer(sh)) = x
	}
	child := s.childSite(site, "[]")
	for i := range x {
		// Writes only what changes, as share does.
		if v := s.shareAny(child, x[i], depth+1); *(*eface)(unsafe.Pointer(&v)) != *(*eface)(unsafe.Pointer(&x[i])) {
			x[i] = v
		}
	}
	if ok {
		s.insert(site, key, sh.data, sh.len)
	}
}
