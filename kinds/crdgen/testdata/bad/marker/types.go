package marker

import "github.com/informerkit/informerkit/meta"

// Thing has a malformed marker.
//
// +kind:group=bad.informerkit.io,version=v1,scope=Galaxy
type Thing struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	// +minimum=zero
	Count int `json:"count"`
}
