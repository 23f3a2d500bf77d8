package controllerutil_test

import (
	"context"
	"fmt"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/controllerutil"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

type Deployment struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
}

type ReplicaSet struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
}

func init() {
	kinds.MustRegister[*Deployment](kinds.Deployment)
	kinds.MustRegister[*ReplicaSet](kinds.ReplicaSet)
}

// A controller marks the children it creates with a controller reference to their owner,
// which the garbage collector and EnqueueRequestForOwner follow.
func ExampleSetControllerReference() {
	d := &Deployment{ObjectMeta: meta.ObjectMeta{Namespace: "shop", Name: "web", UID: "5f1c"}}
	child := &ReplicaSet{ObjectMeta: meta.ObjectMeta{Namespace: "shop", Name: "web-7d9f"}}
	if err := controllerutil.SetControllerReference(d, child); err != nil {
		panic(err)
	}
	ref := controllerutil.GetControllerOf(child)
	fmt.Println(ref.APIVersion, ref.Kind, ref.Name, *ref.Controller)

	other := &ReplicaSet{ObjectMeta: meta.ObjectMeta{Namespace: "web", Name: "x", UID: "9a"}}
	fmt.Println(controllerutil.SetControllerReference(other, child))
	// Output:
	// apps/v1 Deployment web true
	// controllerutil: cross-namespace owner references are disallowed: owner web/x, object shop/web-7d9f
}

// A finalizer keeps a deleted object until the controller has cleaned up after it.
func ExampleAddFinalizer() {
	const finalizer = "example.com/cleanup"
	d := &Deployment{ObjectMeta: meta.ObjectMeta{Name: "web"}}
	fmt.Println(controllerutil.AddFinalizer(d, finalizer), controllerutil.AddFinalizer(d, finalizer))
	// ... once deletionTimestamp is set and the cleanup is done:
	fmt.Println(controllerutil.RemoveFinalizer(d, finalizer), d.Finalizers)
	// Output:
	// true false
	// true []
}

type ConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
}

func init() { kinds.MustRegister[*ConfigMap](kinds.ConfigMap) }

// CreateOrUpdate writes only what the mutate function changed, and nothing when it changed
// nothing.
func ExampleCreateOrUpdate() {
	srv := apitest.NewServer()
	defer srv.Close()
	api, _ := apiclient.New(srv.Config())
	defer api.Close()
	factory := informer.NewFactory(api)
	defer factory.Shutdown()
	c, _ := client.New(api, factory, client.Options{}) // a controller.Manager makes this one
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.Start(ctx)

	configMaps := client.TypedFor[*ConfigMap](c)
	want := map[string]string{"color": "blue"}
	mutate := func(cm *ConfigMap) error {
		cm.Data = want
		return nil
	}
	for range 2 {
		cm := &ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: "default", Name: "settings"}}
		_, result, err := controllerutil.CreateOrUpdate(ctx, configMaps, cm, mutate)
		fmt.Println(result, err)
	}
	want = map[string]string{"color": "red"}
	cm := &ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: "default", Name: "settings"}}
	_, result, err := controllerutil.CreateOrUpdate(ctx, configMaps, cm, mutate)
	fmt.Println(result, err)
	// Output:
	// created <nil>
	// unchanged <nil>
	// updated <nil>
}
