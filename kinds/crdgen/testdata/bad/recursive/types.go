package recursive

import "github.com/informerkit/informerkit/meta"

// Tree contains itself.
//
// +kind:group=bad.informerkit.io,version=v1
type Tree struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Root            Node `json:"root"`
}

// Node has children of its own type.
type Node struct {
	Children []Node `json:"children"`
}
