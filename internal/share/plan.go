package share

import (
	"reflect"
	"sync"
	"sync/atomic"
)

// A sharePlan says how to hash, compare and share values of one Go type. Plans are built
// once per type (sharePlanFor) and used by every informer's sharer; sharing works on raw
// memory (unsafe.Pointer) guided by the plan, so that walking a decoded object costs no
// reflection call on the hot paths (strings, structs, pointers, slices, and maps of type
// map[string]string and map[string]any). Other map types and slice trimming go through
// package reflect.
type sharePlan struct {
	typ  reflect.Type
	kind shareKind
	size uintptr
	// refs: sharing may change something inside a value of this type (it holds strings,
	// pointers, slices, maps or interfaces reachable through exported fields).
	refs bool
	// bytewise: the type holds no reference at all, so hashing and comparing its memory
	// is exact (padding included: a difference there only costs a missed share).
	bytewise bool

	fields []shareField // kindStruct: consecutive scalar fields merged into byte runs

	elem     *sharePlan // kindPointer, kindSlice, kindArray, kindMap (value)
	elemSite int
	key      *sharePlan // kindMap
	keySite  int
	length   int     // kindArray
	fastMap  fastMap // kindMap: a map type with a reflection-free path
	emptyIfc bool    // kindInterface: interface{} (other interfaces are compared by identity)
}

type shareKind uint8

const (
	kindBytes     shareKind = iota // booleans and numbers (and structs/arrays of them)
	kindString                     // interned
	kindStruct                     // fields walked
	kindArray                      // elements walked
	kindPointer                    // pointee shared by content
	kindSlice                      // backing array shared by content, capacity trimmed
	kindMap                        // map shared by content
	kindInterface                  // dynamic value shared (interface{} holding JSON values)
	kindIdentity                   // channels, functions, unsafe pointers: compared by address
)

type fastMap uint8

const (
	mapGeneric      fastMap = iota
	mapStringString         // map[string]string: labels, annotations, selectors
	mapStringAny            // map[string]any: Unstructured
)

// shareField is one field of a struct plan: a run of scalar bytes (plan == nil) or a field
// with references.
type shareField struct {
	off  uintptr
	size uintptr
	plan *sharePlan
	site int
	// opaque: the field is unexported. It is hashed and compared (strings by content,
	// references by address) but never changed.
	opaque bool
}

var (
	sharePlans    sync.Map // reflect.Type → *sharePlan
	sharePlanMu   sync.Mutex
	shareSiteNext atomic.Int32 // site ids; 0 is the root
)

func newShareSite() int { return int(shareSiteNext.Add(1)) }

// sharePlanFor returns the plan of t, building it (and the plans of the types it contains)
// on first use.
func sharePlanFor(t reflect.Type) *sharePlan {
	if p, ok := sharePlans.Load(t); ok {
		return p.(*sharePlan)
	}
	sharePlanMu.Lock()
	defer sharePlanMu.Unlock()
	building := map[reflect.Type]*sharePlan{}
	p := buildSharePlan(t, building)
	for bt, bp := range building {
		sharePlans.Store(bt, bp)
	}
	return p
}

var (
	typeMapStringString = reflect.TypeFor[map[string]string]()
	typeMapStringAny    = reflect.TypeFor[map[string]any]()
)

func buildSharePlan(t reflect.Type, building map[reflect.Type]*sharePlan) *sharePlan {
	if p, ok := sharePlans.Load(t); ok {
		return p.(*sharePlan)
	}
	if p, ok := building[t]; ok {
		return p // a recursive type: its references are filled in by the outer call
	}
	p := &sharePlan{typ: t, size: t.Size()}
	building[t] = p
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		p.kind, p.bytewise = kindBytes, true
	case reflect.String:
		p.kind, p.refs = kindString, true
	case reflect.Pointer:
		p.kind, p.refs = kindPointer, true
		p.elem, p.elemSite = buildSharePlan(t.Elem(), building), newShareSite()
		if p.elem.size == 0 {
			p.kind, p.refs = kindIdentity, false // all zero-size values share one address
		}
	case reflect.Slice:
		p.kind, p.refs = kindSlice, true
		p.elem, p.elemSite = buildSharePlan(t.Elem(), building), newShareSite()
		if p.elem.size == 0 {
			p.kind, p.refs = kindIdentity, false
		}
	case reflect.Map:
		p.kind, p.refs = kindMap, true
		p.key, p.keySite = buildSharePlan(t.Key(), building), newShareSite()
		p.elem, p.elemSite = buildSharePlan(t.Elem(), building), newShareSite()
		switch t {
		case typeMapStringString:
			p.fastMap = mapStringString
		case typeMapStringAny:
			p.fastMap = mapStringAny
		}
	case reflect.Interface:
		p.kind, p.refs = kindInterface, t.NumMethod() == 0
		p.emptyIfc = t.NumMethod() == 0
	case reflect.Array:
		p.kind = kindArray
		p.elem, p.elemSite, p.length = buildSharePlan(t.Elem(), building), newShareSite(), t.Len()
		p.refs, p.bytewise = p.elem.refs && p.length > 0, p.elem.bytewise || p.length == 0
		if p.bytewise {
			p.kind = kindBytes
		}
	case reflect.Struct:
		p.kind, p.bytewise = kindStruct, true
		var run *shareField
		for i := range t.NumField() {
			f := t.Field(i)
			fp := buildSharePlan(f.Type, building)
			if fp.size == 0 {
				continue
			}
			if fp.bytewise {
				if run != nil && run.off+run.size <= f.Offset {
					// Extend the run over any padding: padding compares equal in decoded values,
					// and a difference there would only cost a missed share.
					run.size = f.Offset + fp.size - run.off
				} else {
					p.fields = append(p.fields, shareField{off: f.Offset, size: fp.size})
					run = &p.fields[len(p.fields)-1]
				}
				continue
			}
			run = nil
			p.bytewise = false
			sf := shareField{off: f.Offset, size: fp.size, plan: fp, opaque: !f.IsExported()}
			if !sf.opaque && fp.refs {
				sf.site = newShareSite()
				p.refs = true
			}
			p.fields = append(p.fields, sf)
		}
		if p.bytewise {
			p.kind, p.fields = kindBytes, nil
		}
	default: // Chan, Func, UnsafePointer
		p.kind = kindIdentity
	}
	return p
}
