package deployment

import (
	_ "embed"
	"encoding/json"

	"github.com/informerkit/informerkit/conditions"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

//go:generate go run ../../cmd/crdgen -out crd.yaml .

// The example's API is MiniDeployment, a namespaced custom resource that owns Pods. Its
// group, version, names, scope, schema, defaults and printer columns are written once, in
// the markers of the type below: cmd/crdgen writes crd.yaml from them (go generate), and
// the type registry (DeploymentKind) and apitest (Server.AddCRD) read crd.yaml.
const (
	// Finalizer keeps a MiniDeployment until its Pods are gone: the controller deletes them
	// itself, so that they go even where no garbage collector runs (apitest, an e2e cluster
	// of kube-apiserver and etcd only).
	Finalizer = "apps.informerkit.io/pods"
	// LabelOwner is set on every Pod: the name of its MiniDeployment (for kubectl -l).
	LabelOwner = "apps.informerkit.io/minideployment"
	// LabelTemplateHash is set on every Pod: the hash of the template it was made from.
	LabelTemplateHash = "apps.informerkit.io/template-hash"
	// ConditionAvailable is True when the MiniDeployment has as many Pods as it asks for.
	ConditionAvailable = "Available"
	// ConditionRolledOut is True when every Pod is of the current template and Ready.
	ConditionRolledOut = "RolledOut"
)

// CRDYAML is MiniDeployment's CustomResourceDefinition, generated from the markers of the
// type: kubectl apply -f crd.yaml on a real cluster, apitest.Server.AddCRD in tests.
//
//go:embed crd.yaml
var CRDYAML []byte

// The kinds the controller reads and writes, registered in kinds.Default: MiniDeployment as
// its CRD describes it, Pod as the built-in kind.
var (
	DeploymentKind = kinds.MustRegister[*MiniDeployment](kinds.MustFromCRD(CRDYAML, "MiniDeployment"))
	PodKind        = kinds.MustRegister[*Pod](kinds.Pod)
)

// The resources the controller watches.
var (
	DeploymentGVR = DeploymentKind.GroupVersionResource()
	PodGVR        = PodKind.GroupVersionResource()
)

// MiniDeployment asks for Replicas Pods made from Template.
//
// +kind:group=apps.informerkit.io,version=v1alpha1,shortNames=mdeploy
// +subresource:status
// +printcolumn:name=Desired,type=integer,jsonPath=.spec.replicas
// +printcolumn:name=Current,type=integer,jsonPath=.status.replicas
// +printcolumn:name=Available,type=string,jsonPath=`.status.conditions[?(@.type=="Available")].status`
type MiniDeployment struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            Spec   `json:"spec"`
	Status          Status `json:"status,omitzero"`
}

// Spec is the desired state.
type Spec struct {
	// Replicas is the number of Pods (default 1).
	// +minimum=0
	// +default=1
	Replicas *int32 `json:"replicas,omitempty"`
	// Template is what each Pod is made of.
	Template PodTemplate `json:"template"`
}

// PodTemplate is the labels and spec of the Pods.
type PodTemplate struct {
	Metadata struct {
		Labels map[string]string `json:"labels,omitempty"`
	} `json:"metadata,omitzero"`
	// Spec is the Pods' spec: the controller reads only the containers, and the schema
	// keeps every other field of a Pod spec as written.
	// +preserveUnknownFields
	Spec PodSpec `json:"spec"`
}

// Status is what the controller observed.
type Status struct {
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Replicas counts the Pods (not terminating).
	Replicas int32 `json:"replicas"`
	// UpdatedReplicas counts the Pods of the current template.
	UpdatedReplicas int32 `json:"updatedReplicas,omitempty"`
	// ReadyReplicas counts the Ready Pods.
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// +listType=map
	// +listMapKey=type
	Conditions []conditions.Condition `json:"conditions,omitempty"`
}

// Pod holds the fields of a Pod the controller reads and writes.
type Pod struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            PodSpec   `json:"spec"`
	Status          PodStatus `json:"status,omitzero"`
}

// PodSpec is the part of a Pod's spec the example sets.
type PodSpec struct {
	Containers []Container `json:"containers"`
}

// Container is a Pod's container.
type Container struct {
	Name  string `json:"name"`
	Image string `json:"image"`
	// ReadinessProbe decides when the container is Ready, which gates a rollout.
	ReadinessProbe *Probe `json:"readinessProbe,omitempty"`
}

// Probe is a readiness probe: its handler as written (exactly one), and its timing.
type Probe struct {
	Exec                json.RawMessage `json:"exec,omitempty"`
	HTTPGet             json.RawMessage `json:"httpGet,omitempty"`
	TCPSocket           json.RawMessage `json:"tcpSocket,omitempty"`
	InitialDelaySeconds int32           `json:"initialDelaySeconds,omitempty"`
	PeriodSeconds       int32           `json:"periodSeconds,omitempty"`
}

// PodStatus is the part of a Pod's status the controller reads.
type PodStatus struct {
	Conditions []PodCondition `json:"conditions,omitempty"`
}

// PodCondition is a Pod's condition.
type PodCondition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
}

// Ready reports whether the Pod's Ready condition is True.
func (p *Pod) Ready() bool {
	for _, c := range p.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

// DesiredReplicas returns Spec.Replicas, 1 if unset.
func (d *MiniDeployment) DesiredReplicas() int {
	if d.Spec.Replicas == nil {
		return 1
	}
	return int(*d.Spec.Replicas)
}
