package controller

import (
	"reflect"

	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/meta"
)

// InformerOptions are the optional settings of InformerForWithOptions.
type InformerOptions struct {
	// Resource is the exception to the resource T is registered as in the Manager's type
	// registry, for a type that has no one resource: *meta.Unstructured (objects of any
	// kind), or a type served at two resources. T then needs no registration, unless a
	// Builder's For needs its kind; a registered T must be registered as this resource.
	// Default: T's registered resource.
	Resource meta.GroupVersionResource
	// Namespace restricts the informer to one namespace. Default: the Manager's factory's
	// (ManagerOptions.InformerOptions.Namespace).
	Namespace string
	// LabelSelector and FieldSelector filter what the informer caches. Default: the
	// factory's.
	LabelSelector labels.Selector
	FieldSelector string
}

// InformerFor returns the Manager's shared informer of T: the one informer of the resource
// T is registered as in the Manager's type registry (ManagerOptions.Kinds, default
// kinds.Default), with the factory's namespace and selectors. Every caller, source and
// Builder input of T shares it, and the Manager runs it, reports it in /readyz and /metrics,
// and lists its permissions. Call it before Start. A T not registered is a
// *kinds.NotRegisteredError: register built-in kinds too (kinds.MustRegister[*Pod](kinds.Pod)).
func InformerFor[T meta.Object](m *Manager) (*informer.Informer[T], error) {
	return InformerForWithOptions[T](m, InformerOptions{})
}

// InformerForWithOptions is InformerFor with another resource (the exception, see
// InformerOptions.Resource), namespace or selectors; informers that differ in those are
// distinct.
func InformerForWithOptions[T meta.Object](m *Manager, opts InformerOptions) (*informer.Informer[T], error) {
	if m == nil {
		panic("controller: InformerFor: nil Manager")
	}
	gvr, err := resourceOf[T](m, opts.Resource)
	if err != nil {
		return nil, err
	}
	return managedInformer[T](m, gvr, informer.InformerForOptions{
		Namespace: opts.Namespace, LabelSelector: opts.LabelSelector, FieldSelector: opts.FieldSelector}, "InformerFor")
}

// managedInformer returns the factory's informer of T for gvr with opts, tracked, recorded
// as acquired by who, and refused if it is new past ManagerOptions.InformerBudget.
func managedInformer[T meta.Object](m *Manager, gvr meta.GroupVersionResource, opts informer.InformerForOptions, who string) (*informer.Informer[T], error) {
	_, exists := informer.LookupWithOptions[T](m.factory, gvr, opts)
	if err := m.admitInformer(gvr.String(), exists); err != nil {
		return nil, err
	}
	inf := informer.InformerForWithOptions[T](m.factory, gvr, opts)
	m.track(inf.Name(), inf)
	m.acquired(inf, who)
	return inf, nil
}

// sharedInformer is the Manager's shared informer of T for gvr, already resolved, for a
// Builder's input: refused if it is new past ManagerOptions.InformerBudget.
func sharedInformer[T meta.Object](m *Manager, gvr meta.GroupVersionResource) (*informer.Informer[T], error) {
	return managedInformer[T](m, gvr, informer.InformerForOptions{}, "Builder")
}

// kindOf returns T's kind and the resource to watch: T's registered kind and resource, or,
// given a resource (the exception), that resource with T's registered kind (which must be
// that resource's) or, for an unregistered T, the built-in kind the resource serves.
func kindOf[T meta.Object](m *Manager, resource meta.GroupVersionResource) (kinds.Info, meta.GroupVersionResource, error) {
	t := reflect.TypeFor[T]()
	info, ok := m.Kinds().Lookup(t)
	switch {
	case resource.Resource == "" && !ok:
		return kinds.Info{}, resource, &kinds.NotRegisteredError{Type: t}
	case resource.Resource == "":
		return info, info.GroupVersionResource(), nil
	case !ok:
		if builtin, isBuiltin := kinds.BuiltinForResource(resource); isBuiltin {
			return builtin, resource, nil
		}
		return kinds.Info{}, resource, &kinds.NotRegisteredError{Type: t}
	case info.Group != resource.Group || info.Resource != resource.Resource || info.Kind == "":
		return kinds.Info{}, resource, &KindMismatchError{Type: t, Registered: info, Watched: resource}
	}
	return info, resource, nil
}

// resourceOf is kindOf for a use that needs no kind (an informer, a watched or owned type):
// given a resource, an unregistered T is fine.
func resourceOf[T meta.Object](m *Manager, resource meta.GroupVersionResource) (meta.GroupVersionResource, error) {
	if resource.Resource != "" {
		if _, ok := m.Kinds().Lookup(reflect.TypeFor[T]()); !ok {
			return resource, nil
		}
	}
	_, gvr, err := kindOf[T](m, resource)
	return gvr, err
}
