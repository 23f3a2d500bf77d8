package informer_test

import (
	"context"
	"fmt"
	"log"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/meta"
)

// ConfigMap declares only what the example reads: metadata and data.
type ConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
}

var configMapsGVR = meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// An informer from a factory, a handler, and a lister, against an in-process API server.
func Example() {
	srv := apitest.NewServer()
	defer srv.Close()
	if _, err := srv.Create("configmaps", map[string]any{
		"metadata": map[string]any{"namespace": "default", "name": "settings", "labels": map[string]any{"app": "shop"}},
		"data":     map[string]any{"color": "blue"},
	}); err != nil {
		log.Fatal(err)
	}
	client, err := apiclient.New(srv.Config())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	factory := informer.NewFactory(client)
	configMaps := informer.InformerFor[*ConfigMap](factory, configMapsGVR)
	reg, err := configMaps.AddEventHandler(informer.ResourceEventHandlerFuncs[*ConfigMap]{
		AddFunc: func(cm *ConfigMap, isInInitialList bool) {
			fmt.Printf("add %s/%s (initial list: %v)\n", cm.Namespace, cm.Name, isInInitialList)
		},
	})
	if err != nil {
		log.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx); err != nil {
		log.Fatal(err)
	}
	<-reg.Synced() // the handler has seen the whole initial list

	lister := configMaps.Lister()
	cm, err := lister.Namespace("default").Get("settings")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("color:", cm.Data["color"])
	fmt.Println("app=shop:", len(lister.List(labels.MustParse("app=shop"))))

	cancel()
	factory.Shutdown()
	// Output:
	// add default/settings (initial list: true)
	// color: blue
	// app=shop: 1
}

// A handler that falls behind gets its notifications coalesced by key instead of queued
// without bound; Backlog reports it.
func ExampleRegistration_Backlog() {
	srv := apitest.NewServer()
	defer srv.Close()
	client, err := apiclient.New(srv.Config())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	inf := informer.New(apiclient.NewResource[*ConfigMap](client, configMapsGVR), informer.Options[*ConfigMap]{})

	// A slow handler: its first call waits for release. Its buffer holds one notification.
	release, sawB := make(chan struct{}), make(chan struct{})
	var seen []string
	slow, _ := inf.AddEventHandlerWithOptions(informer.ResourceEventHandlerFuncs[*ConfigMap]{
		AddFunc: func(cm *ConfigMap, _ bool) {
			<-release
			seen = append(seen, "add "+cm.Name+"="+cm.Data["v"])
			if cm.Name == "b" {
				close(sawB)
			}
		},
		UpdateFunc: func(_, cm *ConfigMap) { seen = append(seen, "update "+cm.Name+"="+cm.Data["v"]) },
	}, informer.HandlerOptions{Name: "slow", BufferSize: 1})
	// A fast handler tells when the last update has been handed out.
	last := make(chan struct{})
	inf.AddEventHandler(informer.ResourceEventHandlerFuncs[*ConfigMap]{
		UpdateFunc: func(_, cm *ConfigMap) {
			if cm.Data["v"] == "100" {
				close(last)
			}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	go inf.Run(ctx)
	<-inf.Synced()

	for _, name := range []string{"a", "b"} {
		if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": name}, "data": map[string]any{"v": "0"}}); err != nil {
			log.Fatal(err)
		}
	}
	for i := 1; i <= 100; i++ {
		if _, err := srv.Mutate("configmaps", "default", "b", func(o apitest.Object) {
			o["data"] = map[string]any{"v": fmt.Sprint(i)}
		}); err != nil {
			log.Fatal(err)
		}
	}
	<-last
	fmt.Println("coalesced:", slow.Backlog().Coalesced)
	close(release)
	<-sawB
	fmt.Println(seen)
	cancel()
	<-inf.Done()
	// Output:
	// coalesced: 100
	// [add a=0 add b=100]
}

// An informer taken with Acquire stops when its last reference is released, and the next
// Acquire starts a fresh one.
func ExampleAcquire() {
	srv := apitest.NewServer()
	defer srv.Close()
	client, err := apiclient.New(srv.Config())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	factory := informer.NewFactory(client)
	defer factory.Shutdown()
	ctx := context.Background()

	a := informer.Acquire[*ConfigMap](factory, configMapsGVR)
	b := informer.Acquire[*ConfigMap](factory, configMapsGVR) // the same informer, shared
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx); err != nil {
		log.Fatal(err)
	}
	inf := a.Informer()
	fmt.Println("shared:", b.Informer() == inf)

	a.Release()
	fmt.Println("after one release, running:", !inf.IsStopped())
	if err := b.ReleaseAndWait(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("after the last release, stopped:", inf.IsStopped(), "informers held:", len(factory.Informers()))

	c := informer.Acquire[*ConfigMap](factory, configMapsGVR)
	defer c.Release()
	fmt.Println("a fresh informer:", c.Informer() != inf)
	// Output:
	// shared: true
	// after one release, running: true
	// after the last release, stopped: true informers held: 0
	// a fresh informer: true
}

// A ScopedInformer's namespaces change while it runs: an added namespace is listed and its
// objects arrive as adds, a removed one's objects leave as deletes, and the objects of the
// namespaces that stay are not delivered again.
func ExampleScopedInformer_SetScope() {
	srv := apitest.NewServer()
	defer srv.Close()
	for _, ns := range []string{"team-a", "team-b"} {
		if _, err := srv.Create("namespaces", map[string]any{"metadata": map[string]any{"name": ns}}); err != nil {
			log.Fatal(err)
		}
		if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": ns, "name": "settings"}}); err != nil {
			log.Fatal(err)
		}
	}
	client, err := apiclient.New(srv.Config())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	inf := informer.NewScoped(client, configMapsGVR, informer.Scope{Namespaces: []string{"team-a"}}, informer.Options[*ConfigMap]{})
	events := make(chan string, 10)
	if _, err := inf.AddEventHandler(informer.ResourceEventHandlerFuncs[*ConfigMap]{
		AddFunc:    func(cm *ConfigMap, _ bool) { events <- "add " + cm.Namespace + "/" + cm.Name },
		UpdateFunc: func(_, cm *ConfigMap) { events <- "update " + cm.Namespace + "/" + cm.Name },
		DeleteFunc: func(cm *ConfigMap, _ bool) { events <- "delete " + cm.Namespace + "/" + cm.Name },
	}); err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()
	fmt.Println(<-events)

	// team-b joins: only team-b is listed, and only its object is delivered.
	if err := inf.SetScope(ctx, informer.Scope{Namespaces: []string{"team-a", "team-b"}}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-events)

	// team-a leaves: its object goes as a delete; team-b's is not delivered again.
	if err := inf.SetScope(ctx, informer.Scope{Namespaces: []string{"team-b"}}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-events)
	fmt.Println("cached:", len(inf.Lister().List(labels.Everything())))

	cancel()
	<-done
	// Output:
	// add team-a/settings
	// add team-b/settings
	// delete team-a/settings
	// cached: 1
}

// Before acting on what the cache says, make it at least as new as a write someone made:
// WaitFresh returns once every change up to that resourceVersion is applied.
func ExampleInformer_WaitFresh() {
	srv := apitest.NewServer()
	defer srv.Close()
	client, err := apiclient.New(srv.Config())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	factory := informer.NewFactory(client)
	defer factory.Shutdown()
	configMaps := informer.InformerFor[*ConfigMap](factory, configMapsGVR)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx); err != nil {
		log.Fatal(err)
	}

	written, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "new"}})
	if err != nil {
		log.Fatal(err)
	}
	if err := configMaps.WaitFresh(ctx, written.ResourceVersion()); err != nil {
		log.Fatal(err)
	}
	_, err = configMaps.Lister().Namespace("default").Get("new")
	fmt.Println(configMaps.IsFresh(written.ResourceVersion()), err == nil)
	// Output: true true
}
