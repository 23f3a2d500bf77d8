package client_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// ConfigMap declares the fields of a ConfigMap the program reads.
type ConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
}

func init() { kinds.MustRegister[*ConfigMap](kinds.ConfigMap) }

func Example() {
	srv := apitest.NewServer()
	defer srv.Close()
	api, err := apiclient.New(srv.Config())
	if err != nil {
		panic(err)
	}
	defer api.Close()
	factory := informer.NewFactory(api)
	defer factory.Shutdown()
	c, err := client.New(api, factory, client.Options{}) // a controller.Manager makes this one
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.Start(ctx)

	configMaps := client.TypedFor[*ConfigMap](c)
	cm := &ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: "default", Name: "settings"}, Data: map[string]string{"color": "blue"}}
	if _, err := configMaps.Create(ctx, cm, client.CreateOptions{}); err != nil {
		panic(err)
	}
	// The first read starts the ConfigMap informer; it sees the write above.
	got, err := configMaps.Get(ctx, "default", "settings", client.GetOptions{})
	if err != nil {
		panic(err)
	}
	got.Data["color"] = "red" // a copy: the cache is unchanged
	got, err = configMaps.Update(ctx, got, client.UpdateOptions{})
	if err != nil {
		panic(err)
	}
	again, _ := configMaps.Get(ctx, "default", "settings", client.GetOptions{})
	fmt.Println(again.Data["color"], again.ResourceVersion == got.ResourceVersion)
	// Output: red true
}

// A patch made from two objects: what changed, with the lock, so that a change made by
// someone else since the read is a 409 Conflict instead of being overwritten.
func ExampleTyped_PatchFrom() {
	srv := apitest.NewServer()
	defer srv.Close()
	_, _ = srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "settings"},
		"data": map[string]any{"color": "blue", "size": "L"}})
	api, _ := apiclient.New(srv.Config())
	defer api.Close()
	factory := informer.NewFactory(api)
	defer factory.Shutdown()
	c, _ := client.New(api, factory, client.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.Start(ctx)
	configMaps := client.TypedFor[*ConfigMap](c)

	read, _ := configMaps.Get(ctx, "default", "settings", client.GetOptions{})
	changed := client.DeepCopy(read)
	changed.Data["color"] = "red"
	patch, _ := configMaps.MakePatch(client.MergePatchType, read, changed, client.PatchFromOptions{OptimisticLock: true})
	fmt.Println(string(patch) == `{"data":{"color":"red"},"metadata":{"resourceVersion":"`+read.ResourceVersion+`"}}`)

	_, _ = srv.Mutate("configmaps", "default", "settings", func(o apitest.Object) { o["data"].(map[string]any)["size"] = "XL" })
	_, err := configMaps.PatchFrom(ctx, client.MergePatchType, read, changed, client.PatchFromOptions{OptimisticLock: true})
	fmt.Println(meta.IsConflict(err)) // read again, and reconcile from what is there now
	// Output:
	// true
	// true
}

// A delete decided from the cache: WaitFresh makes the cache catch up with a known
// resourceVersion first, and DeleteGuarded refuses to act on an object the server has
// changed since (a live read when the cache is staler than the bound, and preconditions).
func ExampleTyped_DeleteGuarded() {
	srv := apitest.NewServer()
	defer srv.Close()
	api, err := apiclient.New(srv.Config())
	if err != nil {
		panic(err)
	}
	defer api.Close()
	factory := informer.NewFactory(api)
	defer factory.Shutdown()
	c, err := client.New(api, factory, client.Options{})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.Start(ctx)

	configMaps := client.TypedFor[*ConfigMap](c)
	if _, err := configMaps.Create(ctx, &ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: "default", Name: "old"}}, client.CreateOptions{}); err != nil {
		panic(err)
	}
	cached, _ := configMaps.Get(ctx, "default", "old", client.GetOptions{})
	// Someone else changes it; the decision to delete was taken from the older version.
	changed, err := srv.Update("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "old"}, "data": map[string]any{"keep": "yes"}})
	if err != nil {
		panic(err)
	}
	err = configMaps.DeleteGuarded(ctx, cached, 0, client.DeleteOptions{})
	fmt.Println(errors.Is(err, client.ErrStaleObject) || meta.IsConflict(err))

	// Wait until the cache shows the change, decide again from it.
	if err := configMaps.WaitFresh(ctx, changed.ResourceVersion()); err != nil {
		panic(err)
	}
	fresh, _ := configMaps.Get(ctx, "default", "old", client.GetOptions{})
	fmt.Println(fresh.Data["keep"])
	// Output:
	// true
	// yes
}
