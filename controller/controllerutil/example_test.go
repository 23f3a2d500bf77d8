package controllerutil_test

import (
	"fmt"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller/controllerutil"
	"github.com/informerkit/informerkit/kinds"
)

type Deployment struct {
	apiclient.TypeMeta
	apiclient.ObjectMeta `json:"metadata"`
}

type ReplicaSet struct {
	apiclient.TypeMeta
	apiclient.ObjectMeta `json:"metadata"`
}

func init() {
	kinds.MustRegister[*Deployment](kinds.Deployment)
	kinds.MustRegister[*ReplicaSet](kinds.ReplicaSet)
}

// A controller marks the children it creates with a controller reference to their owner,
// which the garbage collector and EnqueueRequestForOwner follow.
func ExampleSetControllerReference() {
	d := &Deployment{ObjectMeta: apiclient.ObjectMeta{Namespace: "shop", Name: "web", UID: "5f1c"}}
	child := &ReplicaSet{ObjectMeta: apiclient.ObjectMeta{Namespace: "shop", Name: "web-7d9f"}}
	if err := controllerutil.SetControllerReference(d, child); err != nil {
		panic(err)
	}
	ref := controllerutil.GetControllerOf(child)
	fmt.Println(ref.APIVersion, ref.Kind, ref.Name, *ref.Controller)

	other := &ReplicaSet{ObjectMeta: apiclient.ObjectMeta{Namespace: "web", Name: "x", UID: "9a"}}
	fmt.Println(controllerutil.SetControllerReference(other, child))
	// Output:
	// apps/v1 Deployment web true
	// controllerutil: cross-namespace owner references are disallowed: owner web/x, object shop/web-7d9f
}

// A finalizer keeps a deleted object until the controller has cleaned up after it.
func ExampleAddFinalizer() {
	const finalizer = "example.com/cleanup"
	d := &Deployment{ObjectMeta: apiclient.ObjectMeta{Name: "web"}}
	fmt.Println(controllerutil.AddFinalizer(d, finalizer), controllerutil.AddFinalizer(d, finalizer))
	// ... once deletionTimestamp is set and the cleanup is done:
	fmt.Println(controllerutil.RemoveFinalizer(d, finalizer), d.Finalizers)
	// Output:
	// true false
	// true []
}
