package informer

import (
	"reflect"
	"unsafe"

	"github.com/informerkit/informerkit/meta"
)

// estimateSample is how many cached objects EstimatedBytes walks.
const estimateSample = 32

// ObjectType returns the Go type of the informer's objects (T): with the name, what an
// inventory of informers shows (a projection such as *meta.PartialObjectMetadata costs a
// fraction of the full type).
func (inf *Informer[T]) ObjectType() reflect.Type { return reflect.TypeFor[T]() }

// EstimatedBytes estimates the memory the cached objects hold: the deep size of up to 32 of
// them (the struct, and the strings, slices, maps and pointed-to values it reaches), scaled
// to the number cached. A value shared between objects (structural sharing) is counted in
// each, so the estimate is an upper bound of the objects' own memory; the indexes, the
// DeltaFIFO and the handlers' queues are not counted. It walks at most 32 objects, under no
// lock of the informer's: cheap enough for a metrics scrape.
func (inf *Informer[T]) EstimatedBytes() int64 {
	n := inf.cache.Len()
	if n == 0 {
		return 0
	}
	var total int64
	walked := 0
	inf.cache.Range(func(_ string, obj T) bool {
		total += deepSize(reflect.ValueOf(obj), map[uintptr]bool{})
		walked++
		return walked < estimateSample
	})
	if walked == 0 {
		return 0
	}
	return total * int64(n) / int64(walked)
}

// deepSize is, for a pointer or an interface, the bytes of the value it refers to (once per
// address in seen) and all that value reaches; for another value, its own size and all it
// reaches.
func deepSize(v reflect.Value, seen map[uintptr]bool) int64 {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return 0
		}
		seen[v.Pointer()] = true
		e := v.Elem()
		return int64(e.Type().Size()) + inner(e, seen)
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		e := v.Elem()
		if e.Kind() == reflect.Pointer {
			return deepSize(e, seen)
		}
		return int64(e.Type().Size()) + inner(e, seen)
	}
	return int64(v.Type().Size()) + inner(v, seen)
}

// inner is the bytes v refers to outside its own slot.
func inner(v reflect.Value, seen map[uintptr]bool) int64 {
	switch v.Kind() {
	case reflect.String:
		return int64(v.Len())
	case reflect.Pointer, reflect.Interface:
		return deepSize(v, seen) // the referent: the slot is counted where it is
	case reflect.Struct:
		var n int64
		for i := range v.NumField() {
			n += inner(v.Field(i), seen)
		}
		return n
	case reflect.Slice:
		if v.IsNil() {
			return 0
		}
		n := int64(v.Cap()) * int64(v.Type().Elem().Size())
		for i := range v.Len() {
			n += inner(v.Index(i), seen)
		}
		return n
	case reflect.Array:
		var n int64
		for i := range v.Len() {
			n += inner(v.Index(i), seen)
		}
		return n
	case reflect.Map:
		if v.IsNil() {
			return 0
		}
		// A bucketed hash map: about the keys, values and one control byte per slot, with
		// a load of 7/8.
		slot := int64(v.Type().Key().Size()+v.Type().Elem().Size()) + 1
		n := int64(v.Len())*slot*8/7 + int64(unsafe.Sizeof(uintptr(0)))*6
		it := v.MapRange()
		for it.Next() {
			n += inner(it.Key(), seen) + inner(it.Value(), seen)
		}
		return n
	}
	return 0
}

// LookupWithOptions is Lookup of the informer InformerForWithOptions(f, gvr, opts) returns:
// whether it exists, without creating it.
func LookupWithOptions[T meta.Object](f *Factory, gvr meta.GroupVersionResource, opts InformerForOptions) (*Informer[T], bool) {
	key := factoryKey{gvr: gvr, typ: reflect.TypeFor[T](), namespace: f.opts.Namespace, labels: f.opts.LabelSelector.String(), fields: f.opts.FieldSelector}
	if opts.Namespace != "" {
		key.namespace = opts.Namespace
	}
	if !opts.LabelSelector.Empty() {
		key.labels = opts.LabelSelector.String()
	}
	if opts.FieldSelector != "" {
		key.fields = opts.FieldSelector
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.entries[key]
	if !ok {
		return nil, false
	}
	inf, ok := e.inf.(*Informer[T])
	return inf, ok
}
