package controller_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/events"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// ConfigMap declares the fields the example reads. Registered once, as the built-in kind
// ConfigMap, it is watched, read and written without a resource named anywhere else.
type ConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
}

var _ = kinds.MustRegister[*ConfigMap](kinds.ConfigMap)

// A controller of ConfigMaps: the Builder watches them with the Manager's shared informer,
// and the reconciler reads each one through the Manager's client (from that cache).
func Example() {
	srv := apitest.NewServer()
	defer srv.Close()
	_, _ = srv.Create("configmaps", map[string]any{
		"metadata": map[string]any{"namespace": "default", "name": "hello"},
		"data":     map[string]any{"greeting": "world"},
	})

	mgr, err := controller.NewManager(srv.Config(), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	configMaps := client.TypedFor[*ConfigMap](mgr.Client())
	ctx, cancel := context.WithCancel(context.Background())
	err = controller.NewBuilder(mgr, "greeter").
		For(controller.Primary[*ConfigMap]()).
		Complete(controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
			cm, err := configMaps.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
			if meta.IsNotFound(err) {
				return controller.Result{}, nil // deleted meanwhile: nothing to do
			} else if err != nil {
				return controller.Result{}, err // retried with backoff
			}
			fmt.Printf("reconcile %s: greeting=%s\n", req, cm.Data["greeting"])
			cancel() // one is enough for the example
			return controller.Result{}, nil
		}))
	if err != nil {
		panic(err)
	}
	fmt.Println("Start:", mgr.Start(ctx))
	// Output:
	// reconcile default/hello: greeting=world
	// Start: <nil>
}

// A controller made with New watches a Kind source: the Manager's shared informer of the
// registered type, here read directly through its Lister.
func ExampleKind() {
	srv := apitest.NewServer()
	defer srv.Close()
	_, _ = srv.Create("configmaps", map[string]any{
		"metadata": map[string]any{"namespace": "default", "name": "hello"},
		"data":     map[string]any{"greeting": "world"},
	})

	mgr, err := controller.NewManager(srv.Config(), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	configMaps, err := controller.InformerFor[*ConfigMap](mgr)
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c, err := controller.New("greeter", controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		cm, err := configMaps.Lister().Get(req.Namespace, req.Name)
		if meta.IsNotFound(err) {
			return controller.Result{}, nil // deleted meanwhile: nothing to do
		}
		if err != nil {
			return controller.Result{}, err // retried with backoff
		}
		fmt.Printf("reconcile %s: greeting=%s\n", req, cm.Data["greeting"])
		cancel() // one is enough for the example
		return controller.Result{}, nil
	}), controller.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	if err := c.Watch(controller.Kind(mgr, controller.EnqueueRequestForObject[*ConfigMap]())); err != nil {
		panic(err)
	}
	if err := mgr.Add(c); err != nil {
		panic(err)
	}
	fmt.Println("Start:", mgr.Start(ctx))
	// Output:
	// reconcile default/hello: greeting=world
	// Start: <nil>
}

// A Channel source turns events from outside the API server into reconciles.
func ExampleChannel() {
	events := make(chan controller.GenericEvent[controller.Request], 1)
	ctx, cancel := context.WithCancel(context.Background())
	c, _ := controller.New("external", controller.ReconcilerFunc(func(_ context.Context, req controller.Request) (controller.Result, error) {
		fmt.Println("reconcile", req)
		cancel()
		return controller.Result{}, nil
	}), controller.Options{Logger: slog.New(slog.DiscardHandler)})
	enqueue := controller.EventHandlerFuncs[controller.Request]{
		GenericFunc: func(_ context.Context, e controller.GenericEvent[controller.Request], q controller.Queue) {
			q.Add(e.Object)
		},
	}
	_ = c.Watch(controller.Channel(events, enqueue))
	events <- controller.GenericEvent[controller.Request]{Object: controller.Request{Namespace: "ns", Name: "from-webhook"}}
	fmt.Println("Start:", c.Start(ctx))
	// Output:
	// reconcile ns/from-webhook
	// Start: <nil>
}

// Predicates compose: react to spec changes or to label changes, never to resyncs.
func ExampleOr() {
	p := controller.And(
		controller.ResourceVersionChanged[*ConfigMap](),
		controller.Or(controller.GenerationChanged[*ConfigMap](), controller.LabelsChanged[*ConfigMap]()),
	)
	old := &ConfigMap{ObjectMeta: meta.ObjectMeta{ResourceVersion: "1", Labels: map[string]string{"a": "1"}}}
	relabelled := &ConfigMap{ObjectMeta: meta.ObjectMeta{ResourceVersion: "2", Labels: map[string]string{"a": "2"}}}
	touched := &ConfigMap{ObjectMeta: meta.ObjectMeta{ResourceVersion: "3", Labels: map[string]string{"a": "1"}}}
	fmt.Println(p.Update(controller.UpdateEvent[*ConfigMap]{ObjectOld: old, ObjectNew: relabelled}))
	fmt.Println(p.Update(controller.UpdateEvent[*ConfigMap]{ObjectOld: old, ObjectNew: touched}))
	fmt.Println(p.Update(controller.UpdateEvent[*ConfigMap]{ObjectOld: old, ObjectNew: old}))
	// Output:
	// true
	// false
	// false
}

// A reconciler with the Manager's kit: it reads through the Manager's client (a deep copy from
// the cache that sees its own earlier writes), writes with it, and records an event; a
// Request that keeps failing is dropped after MaxRetries.
func ExampleManager_Client() {
	srv := apitest.NewServer()
	defer srv.Close()
	_, _ = srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "hello"}})

	mgr, err := controller.NewManager(srv.Config(), controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	configMaps := client.TypedFor[*ConfigMap](mgr.Client())
	recorder := mgr.EventRecorderFor("stamper")

	done := make(chan struct{})
	c, err := controller.New("stamper", controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		cm, err := configMaps.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
		if meta.IsNotFound(err) {
			return controller.Result{}, nil
		}
		if err != nil {
			return controller.Result{}, err
		}
		if cm.Data["stamped"] == "yes" {
			close(done)
			return controller.Result{}, nil
		}
		cm.Data = map[string]string{"stamped": "yes"} // a copy: the cache is untouched
		if _, err := configMaps.Update(ctx, cm, client.UpdateOptions{}); err != nil {
			return controller.Result{}, err
		}
		recorder.Event(cm, controller.EventTypeNormal, "Stamped", "stamped the ConfigMap")
		return controller.Result{Requeue: true}, nil // the next read sees the update
	}), controller.Options{MaxRetries: 15})
	if err != nil {
		panic(err)
	}
	_ = c.Watch(controller.Kind(mgr, controller.EnqueueRequestForObject[*ConfigMap]()))
	_ = mgr.Add(c)

	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- mgr.Start(ctx) }()
	<-done
	cancel()
	fmt.Println("Start:", <-stopped) // the queued events are written before Start returns
	evs, _, _ := srv.List("events", "default")
	var ev events.Event
	_ = evs[0].Into(&ev)
	fmt.Println(ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.Reason, ev.Source.Component)
	// Output:
	// Start: <nil>
	// ConfigMap hello Stamped stamper
}
