package client

import (
	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/labels"
)

// The options of writes, so that a reconciler passes every option from this package: they
// are the API client's own types (package apiclient), under these names.
type (
	// CreateOptions are the options of Create (dry run, field manager, field validation).
	CreateOptions = apiclient.CreateOptions
	// UpdateOptions are the options of Update and Status().Update.
	UpdateOptions = apiclient.UpdateOptions
	// PatchOptions are the options of Patch and PatchFrom.
	PatchOptions = apiclient.PatchOptions
	// ApplyOptions are the options of a server-side Apply (FieldManager is required).
	ApplyOptions = apiclient.ApplyOptions
	// DeleteOptions are the options of Delete: a grace period, preconditions, the
	// propagation policy.
	DeleteOptions = apiclient.DeleteOptions
	// Preconditions must hold for a delete to proceed (else 409 Conflict).
	Preconditions = apiclient.Preconditions
	// DeletionPropagation says what happens to an object's dependents when it is deleted.
	DeletionPropagation = apiclient.DeletionPropagation
	// PatchType is the type of a patch (its Content-Type).
	PatchType = apiclient.PatchType
	// Selector is a label selector (package labels), the type of ListOptions.LabelSelector.
	Selector = labels.Selector
)

// The propagation policies of DeleteOptions.
const (
	DeletePropagationBackground = apiclient.DeletePropagationBackground
	DeletePropagationForeground = apiclient.DeletePropagationForeground
	DeletePropagationOrphan     = apiclient.DeletePropagationOrphan
)

// The patch types.
const (
	MergePatchType          = apiclient.MergePatchType
	StrategicMergePatchType = apiclient.StrategicMergePatchType
	JSONPatchType           = apiclient.JSONPatchType
	ApplyPatchType          = apiclient.ApplyPatchType
)

// MatchingLabels returns the selector of objects that have every label of set with its
// value (labels.SelectorFromSet), for ListOptions.LabelSelector.
func MatchingLabels(set map[string]string) Selector { return labels.SelectorFromSet(set) }

// ParseSelector parses a label selector such as "app=web,tier in (a,b)" (labels.Parse).
func ParseSelector(s string) (Selector, error) { return labels.Parse(s) }
