package meta

// Accessor is the whole set of metadata getters and setters (apimachinery's metav1.Object):
// what the controller helpers (finalizers, owner references, conditions, the event
// recorder) need. The pointer to every struct embedding ObjectMeta implements it, and so
// does *Unstructured.
type Accessor interface {
	Object
	GetUID() string
	GetGeneration() int64
	GetGenerateName() string
	GetCreationTimestamp() Time
	GetDeletionTimestamp() *Time
	GetFinalizers() []string
	GetOwnerReferences() []OwnerReference

	SetName(string)
	SetNamespace(string)
	SetResourceVersion(string)
	SetLabels(map[string]string)
	SetAnnotations(map[string]string)
	SetFinalizers([]string)
	SetOwnerReferences([]OwnerReference)
}

var (
	_ Accessor = (*ObjectMeta)(nil)
	_ Accessor = (*Unstructured)(nil)
)

// GetGenerateName returns metadata.generateName.
func (m *ObjectMeta) GetGenerateName() string { return m.GenerateName }

// GetCreationTimestamp returns metadata.creationTimestamp.
func (m *ObjectMeta) GetCreationTimestamp() Time { return m.CreationTimestamp }

// GetDeletionTimestamp returns metadata.deletionTimestamp: nil unless the object is being
// deleted (and waits for its finalizers).
func (m *ObjectMeta) GetDeletionTimestamp() *Time { return m.DeletionTimestamp }

// GetFinalizers returns metadata.finalizers; the slice is shared, not copied.
func (m *ObjectMeta) GetFinalizers() []string { return m.Finalizers }

// SetName sets metadata.name.
func (m *ObjectMeta) SetName(name string) { m.Name = name }

// SetNamespace sets metadata.namespace.
func (m *ObjectMeta) SetNamespace(ns string) { m.Namespace = ns }

// SetResourceVersion sets metadata.resourceVersion.
func (m *ObjectMeta) SetResourceVersion(rv string) { m.ResourceVersion = rv }

// SetLabels sets metadata.labels.
func (m *ObjectMeta) SetLabels(labels map[string]string) { m.Labels = labels }

// SetAnnotations sets metadata.annotations.
func (m *ObjectMeta) SetAnnotations(a map[string]string) { m.Annotations = a }

// SetFinalizers sets metadata.finalizers.
func (m *ObjectMeta) SetFinalizers(f []string) { m.Finalizers = f }

// SetOwnerReferences sets metadata.ownerReferences.
func (m *ObjectMeta) SetOwnerReferences(refs []OwnerReference) { m.OwnerReferences = refs }

// SetOwnerReferences sets metadata.ownerReferences (nil removes them).
func (u *Unstructured) SetOwnerReferences(refs []OwnerReference) {
	if refs == nil {
		RemoveNestedField(u.Object, "metadata", "ownerReferences")
		return
	}
	var v []any
	if err := remarshal(refs, &v); err != nil {
		return // an []OwnerReference always encodes
	}
	_ = SetNestedField(u.obj(), normalizeValue(v), "metadata", "ownerReferences")
}
