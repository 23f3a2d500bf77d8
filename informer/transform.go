package informer

import (
	"reflect"
	"sync"

	"github.com/informerkit/informerkit/meta"
)

// DropManagedFields is the default transform: it removes metadata.managedFields, which is
// large and which controllers almost never read. Objects that implement
// meta.MetaObject (every struct embedding meta.ObjectMeta) get ManagedFields set to
// nil; an *meta.Unstructured loses the "managedFields" key of its metadata map. Any other
// pointer to a struct with a promoted ManagedFields field (client-go's typed objects, which
// embed metav1.ObjectMeta) has that field zeroed, found once per type by reflection. Other
// types pass unchanged: give such a type its own transform.
func DropManagedFields[T any](obj T) (T, error) {
	switch o := any(obj).(type) {
	case meta.MetaObject:
		if m := o.GetObjectMeta(); m != nil {
			m.ManagedFields = nil
		}
	case *meta.Unstructured:
		if o != nil {
			if md, ok := o.Object["metadata"].(map[string]any); ok {
				delete(md, "managedFields")
			}
		}
	default:
		v := reflect.ValueOf(obj)
		if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
			break
		}
		if path := managedFieldsPath(v.Elem().Type()); len(path) > 0 {
			if f, err := v.Elem().FieldByIndexErr(path); err == nil && f.CanSet() {
				f.SetZero()
			}
		}
	}
	return obj, nil
}

// managedFieldPaths caches, per struct type, the index path of its promoted ManagedFields
// field (an empty, non-nil slice when it has none).
var managedFieldPaths sync.Map

func managedFieldsPath(t reflect.Type) []int {
	if p, ok := managedFieldPaths.Load(t); ok {
		if path := p.([]int); len(path) > 0 {
			return path
		}
		return nil
	}
	path := []int{}
	if f, ok := t.FieldByName("ManagedFields"); ok && f.IsExported() && len(f.Index) > 1 {
		path = f.Index
	}
	managedFieldPaths.Store(t, path)
	if len(path) == 0 {
		return nil
	}
	return path
}
