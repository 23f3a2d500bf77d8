// Package crdgen writes the CustomResourceDefinition of a Go type from the type itself: its
// fields and json tags give the OpenAPI v3 schema, and comment markers give the rest, as
// controller-gen does for kubebuilder's (crdgen reads its own markers, not kubebuilder's).
// cmd/crdgen is its command; kinds.FromCRD and apitest.Server.AddCRD read what it writes.
//
//	// Widget is ...
//	//
//	// +kind:group=example.com,version=v1,scope=Namespaced,shortNames=wd
//	// +subresource:status
//	// +printcolumn:name=Size,type=integer,jsonPath=.spec.size
//	type Widget struct {
//		meta.TypeMeta
//		meta.ObjectMeta `json:"metadata"`
//		Spec            WidgetSpec `json:"spec"`
//	}
//	type WidgetSpec struct {
//		// Size is how big (the description kubectl explain shows).
//		// +minimum=1
//		// +default=3
//		Size int32 `json:"size,omitempty"`
//	}
//
// A field is required unless its tag says omitempty or omitzero, or it is marked +optional.
// Schema markers (on a field, or on a named type for every use of it): +optional, +required,
// +default=, +minimum=, +maximum=, +exclusiveMinimum, +exclusiveMaximum, +multipleOf=,
// +minLength=, +maxLength=, +pattern=, +minItems=, +maxItems=, +minProperties=,
// +maxProperties=, +enum=a;b, +format=, +type=, +nullable, +preserveUnknownFields,
// +embeddedResource, +intOrString, +listType=, +listMapKey=, +mapType=, +structType= and
// +cel:rule=...,message=... (x-kubernetes-validations). docs/workbench.md has each one.
package crdgen
