// Package v1 is crdgen's test API: every marker and every kind of field.
package v1

import (
	"encoding/json"

	"github.com/informerkit/informerkit/conditions"
	"github.com/informerkit/informerkit/meta"
)

// Gadget is a cluster-scoped kind with every marker.
//
// +kind:group=test.informerkit.io,version=v1,scope=Cluster,shortNames=gd;gdg,categories=all,storage
// +subresource:status
// +subresource:scale:specReplicasPath=.spec.replicas,statusReplicasPath=.status.replicas,labelSelectorPath=.status.selector
// +printcolumn:name=Replicas,type=integer,jsonPath=.spec.replicas
// +printcolumn:name=Ready,type=string,jsonPath=`.status.conditions[?(@.type=="Ready")].status`,description="Ready, or not",priority=1
// +cel:rule="!has(self.spec.maxSize) || self.spec.size <= self.spec.maxSize",message="size exceeds maxSize"
// +kubebuilder:resource:scope=Cluster
type Gadget struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            GadgetSpec   `json:"spec"`
	Status          GadgetStatus `json:"status,omitzero"`
}

// GadgetSpec is the desired state.
type GadgetSpec struct {
	// Replicas is how many.
	// +minimum=0
	// +maximum=10
	// +default=1
	Replicas *int32 `json:"replicas,omitempty"`
	// Size has an exclusive minimum.
	// +minimum=0
	// +exclusiveMinimum
	Size    float64 `json:"size"`
	MaxSize *int64  `json:"maxSize,omitempty"`
	// Name is a DNS label.
	// +minLength=1
	// +maxLength=63
	// +pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// Mode is a named string type with an enum and a default.
	// +default=Fast
	Mode Mode `json:"mode,omitempty"`
	// Tags are a set.
	// +listType=set
	// +maxItems=5
	Tags []string `json:"tags,omitempty"`
	// Ports are a list map keyed by name and protocol.
	// +listType=map
	// +listMapKey=name
	// +listMapKey=protocol
	Ports []Port `json:"ports,omitempty"`
	// Labels is an atomic map.
	// +mapType=atomic
	// +maxProperties=3
	Labels map[string]string `json:"labels,omitempty"`
	// Optional has no omitempty but is marked optional.
	// +optional
	Optional string `json:"optional"`
	// Required has omitempty but is marked required.
	// +required
	Required string `json:"required,omitempty"`
	// Raw keeps whatever it is given.
	Raw json.RawMessage `json:"raw,omitempty"`
	// Anything is any JSON object.
	Anything map[string]any `json:"anything,omitempty"`
	// Template is an embedded object with metadata.
	// +embeddedResource
	// +preserveUnknownFields
	Template map[string]any `json:"template,omitempty"`
	// Blob is bytes.
	Blob []byte `json:"blob,omitempty"`
	// Port is an int or a string.
	// +intOrString
	Port string `json:"port,omitempty"`
	// Nullable may be null.
	// +nullable
	Nullable *string `json:"nullable,omitempty"`
	// Inner is an anonymous struct.
	Inner struct {
		// Depth is documented inside the anonymous struct.
		// +minimum=1
		Depth int `json:"depth"`
	} `json:"inner,omitzero"`
	Embedded `json:",inline"`
	*Pointed
	Ignored  string `json:"-"`
	internal string
	// Since is a time.
	Since meta.Time `json:"since,omitzero"`
	// Widths have no schema of their own beyond numbers.
	Widths [3]uint8 `json:"widths,omitempty"`
	// Flag is a bool.
	Flag bool `json:"flag,omitempty"`
	// Selector picks the nodes.
	Selector *meta.LabelSelector `json:"selector,omitempty"`
	// Grace is a duration.
	Grace meta.Duration `json:"grace,omitzero"`
	// MaxUnavailable is a count or a percentage.
	MaxUnavailable *meta.IntOrString `json:"maxUnavailable,omitempty"`
}

// Mode is how fast.
// +enum=Fast;Slow
type Mode string

// Port is one port.
type Port struct {
	Name     string `json:"name"`
	Protocol string `json:"protocol"`
	Number   int    `json:"number"`
}

// Embedded is inlined by its json tag.
type Embedded struct {
	// Color comes from an inlined struct.
	Color string `json:"color,omitempty"`
}

// Pointed is inlined as an anonymous pointer.
type Pointed struct {
	// Shape comes from an embedded pointer.
	Shape string `json:"shape"`
}

// GadgetStatus is the observed state.
type GadgetStatus struct {
	Replicas int32  `json:"replicas"`
	Selector string `json:"selector,omitempty"`
	// +listType=map
	// +listMapKey=type
	Conditions []conditions.Condition `json:"conditions,omitempty"`
}

// NotAKind has no +kind marker and is left alone.
type NotAKind struct {
	Field string `json:"field"`
}
