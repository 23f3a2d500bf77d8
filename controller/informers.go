package controller

import (
	"reflect"

	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// InformerFor returns the manager's shared informer of T for gvr (see informer.InformerFor) and registers it
// for the readiness check and the informer metrics. Call it before Start. If gvr is a
// built-in resource and T is not in the manager's type registry yet, T is registered as that
// kind, so that events and owner references about T's objects know their kind.
func InformerFor[T meta.Object](m *Manager, gvr meta.GroupVersionResource) *informer.Informer[T] {
	return InformerForWithOptions[T](m, gvr, informer.InformerForOptions{})
}

// InformerForWithOptions is For with another namespace or other selectors than the manager's
// factory's for this informer (see informer.InformerForWithOptions).
func InformerForWithOptions[T meta.Object](m *Manager, gvr meta.GroupVersionResource, opts informer.InformerForOptions) *informer.Informer[T] {
	inf := informer.InformerForWithOptions[T](m.factory, gvr, opts)
	m.track(inf.Name(), inf)
	if info, ok := kinds.BuiltinForResource(gvr); ok {
		if _, known := m.opts.Kinds.Lookup(reflect.TypeFor[T]()); !known {
			_ = m.opts.Kinds.Register(reflect.TypeFor[T](), info) // cannot conflict: T is not registered
		}
	}
	return inf
}
