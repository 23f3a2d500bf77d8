package deepcopy

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Copy returns a deep copy of v: every pointer, slice, map and interface reachable from v is
// copied, so that no change to the copy (or to v) can be seen through the other. Strings are
// immutable and are shared, as client-go's generated DeepCopy shares them. time.Time (and so
// meta.Time) is copied as a value, keeping its *time.Location, as generated code does.
// Channels, functions and unsafe pointers are copied as values (the copy refers to the same
// channel or function). v must not contain pointer cycles: Kubernetes objects never do, and
// the copier, like generated DeepCopy, follows pointers without remembering where it has
// been.
//
// The copier for a type is built once, on first use, and reused: copying walks only the
// parts of a value that hold references and copies everything else with one memory move.
func Copy[T any](v T) T {
	c := copierOf(reflect.TypeFor[T]())
	if c.fixup == nil {
		return v // nothing in T refers to memory: the value copy is a deep copy
	}
	out := v
	c.fixup(unsafe.Pointer(&out))
	return out
}

// Into sets *dst to a deep copy of src (see Copy). It is Copy for callers that fill an object
// they already hold, as controller-runtime's client.Get fills its argument.
func Into[T any](dst *T, src T) {
	*dst = Copy(src)
}

// copier copies values of one type. fixup(p) takes a value at p whose references are shared
// with another value (a shallow copy) and replaces each reference with a reference to a
// deep copy, in place; nil means the type holds no references (strings aside) and a shallow
// copy is already deep. Reading a reference always happens before writing its slot, so
// fixup may run on the only copy of a value to detach it from whatever it shared.
type copier struct {
	fixup func(p unsafe.Pointer)
}

// copiers caches one *copier per reflect.Type. Reads go through an immutable map swapped
// atomically (no lock on the hot path); building takes buildMu.
var (
	copiers atomic.Pointer[map[reflect.Type]*copier]
	buildMu sync.Mutex
)

func copierOf(t reflect.Type) *copier {
	if m := copiers.Load(); m != nil {
		if c, ok := (*m)[t]; ok {
			return c
		}
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	old := copiers.Load()
	if old != nil {
		if c, ok := (*old)[t]; ok {
			return c
		}
	}
	b := &builder{built: map[reflect.Type]*copier{}}
	c := b.build(t)
	next := make(map[reflect.Type]*copier, len(b.built)+8)
	if old != nil {
		maps.Copy(next, *old)
	}
	for typ, bc := range b.built {
		if _, ok := next[typ]; !ok {
			next[typ] = bc
		}
	}
	copiers.Store(&next)
	return c
}

// builder compiles copiers. Types under construction are in built already, so that
// recursive types (a struct holding a slice of pointers to itself) refer to their own
// copier, whose fixup is filled in once the type is done.
type builder struct {
	built map[reflect.Type]*copier
}

var (
	timeType    = reflect.TypeFor[time.Time]()
	rawJSONType = reflect.TypeFor[json.RawMessage]()
)

func (b *builder) build(t reflect.Type) *copier {
	if c, ok := b.built[t]; ok {
		return c
	}
	if m := copiers.Load(); m != nil {
		if c, ok := (*m)[t]; ok {
			return c
		}
	}
	c := &copier{}
	b.built[t] = c
	if !b.holdsRefs(t, map[reflect.Type]bool{}) {
		return c
	}
	switch t.Kind() {
	case reflect.Pointer:
		c.fixup = b.pointerFixup(t)
	case reflect.Slice:
		c.fixup = b.sliceFixup(t)
	case reflect.Map:
		c.fixup = b.mapFixup(t)
	case reflect.Interface:
		c.fixup = interfaceFixup(t)
	case reflect.Struct:
		c.fixup = b.structFixup(t)
	case reflect.Array:
		c.fixup = b.arrayFixup(t)
	}
	return c
}

// holdsRefs reports whether values of t refer to memory that a deep copy must duplicate.
// Strings, time.Time, channels, functions and unsafe pointers do not count (see Copy).
func (b *builder) holdsRefs(t reflect.Type, visiting map[reflect.Type]bool) bool {
	if t == timeType {
		return false
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return true
	case reflect.Array:
		return t.Len() > 0 && b.holdsRefs(t.Elem(), visiting)
	case reflect.Struct:
		if visiting[t] {
			return false // a struct cannot contain itself by value; reached through no pointer
		}
		visiting[t] = true
		defer delete(visiting, t)
		for i := range t.NumField() {
			if b.holdsRefs(t.Field(i).Type, visiting) {
				return true
			}
		}
	}
	return false
}

// pointerFixup: a non-nil pointer is replaced by a pointer to a new value holding a deep
// copy of the pointee.
func (b *builder) pointerFixup(t reflect.Type) func(unsafe.Pointer) {
	elem := t.Elem()
	ec := b.build(elem)
	return func(p unsafe.Pointer) {
		old := *(*unsafe.Pointer)(p)
		if old == nil {
			return
		}
		nv := reflect.New(elem)
		np := nv.UnsafePointer()
		nv.Elem().Set(reflect.NewAt(elem, old).Elem()) // a typed move, with write barriers
		if f := ec.fixup; f != nil {
			f(np)
		}
		*(*unsafe.Pointer)(p) = np
	}
}

// sliceHeader is the memory layout of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// sliceFixup: a non-nil slice gets a new backing array holding deep copies of its elements. A nil slice stays nil and an
// empty non-nil slice stays empty and non-nil, so the copy encodes to the same JSON.
func (b *builder) sliceFixup(t reflect.Type) func(unsafe.Pointer) {
	elem := t.Elem()
	switch {
	case elem.Kind() == reflect.Uint8 && !b.holdsRefs(elem, map[reflect.Type]bool{}):
		// []byte and json.RawMessage: one allocation and a memmove.
		return func(p unsafe.Pointer) {
			s := (*[]byte)(p)
			if *s != nil {
				*s = append(make([]byte, 0, len(*s)), *s...)
			}
		}
	case elem.Kind() == reflect.String:
		return func(p unsafe.Pointer) {
			s := (*[]string)(p)
			if *s != nil {
				*s = slices.Clone(*s)[:len(*s):len(*s)]
			}
		}
	}
	ec := b.build(elem)
	size := elem.Size()
	plain := !hasPointers(elem)
	return func(p unsafe.Pointer) {
		h := (*sliceHeader)(p)
		if h.data == nil {
			return
		}
		old := *h
		n := old.len
		if n == 0 {
			reflect.NewAt(t, p).Elem().Set(reflect.MakeSlice(t, 0, 0))
			return
		}
		// Grow a nil slice in place: the only allocation is the new backing array (MakeSlice
		// would also allocate a slice header for its reflect.Value).
		*h = sliceHeader{}
		sv := reflect.NewAt(t, p).Elem()
		sv.Grow(n)
		sv.SetLen(n)
		if plain {
			copy(unsafe.Slice((*byte)(h.data), uintptr(n)*size), unsafe.Slice((*byte)(old.data), uintptr(n)*size))
			return
		}
		f := ec.fixup
		for i := range n {
			off := uintptr(i) * size
			sv.Index(i).Set(reflect.NewAt(elem, unsafe.Add(old.data, off)).Elem())
			if f != nil {
				f(unsafe.Add(h.data, off))
			}
		}
	}
}

// hasPointers reports whether values of t hold any pointer the garbage collector traces
// (strings included): those of other types can be copied as raw bytes.
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	return true
}

// mapFixup: a non-nil map is replaced by a new map holding deep copies of its keys and
// values. map[string]string, by far the most common map of Kubernetes objects (labels,
// annotations, data), is cloned in one call.
func (b *builder) mapFixup(t reflect.Type) func(unsafe.Pointer) {
	key, elem := t.Key(), t.Elem()
	noRefs := func(x reflect.Type) bool { return !b.holdsRefs(x, map[reflect.Type]bool{}) }
	if key.Kind() == reflect.String && elem.Kind() == reflect.String {
		return func(p unsafe.Pointer) {
			m := (*map[string]string)(p)
			if *m != nil {
				*m = maps.Clone(*m)
			}
		}
	}
	if key.Kind() == reflect.String && elem.Kind() == reflect.Interface && elem.NumMethod() == 0 {
		// map[string]any: the JSON object of Unstructured.
		return func(p unsafe.Pointer) {
			m := (*map[string]any)(p)
			if *m != nil {
				*m = copyJSONMap(*m)
			}
		}
	}
	kc, ec := b.build(key), b.build(elem)
	keyPlain, elemPlain := noRefs(key), noRefs(elem)
	return func(p unsafe.Pointer) {
		src := reflect.NewAt(t, p).Elem()
		if src.IsNil() {
			return
		}
		dst := reflect.MakeMapWithSize(t, src.Len())
		// One key and one value variable per map: SetIterKey and SetIterValue copy into
		// them without the allocation MapIter.Key and Value make per entry.
		k, v := reflect.New(key).Elem(), reflect.New(elem).Elem()
		it := src.MapRange()
		for it.Next() {
			k.SetIterKey(it)
			v.SetIterValue(it)
			if !keyPlain {
				kc.fixup(k.Addr().UnsafePointer())
			}
			if !elemPlain {
				ec.fixup(v.Addr().UnsafePointer())
			}
			dst.SetMapIndex(k, v)
		}
		src.Set(dst)
	}
}

// interfaceFixup: a non-nil interface value is replaced by one holding a deep copy of its
// dynamic value, copied by that type's copier (built on first use). The values JSON
// decoding produces (maps, slices, strings, numbers, booleans) take a fast path.
func interfaceFixup(t reflect.Type) func(unsafe.Pointer) {
	if t.NumMethod() == 0 {
		return func(p unsafe.Pointer) {
			v := (*any)(p)
			if *v != nil {
				*v = copyAny(*v)
			}
		}
	}
	return func(p unsafe.Pointer) {
		iv := reflect.NewAt(t, p).Elem()
		if iv.IsNil() {
			return
		}
		iv.Set(copyDynamic(iv.Elem()))
	}
}

// copyAny deep-copies the dynamic value of an empty interface.
func copyAny(v any) any {
	switch x := v.(type) {
	case nil, string, bool, float64, float32, int, int64, int32, uint64, json.Number:
		return x
	case map[string]any:
		if x == nil {
			return x
		}
		return copyJSONMap(x)
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyAny(e)
		}
		return out
	case map[string]string:
		return maps.Clone(x)
	}
	return copyDynamic(reflect.ValueOf(v)).Interface()
}

func copyJSONMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, e := range m {
		out[k] = copyAny(e)
	}
	return out
}

// copyDynamic returns a deep copy of v (not addressable: the dynamic value of an interface)
// as a new value of v's type.
func copyDynamic(v reflect.Value) reflect.Value {
	c := copierOf(v.Type())
	if c.fixup == nil {
		return v
	}
	tmp := reflect.New(v.Type()).Elem()
	tmp.Set(v)
	c.fixup(tmp.Addr().UnsafePointer())
	return tmp
}

// structFixup fixes up the fields that hold references, at their offsets; the other fields
// came over with the shallow copy.
func (b *builder) structFixup(t reflect.Type) func(unsafe.Pointer) {
	type field struct {
		off uintptr
		c   *copier
	}
	var fields []field
	for i := range t.NumField() {
		f := t.Field(i)
		if !b.holdsRefs(f.Type, map[reflect.Type]bool{}) {
			continue
		}
		fields = append(fields, field{off: f.Offset, c: b.build(f.Type)})
	}
	if len(fields) == 1 {
		f := fields[0]
		return func(p unsafe.Pointer) { f.c.fixup(unsafe.Add(p, f.off)) }
	}
	return func(p unsafe.Pointer) {
		for _, f := range fields {
			f.c.fixup(unsafe.Add(p, f.off))
		}
	}
}

func (b *builder) arrayFixup(t reflect.Type) func(unsafe.Pointer) {
	ec := b.build(t.Elem())
	n, size := t.Len(), t.Elem().Size()
	return func(p unsafe.Pointer) {
		for i := range n {
			ec.fixup(unsafe.Add(p, uintptr(i)*size))
		}
	}
}
