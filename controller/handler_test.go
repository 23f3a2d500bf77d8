package controller

import (
	"context"
	"slices"
	"testing"

	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/workqueue"
)

// obj returns an object with nothing but metadata (a ConfigMap: any object will do).
func obj(ns, name string, owners ...meta.OwnerReference) *testobj.ConfigMap {
	return &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: owners}}
}

func owner(apiVersion, kind, name string, controller bool) meta.OwnerReference {
	return meta.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: "uid-" + name, Controller: &controller}
}

func newQueue() Queue {
	return workqueue.NewRateLimiting[Request](nil, workqueue.Config{Priorities: true})
}

// drain takes everything queued, in the order Get hands it out.
func drain(q Queue) []Request {
	var out []Request
	for q.Len() > 0 {
		r, _ := q.Get()
		q.Done(r)
		out = append(out, r)
	}
	return out
}

func TestEnqueueRequestForObject(t *testing.T) {
	ctx := context.Background()
	h := EnqueueRequestForObject[*testobj.ConfigMap]()
	q := newQueue()
	defer q.ShutDown()
	h.Create(ctx, CreateEvent[*testobj.ConfigMap]{Object: obj("ns", "initial"), IsInInitialList: true}, q)
	h.Create(ctx, CreateEvent[*testobj.ConfigMap]{Object: obj("ns", "live")}, q)
	h.Update(ctx, UpdateEvent[*testobj.ConfigMap]{ObjectOld: obj("ns", "u"), ObjectNew: obj("ns", "u")}, q)
	h.Delete(ctx, DeleteEvent[*testobj.ConfigMap]{Object: obj("", "cluster-scoped"), DeleteStateUnknown: true}, q)
	h.Generic(ctx, GenericEvent[*testobj.ConfigMap]{Object: obj("ns", "generic")}, q)
	h.Create(ctx, CreateEvent[*testobj.ConfigMap]{}, q) // nil object: ignored
	h.Update(ctx, UpdateEvent[*testobj.ConfigMap]{ObjectOld: obj("ns", "old-only")}, q)
	got := drain(q)
	// Live events first; the initial-list add waits at low priority.
	want := []Request{{"ns", "live"}, {"ns", "u"}, {"", "cluster-scoped"}, {"ns", "generic"}, {"ns", "old-only"}, {"ns", "initial"}}
	if !slices.Equal(got, want) {
		t.Fatalf("enqueued %v, want %v", got, want)
	}
}

func TestEnqueueRequestForOwner(t *testing.T) {
	ctx := context.Background()
	child := obj("ns", "child",
		owner("example.com/v1", "Widget", "w1", true),
		owner("example.com/v1beta1", "Widget", "w2", false), // another version of the group: matches
		owner("other.io/v1", "Widget", "w3", true),          // another group
		owner("example.com/v1", "Gadget", "g1", true),       // another kind
		owner("not a version/x/y", "Widget", "bad", true),   // unparsable: ignored
	)
	for _, tc := range []struct {
		name string
		h    EventHandler[*testobj.ConfigMap]
		want []Request
	}{
		{"every matching owner", EnqueueRequestForOwner[*testobj.ConfigMap]("example.com", "Widget", OwnerOptions{}), []Request{{"ns", "w1"}, {"ns", "w2"}}},
		{"controller only", EnqueueRequestForOwner[*testobj.ConfigMap]("example.com", "Widget", OwnerOptions{OnlyController: true}), []Request{{"ns", "w1"}}},
		{"cluster-scoped owner", EnqueueRequestForOwner[*testobj.ConfigMap]("example.com", "Widget", OwnerOptions{OnlyController: true, ClusterScoped: true}), []Request{{"", "w1"}}},
		{"core group", EnqueueRequestForOwner[*testobj.ConfigMap]("", "ConfigMap", OwnerOptions{}), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, ev := range []string{"create", "delete", "generic"} {
				q := newQueue()
				switch ev {
				case "create":
					tc.h.Create(ctx, CreateEvent[*testobj.ConfigMap]{Object: child}, q)
				case "delete":
					tc.h.Delete(ctx, DeleteEvent[*testobj.ConfigMap]{Object: child}, q)
				case "generic":
					tc.h.Generic(ctx, GenericEvent[*testobj.ConfigMap]{Object: child}, q)
				}
				if got := drain(q); !slices.Equal(got, tc.want) {
					t.Errorf("%s: enqueued %v, want %v", ev, got, tc.want)
				}
				q.ShutDown()
			}
		})
	}

	// An update reaches the old and the new owner, once each.
	h := EnqueueRequestForOwner[*testobj.ConfigMap]("", "ConfigMap", OwnerOptions{OnlyController: true})
	q := newQueue()
	defer q.ShutDown()
	before := obj("ns", "c", owner("v1", "ConfigMap", "a", true))
	after := obj("ns", "c", owner("v1", "ConfigMap", "b", true))
	h.Update(ctx, UpdateEvent[*testobj.ConfigMap]{ObjectOld: before, ObjectNew: after}, q)
	h.Update(ctx, UpdateEvent[*testobj.ConfigMap]{ObjectOld: after, ObjectNew: after}, q)
	if got, want := drain(q), []Request{{"ns", "a"}, {"ns", "b"}}; !slices.Equal(got, want) {
		t.Fatalf("update enqueued %v, want %v", got, want)
	}
}

func TestEnqueueRequestsFromMapFunc(t *testing.T) {
	ctx := context.Background()
	// A namespace maps to every "watcher" object in it.
	calls := 0
	h := EnqueueRequestsFromMapFunc(func(_ context.Context, ns *testobj.ConfigMap) []Request {
		calls++
		return []Request{{Namespace: ns.Name, Name: "w1"}, {Namespace: ns.Name, Name: "w2"}}
	})
	q := newQueue()
	defer q.ShutDown()
	h.Create(ctx, CreateEvent[*testobj.ConfigMap]{Object: obj("", "a"), IsInInitialList: true}, q)
	h.Create(ctx, CreateEvent[*testobj.ConfigMap]{Object: obj("", "b")}, q)
	h.Update(ctx, UpdateEvent[*testobj.ConfigMap]{ObjectOld: obj("", "c"), ObjectNew: obj("", "c")}, q)
	h.Delete(ctx, DeleteEvent[*testobj.ConfigMap]{Object: obj("", "d")}, q)
	h.Generic(ctx, GenericEvent[*testobj.ConfigMap]{Object: obj("", "e")}, q)
	h.Delete(ctx, DeleteEvent[*testobj.ConfigMap]{}, q) // nil: not mapped
	got := drain(q)
	want := []Request{{"b", "w1"}, {"b", "w2"}, {"c", "w1"}, {"c", "w2"}, {"d", "w1"}, {"d", "w2"}, {"e", "w1"}, {"e", "w2"}, {"a", "w1"}, {"a", "w2"}}
	if !slices.Equal(got, want) {
		t.Fatalf("enqueued %v, want %v", got, want)
	}
	if calls != 6 { // the update maps old and new
		t.Fatalf("map function called %d times, want 6", calls)
	}
}

func TestEventHandlerFuncsIgnoreNil(t *testing.T) {
	var h EventHandlerFuncs[*testobj.ConfigMap]
	q := newQueue()
	defer q.ShutDown()
	h.Create(context.Background(), CreateEvent[*testobj.ConfigMap]{Object: obj("a", "b")}, q)
	h.Update(context.Background(), UpdateEvent[*testobj.ConfigMap]{}, q)
	h.Delete(context.Background(), DeleteEvent[*testobj.ConfigMap]{}, q)
	h.Generic(context.Background(), GenericEvent[*testobj.ConfigMap]{}, q)
	if q.Len() != 0 {
		t.Fatal("empty EventHandlerFuncs enqueued something")
	}
}

func TestIsNil(t *testing.T) {
	var p *testobj.ConfigMap
	var m map[string]int
	var i meta.Object
	for _, tc := range []struct {
		v    any
		want bool
	}{{p, true}, {m, true}, {nil, true}, {obj("", "x"), false}, {3, false}, {"", false}} {
		if got := isNil(tc.v); got != tc.want {
			t.Errorf("isNil(%#v) = %v", tc.v, got)
		}
	}
	if !isNil(i) || !isNil(p) {
		t.Error("typed nils")
	}
}

func TestResyncsEnqueuedWithLowPriority(t *testing.T) {
	ctx := context.Background()
	withRV := func(ns, name, rv string) *testobj.ConfigMap {
		o := obj(ns, name)
		o.ResourceVersion = rv
		return o
	}
	mapped := EnqueueRequestsFromMapFunc(func(_ context.Context, o *testobj.ConfigMap) []Request {
		return []Request{{Namespace: o.Namespace, Name: o.Name + "-owner"}}
	})
	for name, h := range map[string]EventHandler[*testobj.ConfigMap]{
		"EnqueueRequestForObject":    EnqueueRequestForObject[*testobj.ConfigMap](),
		"EnqueueRequestsFromMapFunc": mapped,
	} {
		t.Run(name, func(t *testing.T) {
			q := newQueue()
			defer q.ShutDown()
			h.Update(ctx, UpdateEvent[*testobj.ConfigMap]{ObjectOld: withRV("ns", "resync", "7"), ObjectNew: withRV("ns", "resync", "7")}, q)
			h.Update(ctx, UpdateEvent[*testobj.ConfigMap]{ObjectOld: withRV("ns", "change", "7"), ObjectNew: withRV("ns", "change", "8")}, q)
			got := drain(q)
			if len(got) != 2 || got[0].Name[:6] != "change" || got[1].Name[:6] != "resync" {
				t.Fatalf("enqueued %v, want the change before the resync", got)
			}
		})
	}
}

// TestQueueConfigDefaults: the controller's queue has priorities, aging and fairness across
// namespaces unless the options say otherwise.
func TestQueueConfigDefaults(t *testing.T) {
	cfg := queueConfig("c", Options{})
	if !cfg.Priorities || cfg.Aging != DefaultPriorityAging || cfg.Fairness == (workqueue.Fairness{}) {
		t.Fatalf("default queue config %+v: want priorities, aging %v and fairness", cfg, DefaultPriorityAging)
	}
	q := workqueue.NewRateLimiting[Request](nil, cfg)
	defer q.ShutDown()
	for _, r := range []Request{{"a", "1"}, {"a", "2"}, {"a", "3"}, {"b", "1"}} {
		q.Add(r)
	}
	if got, want := drain(q), []Request{{"a", "1"}, {"b", "1"}, {"a", "2"}, {"a", "3"}}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v (namespaces round robin)", got, want)
	}
	if cfg := queueConfig("c", Options{DisableFairness: true, PriorityAging: -1}); cfg.Fairness != (workqueue.Fairness{}) || cfg.Aging >= 0 {
		t.Fatalf("queue config %+v: want no fairness and no aging", cfg)
	}
	byName := queueConfig("c", Options{FairnessKey: func(r Request) string { return r.Name }})
	q2 := workqueue.NewRateLimiting[Request](nil, byName)
	defer q2.ShutDown()
	for _, r := range []Request{{"a", "x"}, {"b", "x"}, {"c", "y"}} {
		q2.Add(r)
	}
	if got, want := drain(q2), []Request{{"a", "x"}, {"c", "y"}, {"b", "x"}}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v (keyed by name)", got, want)
	}
}
