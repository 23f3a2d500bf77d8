package share_test

import (
	"fmt"
	"reflect"

	"github.com/informerkit/informerkit/internal/share"
)

type pod struct {
	Name   string
	Labels map[string]string
}

// Two pods of one ReplicaSet end up holding one labels map.
func Example() {
	s := share.New[*pod]()
	a := s.Share(&pod{Name: "web-1", Labels: map[string]string{"app": "web"}})
	b := s.Share(&pod{Name: "web-2", Labels: map[string]string{"app": "web"}})
	fmt.Println(reflect.ValueOf(a.Labels).UnsafePointer() == reflect.ValueOf(b.Labels).UnsafePointer())
	fmt.Println(s.Stats().Hits > 0)
	// Output:
	// true
	// true
}
