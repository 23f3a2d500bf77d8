package meta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Unstructured is an object of any kind held as decoded JSON: maps of string to any, with
// integers as int64, other numbers as float64, arrays as []any. It is the counterpart of
// client-go's unstructured.Unstructured and is what Resource[*Unstructured] returns for
// kinds that have no Go struct (custom resources, discovery-driven tools).
type Unstructured struct {
	// Object is the whole object, including apiVersion, kind and metadata.
	Object map[string]any
}

// UnstructuredList is a page of Unstructured objects, as Resource[*Unstructured].List
// returns it.
type UnstructuredList = List[*Unstructured]

var _ Object = (*Unstructured)(nil)

// UnmarshalJSON decodes any JSON object, keeping integers exact (int64).
func (u *Unstructured) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("meta: unstructured: trailing data after the object")
	}
	if m == nil {
		return errors.New("meta: unstructured: null object")
	}
	convertNumbers(m)
	u.Object = m
	return nil
}

// MarshalJSON encodes Object.
func (u *Unstructured) MarshalJSON() ([]byte, error) {
	if u.Object == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(u.Object)
}

func convertNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = convertNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = convertNumbers(e)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
		return string(x)
	}
	return v
}

// DeepCopy returns a copy sharing nothing with u.
func (u *Unstructured) DeepCopy() *Unstructured {
	if u == nil {
		return nil
	}
	return &Unstructured{Object: deepCopyJSON(u.Object).(map[string]any)}
}

func deepCopyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return map[string]any(nil)
		}
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopyJSON(e)
		}
		return m
	case []any:
		if x == nil {
			return []any(nil)
		}
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = deepCopyJSON(e)
		}
		return s
	case map[string]string:
		m := make(map[string]string, len(x))
		for k, e := range x {
			m[k] = e
		}
		return m
	case []string:
		return append([]string(nil), x...)
	}
	return v
}

func (u *Unstructured) obj() map[string]any {
	if u.Object == nil {
		u.Object = map[string]any{}
	}
	return u.Object
}

func (u *Unstructured) str(fields ...string) string {
	s, _, _ := NestedString(u.Object, fields...)
	return s
}

func (u *Unstructured) setStr(value string, fields ...string) {
	if value == "" {
		RemoveNestedField(u.Object, fields...)
		return
	}
	_ = SetNestedField(u.obj(), value, fields...)
}

// GetAPIVersion returns apiVersion.
func (u *Unstructured) GetAPIVersion() string { return u.str("apiVersion") }

// SetAPIVersion sets apiVersion.
func (u *Unstructured) SetAPIVersion(v string) { u.setStr(v, "apiVersion") }

// GetKind returns kind.
func (u *Unstructured) GetKind() string { return u.str("kind") }

// SetKind sets kind.
func (u *Unstructured) SetKind(v string) { u.setStr(v, "kind") }

// GroupVersionKind returns the group, version and kind named by apiVersion and kind.
func (u *Unstructured) GroupVersionKind() GroupVersionKind {
	return TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()}.GroupVersionKind()
}

// SetGroupVersionKind sets apiVersion and kind.
func (u *Unstructured) SetGroupVersionKind(gvk GroupVersionKind) {
	u.SetAPIVersion(gvk.GroupVersion().String())
	u.SetKind(gvk.Kind)
}

// GetName returns metadata.name.
func (u *Unstructured) GetName() string { return u.str("metadata", "name") }

// SetName sets metadata.name.
func (u *Unstructured) SetName(v string) { u.setStr(v, "metadata", "name") }

// GetGenerateName returns metadata.generateName.
func (u *Unstructured) GetGenerateName() string { return u.str("metadata", "generateName") }

// SetGenerateName sets metadata.generateName.
func (u *Unstructured) SetGenerateName(v string) { u.setStr(v, "metadata", "generateName") }

// GetNamespace returns metadata.namespace.
func (u *Unstructured) GetNamespace() string { return u.str("metadata", "namespace") }

// SetNamespace sets metadata.namespace.
func (u *Unstructured) SetNamespace(v string) { u.setStr(v, "metadata", "namespace") }

// GetUID returns metadata.uid.
func (u *Unstructured) GetUID() string { return u.str("metadata", "uid") }

// GetResourceVersion returns metadata.resourceVersion.
func (u *Unstructured) GetResourceVersion() string { return u.str("metadata", "resourceVersion") }

// SetResourceVersion sets metadata.resourceVersion.
func (u *Unstructured) SetResourceVersion(v string) { u.setStr(v, "metadata", "resourceVersion") }

// GetGeneration returns metadata.generation.
func (u *Unstructured) GetGeneration() int64 {
	v, _, _ := NestedInt64(u.Object, "metadata", "generation")
	return v
}

// GetLabels returns a copy of metadata.labels (nil if none).
func (u *Unstructured) GetLabels() map[string]string {
	m, _, _ := NestedStringMap(u.Object, "metadata", "labels")
	return m
}

// SetLabels sets metadata.labels (nil removes them).
func (u *Unstructured) SetLabels(labels map[string]string) {
	u.setStringMap(labels, "metadata", "labels")
}

// GetAnnotations returns a copy of metadata.annotations (nil if none).
func (u *Unstructured) GetAnnotations() map[string]string {
	m, _, _ := NestedStringMap(u.Object, "metadata", "annotations")
	return m
}

// SetAnnotations sets metadata.annotations (nil removes them).
func (u *Unstructured) SetAnnotations(a map[string]string) {
	u.setStringMap(a, "metadata", "annotations")
}

func (u *Unstructured) setStringMap(m map[string]string, fields ...string) {
	if m == nil {
		RemoveNestedField(u.Object, fields...)
		return
	}
	v := make(map[string]any, len(m))
	for k, s := range m {
		v[k] = s
	}
	_ = SetNestedField(u.obj(), v, fields...)
}

// GetFinalizers returns metadata.finalizers.
func (u *Unstructured) GetFinalizers() []string {
	s, _, _ := NestedStringSlice(u.Object, "metadata", "finalizers")
	return s
}

// SetFinalizers sets metadata.finalizers (nil removes them).
func (u *Unstructured) SetFinalizers(f []string) {
	if f == nil {
		RemoveNestedField(u.Object, "metadata", "finalizers")
		return
	}
	v := make([]any, len(f))
	for i, s := range f {
		v[i] = s
	}
	_ = SetNestedField(u.obj(), v, "metadata", "finalizers")
}

// GetCreationTimestamp returns metadata.creationTimestamp (zero if absent or invalid).
func (u *Unstructured) GetCreationTimestamp() Time {
	t, _ := time.Parse(time.RFC3339, u.str("metadata", "creationTimestamp"))
	return Time{t}
}

// GetDeletionTimestamp returns metadata.deletionTimestamp, or nil.
func (u *Unstructured) GetDeletionTimestamp() *Time {
	s := u.str("metadata", "deletionTimestamp")
	if s == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil
	}
	return &Time{t}
}

// GetOwnerReferences returns metadata.ownerReferences decoded (nil if absent or invalid).
func (u *Unstructured) GetOwnerReferences() []OwnerReference {
	v, ok, _ := NestedFieldNoCopy(u.Object, "metadata", "ownerReferences")
	if !ok {
		return nil
	}
	var refs []OwnerReference
	if err := remarshal(v, &refs); err != nil {
		return nil
	}
	return refs
}

// Metadata returns a decoded copy of metadata. Changing the copy does not change u; use
// SetMetadata.
func (u *Unstructured) Metadata() (ObjectMeta, error) {
	var m ObjectMeta
	v, ok, err := NestedFieldNoCopy(u.Object, "metadata")
	if err != nil || !ok {
		return m, err
	}
	if err := remarshal(v, &m); err != nil {
		return m, fmt.Errorf("meta: unstructured metadata: %w", err)
	}
	return m, nil
}

// SetMetadata replaces metadata with m.
func (u *Unstructured) SetMetadata(m ObjectMeta) error {
	data, err := json.Marshal(&m)
	if err != nil {
		return err
	}
	var tmp Unstructured
	if err := tmp.UnmarshalJSON(data); err != nil {
		return err
	}
	u.obj()["metadata"] = tmp.Object
	return nil
}

// Into decodes u into out, a pointer to a typed object.
func (u *Unstructured) Into(out any) error { return remarshal(u.Object, out) }

// ToUnstructured converts a typed object to an Unstructured through JSON.
func ToUnstructured(obj any) (*Unstructured, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := &Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return u, nil
}

func remarshal(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// NestedFieldNoCopy returns the value at the path of fields in obj, without copying. found
// is false if a field is missing; err is set if a step is not a map.
func NestedFieldNoCopy(obj map[string]any, fields ...string) (value any, found bool, err error) {
	var cur any = obj
	for i, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			if cur == nil {
				return nil, false, nil
			}
			return nil, false, fmt.Errorf("meta: %s is %T, not a map", jsonPath(fields[:i]), cur)
		}
		if cur, ok = m[f]; !ok {
			return nil, false, nil
		}
	}
	return cur, true, nil
}

// NestedFieldCopy returns a deep copy of the value at the path.
func NestedFieldCopy(obj map[string]any, fields ...string) (any, bool, error) {
	v, ok, err := NestedFieldNoCopy(obj, fields...)
	if !ok || err != nil {
		return nil, ok, err
	}
	return deepCopyJSON(v), true, nil
}

func jsonPath(fields []string) string {
	if len(fields) == 0 {
		return "the object"
	}
	return "." + strings.Join(fields, ".")
}

func nestedTyped[V any](obj map[string]any, what string, fields ...string) (V, bool, error) {
	var zero V
	v, ok, err := NestedFieldNoCopy(obj, fields...)
	if !ok || err != nil {
		return zero, ok, err
	}
	t, isT := v.(V)
	if !isT {
		return zero, false, fmt.Errorf("meta: %s is %T, not %s", jsonPath(fields), v, what)
	}
	return t, true, nil
}

// NestedString returns the string at the path.
func NestedString(obj map[string]any, fields ...string) (string, bool, error) {
	return nestedTyped[string](obj, "a string", fields...)
}

// NestedBool returns the bool at the path.
func NestedBool(obj map[string]any, fields ...string) (bool, bool, error) {
	return nestedTyped[bool](obj, "a bool", fields...)
}

// NestedInt64 returns the integer at the path.
func NestedInt64(obj map[string]any, fields ...string) (int64, bool, error) {
	v, ok, err := NestedFieldNoCopy(obj, fields...)
	if !ok || err != nil {
		return 0, ok, err
	}
	switch n := v.(type) {
	case int64:
		return n, true, nil
	case int:
		return int64(n), true, nil
	case int32:
		return int64(n), true, nil
	}
	return 0, false, fmt.Errorf("meta: %s is %T, not an integer", jsonPath(fields), v)
}

// NestedFloat64 returns the number at the path (integers are converted).
func NestedFloat64(obj map[string]any, fields ...string) (float64, bool, error) {
	v, ok, err := NestedFieldNoCopy(obj, fields...)
	if !ok || err != nil {
		return 0, ok, err
	}
	switch n := v.(type) {
	case float64:
		return n, true, nil
	case int64:
		return float64(n), true, nil
	case int:
		return float64(n), true, nil
	}
	return 0, false, fmt.Errorf("meta: %s is %T, not a number", jsonPath(fields), v)
}

// NestedSlice returns a deep copy of the array at the path.
func NestedSlice(obj map[string]any, fields ...string) ([]any, bool, error) {
	s, ok, err := nestedTyped[[]any](obj, "an array", fields...)
	if !ok || err != nil {
		return nil, ok, err
	}
	return deepCopyJSON(s).([]any), true, nil
}

// NestedStringSlice returns a copy of the array of strings at the path.
func NestedStringSlice(obj map[string]any, fields ...string) ([]string, bool, error) {
	s, ok, err := nestedTyped[[]any](obj, "an array", fields...)
	if !ok || err != nil {
		return nil, ok, err
	}
	out := make([]string, len(s))
	for i, e := range s {
		str, isStr := e.(string)
		if !isStr {
			return nil, false, fmt.Errorf("meta: %s[%d] is %T, not a string", jsonPath(fields), i, e)
		}
		out[i] = str
	}
	return out, true, nil
}

// NestedMap returns a deep copy of the object at the path.
func NestedMap(obj map[string]any, fields ...string) (map[string]any, bool, error) {
	m, ok, err := nestedTyped[map[string]any](obj, "an object", fields...)
	if !ok || err != nil {
		return nil, ok, err
	}
	return deepCopyJSON(m).(map[string]any), true, nil
}

// NestedStringMap returns a copy of the object of strings at the path.
func NestedStringMap(obj map[string]any, fields ...string) (map[string]string, bool, error) {
	m, ok, err := nestedTyped[map[string]any](obj, "an object", fields...)
	if !ok || err != nil {
		return nil, ok, err
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		s, isStr := e.(string)
		if !isStr {
			return nil, false, fmt.Errorf("meta: %s.%s is %T, not a string", jsonPath(fields), k, e)
		}
		out[k] = s
	}
	return out, true, nil
}

// SetNestedField sets the value at the path, creating intermediate objects. It fails if a
// step exists and is not an object. Values should be JSON-shaped (map[string]any, []any,
// string, int64, float64, bool, nil); typed maps and slices of strings are accepted too.
func SetNestedField(obj map[string]any, value any, fields ...string) error {
	if len(fields) == 0 {
		return errors.New("meta: SetNestedField: empty path")
	}
	if obj == nil {
		return errors.New("meta: SetNestedField: nil object")
	}
	m := obj
	for i, f := range fields[:len(fields)-1] {
		next, ok := m[f]
		if !ok || next == nil {
			nm := map[string]any{}
			m[f] = nm
			m = nm
			continue
		}
		nm, isMap := next.(map[string]any)
		if !isMap {
			return fmt.Errorf("meta: %s is %T, not a map", jsonPath(fields[:i+1]), next)
		}
		m = nm
	}
	m[fields[len(fields)-1]] = normalizeValue(value)
	return nil
}

func normalizeValue(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return float64(x)
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		return m
	case []string:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = e
		}
		return s
	}
	return deepCopyJSON(v)
}

// RemoveNestedField removes the value at the path, if present.
func RemoveNestedField(obj map[string]any, fields ...string) {
	if len(fields) == 0 || obj == nil {
		return
	}
	m := obj
	for _, f := range fields[:len(fields)-1] {
		next, ok := m[f].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	delete(m, fields[len(fields)-1])
}
