package controller

import (
	"maps"
	"reflect"

	"github.com/informerkit/informerkit/meta"
)

// Predicate filters a source's events before they reach the handler
// (controller-runtime's predicate.TypedPredicate). An event is handled only if every
// predicate given with the source returns true for it.
type Predicate[T any] interface {
	Create(e CreateEvent[T]) bool
	Update(e UpdateEvent[T]) bool
	Delete(e DeleteEvent[T]) bool
	Generic(e GenericEvent[T]) bool
}

// PredicateFuncs adapts functions to Predicate; a nil function lets its events through.
type PredicateFuncs[T any] struct {
	CreateFunc  func(e CreateEvent[T]) bool
	UpdateFunc  func(e UpdateEvent[T]) bool
	DeleteFunc  func(e DeleteEvent[T]) bool
	GenericFunc func(e GenericEvent[T]) bool
}

// Create returns CreateFunc(e), or true if it is nil.
func (p PredicateFuncs[T]) Create(e CreateEvent[T]) bool {
	return p.CreateFunc == nil || p.CreateFunc(e)
}

// Update returns UpdateFunc(e), or true if it is nil.
func (p PredicateFuncs[T]) Update(e UpdateEvent[T]) bool {
	return p.UpdateFunc == nil || p.UpdateFunc(e)
}

// Delete returns DeleteFunc(e), or true if it is nil.
func (p PredicateFuncs[T]) Delete(e DeleteEvent[T]) bool {
	return p.DeleteFunc == nil || p.DeleteFunc(e)
}

// Generic returns GenericFunc(e), or true if it is nil.
func (p PredicateFuncs[T]) Generic(e GenericEvent[T]) bool {
	return p.GenericFunc == nil || p.GenericFunc(e)
}

// NewPredicateFuncs returns a predicate that asks filter about the object of every event
// (the new object of an update): for example "only objects with this label".
func NewPredicateFuncs[T any](filter func(obj T) bool) Predicate[T] {
	return PredicateFuncs[T]{
		CreateFunc:  func(e CreateEvent[T]) bool { return filter(e.Object) },
		UpdateFunc:  func(e UpdateEvent[T]) bool { return filter(e.ObjectNew) },
		DeleteFunc:  func(e DeleteEvent[T]) bool { return filter(e.Object) },
		GenericFunc: func(e GenericEvent[T]) bool { return filter(e.Object) },
	}
}

// GenerationObject is an object with metadata.generation: any pointer to a struct embedding
// meta.ObjectMeta, and *meta.Unstructured.
type GenerationObject interface {
	meta.Object
	GetGeneration() int64
}

// updateOnly passes creates, deletes and generic events and asks changed about updates; an
// update with a missing object passes (let the reconciler look).
func updateOnly[T any](changed func(old, new T) bool) Predicate[T] {
	return PredicateFuncs[T]{UpdateFunc: func(e UpdateEvent[T]) bool {
		if isNil(e.ObjectOld) || isNil(e.ObjectNew) {
			return true
		}
		return changed(e.ObjectOld, e.ObjectNew)
	}}
}

// GenerationChanged lets through updates whose metadata.generation changed, and every
// create, delete and generic event (controller-runtime's GenerationChangedPredicate). The API
// server bumps the generation only when the spec changes, so a controller of a resource with
// a status subresource does not react to its own status writes. Resources without a
// generation (ConfigMaps, for example) always have 0: every update is dropped.
func GenerationChanged[T GenerationObject]() Predicate[T] {
	return updateOnly(func(old, new T) bool { return old.GetGeneration() != new.GetGeneration() })
}

// ResourceVersionChanged lets through updates whose resourceVersion changed, dropping
// periodic resyncs, and every other event (controller-runtime's
// ResourceVersionChangedPredicate).
func ResourceVersionChanged[T meta.Object]() Predicate[T] {
	return updateOnly(func(old, new T) bool { return old.GetResourceVersion() != new.GetResourceVersion() })
}

// LabelsChanged lets through updates whose labels changed, and every other event
// (controller-runtime's LabelChangedPredicate). A nil and an empty label map are equal.
func LabelsChanged[T meta.Object]() Predicate[T] {
	return updateOnly(func(old, new T) bool { return !maps.Equal(old.GetLabels(), new.GetLabels()) })
}

// AnnotationsChanged lets through updates whose annotations changed, and every other event
// (controller-runtime's AnnotationChangedPredicate).
func AnnotationsChanged[T meta.Object]() Predicate[T] {
	return updateOnly(func(old, new T) bool { return !maps.Equal(old.GetAnnotations(), new.GetAnnotations()) })
}

// And lets an event through if every predicate does (and if there are none).
func And[T any](ps ...Predicate[T]) Predicate[T] {
	return PredicateFuncs[T]{
		CreateFunc:  func(e CreateEvent[T]) bool { return all(ps, func(p Predicate[T]) bool { return p.Create(e) }) },
		UpdateFunc:  func(e UpdateEvent[T]) bool { return all(ps, func(p Predicate[T]) bool { return p.Update(e) }) },
		DeleteFunc:  func(e DeleteEvent[T]) bool { return all(ps, func(p Predicate[T]) bool { return p.Delete(e) }) },
		GenericFunc: func(e GenericEvent[T]) bool { return all(ps, func(p Predicate[T]) bool { return p.Generic(e) }) },
	}
}

// Or lets an event through if any predicate does (none if there are none).
func Or[T any](ps ...Predicate[T]) Predicate[T] {
	return PredicateFuncs[T]{
		CreateFunc:  func(e CreateEvent[T]) bool { return anyOf(ps, func(p Predicate[T]) bool { return p.Create(e) }) },
		UpdateFunc:  func(e UpdateEvent[T]) bool { return anyOf(ps, func(p Predicate[T]) bool { return p.Update(e) }) },
		DeleteFunc:  func(e DeleteEvent[T]) bool { return anyOf(ps, func(p Predicate[T]) bool { return p.Delete(e) }) },
		GenericFunc: func(e GenericEvent[T]) bool { return anyOf(ps, func(p Predicate[T]) bool { return p.Generic(e) }) },
	}
}

// Not lets an event through if p does not.
func Not[T any](p Predicate[T]) Predicate[T] {
	return PredicateFuncs[T]{
		CreateFunc:  func(e CreateEvent[T]) bool { return !p.Create(e) },
		UpdateFunc:  func(e UpdateEvent[T]) bool { return !p.Update(e) },
		DeleteFunc:  func(e DeleteEvent[T]) bool { return !p.Delete(e) },
		GenericFunc: func(e GenericEvent[T]) bool { return !p.Generic(e) },
	}
}

func all[T any](ps []Predicate[T], f func(Predicate[T]) bool) bool {
	for _, p := range ps {
		if !f(p) {
			return false
		}
	}
	return true
}

func anyOf[T any](ps []Predicate[T], f func(Predicate[T]) bool) bool {
	for _, p := range ps {
		if f(p) {
			return true
		}
	}
	return false
}

// isNil reports whether v is a nil interface, pointer, map, slice, channel or function, so
// that handlers and predicates can skip a missing object instead of dereferencing it.
func isNil[T any](v T) bool {
	a := any(v)
	if a == nil {
		return true
	}
	switch rv := reflect.ValueOf(a); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func, reflect.Interface:
		return rv.IsNil()
	}
	return false
}
