// Package v2 is the second version of crdgen's test Gadget.
package v2

import "github.com/informerkit/informerkit/meta"

// Gadget v2 has only a spec.
//
// +kind:group=test.informerkit.io,version=v2,scope=Cluster,shortNames=gd;gdg,categories=all
// +unknownmarker=1
type Gadget struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            struct {
		Count int `json:"count"`
	} `json:"spec"`
}

// Widget is a namespaced kind with the default names.
//
// +kind:group=test.informerkit.io,version=v2
type Widget struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            map[string]string `json:"spec,omitempty"`
}

// Policy has a plural in -ies.
//
// +kind:group=test.informerkit.io,version=v2
type Policy struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
}
