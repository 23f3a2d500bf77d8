package controller

import (
	"context"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/labels"
)

// testTimeout guards every wait; waits end on channels, never on the clock.
const testTimeout = 60 * time.Second

func newWidgetServer(t *testing.T) (*apitest.Server, *apiclient.Client) {
	t.Helper()
	srv := apitest.NewServer()
	t.Cleanup(srv.Close)
	if err := srv.AddResource(apitest.ResourceType{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets",
		Namespaced: true, StatusSubresource: true}); err != nil {
		t.Fatal(err)
	}
	client, err := apiclient.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	return srv, client
}

func widget(ns, name string) map[string]any {
	return map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": ns, "name": name}, "spec": map[string]any{"size": 1}}
}

func ownedConfigMap(ns, name string, owner apitest.Object, controller bool) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": ns, "name": name, "ownerReferences": []any{map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget", "name": owner.Name(), "uid": owner.UID(), "controller": controller}}},
		"data": map[string]any{"k": "v"}}
}

// next returns the next reconciled Request.
func next(t *testing.T, got <-chan Request) Request {
	t.Helper()
	select {
	case r := <-got:
		return r
	case <-time.After(testTimeout):
		t.Fatal("no reconcile")
		return Request{}
	}
}

func expect(t *testing.T, got <-chan Request, want Request, why string) {
	t.Helper()
	if r := next(t, got); r != want {
		t.Fatalf("%s: reconciled %v, want %v", why, r, want)
	}
}

func TestKindSourcesOwnersAndPredicatesAgainstAPIServer(t *testing.T) {
	srv, client := newWidgetServer(t)
	must := func(_ apitest.Object, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Existing state before anything starts: a widget with 30 children.
	pre, err := srv.Create("widgets", widget("default", "pre"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		must(srv.Create("configmaps", ownedConfigMap("default", "pre-"+string(rune('a'+i%26))+string(rune('a'+i/26)), pre, true)))
	}

	widgets := informer.New[*testobj.Widget](apiclient.NewResource[*testobj.Widget](client, testobj.WidgetGVR), informer.Options[*testobj.Widget]{Logger: quiet})
	cms := informer.New[*testobj.ConfigMap](apiclient.NewResource[*testobj.ConfigMap](client, testobj.ConfigMapGVR), informer.Options[*testobj.ConfigMap]{Logger: quiet})
	got := make(chan Request, 100)
	childrenSeen := make(chan int, 1)
	rec := ReconcilerFunc(func(_ context.Context, req Request) (Result, error) {
		if req.Name == "pre" {
			n := 0
			for _, cm := range cms.Lister().Namespace("default").List(labels.Everything()) {
				if len(cm.OwnerReferences) > 0 && cm.OwnerReferences[0].Name == "pre" {
					n++
				}
			}
			select {
			case childrenSeen <- n:
			default:
			}
		}
		got <- req
		return Result{}, nil
	})
	c, err := New("widgets", rec, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Watch(FromInformer[*testobj.Widget](widgets, EnqueueRequestForObject[*testobj.Widget](), GenerationChanged[*testobj.Widget]())); err != nil {
		t.Fatal(err)
	}
	if err := c.Watch(FromInformer[*testobj.ConfigMap](cms, EnqueueRequestForOwner[*testobj.ConfigMap]("example.com", "Widget", OwnerOptions{OnlyController: true}))); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	infDone := make(chan struct{}, 2)
	go func() { widgets.Run(ctx); infDone <- struct{}{} }()
	go func() { cms.Run(ctx); infDone <- struct{}{} }()
	ctlDone := make(chan error, 1)
	go func() { ctlDone <- c.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-ctlDone; err != nil {
			t.Error(err)
		}
		<-infDone
		<-infDone
	}()

	// The initial list: "pre" once (31 events collapse into one Request), with every child
	// already in the cache.
	expect(t, got, Request{"default", "pre"}, "initial list")
	if n := <-childrenSeen; n != 30 {
		t.Fatalf("first reconcile saw %d children in the cache, want all 30", n)
	}

	// A new widget.
	w1, err := srv.Create("widgets", widget("default", "w1"))
	if err != nil {
		t.Fatal(err)
	}
	expect(t, got, Request{"default", "w1"}, "widget created")

	// A status write keeps the generation: GenerationChanged drops it. The next widget event
	// (same informer, so delivered after it) proves nothing was enqueued for w1 meanwhile.
	must(srv.Mutate("widgets", "default", "w1", func(o apitest.Object) {}))
	st := apitest.Object(widget("default", "w1"))
	st["status"] = map[string]any{"ready": true}
	must(srv.UpdateStatus("widgets", st))
	if o, _ := srv.Get("widgets", "default", "w1"); o.Generation() != 1 {
		t.Fatalf("status write changed the generation to %d", o.Generation())
	}
	must(srv.Create("widgets", widget("default", "barrier-1")))
	expect(t, got, Request{"default", "barrier-1"}, "status-only update must be filtered")

	// A spec change bumps the generation.
	must(srv.Mutate("widgets", "default", "w1", func(o apitest.Object) { o["spec"] = map[string]any{"size": 2} }))
	expect(t, got, Request{"default", "w1"}, "spec change")

	// Children: a controller-owned ConfigMap enqueues its owner.
	must(srv.Create("configmaps", ownedConfigMap("default", "c1", w1, true)))
	expect(t, got, Request{"default", "w1"}, "owned child created")
	// A reference that is not the controller is ignored (barrier: a child of barrier-1).
	must(srv.Create("configmaps", ownedConfigMap("default", "c2", w1, false)))
	b1, _ := srv.Get("widgets", "default", "barrier-1")
	must(srv.Create("configmaps", ownedConfigMap("default", "barrier-child", b1, true)))
	expect(t, got, Request{"default", "barrier-1"}, "non-controller owner reference must be ignored")
	// Child updated and deleted.
	must(srv.Mutate("configmaps", "default", "c1", func(o apitest.Object) { o["data"] = map[string]any{"k": "v2"} }))
	expect(t, got, Request{"default", "w1"}, "owned child updated")
	if err := srv.Delete("configmaps", "default", "c1"); err != nil {
		t.Fatal(err)
	}
	expect(t, got, Request{"default", "w1"}, "owned child deleted")
	// The owner itself deleted.
	if err := srv.Delete("widgets", "default", "w1"); err != nil {
		t.Fatal(err)
	}
	expect(t, got, Request{"default", "w1"}, "widget deleted")
}

func TestKindSourceNames(t *testing.T) {
	srv, client := newWidgetServer(t)
	_ = srv
	inf := informer.New[*testobj.Widget](apiclient.NewResource[*testobj.Widget](client, testobj.WidgetGVR), informer.Options[*testobj.Widget]{Name: "widgets", Logger: quiet})
	src := FromInformer[*testobj.Widget](inf, EnqueueRequestForObject[*testobj.Widget]())
	if s := describe(src); s != "informer widgets" {
		t.Fatalf("describe = %q", s)
	}
	if src.HasSynced() {
		t.Fatal("synced before running")
	}
	bad := FromInformer[*testobj.Widget](nil, EnqueueRequestForObject[*testobj.Widget]())
	if err := bad.Run(context.Background(), newQueue()); err == nil {
		t.Fatal("Kind without informer ran")
	}
}
