package meta

import (
	"encoding/json"
	"fmt"
	"time"
)

// TypeMeta names the schema of an object: its apiVersion ("v1", "apps/v1") and kind.
// Embed it anonymously (no tag) in every object struct so its fields sit at the top level.
type TypeMeta struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

// GroupVersionKind returns the group, version and kind named by m.
func (m TypeMeta) GroupVersionKind() GroupVersionKind {
	gv, _ := ParseGroupVersion(m.APIVersion)
	return GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: m.Kind}
}

// ObjectMeta is the standard Kubernetes object metadata. Embed it with the tag json:"metadata"
// in a struct that also embeds TypeMeta and declares only the fields a controller reads:
// decoding ignores everything else, which keeps caches small.
type ObjectMeta struct {
	Name                       string            `json:"name,omitempty"`
	GenerateName               string            `json:"generateName,omitempty"`
	Namespace                  string            `json:"namespace,omitempty"`
	UID                        string            `json:"uid,omitempty"`
	ResourceVersion            string            `json:"resourceVersion,omitempty"`
	Generation                 int64             `json:"generation,omitempty"`
	CreationTimestamp          Time              `json:"creationTimestamp,omitzero"`
	DeletionTimestamp          *Time             `json:"deletionTimestamp,omitempty"`
	DeletionGracePeriodSeconds *int64            `json:"deletionGracePeriodSeconds,omitempty"`
	Labels                     map[string]string `json:"labels,omitempty"`
	Annotations                map[string]string `json:"annotations,omitempty"`
	OwnerReferences            []OwnerReference  `json:"ownerReferences,omitempty"`
	Finalizers                 []string          `json:"finalizers,omitempty"`
	// ManagedFields is kept as raw JSON: it is large, rarely read, and the informer's default
	// transform drops it before an object reaches the cache.
	ManagedFields json.RawMessage `json:"managedFields,omitempty"`
}

// OwnerReference points from a dependent object to its owner in the same namespace.
type OwnerReference struct {
	APIVersion         string `json:"apiVersion"`
	Kind               string `json:"kind"`
	Name               string `json:"name"`
	UID                string `json:"uid"`
	Controller         *bool  `json:"controller,omitempty"`
	BlockOwnerDeletion *bool  `json:"blockOwnerDeletion,omitempty"`
}

// IsController reports whether the reference is marked as the managing controller.
func (r OwnerReference) IsController() bool { return r.Controller != nil && *r.Controller }

// List is a page of a LIST response.
type List[T any] struct {
	TypeMeta
	ListMeta `json:"metadata"`
	Items    []T `json:"items"`
}

// ListMeta is the metadata of a list: the resourceVersion the list was served at and the
// continue token of the next page.
type ListMeta struct {
	ResourceVersion    string `json:"resourceVersion,omitempty"`
	Continue           string `json:"continue,omitempty"`
	RemainingItemCount *int64 `json:"remainingItemCount,omitempty"`
	// ShardInfo is set by a server that applied ListOptions.ShardSelector (kube-apiserver
	// 1.36 with the ShardedListAndWatch feature gate): the list is a subset of the
	// collection. Its absence after a list with a ShardSelector means that the server
	// ignored the selector.
	ShardInfo *ShardInfo `json:"shardInfo,omitempty"`
}

// ShardInfo describes the shard selector a server applied to a list.
type ShardInfo struct {
	// Selector is the selector in the server's normal form (sharding.Selector.String).
	Selector string `json:"selector"`
}

// Object is what informerkit needs from a cached object. A pointer to any struct embedding
// ObjectMeta satisfies it, and so does a pointer to client-go's typed objects (metav1.ObjectMeta
// has the same getters), which lets benchmarks compare like with like.
type Object interface {
	GetName() string
	GetNamespace() string
	GetResourceVersion() string
	GetLabels() map[string]string
	GetAnnotations() map[string]string
}

// MetaObject is implemented by objects that expose their whole ObjectMeta for reading and
// writing (every struct embedding ObjectMeta, through its pointer).
type MetaObject interface {
	Object
	GetObjectMeta() *ObjectMeta
}

var _ MetaObject = (*ObjectMeta)(nil)

// GetName returns metadata.name.
func (m *ObjectMeta) GetName() string { return m.Name }

// GetNamespace returns metadata.namespace ("" for cluster-scoped objects).
func (m *ObjectMeta) GetNamespace() string { return m.Namespace }

// GetResourceVersion returns metadata.resourceVersion, an opaque string.
func (m *ObjectMeta) GetResourceVersion() string { return m.ResourceVersion }

// GetLabels returns metadata.labels; the map is shared, not copied.
func (m *ObjectMeta) GetLabels() map[string]string { return m.Labels }

// GetAnnotations returns metadata.annotations; the map is shared, not copied.
func (m *ObjectMeta) GetAnnotations() map[string]string { return m.Annotations }

// GetUID returns metadata.uid.
func (m *ObjectMeta) GetUID() string { return m.UID }

// GetGeneration returns metadata.generation.
func (m *ObjectMeta) GetGeneration() int64 { return m.Generation }

// GetOwnerReferences returns metadata.ownerReferences; the slice is shared, not copied.
func (m *ObjectMeta) GetOwnerReferences() []OwnerReference { return m.OwnerReferences }

// GetObjectMeta returns m itself, so that any struct embedding ObjectMeta is a MetaObject.
func (m *ObjectMeta) GetObjectMeta() *ObjectMeta { return m }

// Time is a timestamp as the Kubernetes API writes it: RFC 3339 in UTC with second
// precision, and null for the zero time.
type Time struct {
	time.Time
}

// NewTime wraps t, truncated to the second precision the API keeps.
func NewTime(t time.Time) Time { return Time{t.Truncate(time.Second)} }

// MarshalJSON writes null for the zero time and an RFC 3339 UTC string otherwise.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	buf := make([]byte, 0, len(time.RFC3339)+2)
	buf = append(buf, '"')
	buf = t.UTC().AppendFormat(buf, time.RFC3339)
	return append(buf, '"'), nil
}

// UnmarshalJSON accepts null (the zero time) or an RFC 3339 string.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		t.Time = time.Time{}
		return nil
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fmt.Errorf("meta: time %s is not a JSON string", b)
	}
	parsed, err := time.Parse(time.RFC3339, string(b[1:len(b)-1]))
	if err != nil {
		return fmt.Errorf("meta: time: %w", err)
	}
	t.Time = parsed.Local()
	return nil
}
