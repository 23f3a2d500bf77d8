// Package conditions is the Condition type of Kubernetes status (metav1.Condition) and the
// helpers that keep a list of them (apimachinery's meta.SetStatusCondition and friends):
// Set changes lastTransitionTime only when the status changes, and reports whether it
// changed anything, so that a controller writes its status only when it must.
package conditions

import (
	"time"

	"github.com/informerkit/informerkit/meta"
)

// Status is the status of a condition.
type Status string

// The values of Status.
const (
	True    Status = "True"
	False   Status = "False"
	Unknown Status = "Unknown"
)

// Condition is one aspect of an object's current state, with the JSON form of
// metav1.Condition. Declare a list of them in a status struct:
//
//	Conditions []conditions.Condition `json:"conditions,omitempty"`
type Condition struct {
	// Type names the condition in CamelCase ("Ready", "Available").
	Type string `json:"type"`
	// Status is True, False or Unknown.
	Status Status `json:"status"`
	// ObservedGeneration is the metadata.generation the condition was set from.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// LastTransitionTime is when Status last changed.
	LastTransitionTime meta.Time `json:"lastTransitionTime"`
	// Reason is a CamelCase word for programs ("MinimumReplicasAvailable").
	Reason string `json:"reason"`
	// Message is for humans.
	Message string `json:"message"`
}

// Set adds c to *conditions or updates the condition of c's type, and reports whether
// anything changed (apimachinery's SetStatusCondition). The lastTransitionTime changes only
// when the status does: it is c's if set, else now. Reason, message and observedGeneration
// are updated whatever the status.
func Set(conditions *[]Condition, c Condition) (changed bool) {
	if conditions == nil {
		return false
	}
	existing := Find(*conditions, c.Type)
	if existing == nil {
		if c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = meta.NewTime(time.Now())
		}
		*conditions = append(*conditions, c)
		return true
	}
	if existing.Status != c.Status {
		existing.Status = c.Status
		if c.LastTransitionTime.IsZero() {
			existing.LastTransitionTime = meta.NewTime(time.Now())
		} else {
			existing.LastTransitionTime = c.LastTransitionTime
		}
		changed = true
	}
	if existing.Reason != c.Reason {
		existing.Reason = c.Reason
		changed = true
	}
	if existing.Message != c.Message {
		existing.Message = c.Message
		changed = true
	}
	if existing.ObservedGeneration != c.ObservedGeneration {
		existing.ObservedGeneration = c.ObservedGeneration
		changed = true
	}
	return changed
}

// Remove removes the condition of type t, and reports whether there was one
// (RemoveStatusCondition).
func Remove(conditions *[]Condition, t string) (removed bool) {
	if conditions == nil {
		return false
	}
	out := (*conditions)[:0]
	for _, c := range *conditions {
		if c.Type == t {
			removed = true
			continue
		}
		out = append(out, c)
	}
	clear((*conditions)[len(out):])
	*conditions = out
	return removed
}

// Find returns the condition of type t, or nil (FindStatusCondition). The pointer points
// into the slice: changing it changes the list.
func Find(conditions []Condition, t string) *Condition {
	for i := range conditions {
		if conditions[i].Type == t {
			return &conditions[i]
		}
	}
	return nil
}

// IsTrue reports whether the condition of type t is present and True
// (IsStatusConditionTrue).
func IsTrue(conditions []Condition, t string) bool { return IsPresentAndEqual(conditions, t, True) }

// IsFalse reports whether the condition of type t is present and False
// (IsStatusConditionFalse).
func IsFalse(conditions []Condition, t string) bool {
	return IsPresentAndEqual(conditions, t, False)
}

// IsPresentAndEqual reports whether the condition of type t is present with status s
// (IsStatusConditionPresentAndEqual).
func IsPresentAndEqual(conditions []Condition, t string, s Status) bool {
	c := Find(conditions, t)
	return c != nil && c.Status == s
}
