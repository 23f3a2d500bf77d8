package share

import (
	"hash/maphash"
	"reflect"
	"strings"
	"unsafe"
)

// share shares the value of plan p at ptr, reached through site.
func (s *sharer) share(p *sharePlan, site int, ptr unsafe.Pointer, depth int) {
	if !p.refs || depth > maxShareDepth {
		return
	}
	switch p.kind {
	case kindString:
		str := (*string)(ptr)
		// Writes only what changes: a value shared twice is not written to (handlers may
		// be reading it).
		if c := s.intern(site, *str); unsafe.StringData(c) != unsafe.StringData(*str) {
			*str = c
		}
	case kindStruct:
		for i := range p.fields {
			if f := &p.fields[i]; f.site != 0 {
				s.share(f.plan, f.site, unsafe.Add(ptr, f.off), depth+1)
			}
		}
	case kindArray:
		for i := range p.length {
			s.share(p.elem, p.elemSite, unsafe.Add(ptr, uintptr(i)*p.elem.size), depth+1)
		}
	case kindPointer:
		s.sharePointer(p, site, ptr, depth)
	case kindSlice:
		s.shareSlice(p, site, ptr, depth)
	case kindMap:
		s.shareMap(p, site, ptr, depth)
	case kindInterface:
		if p.emptyIfc {
			pv := (*any)(ptr)
			if v := s.shareAny(site, *pv, depth); *(*eface)(unsafe.Pointer(&v)) != *(*eface)(unsafe.Pointer(pv)) {
				*pv = v
			}
		}
	}
}

// intern returns the canonical string equal to str (str itself when it becomes canonical
// or the site is skipped).
func (s *sharer) intern(site int, str string) string {
	if len(str) == 0 || !s.enabled(site) {
		return str
	}
	key := shareKey{keyString, maphash.String(s.seed, str)}
	if c, n := s.lookup(key); c != nil && n == len(str) {
		if c == unsafe.Pointer(unsafe.StringData(str)) {
			s.tick(site)
			return str
		}
		if cs := unsafe.String((*byte)(c), n); cs == str {
			s.hit(site, uintptr(n))
			return cs
		}
	}
	// The canonical copy is the sharer's own: a string may live in read-only memory (a
	// constant set by a transform or a decoder), where no weak pointer can point.
	c := strings.Clone(str)
	s.insert(site, key, unsafe.Pointer(unsafe.StringData(c)), len(c))
	return c
}

// hashOf hashes the value at ptr by content and reports the bytes it holds; ok is false
// when it is nested too deep to hash.
func (s *sharer) hashOf(p *sharePlan, ptr unsafe.Pointer, depth int) (h uint64, size uintptr, ok bool) {
	s.hashSize, s.hashFailed = 0, false
	h = s.hash(p, ptr, false, depth)
	return h, s.hashSize, !s.hashFailed
}

func (s *sharer) sharePointer(p *sharePlan, site int, ptr unsafe.Pointer, depth int) {
	pp := (*unsafe.Pointer)(ptr)
	q := *pp
	if q == nil {
		return
	}
	if !s.enabled(site) {
		s.share(p.elem, p.elemSite, q, depth+1)
		return
	}
	h, size, ok := s.hashOf(p.elem, q, depth+1)
	key := shareKey{p, h}
	if ok {
		if c, _ := s.lookup(key); c != nil {
			if c == q {
				s.tick(site)
				return
			}
			if s.equal(p.elem, c, q, false, depth+1) {
				*pp = c
				s.hit(site, size+p.elem.size)
				return
			}
		}
	}
	s.share(p.elem, p.elemSite, q, depth+1)
	if ok {
		s.insert(site, key, q, 0)
	}
}

func (s *sharer) shareSlice(p *sharePlan, site int, ptr unsafe.Pointer, depth int) {
	sh := (*sliceHeader)(ptr)
	if sh.len == 0 {
		return
	}
	key, ok, done := s.lookupSlice(p, site, sh, depth)
	if done {
		return
	}
	if waste := uintptr(sh.cap-sh.len) * p.elem.size; waste >= shareTrimMin {
		v := reflect.NewAt(p.typ, ptr).Elem()
		nv := reflect.MakeSlice(p.typ, sh.len, sh.len)
		reflect.Copy(nv, v)
		v.Set(nv)
	}
	if p.elem.refs {
		for i := range sh.len {
			s.share(p.elem, p.elemSite, unsafe.Add(sh.data, uintptr(i)*p.elem.size), depth+1)
		}
	}
	if ok {
		s.insert(site, key, sh.data, sh.len)
	}
}

// lookupSlice looks the slice sh (of plan p) up among the shared ones. done: sh already is
// the shared copy or has just been pointed at it. Otherwise the caller shares the elements
// and, when ok, inserts the slice under key.
func (s *sharer) lookupSlice(p *sharePlan, site int, sh *sliceHeader, depth int) (key shareKey, ok, done bool) {
	if !s.enabled(site) {
		return key, false, false
	}
	h, size, ok := s.hashOf(p, unsafe.Pointer(sh), depth)
	key = shareKey{p, h}
	if c, n := s.lookup(key); ok && c != nil && n == sh.len {
		if c == sh.data {
			s.tick(site)
			return key, ok, true
		}
		if s.equalElems(p.elem, c, sh.data, n, depth+1) {
			sh.data, sh.cap = c, n
			s.hit(site, size)
			return key, ok, true
		}
	}
	return key, ok, false
}

// mapAt returns the map at ptr as a reflect.Value that can be set.
func mapAt(p *sharePlan, ptr unsafe.Pointer) reflect.Value { return reflect.NewAt(p.typ, ptr).Elem() }

func (s *sharer) shareMap(p *sharePlan, site int, ptr unsafe.Pointer, depth int) {
	switch p.fastMap {
	case mapStringString:
		m := (*map[string]string)(ptr)
		if c := s.shareStringString(p, site, *m); mapPointer(c) != mapPointer(*m) {
			*m = c
		}
		return
	case mapStringAny:
		m := (*map[string]any)(ptr)
		if c := s.shareStringAny(p, site, *m, depth); mapPointer(c) != mapPointer(*m) {
			*m = c
		}
		return
	}
	pm := (*unsafe.Pointer)(ptr) // a map value is one pointer
	if *pm == nil || mapAt(p, ptr).Len() == 0 {
		return
	}
	var key shareKey
	ok := s.enabled(site)
	if ok {
		var h uint64
		var size uintptr
		h, size, ok = s.hashOf(p, ptr, depth)
		key = shareKey{p, h}
		if c, _ := s.lookup(key); ok && c != nil {
			if c == *pm {
				s.tick(site)
				return
			}
			x := s.getScratch(p)
			x.slot = c
			equal := s.equalMaps(p, unsafe.Pointer(&x.slot), ptr, depth+1)
			s.putScratch(p, x)
			if equal {
				*pm = c
				s.hit(site, size)
				return
			}
		}
	}
	if p.key.refs || p.elem.refs {
		// Map entries cannot be changed in place: build a copy of exactly the map's size
		// whose keys and values are shared.
		m := mapAt(p, ptr)
		nm := reflect.MakeMapWithSize(p.typ, m.Len())
		x := s.getScratch(p)
		for x.it.Reset(m); x.it.Next(); {
			x.k.SetIterKey(&x.it)
			x.v.SetIterValue(&x.it)
			s.share(p.key, p.keySite, x.k.Addr().UnsafePointer(), depth+1)
			s.share(p.elem, p.elemSite, x.v.Addr().UnsafePointer(), depth+1)
			nm.SetMapIndex(x.k, x.v)
		}
		s.putScratch(p, x)
		m.Set(nm)
	}
	if ok {
		s.insert(site, key, *pm, 0)
	}
}

// mapPointer returns the pointer a map value is.
func mapPointer[K comparable, V any](m map[K]V) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&m))
}

// shareStringString is shareMap for map[string]string (labels, annotations, selectors).
func (s *sharer) shareStringString(p *sharePlan, site int, m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	var key shareKey
	ok := s.enabled(site)
	if ok {
		s.hashSize = 0
		key = shareKey{p, s.hashStringString(m)}
		if c, _ := s.lookup(key); c != nil {
			cm := *(*map[string]string)(unsafe.Pointer(&c))
			if c == mapPointer(m) {
				s.tick(site)
				return m
			}
			if equalStringString(cm, m) {
				s.hit(site, s.hashSize)
				return cm
			}
		}
	}
	nm := make(map[string]string, len(m))
	for k, v := range m {
		nm[s.intern(p.keySite, k)] = s.intern(p.elemSite, v)
	}
	if ok {
		s.insert(site, key, mapPointer(nm), 0)
	}
	return nm
}

// shareStringAny is shareMap for map[string]any (Unstructured objects).
func (s *sharer) shareStringAny(p *sharePlan, site int, m map[string]any, depth int) map[string]any {
	if len(m) == 0 || depth > maxShareDepth {
		return m
	}
	var key shareKey
	ok := s.enabled(site)
	if ok {
		s.hashSize, s.hashFailed = 0, false
		key = shareKey{p, s.hashStringAny(m, depth)}
		ok = !s.hashFailed
		if c, _ := s.lookup(key); ok && c != nil {
			cm := *(*map[string]any)(unsafe.Pointer(&c))
			if c == mapPointer(m) {
				s.tick(site)
				return m
			}
			if s.equalStringAny(cm, m, depth+1) {
				s.hit(site, s.hashSize)
				return cm
			}
		}
	}
	nm := make(map[string]any, len(m))
	for k, v := range m {
		k = s.intern(p.keySite, k)
		nm[k] = s.shareAny(s.childSite(site, k), v, depth+1)
	}
	if ok {
		s.insert(site, key, mapPointer(nm), 0)
	}
	return nm
}
