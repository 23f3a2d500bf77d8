package controller

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// widgetManager returns a Manager whose registry knows Widget.
func widgetManager(t *testing.T, srv *apitest.Server) *Manager {
	t.Helper()
	reg := testobj.NewRegistry()
	return newManager(t, srv, ManagerOptions{Kinds: reg})
}

func recordingReconciler(got chan<- Request) Reconciler {
	return ReconcilerFunc(func(_ context.Context, req Request) (Result, error) {
		got <- req
		return Result{}, nil
	})
}

func names[T meta.Object](objs []T) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	sort.Strings(out)
	return out
}

// For enqueues the primary object; Owns enqueues the controller owner of a child, and not the
// owners of plain owner references; ChildrenOf lists an owner's children from the cache.
func TestBuilderForOwnsChildrenOf(t *testing.T) {
	srv, _ := newWidgetServer(t)
	m := widgetManager(t, srv)
	got := make(chan Request, 100)
	children := Owned[*testobj.ConfigMap]()
	ctl, err := NewBuilder(m, "widgets").
		For(Primary[*testobj.Widget]()).
		Owns(children).
		WithOptions(Options{Logger: quiet}).
		Build(recordingReconciler(got))
	if err != nil {
		t.Fatal(err)
	}
	if ctl.Name() != "widgets" {
		t.Fatalf("name %q", ctl.Name())
	}
	stop, _ := startManager(t, m)
	defer stop()
	waitClosed(t, ctl.Started(), "the controller")

	a, err := srv.Create("widgets", widget("default", "a"))
	if err != nil {
		t.Fatal(err)
	}
	expect(t, got, Request{Namespace: "default", Name: "a"}, "the primary's create")

	// A child that names "x" in a plain owner reference, then one controlled by "a": the
	// informer delivers in order and one worker reconciles in order, so once "a" is
	// reconciled the first child's event has been handled too, and it enqueued nothing.
	x := apitest.Object{"metadata": map[string]any{"name": "x", "uid": "uid-x"}}
	if _, err := srv.Create("configmaps", ownedConfigMap("default", "plain", x, false)); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Create("configmaps", ownedConfigMap("default", "child-1", a, true)); err != nil {
		t.Fatal(err)
	}
	expect(t, got, Request{Namespace: "default", Name: "a"}, "the child's owner")
	if _, err := srv.Create("configmaps", ownedConfigMap("default", "child-2", a, true)); err != nil {
		t.Fatal(err)
	}
	expect(t, got, Request{Namespace: "default", Name: "a"}, "the second child's owner")

	if children.Informer() == nil {
		t.Fatal("Owned has no informer after Build")
	}
	kids, err := children.ChildrenOfUID(a.UID())
	if err != nil {
		t.Fatal(err)
	}
	if n := names(kids); !slices.Equal(n, []string{"child-1", "child-2"}) {
		t.Fatalf("ChildrenOf = %v", n)
	}
	if kids, _ := children.ChildrenOfUID("uid-x"); len(kids) != 0 {
		t.Fatalf("a plain owner reference was indexed: %v", names(kids))
	}
	// The same index through the Manager's client.
	viaClient, err := client.TypedFor[*testobj.ConfigMap](m.Client()).List(context.Background(),
		client.ListOptions{Index: IndexByControllerUID, IndexValue: a.UID()})
	if err != nil {
		t.Fatal(err)
	}
	if n := names(viaClient); !slices.Equal(n, []string{"child-1", "child-2"}) {
		t.Fatalf("client List by IndexByControllerUID = %v", n)
	}

	// Deleting a child enqueues its owner.
	if err := srv.Delete("configmaps", "default", "child-1"); err != nil {
		t.Fatal(err)
	}
	expect(t, got, Request{Namespace: "default", Name: "a"}, "the deleted child's owner")
	kids, _ = children.ChildrenOfUID(a.UID())
	if n := names(kids); !slices.Equal(n, []string{"child-2"}) {
		t.Fatalf("ChildrenOf after the delete = %v", n)
	}
}

// WithEventFilter applies to every input, after the input's own predicates.
func TestBuilderEventFilter(t *testing.T) {
	srv, _ := newWidgetServer(t)
	m := widgetManager(t, srv)
	got := make(chan Request, 100)
	skip := NewPredicateFuncs(func(o meta.Object) bool { return o.GetLabels()["skip"] != "true" })
	_, err := NewBuilder(m, "filtered").
		For(Primary[*testobj.Widget]()).
		Owns(Owned[*testobj.ConfigMap]()).
		WithEventFilter(skip).
		WithOptions(Options{Logger: quiet}).
		Build(recordingReconciler(got))
	if err != nil {
		t.Fatal(err)
	}
	stop, _ := startManager(t, m)
	defer stop()
	skipped := widget("default", "skipped")
	skipped["metadata"].(map[string]any)["labels"] = map[string]any{"skip": "true"}
	if _, err := srv.Create("widgets", skipped); err != nil {
		t.Fatal(err)
	}
	b, err := srv.Create("widgets", widget("default", "b"))
	if err != nil {
		t.Fatal(err)
	}
	expect(t, got, Request{Namespace: "default", Name: "b"}, "the unfiltered widget")
	child := ownedConfigMap("default", "skipped-child", b, true)
	child["metadata"].(map[string]any)["labels"] = map[string]any{"skip": "true"}
	if _, err := srv.Create("configmaps", child); err != nil {
		t.Fatal(err)
	}
	// A widget created after the filtered child: its reconcile comes after the child's event.
	if _, err := srv.Create("widgets", widget("default", "c")); err != nil {
		t.Fatal(err)
	}
	expect(t, got, Request{Namespace: "default", Name: "c"}, "the next widget")
}

// Build's errors are typed, and a failed Build adds no controller.
func TestBuilderErrors(t *testing.T) {
	srv, _ := newWidgetServer(t)
	r := ReconcilerFunc(func(context.Context, Request) (Result, error) { return Result{}, nil })

	t.Run("unregistered primary", func(t *testing.T) {
		m := newManager(t, srv, ManagerOptions{Kinds: kinds.NewRegistry()})
		_, err := NewBuilder(m, "w").For(Primary[*testobj.Widget]()).Owns(Owned[*testobj.ConfigMap]()).Build(r)
		if !errors.Is(err, kinds.ErrNotRegistered) {
			t.Fatalf("err = %v, want kinds.ErrNotRegistered", err)
		}
		if len(m.runnables) != 0 {
			t.Fatal("a failed Build added a controller")
		}
	})
	t.Run("registered as another resource than the one given", func(t *testing.T) {
		reg := kinds.NewRegistry()
		wrong := testobj.WidgetInfo
		wrong.Group = "examples.com" // a typo: owner references would name examples.com/v1
		if err := reg.Register(reflect.TypeFor[*testobj.Widget](), wrong); err != nil {
			t.Fatal(err)
		}
		m := newManager(t, srv, ManagerOptions{Kinds: reg})
		_, err := NewBuilder(m, "w").For(PrimaryWithOptions(PrimaryOptions[*testobj.Widget]{Resource: testobj.WidgetGVR})).Build(r)
		var km *KindMismatchError
		if !errors.Is(err, ErrKindMismatch) || !errors.As(err, &km) || km.Registered != wrong || km.Watched != testobj.WidgetGVR {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("built-in child registered as another kind than the resource given", func(t *testing.T) {
		reg := kinds.NewRegistry()
		if err := reg.Register(reflect.TypeFor[*testobj.Widget](), testobj.WidgetInfo); err != nil {
			t.Fatal(err)
		}
		if err := reg.Register(reflect.TypeFor[*testobj.ConfigMap](), kinds.Secret); err != nil {
			t.Fatal(err)
		}
		m := newManager(t, srv, ManagerOptions{Kinds: reg})
		_, err := NewBuilder(m, "w").For(Primary[*testobj.Widget]()).
			Owns(OwnedWithOptions(OwnedOptions[*testobj.ConfigMap]{Resource: testobj.ConfigMapGVR})).Build(r)
		if !errors.Is(err, ErrKindMismatch) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("Owns without For", func(t *testing.T) {
		m := widgetManager(t, srv)
		if _, err := NewBuilder(m, "w").Owns(Owned[*testobj.ConfigMap]()).Build(r); !errors.Is(err, ErrNoPrimary) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("no sources", func(t *testing.T) {
		m := widgetManager(t, srv)
		if err := NewBuilder(m, "w").Complete(r); !errors.Is(err, ErrNoSources) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("built twice, input reused", func(t *testing.T) {
		m := widgetManager(t, srv)
		p := Primary[*testobj.Widget]()
		b := NewBuilder(m, "w").For(p)
		if _, err := b.Build(r); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Build(r); !errors.Is(err, ErrAlreadyBuilt) {
			t.Fatalf("second Build: %v", err)
		}
		if _, err := NewBuilder(m, "w2").For(p).Build(r); !errors.Is(err, ErrAlreadyBuilt) {
			t.Fatalf("input reused: %v", err)
		}
	})
	t.Run("ChildrenOf before Build", func(t *testing.T) {
		if _, err := Owned[*testobj.ConfigMap]().ChildrenOfUID("u"); !errors.Is(err, ErrNotBuilt) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("For twice", func(t *testing.T) {
		m := widgetManager(t, srv)
		if _, err := NewBuilder(m, "w").For(Primary[*testobj.Widget]()).For(Primary[*testobj.Widget]()).Build(r); err == nil {
			t.Fatal("no error")
		}
	})
}

// Two controllers owning the same child type share its informer and its index.
func TestBuilderOwnsSharedIndex(t *testing.T) {
	srv, _ := newWidgetServer(t)
	m := widgetManager(t, srv)
	r := ReconcilerFunc(func(context.Context, Request) (Result, error) { return Result{}, nil })
	first, second := Owned[*testobj.ConfigMap](), Owned[*testobj.ConfigMap]()
	if _, err := NewBuilder(m, "one").For(Primary[*testobj.Widget]()).Owns(first).WithOptions(Options{Logger: quiet}).Build(r); err != nil {
		t.Fatal(err)
	}
	if _, err := NewBuilder(m, "two").For(Primary[*testobj.Widget]()).Owns(second).WithOptions(Options{Logger: quiet}).Build(r); err != nil {
		t.Fatal(err)
	}
	if first.Informer() != second.Informer() {
		t.Fatal("two informers for one type")
	}
	stop, _ := startManager(t, m)
	defer stop()
	a, err := srv.Create("widgets", widget("default", "a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Create("configmaps", ownedConfigMap("default", "c", a, true)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := first.Informer().WaitUntil(ctx, func() bool {
		kids, _ := second.ChildrenOfUID(a.UID())
		return len(kids) == 1
	}); err != nil {
		t.Fatalf("the child never showed in ChildrenOf: %v", err)
	}
}

// A registered kind or scope that contradicts the server's discovery fails the controller at
// Start, instead of owner references that name nothing.
func TestBuilderKindCheckedAgainstDiscovery(t *testing.T) {
	srv, _ := newWidgetServer(t)
	for _, c := range []struct {
		name   string
		change func(*kinds.Info)
	}{
		{"kind", func(i *kinds.Info) { i.Kind = "Widgets" }},
		{"scope", func(i *kinds.Info) { i.Namespaced = false }},
	} {
		t.Run(c.name, func(t *testing.T) {
			wrong := testobj.WidgetInfo
			c.change(&wrong)
			reg := kinds.NewRegistry()
			if err := reg.Register(reflect.TypeFor[*testobj.Widget](), wrong); err != nil {
				t.Fatal(err)
			}
			m := newManager(t, srv, ManagerOptions{Kinds: reg})
			r := ReconcilerFunc(func(context.Context, Request) (Result, error) { return Result{}, nil })
			if _, err := NewBuilder(m, "w").For(Primary[*testobj.Widget]()).Owns(Owned[*testobj.ConfigMap]()).
				WithOptions(Options{Logger: quiet}).Build(r); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			err := m.Start(ctx)
			var km *KindMismatchError
			if !errors.Is(err, ErrKindMismatch) || !errors.As(err, &km) || km.Served == nil || km.Served.Kind != "Widget" {
				t.Fatalf("Start: %v", err)
			}
		})
	}
}

// recordingObserver records what Owns reports.
type recordingObserver struct {
	mu      sync.Mutex
	created []Request
	deleted []string
}

func (o *recordingObserver) CreationObserved(owner Request) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.created = append(o.created, owner)
}

func (o *recordingObserver) DeletionObserved(owner Request, uid string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.deleted = append(o.deleted, owner.String()+" "+uid)
}

// Expectations see a child's creation and deletion even when a predicate (of the input or of
// WithEventFilter) drops the event: the reconcile must not wait for an event it filtered.
func TestBuilderOwnsObservesBeforePredicates(t *testing.T) {
	srv, _ := newWidgetServer(t)
	m := widgetManager(t, srv)
	obs := &recordingObserver{}
	got := make(chan Request, 100)
	dropChildren := NewPredicateFuncs(func(o meta.Object) bool { return o.GetLabels()["child"] != "true" })
	_, err := NewBuilder(m, "observed").
		For(Primary[*testobj.Widget]()).
		Owns(OwnedWithOptions(OwnedOptions[*testobj.ConfigMap]{Expectations: obs})).
		WithEventFilter(dropChildren).
		WithOptions(Options{Logger: quiet}).
		Build(recordingReconciler(got))
	if err != nil {
		t.Fatal(err)
	}
	stop, _ := startManager(t, m)
	defer stop()
	a, err := srv.Create("widgets", widget("default", "a"))
	if err != nil {
		t.Fatal(err)
	}
	expect(t, got, Request{Namespace: "default", Name: "a"}, "the widget")
	child := ownedConfigMap("default", "c", a, true)
	child["metadata"].(map[string]any)["labels"] = map[string]any{"child": "true"}
	c, err := srv.Create("configmaps", child)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Delete("configmaps", "default", "c"); err != nil {
		t.Fatal(err)
	}
	// Uncontrolled ConfigMaps are not reported.
	if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "free"}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(testTimeout)
	for {
		obs.mu.Lock()
		created, deleted := slices.Clone(obs.created), slices.Clone(obs.deleted)
		obs.mu.Unlock()
		if len(deleted) > 0 {
			if !slices.Equal(created, []Request{{Namespace: "default", Name: "a"}}) || !slices.Equal(deleted, []string{"default/a " + c.UID()}) {
				t.Fatalf("observed creations %v, deletions %v", created, deleted)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no deletion observed (creations %v)", created)
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case r := <-got:
		t.Fatalf("a filtered child enqueued %v", r)
	default:
	}
}

// Watches maps another type's events to Requests; WatchesSource adds a ready-made source.
func TestBuilderWatches(t *testing.T) {
	srv, _ := newWidgetServer(t)
	m := widgetManager(t, srv)
	got := make(chan Request, 100)
	generic := make(chan GenericEvent[*testobj.Widget], 1)
	toWidget := EnqueueRequestsFromMapFunc(func(_ context.Context, cm *testobj.ConfigMap) []Request {
		if w := cm.Labels["widget"]; w != "" {
			return []Request{{Namespace: cm.Namespace, Name: w}}
		}
		return nil
	})
	_, err := NewBuilder(m, "watcher").
		For(Primary[*testobj.Widget]()).
		Watches(Watched(toWidget)).
		WatchesSource(Channel(generic, EnqueueRequestForObject[*testobj.Widget]())).
		WithOptions(Options{Logger: quiet}).
		Build(recordingReconciler(got))
	if err != nil {
		t.Fatal(err)
	}
	stop, _ := startManager(t, m)
	defer stop()
	if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "cfg",
		"labels": map[string]any{"widget": "mapped"}}}); err != nil {
		t.Fatal(err)
	}
	expect(t, got, Request{Namespace: "default", Name: "mapped"}, "the mapped Request")
	generic <- GenericEvent[*testobj.Widget]{Object: &testobj.Widget{ObjectMeta: meta.ObjectMeta{Namespace: "ext", Name: "poked"}}}
	expect(t, got, Request{Namespace: "ext", Name: "poked"}, "the channel's Request")
}
