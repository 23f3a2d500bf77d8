package mapkey

import "github.com/informerkit/informerkit/meta"

// Counts has a map with integer keys.
//
// +kind:group=bad.informerkit.io,version=v1
type Counts struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	ByNumber        map[int]string `json:"byNumber"`
}
