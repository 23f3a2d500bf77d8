package nodepool

import (
	_ "embed"

	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

//go:generate go run github.com/informerkit/informerkit/cmd/crdgen -out crd.yaml .

// NodePool is a set of Nodes picked by label: the controller keeps the pool's labels and
// taints on them, and drains the Pods of a Node that has been NotReady for longer than the
// pool's grace period, at most MaxUnavailable Nodes at a time.
//
// +kind:group=pools.example.com,version=v1,scope=Cluster,shortNames=np
// +subresource:status
// +printcolumn:name=Nodes,type=integer,jsonPath=.status.nodes
// +printcolumn:name=Ready,type=integer,jsonPath=.status.ready
type NodePool struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            NodePoolSpec   `json:"spec"`
	Status          NodePoolStatus `json:"status,omitzero"`
}

// NodePoolSpec is what the pool asks for.
type NodePoolSpec struct {
	// Selector picks the pool's Nodes by their labels.
	Selector meta.LabelSelector `json:"selector"`
	// Labels are set on every Node of the pool.
	Labels map[string]string `json:"labels,omitempty"`
	// Taints are set on every Node of the pool (a taint of the same key and effect is
	// replaced; other taints are left alone).
	// +maxItems=16
	Taints []Taint `json:"taints,omitempty"`
	// DrainGracePeriod is how long a Node may be NotReady before its Pods are drained.
	// +default="5m"
	DrainGracePeriod meta.Duration `json:"drainGracePeriod,omitzero"`
	// MaxUnavailable is how many of the pool's Nodes may be drained at once: a count, or a
	// percentage of the pool's Nodes rounded down (at least one).
	// +default=1
	MaxUnavailable *meta.IntOrString `json:"maxUnavailable,omitempty"`
}

// Taint is a Node taint (core/v1 Taint without timeAdded).
type Taint struct {
	// +minLength=1
	Key   string `json:"key"`
	Value string `json:"value,omitempty"`
	// +enum=NoSchedule;PreferNoSchedule;NoExecute
	Effect string `json:"effect"`
}

// NodePoolStatus is what the controller saw at its last reconcile.
type NodePoolStatus struct {
	// Nodes and Ready count the pool's Nodes and those Ready.
	Nodes int32 `json:"nodes"`
	Ready int32 `json:"ready"`
	// Draining are the Nodes whose Pods are being drained.
	Draining []string `json:"draining,omitempty"`
	// Waiting are the Nodes due for a drain that MaxUnavailable holds back.
	Waiting []string `json:"waiting,omitempty"`
	// ObservedGeneration is the generation of the spec the status is about.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// Node declares what the controller reads and writes of a Node.
type Node struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            struct {
		Taints []Taint `json:"taints,omitempty"`
	} `json:"spec"`
	Status struct {
		Conditions []NodeCondition `json:"conditions,omitempty"`
	} `json:"status,omitzero"`
}

// NodeCondition is one of a Node's conditions; the controller reads Ready's.
type NodeCondition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	LastTransitionTime meta.Time `json:"lastTransitionTime,omitzero"`
}

// Pod declares what the controller reads of a Pod: where it runs and whether it is done.
type Pod struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            struct {
		NodeName string `json:"nodeName,omitempty"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase,omitempty"`
	} `json:"status,omitzero"`
}

// CRD is the NodePool CustomResourceDefinition, generated from the markers above.
//
//go:embed crd.yaml
var CRD []byte

// The kinds, each stated once: NodePool as its CRD says, Node and Pod as the built-in kinds.
var (
	NodePoolKind = kinds.MustRegister[*NodePool](kinds.MustFromCRD(CRD, "NodePool"))
	NodeKind     = kinds.MustRegister[*Node](kinds.Node)
	PodKind      = kinds.MustRegister[*Pod](kinds.Pod)
)
