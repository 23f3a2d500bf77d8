package events

import (
	"github.com/informerkit/informerkit/meta"
)

// The two event types the API accepts.
const (
	// Normal is for events that report what a controller did or saw go as expected.
	Normal = "Normal"
	// Warning is for events that report something a human may have to look at.
	Warning = "Warning"
)

// Event is a core/v1 Event, the fields the recorder writes (kubectl get events and kubectl
// describe read them).
type Event struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	// InvolvedObject is the object the event is about.
	InvolvedObject ObjectReference `json:"involvedObject"`
	// Reason is a short CamelCase word for programs ("ScalingReplicaSet").
	Reason string `json:"reason,omitempty"`
	// Message is for humans.
	Message string `json:"message,omitempty"`
	// Source names the component that reported the event.
	Source Source `json:"source,omitzero"`
	// FirstTimestamp and LastTimestamp bound the Count occurrences of the event.
	FirstTimestamp meta.Time `json:"firstTimestamp,omitzero"`
	LastTimestamp  meta.Time `json:"lastTimestamp,omitzero"`
	// Count is the number of occurrences the event stands for.
	Count int32 `json:"count,omitempty"`
	// Type is Normal or Warning.
	Type string `json:"type,omitempty"`
	// ReportingController is the controller that emitted the event (the recorder's
	// component); ReportingInstance its replica.
	ReportingController string `json:"reportingComponent,omitempty"`
	ReportingInstance   string `json:"reportingInstance,omitempty"`
}

// ObjectReference names the object an event is about (core/v1 ObjectReference).
type ObjectReference struct {
	Kind            string `json:"kind,omitempty"`
	Namespace       string `json:"namespace,omitempty"`
	Name            string `json:"name,omitempty"`
	UID             string `json:"uid,omitempty"`
	APIVersion      string `json:"apiVersion,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
	FieldPath       string `json:"fieldPath,omitempty"`
}

// Source is the component (and host) that reported an event.
type Source struct {
	Component string `json:"component,omitempty"`
	Host      string `json:"host,omitempty"`
}
