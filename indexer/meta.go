package indexer

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
)

// NamespaceIndex is the conventional name of the index built by [MetaNamespaceIndexFunc].
const NamespaceIndex = "namespace"

// Object is what the generic key and index helpers need from an object: its namespace (empty
// for cluster-scoped objects) and its name. Pointers to structs embedding meta.ObjectMeta,
// and client-go's typed objects, satisfy it.
type Object interface {
	GetNamespace() string
	GetName() string
}

// ErrNilObject is returned (wrapped) by the helpers of this package for a nil object.
var ErrNilObject = errors.New("nil object")

// MetaNamespaceKeyFunc is the usual [KeyFunc]: "namespace/name", or "name" when the
// namespace is empty. A nil object is an error, not a panic.
func MetaNamespaceKeyFunc[T Object](obj T) (string, error) {
	if isNil(obj) {
		return "", ErrNilObject
	}
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName(), nil
	}
	return obj.GetName(), nil
}

// SplitMetaNamespaceKey splits a key made by [MetaNamespaceKeyFunc] into its namespace and
// name. A key without "/" is a cluster-scoped name; a key with more than one "/" is an error.
func SplitMetaNamespaceKey(key string) (namespace, name string, err error) {
	i := strings.IndexByte(key, '/')
	if i < 0 {
		return "", key, nil
	}
	if strings.IndexByte(key[i+1:], '/') >= 0 {
		return "", "", fmt.Errorf("unexpected key format: %q", key)
	}
	return key[:i], key[i+1:], nil
}

// MetaNamespaceIndexFunc is an [IndexFunc] that indexes objects by namespace (the empty
// string for cluster-scoped objects). Register it under [NamespaceIndex].
//
// The returned slice is shared between all objects of a namespace (for the first
// maxInternedNamespaces namespaces seen by the process), so that indexing by namespace
// allocates nothing: never modify it.
func MetaNamespaceIndexFunc[T Object](obj T) ([]string, error) {
	if isNil(obj) {
		return nil, ErrNilObject
	}
	return namespaceValues(obj.GetNamespace()), nil
}

// maxInternedNamespaces bounds the memory of the namespace intern table (about 100 bytes a
// namespace); namespaces beyond it get a fresh slice every time.
const maxInternedNamespaces = 4096

var (
	internedNamespaces sync.Map // namespace → []string{namespace}
	internedCount      atomic.Int32
)

func namespaceValues(ns string) []string {
	if v, ok := internedNamespaces.Load(ns); ok {
		return v.([]string)
	}
	vals := []string{ns}
	if internedCount.Load() < maxInternedNamespaces {
		if v, loaded := internedNamespaces.LoadOrStore(ns, vals); loaded {
			return v.([]string)
		}
		internedCount.Add(1)
	}
	return vals
}

// isNil reports whether v is a nil interface or a nil pointer, map, slice, func or channel.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}
