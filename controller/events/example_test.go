package events_test

import (
	"context"
	"fmt"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller/events"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// ConfigMap is a cached object: it has no apiVersion or kind of its own.
type ConfigMap struct {
	meta.ObjectMeta `json:"metadata"`
}

func init() { kinds.MustRegister[*ConfigMap](kinds.ConfigMap) }

func Example() {
	srv := apitest.NewServer()
	defer srv.Close()
	client, err := apiclient.New(srv.Config())
	if err != nil {
		panic(err)
	}
	defer client.Close()

	b, err := events.NewBroadcaster(client, events.Options{})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- b.Run(ctx) }()

	rec := b.NewRecorder("settings-controller")
	cm := &ConfigMap{meta.ObjectMeta{Namespace: "default", Name: "settings", UID: "7c1e"}}
	for range 3 {
		rec.Eventf(cm, events.Normal, "Synced", "copied to %d namespaces", 2)
	}

	stop() // Run writes what is queued, then returns
	if err := <-done; err != nil {
		panic(err)
	}
	objs, _, _ := srv.List("events", "default")
	var ev events.Event
	_ = objs[0].Into(&ev)
	fmt.Println(len(objs), ev.InvolvedObject.Kind, ev.Reason, ev.Message, ev.Count)
	// Output: 1 ConfigMap Synced copied to 2 namespaces 3
}
