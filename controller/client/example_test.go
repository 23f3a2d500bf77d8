package client_test

import (
	"context"
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
	if _, err := configMaps.Create(ctx, cm, apiclient.CreateOptions{}); err != nil {
		panic(err)
	}
	// The first read starts the ConfigMap informer; it sees the write above.
	got, err := configMaps.Get(ctx, "default", "settings", client.GetOptions{})
	if err != nil {
		panic(err)
	}
	got.Data["color"] = "red" // a copy: the cache is unchanged
	got, err = configMaps.Update(ctx, got, apiclient.UpdateOptions{})
	if err != nil {
		panic(err)
	}
	again, _ := configMaps.Get(ctx, "default", "settings", client.GetOptions{})
	fmt.Println(again.Data["color"], again.ResourceVersion == got.ResourceVersion)
	// Output: red true
}
