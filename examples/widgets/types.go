package widgets

import (
	_ "embed"

	"github.com/informerkit/informerkit/conditions"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

//go:generate go run github.com/informerkit/informerkit/cmd/crdgen -out crd.yaml .

// Widget keeps one Pod running its image, and says when it is Ready.
//
// +kind:group=example.com,version=v1,shortNames=wd
// +subresource:status
// +printcolumn:name=Image,type=string,jsonPath=.spec.image
// +printcolumn:name=Ready,type=string,jsonPath=`.status.conditions[?(@.type=="Ready")].status`
type Widget struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            WidgetSpec   `json:"spec"`
	Status          WidgetStatus `json:"status,omitzero"`
}

// WidgetSpec is what the Widget asks for.
type WidgetSpec struct {
	// Image is what the Widget's Pod runs.
	// +minLength=1
	Image string `json:"image"`
	// ReadyAfterSeconds is the initial delay of the Pod's readiness probe.
	// +minimum=0
	// +default=5
	ReadyAfterSeconds int32 `json:"readyAfterSeconds,omitempty"`
}

// WidgetStatus is what the controller saw.
type WidgetStatus struct {
	// +listType=map
	// +listMapKey=type
	Conditions []conditions.Condition `json:"conditions,omitempty"`
}

// Pod declares the fields of a Pod the controller reads and writes: the cache keeps no more.
type Pod struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            struct {
		Containers []Container `json:"containers"`
	} `json:"spec"`
	Status struct {
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions,omitempty"`
	} `json:"status,omitzero"`
}

// Container is a Pod's container, with a readiness probe.
type Container struct {
	Name           string `json:"name"`
	Image          string `json:"image"`
	ReadinessProbe *Probe `json:"readinessProbe,omitempty"`
}

// Probe is a readiness probe that runs a command.
type Probe struct {
	Exec struct {
		Command []string `json:"command"`
	} `json:"exec"`
	InitialDelaySeconds int32 `json:"initialDelaySeconds,omitempty"`
}

// CRD is the Widget CustomResourceDefinition, generated from the markers above.
//
//go:embed crd.yaml
var CRD []byte

// The kinds, registered once: Widget as its CRD says, Pod as the built-in kind.
var (
	WidgetKind = kinds.MustRegister[*Widget](kinds.MustFromCRD(CRD, "Widget"))
	PodKind    = kinds.MustRegister[*Pod](kinds.Pod)
)
