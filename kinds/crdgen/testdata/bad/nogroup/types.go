package nogroup

import "github.com/informerkit/informerkit/meta"

// Thing has no group.
//
// +kind:version=v1
type Thing struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
}

// NoMeta has no metadata.
//
// +kind:group=bad.informerkit.io,version=v1
type NoMeta struct {
	Name string `json:"name"`
}
