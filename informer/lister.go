package informer

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/informerkit/informerkit/indexer"
	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/meta"
)

// Lister reads an informer's cache: Get by namespace and name, List by label selector, and
// the same within one namespace. It is client-go's generated listers (and tools/cache
// listers.go's ListAll/ListAllByNamespace) in one generic type.
//
// The cache must be keyed by indexer.MetaNamespaceKeyFunc (the informer's default). Objects
// are shared with the cache and with every handler: never modify them.
type Lister[T meta.Object] struct {
	idx      indexer.Indexer[T]
	resource string
}

// NewLister returns a Lister over idx. resource names the objects in NotFound errors (for
// example "pods"); it may be empty.
func NewLister[T meta.Object](idx indexer.Indexer[T], resource string) Lister[T] {
	return Lister[T]{idx: idx, resource: resource}
}

// List returns the cached objects whose labels match sel, in no particular order.
func (l Lister[T]) List(sel labels.Selector) []T {
	var out []T
	l.idx.Range(func(_ string, obj T) bool {
		if sel.Empty() || sel.Matches(obj.GetLabels()) {
			out = append(out, obj)
		}
		return true
	})
	return out
}

// Get returns the cached object namespace/name (namespace "" for cluster-scoped objects),
// or an error for which meta.IsNotFound is true.
func (l Lister[T]) Get(namespace, name string) (T, error) {
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	obj, ok, _ := l.idx.GetByKey(key)
	if !ok {
		return obj, l.notFound(name)
	}
	return obj, nil
}

// Namespace returns a lister restricted to namespace ns.
func (l Lister[T]) Namespace(ns string) NamespaceLister[T] {
	return NamespaceLister[T]{l: l, ns: ns}
}

func (l Lister[T]) notFound(name string) error {
	what := l.resource
	if what == "" {
		what = "object"
	}
	return &meta.Status{
		Status:  "Failure",
		Code:    http.StatusNotFound,
		Reason:  meta.StatusReasonNotFound,
		Message: fmt.Sprintf("%s %q not found in the informer's cache", what, name),
		Details: &meta.StatusDetails{Name: name},
	}
}

// NamespaceLister reads the objects of one namespace from an informer's cache.
type NamespaceLister[T meta.Object] struct {
	l  Lister[T]
	ns string
}

// List returns the cached objects of the namespace whose labels match sel. It uses the
// cache's namespace index (indexer.NamespaceIndex) when there is one.
func (n NamespaceLister[T]) List(sel labels.Selector) []T {
	var out []T
	fn := func(_ string, obj T) bool {
		if sel.Empty() || sel.Matches(obj.GetLabels()) {
			out = append(out, obj)
		}
		return true
	}
	err := n.l.idx.RangeByIndex(indexer.NamespaceIndex, n.ns, fn)
	if errors.Is(err, indexer.ErrNoSuchIndex) {
		n.l.idx.Range(func(key string, obj T) bool {
			if obj.GetNamespace() != n.ns {
				return true
			}
			return fn(key, obj)
		})
	}
	return out
}

// Get returns the named object of the namespace, or an error for which meta.IsNotFound
// is true.
func (n NamespaceLister[T]) Get(name string) (T, error) {
	return n.l.Get(n.ns, name)
}
