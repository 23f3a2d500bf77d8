package deployment

import (
	_ "embed"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/conditions"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// The example's API: a namespaced custom resource, MiniDeployment, that owns Pods.
const (
	Group   = "apps.informerkit.io"
	Version = "v1alpha1"
	Kind    = "MiniDeployment"
	Plural  = "minideployments"

	// Finalizer keeps a MiniDeployment until its Pods are gone: the controller deletes them
	// itself, so that they go even where no garbage collector runs (apitest, an e2e cluster
	// of kube-apiserver and etcd only).
	Finalizer = "apps.informerkit.io/pods"
	// LabelOwner is set on every Pod: the name of its MiniDeployment (for kubectl -l).
	LabelOwner = "apps.informerkit.io/minideployment"
	// ConditionAvailable is True when the MiniDeployment has as many Pods as it asks for.
	ConditionAvailable = "Available"
)

// The resources the controller watches.
var (
	DeploymentGVR = meta.GroupVersionResource{Group: Group, Version: Version, Resource: Plural}
	PodGVR        = meta.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// DeploymentKind describes MiniDeployment for the type registry (owner references, events,
// the client).
var DeploymentKind = kinds.Info{Group: Group, Version: Version, Kind: Kind, Resource: Plural, Namespaced: true, StatusSubresource: true}

// APITestResource is MiniDeployment for apitest.Server.AddResource (installing the CRD).
var APITestResource = apitest.ResourceType{Group: Group, Version: Version, Kind: Kind, Plural: Plural,
	ShortNames: []string{"mdeploy"}, Namespaced: true, StatusSubresource: true}

// CRDYAML is the CustomResourceDefinition for a real cluster (kubectl apply -f crd.yaml).
//
//go:embed crd.yaml
var CRDYAML []byte

// MiniDeployment asks for Replicas Pods made from Template.
type MiniDeployment struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            Spec   `json:"spec"`
	Status          Status `json:"status,omitzero"`
}

// Spec is the desired state.
type Spec struct {
	// Replicas is the number of Pods (default 1).
	Replicas *int32 `json:"replicas,omitempty"`
	// Template is what each Pod is made of.
	Template PodTemplate `json:"template"`
}

// PodTemplate is the labels and spec of the Pods.
type PodTemplate struct {
	Metadata struct {
		Labels map[string]string `json:"labels,omitempty"`
	} `json:"metadata,omitzero"`
	Spec PodSpec `json:"spec"`
}

// Status is what the controller observed.
type Status struct {
	ObservedGeneration int64                  `json:"observedGeneration,omitempty"`
	Replicas           int32                  `json:"replicas"`
	Conditions         []conditions.Condition `json:"conditions,omitempty"`
}

// Pod holds the fields of a Pod the controller reads and writes.
type Pod struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            PodSpec `json:"spec"`
}

// PodSpec is the part of a Pod's spec the example sets.
type PodSpec struct {
	Containers []Container `json:"containers"`
}

// Container is a Pod's container.
type Container struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// DesiredReplicas returns Spec.Replicas, 1 if unset.
func (d *MiniDeployment) DesiredReplicas() int {
	if d.Spec.Replicas == nil {
		return 1
	}
	return int(*d.Spec.Replicas)
}
