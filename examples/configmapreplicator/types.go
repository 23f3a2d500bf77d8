package configmapreplicator

import (
	_ "embed"

	"github.com/informerkit/informerkit/conditions"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

//go:generate go run ../../cmd/crdgen -out crd.yaml .

// The labels and annotations the controller writes. The API of the example,
// ConfigMapReplication, is a cluster-scoped custom resource whose facts are written once,
// in the markers of its type: cmd/crdgen writes crd.yaml from them, and the type registry
// (ReplicationKind), InstallCRD and apitest (Server.AddCRD) read crd.yaml.
const (
	// LabelReplication is set on every copy: the name of the ConfigMapReplication that
	// manages it (the copies' index, and a selector for humans: kubectl get cm -A -l ...).
	LabelReplication = "informerkit.io/replication"
	// AnnotationSource is set on every copy: "namespace/name" of the source ConfigMap.
	AnnotationSource = "informerkit.io/source"
	// LabelReplicateInto is the namespace label the demo selects on (any selector works).
	LabelReplicateInto = "informerkit.io/replicate-into"
)

// CRDYAML is ConfigMapReplication's CustomResourceDefinition, generated from the markers of
// the type: kubectl apply -f crd.yaml (or InstallCRD) on a real cluster,
// apitest.Server.AddCRD in tests.
//
//go:embed crd.yaml
var CRDYAML []byte

// The kinds the controller reads and writes, registered in kinds.Default:
// ConfigMapReplication as its CRD describes it, and the built-in ConfigMap and Namespace.
var (
	ReplicationKind = kinds.MustRegister[*ConfigMapReplication](kinds.MustFromCRD(CRDYAML, "ConfigMapReplication"))
	ConfigMapKind   = kinds.MustRegister[*ConfigMap](kinds.ConfigMap)
	NamespaceKind   = kinds.MustRegister[*Namespace](kinds.Namespace)
)

// The resources the controller reads and writes.
var (
	ReplicationGVR = ReplicationKind.GroupVersionResource()
	ConfigMapGVR   = ConfigMapKind.GroupVersionResource()
	NamespaceGVR   = NamespaceKind.GroupVersionResource()
)

// ConfigMapReplication asks for one ConfigMap to be copied into every namespace whose labels
// match a selector. It is cluster-scoped, so that the copies, which live in other namespaces,
// can name it as their owner (a namespaced owner must be in its dependents' namespace).
//
// +kind:group=informerkit.io,version=v1alpha1,scope=Cluster,shortNames=cmr
// +subresource:status
// +printcolumn:name=Source,type=string,jsonPath=.spec.source.name
// +printcolumn:name=Copies,type=integer,jsonPath=.status.copies
type ConfigMapReplication struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            ReplicationSpec   `json:"spec"`
	Status          ReplicationStatus `json:"status,omitzero"`
}

// ReplicationSpec is the desired state.
type ReplicationSpec struct {
	// Source is the ConfigMap to copy.
	Source SourceRef `json:"source"`
	// NamespaceSelector selects the namespaces that get a copy (the source's own namespace
	// never does), by matchLabels and matchExpressions. An empty selector selects every
	// namespace.
	NamespaceSelector meta.LabelSelector `json:"namespaceSelector,omitzero"`
}

// SourceRef names a ConfigMap.
type SourceRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// String returns "namespace/name".
func (s SourceRef) String() string { return s.Namespace + "/" + s.Name }

// ReplicationStatus is what the controller observed and did.
type ReplicationStatus struct {
	// ObservedGeneration is the generation of the spec the status describes.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Copies is the number of up-to-date copies.
	Copies int `json:"copies"`
	// Namespaces lists the namespaces holding an up-to-date copy, sorted.
	Namespaces []string `json:"namespaces,omitempty"`
	// Message explains why fewer copies exist than namespaces selected, if so.
	Message string `json:"message,omitempty"`
	// Conditions holds Ready: True once every selected namespace has an up-to-date copy.
	// +listType=map
	// +listMapKey=type
	Conditions []conditions.Condition `json:"conditions,omitempty"`
}

// ConfigMap declares the fields of a ConfigMap the controller reads and copies.
type ConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
	BinaryData      map[string][]byte `json:"binaryData,omitempty"`
}

// Namespace declares the fields of a Namespace the controller reads.
type Namespace struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Status          struct {
		Phase string `json:"phase,omitempty"`
	} `json:"status,omitzero"`
}
