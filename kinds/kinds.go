package kinds

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/informerkit/informerkit/meta"
)

// Info describes a kind of object: the group, version and kind its objects carry, the
// resource (collection) they are read and written through, and its scope.
type Info struct {
	// Group is the API group ("" for the core group).
	Group string
	// Version is the API version, e.g. "v1".
	Version string
	// Kind is the kind, e.g. "Pod".
	Kind string
	// Resource is the plural resource name in URLs, e.g. "pods".
	Resource string
	// Namespaced is true for kinds whose objects live in a namespace.
	Namespaced bool
	// StatusSubresource is true when the resource serves <object>/status: status is then
	// written only through it, and updates of the object itself ignore status.
	StatusSubresource bool
}

// GroupVersionKind returns the group, version and kind of i.
func (i Info) GroupVersionKind() meta.GroupVersionKind {
	return meta.GroupVersionKind{Group: i.Group, Version: i.Version, Kind: i.Kind}
}

// GroupVersionResource returns the resource of i.
func (i Info) GroupVersionResource() meta.GroupVersionResource {
	return meta.GroupVersionResource{Group: i.Group, Version: i.Version, Resource: i.Resource}
}

// APIVersion returns the apiVersion objects of i carry: "v1" or "apps/v1".
func (i Info) APIVersion() string {
	return meta.GroupVersion{Group: i.Group, Version: i.Version}.String()
}

// TypeMeta returns the apiVersion and kind of i, as objects written to the API carry them.
func (i Info) TypeMeta() meta.TypeMeta {
	return meta.TypeMeta{APIVersion: i.APIVersion(), Kind: i.Kind}
}

// String returns "Kind.version.group" ("Pod.v1" for the core group).
func (i Info) String() string {
	if i.Group == "" {
		return i.Kind + "." + i.Version
	}
	return i.Kind + "." + i.Version + "." + i.Group
}

// Validate reports what is missing or malformed in i.
func (i Info) Validate() error {
	var problems []string
	if i.Version == "" {
		problems = append(problems, "no Version")
	}
	if i.Kind == "" {
		problems = append(problems, "no Kind")
	}
	if i.Resource == "" {
		problems = append(problems, "no Resource")
	}
	if strings.ContainsAny(i.Group+i.Version+i.Resource, "/ ") || i.Resource != strings.ToLower(i.Resource) {
		problems = append(problems, "Group, Version and Resource must be lower case without slashes or spaces")
	}
	if len(problems) > 0 {
		return fmt.Errorf("kinds: invalid Info %+v: %s", i, strings.Join(problems, ", "))
	}
	return nil
}

// ErrNotRegistered is wrapped by the error of a lookup of a Go type that was not registered
// (see NotRegisteredError).
var ErrNotRegistered = errors.New("type not registered")

// NotRegisteredError is the error of a lookup of a type the registry does not know.
type NotRegisteredError struct {
	// Type is the Go type looked up.
	Type reflect.Type
}

// Error says which type, and how to register it.
func (e *NotRegisteredError) Error() string {
	return fmt.Sprintf("kinds: %v is not registered: register it once, kinds.MustRegister[%v](info) (info: kinds.Pod, kinds.ConfigMap, ... for a built-in kind, kinds.MustFromCRD for your own)", e.Type, e.Type)
}

// Unwrap returns ErrNotRegistered.
func (e *NotRegisteredError) Unwrap() error { return ErrNotRegistered }

// ConflictError is the error of registering a Go type that is registered with another Info.
type ConflictError struct {
	Type               reflect.Type
	Registered, Wanted Info
}

// Error names the type and both kinds.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("kinds: %v is registered as %v, cannot register it as %v", e.Type, e.Registered, e.Wanted)
}

// Registry maps Go types to the kinds of object they hold. It is safe for concurrent use.
// One Go type has one kind; one kind may have several Go types (a full struct and a partial
// one that declares fewer fields).
type Registry struct {
	mu     sync.RWMutex
	byType map[reflect.Type]Info
}

// NewRegistry returns an empty registry. Most programs use Default.
func NewRegistry() *Registry {
	return &Registry{byType: map[reflect.Type]Info{}}
}

// Default is the registry Register, MustRegister, InfoFor and Of use, and the one a
// controller.Manager uses unless told otherwise.
var Default = NewRegistry()

// Register records that values of Go type t are objects of info. Registering a type again
// with the same Info does nothing; with another Info it is a *ConflictError.
func (r *Registry) Register(t reflect.Type, info Info) error {
	if t == nil {
		return errors.New("kinds: Register: nil type")
	}
	if err := info.Validate(); err != nil {
		return err
	}
	if t == reflect.TypeFor[*meta.Unstructured]() {
		return errors.New("kinds: *meta.Unstructured holds objects of any kind and cannot be registered; objects carry their apiVersion and kind")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.byType[t]; ok {
		if old == info {
			return nil
		}
		return &ConflictError{Type: t, Registered: old, Wanted: info}
	}
	r.byType[t] = info
	return nil
}

// Lookup returns the Info registered for t.
func (r *Registry) Lookup(t reflect.Type) (Info, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	info, ok := r.byType[t]
	return info, ok
}

// InfoOf returns the kind of obj: the Info registered for its Go type; for an
// *meta.Unstructured (or an unregistered type whose TypeMeta is set), the apiVersion and
// kind it carries, completed from the built-in table when it is a built-in kind. Objects read
// from lists of built-in types carry no apiVersion or kind, which is why types are
// registered. An unregistered type without TypeMeta gives a *NotRegisteredError.
func (r *Registry) InfoOf(obj any) (Info, error) {
	if obj == nil {
		return Info{}, errors.New("kinds: InfoOf(nil)")
	}
	t := reflect.TypeOf(obj)
	if info, ok := r.Lookup(t); ok {
		return info, nil
	}
	var gvk meta.GroupVersionKind
	switch o := obj.(type) {
	case *meta.Unstructured:
		gvk = o.GroupVersionKind()
	case interface {
		GroupVersionKind() meta.GroupVersionKind
	}: // embedded TypeMeta
		gvk = o.GroupVersionKind()
	}
	if gvk.Kind == "" || gvk.Version == "" {
		return Info{}, &NotRegisteredError{Type: t}
	}
	if info, ok := BuiltinForKind(gvk); ok {
		return info, nil
	}
	// A custom kind known only by what the object says: no resource or scope.
	return Info{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}, nil
}

// Types returns every registered Go type with its Info.
func (r *Registry) Types() map[reflect.Type]Info {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make(map[reflect.Type]Info, len(r.byType))
	for t, i := range r.byType {
		out[t] = i
	}
	return out
}

// Register records in Default that T holds objects of info (see Registry.Register):
//
//	kinds.Register[*Pod](kinds.Pod)
//	kinds.Register[*Widget](kinds.Info{Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets", Namespaced: true})
func Register[T any](info Info) error {
	return Default.Register(reflect.TypeFor[T](), info)
}

// MustRegister is Register for package-level variables and init functions: it panics if
// the registration fails (an invalid Info, or T registered as another kind), which is a
// programming error.
func MustRegister[T any](info Info) Info {
	if err := Register[T](info); err != nil {
		panic(err)
	}
	return info
}

// InfoFor returns the Info registered for T in Default, or a *NotRegisteredError.
func InfoFor[T any]() (Info, error) {
	return InfoForIn[T](Default)
}

// InfoForIn returns the Info registered for T in r, or a *NotRegisteredError.
func InfoForIn[T any](r *Registry) (Info, error) {
	t := reflect.TypeFor[T]()
	if info, ok := r.Lookup(t); ok {
		return info, nil
	}
	return Info{}, &NotRegisteredError{Type: t}
}

// Of returns the kind of obj according to Default (see Registry.InfoOf).
func Of(obj any) (Info, error) { return Default.InfoOf(obj) }

// Builtin returns the built-in kinds of Kubernetes v1.36 at their preferred versions.
func Builtin() []Info { return append([]Info(nil), builtin...) }

// BuiltinForResource returns the built-in kind served by gvr.
func BuiltinForResource(gvr meta.GroupVersionResource) (Info, bool) {
	for _, i := range builtin {
		if i.GroupVersionResource() == gvr {
			return i, true
		}
	}
	return Info{}, false
}

// BuiltinForKind returns the built-in kind gvk.
func BuiltinForKind(gvk meta.GroupVersionKind) (Info, bool) {
	for _, i := range builtin {
		if i.GroupVersionKind() == gvk {
			return i, true
		}
	}
	return Info{}, false
}
