package kinds_test

import (
	"fmt"
	"reflect"

	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// Pod declares the fields of a Pod a program reads.
type Pod struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
}

// Widget is a custom resource.
type Widget struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
}

// WidgetKind describes the custom resource once, next to its type.
var WidgetKind = kinds.Info{Group: "example.com", Version: "v1", Kind: "Widget", Resource: "widgets", Namespaced: true}

func Example() {
	r := kinds.NewRegistry() // programs usually use kinds.Register, on kinds.Default
	if err := r.Register(reflect.TypeFor[*Pod](), kinds.Pod); err != nil {
		panic(err)
	}
	if err := r.Register(reflect.TypeFor[*Widget](), WidgetKind); err != nil {
		panic(err)
	}
	// A Pod read from a list carries no kind; the registry knows it.
	info, err := r.InfoOf(&Pod{ObjectMeta: meta.ObjectMeta{Name: "web-1"}})
	fmt.Println(info.APIVersion(), info.Kind, info.GroupVersionResource(), err)
	info, _ = r.InfoOf(&Widget{})
	fmt.Println(info.APIVersion(), info.Kind, info.Namespaced)
	// Output:
	// v1 Pod pods.v1 <nil>
	// example.com/v1 Widget true
}

func ExampleRegister() {
	type Deployment struct {
		meta.TypeMeta
		meta.ObjectMeta `json:"metadata"`
	}
	if err := kinds.Register[*Deployment](kinds.Deployment); err != nil {
		panic(err)
	}
	info, _ := kinds.InfoFor[*Deployment]()
	fmt.Println(info.GroupVersionKind(), info.StatusSubresource)
	// Output: apps/v1, Kind=Deployment true
}
