package share

import (
	"hash/maphash"
	"math"
	"math/bits"
	"reflect"
	"unsafe"
)

// Hashing and comparing values by content, guided by their sharePlan.

func mix(h, x uint64) uint64 {
	hi, lo := bits.Mul64(h^x^0xC2B2AE3D27D4EB4F, 0x9E3779B97F4A7C15)
	return hi ^ lo
}

func (s *sharer) hashMem(h uint64, p unsafe.Pointer, n uintptr) uint64 {
	switch {
	case n == 8 && uintptr(p)%8 == 0:
		return mix(h, *(*uint64)(p))
	case n == 4 && uintptr(p)%4 == 0:
		return mix(h, uint64(*(*uint32)(p)))
	case n == 1:
		return mix(h, uint64(*(*uint8)(p)))
	}
	return mix(h, maphash.Bytes(s.seed, unsafe.Slice((*byte)(p), n)))
}

func memEqual(a, b unsafe.Pointer, n uintptr) bool {
	return unsafe.String((*byte)(a), n) == unsafe.String((*byte)(b), n)
}

// hash hashes the value of plan p at ptr. Below an unexported field (opaque), references
// are hashed by address and strings by content.
func (s *sharer) hash(p *sharePlan, ptr unsafe.Pointer, opaque bool, depth int) uint64 {
	if depth > maxShareDepth {
		s.hashFailed = true
		return 0
	}
	switch p.kind {
	case kindBytes, kindIdentity:
		return s.hashMem(uint64(p.kind), ptr, p.size)
	case kindString:
		str := *(*string)(ptr)
		s.hashSize += uintptr(len(str))
		return maphash.String(s.seed, str)
	case kindStruct:
		h := uint64(len(p.fields))
		for i := range p.fields {
			f := &p.fields[i]
			if f.plan == nil {
				h = s.hashMem(h, unsafe.Add(ptr, f.off), f.size)
			} else {
				h = mix(h, s.hash(f.plan, unsafe.Add(ptr, f.off), opaque || f.opaque, depth+1))
			}
		}
		return h
	case kindArray:
		h := uint64(p.length)
		for i := range p.length {
			h = mix(h, s.hash(p.elem, unsafe.Add(ptr, uintptr(i)*p.elem.size), opaque, depth+1))
		}
		return h
	}
	if opaque {
		return s.hashMem(uint64(p.kind), ptr, p.size)
	}
	switch p.kind {
	case kindPointer:
		q := *(*unsafe.Pointer)(ptr)
		if q == nil {
			return 1
		}
		s.hashSize += p.elem.size
		return mix(2, s.hash(p.elem, q, false, depth+1))
	case kindSlice:
		sh := (*sliceHeader)(ptr)
		if sh.data == nil {
			return 3 // nil and empty slices differ (JSON null and [])
		}
		n := uintptr(sh.len) * p.elem.size
		s.hashSize += n
		h := mix(4, uint64(sh.len))
		if p.elem.bytewise {
			return s.hashMem(h, sh.data, n)
		}
		for i := range sh.len {
			h = mix(h, s.hash(p.elem, unsafe.Add(sh.data, uintptr(i)*p.elem.size), false, depth+1))
		}
		return h
	case kindMap:
		return s.hashMap(p, ptr, depth)
	case kindInterface:
		if !p.emptyIfc {
			return s.hashMem(uint64(p.kind), ptr, p.size)
		}
		return s.hashAny(*(*any)(ptr), depth)
	}
	return 0
}

func (s *sharer) hashMap(p *sharePlan, ptr unsafe.Pointer, depth int) uint64 {
	switch p.fastMap {
	case mapStringString:
		return s.hashStringString(*(*map[string]string)(ptr))
	case mapStringAny:
		return s.hashStringAny(*(*map[string]any)(ptr), depth)
	}
	if *(*unsafe.Pointer)(ptr) == nil {
		return 5
	}
	// Entries are summed: the hash does not depend on the iteration order.
	var sum uint64
	m := mapAt(p, ptr)
	x := s.getScratch(p)
	for x.it.Reset(m); x.it.Next(); {
		x.k.SetIterKey(&x.it)
		x.v.SetIterValue(&x.it)
		sum += mix(s.hash(p.key, x.k.Addr().UnsafePointer(), false, depth+1), s.hash(p.elem, x.v.Addr().UnsafePointer(), false, depth+1))
	}
	s.putScratch(p, x)
	s.hashSize += mapBytes(m.Len(), p.key.size+p.elem.size)
	return mix(mix(6, uint64(m.Len())), sum)
}

// mapBytes approximates the memory of a map of n entries of slot bytes each.
func mapBytes(n int, slot uintptr) uintptr { return 48 + uintptr(n)*(slot+1)*8/7 }

func (s *sharer) hashStringString(m map[string]string) uint64 {
	if m == nil {
		return 5
	}
	var sum uint64
	for k, v := range m {
		sum += mix(maphash.String(s.seed, k), maphash.String(s.seed, v))
		s.hashSize += uintptr(len(k) + len(v))
	}
	s.hashSize += mapBytes(len(m), 32)
	return mix(mix(6, uint64(len(m))), sum)
}

func (s *sharer) hashStringAny(m map[string]any, depth int) uint64 {
	if m == nil {
		return 5
	}
	var sum uint64
	for k, v := range m {
		sum += mix(maphash.String(s.seed, k), s.hashAny(v, depth+1))
		s.hashSize += uintptr(len(k))
	}
	s.hashSize += mapBytes(len(m), 32)
	return mix(mix(6, uint64(len(m))), sum)
}

func (s *sharer) hashAny(v any, depth int) uint64 {
	if depth > maxShareDepth {
		s.hashFailed = true
		return 0
	}
	switch x := v.(type) {
	case nil:
		return 7
	case string:
		s.hashSize += uintptr(len(x)) + 16
		return mix(8, maphash.String(s.seed, x))
	case float64:
		s.hashSize += 8
		return mix(9, math.Float64bits(x))
	case int64:
		s.hashSize += 8
		return mix(14, uint64(x))
	case bool:
		if x {
			return 10
		}
		return 11
	case map[string]any:
		return s.hashStringAny(x, depth)
	case []any:
		s.hashSize += uintptr(len(x))*16 + 24
		h := mix(12, uint64(len(x)))
		for _, e := range x {
			h = mix(h, s.hashAny(e, depth+1))
		}
		return h
	}
	e := (*eface)(unsafe.Pointer(&v))
	return mix(mix(13, uint64(uintptr(e.typ))), uint64(uintptr(e.data)))
}

// equal compares the values of plan p at a and b by content (below an unexported field,
// references by address).
func (s *sharer) equal(p *sharePlan, a, b unsafe.Pointer, opaque bool, depth int) bool {
	if depth > maxShareDepth {
		return false
	}
	switch p.kind {
	case kindBytes, kindIdentity:
		return memEqual(a, b, p.size)
	case kindString:
		return *(*string)(a) == *(*string)(b)
	case kindStruct:
		for i := range p.fields {
			f := &p.fields[i]
			if f.plan == nil {
				if !memEqual(unsafe.Add(a, f.off), unsafe.Add(b, f.off), f.size) {
					return false
				}
			} else if !s.equal(f.plan, unsafe.Add(a, f.off), unsafe.Add(b, f.off), opaque || f.opaque, depth+1) {
				return false
			}
		}
		return true
	case kindArray:
		return s.equalElems(p.elem, a, b, p.length, depth+1)
	}
	if opaque {
		return memEqual(a, b, p.size)
	}
	switch p.kind {
	case kindPointer:
		qa, qb := *(*unsafe.Pointer)(a), *(*unsafe.Pointer)(b)
		if qa == qb {
			return true
		}
		return qa != nil && qb != nil && s.equal(p.elem, qa, qb, false, depth+1)
	case kindSlice:
		sa, sb := (*sliceHeader)(a), (*sliceHeader)(b)
		if sa.len != sb.len || (sa.data == nil) != (sb.data == nil) {
			return false
		}
		return sa.data == sb.data || s.equalElems(p.elem, sa.data, sb.data, sa.len, depth+1)
	case kindMap:
		ma, mb := *(*unsafe.Pointer)(a), *(*unsafe.Pointer)(b)
		if ma == mb {
			return true
		}
		return ma != nil && mb != nil && s.equalMaps(p, a, b, depth+1)
	case kindInterface:
		if !p.emptyIfc {
			return memEqual(a, b, p.size)
		}
		return s.equalAny(*(*any)(a), *(*any)(b), depth+1)
	}
	return false
}

func (s *sharer) equalElems(elem *sharePlan, a, b unsafe.Pointer, n int, depth int) bool {
	if a == b {
		return true
	}
	if elem.bytewise {
		return memEqual(a, b, uintptr(n)*elem.size)
	}
	for i := range n {
		off := uintptr(i) * elem.size
		if !s.equal(elem, unsafe.Add(a, off), unsafe.Add(b, off), false, depth) {
			return false
		}
	}
	return true
}

// equalMaps compares the non-nil maps of plan p at a and b.
func (s *sharer) equalMaps(p *sharePlan, a, b unsafe.Pointer, depth int) bool {
	if depth > maxShareDepth {
		return false
	}
	switch p.fastMap {
	case mapStringString:
		return equalStringString(*(*map[string]string)(a), *(*map[string]string)(b))
	case mapStringAny:
		return s.equalStringAny(*(*map[string]any)(a), *(*map[string]any)(b), depth)
	}
	ma, mb := mapAt(p, a), mapAt(p, b)
	if ma.Len() != mb.Len() {
		return false
	}
	x := s.getScratch(p)
	defer s.putScratch(p, x)
	for x.it.Reset(ma); x.it.Next(); {
		x.k.SetIterKey(&x.it)
		x.v.SetIterValue(&x.it)
		e := mb.MapIndex(x.k) // a copy (an allocation for most value types)
		if !e.IsValid() {
			return false
		}
		x.w.Set(e)
		if !s.equal(p.elem, x.v.Addr().UnsafePointer(), x.w.Addr().UnsafePointer(), false, depth+1) {
			return false
		}
	}
	return true
}

// mapScratch holds what walking a map of one generic map type needs, reused between calls
// (reflect would allocate them every time).
type mapScratch struct {
	slot    unsafe.Pointer // a map pointer, given an address
	k, v, w reflect.Value  // addressable key and values
	it      reflect.MapIter
}

func (s *sharer) getScratch(p *sharePlan) *mapScratch {
	if l := s.scratch[p]; len(l) > 0 {
		x := l[len(l)-1]
		s.scratch[p] = l[:len(l)-1]
		return x
	}
	if s.scratch == nil {
		s.scratch = map[*sharePlan][]*mapScratch{}
	}
	return &mapScratch{k: reflect.New(p.key.typ).Elem(), v: reflect.New(p.elem.typ).Elem(), w: reflect.New(p.elem.typ).Elem()}
}

// putScratch returns x, cleared so that it keeps no object alive.
func (s *sharer) putScratch(p *sharePlan, x *mapScratch) {
	x.slot = nil
	x.k.SetZero()
	x.v.SetZero()
	x.w.SetZero()
	x.it.Reset(reflect.Value{})
	s.scratch[p] = append(s.scratch[p], x)
}

func equalStringString(ma, mb map[string]string) bool {
	if len(ma) != len(mb) {
		return false
	}
	for k, va := range ma {
		if vb, ok := mb[k]; !ok || va != vb {
			return false
		}
	}
	return true
}

func (s *sharer) equalStringAny(ma, mb map[string]any, depth int) bool {
	if len(ma) != len(mb) {
		return false
	}
	for k, va := range ma {
		vb, ok := mb[k]
		if !ok || !s.equalAny(va, vb, depth+1) {
			return false
		}
	}
	return true
}

func (s *sharer) equalAny(a, b any, depth int) bool {
	if depth > maxShareDepth {
		return false
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && s.equalStringAny(x, y, depth)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for i := range x {
			if !s.equalAny(x[i], y[i], depth+1) {
				return false
			}
		}
		return true
	}
	ea, eb := (*eface)(unsafe.Pointer(&a)), (*eface)(unsafe.Pointer(&b))
	return *ea == *eb
}
