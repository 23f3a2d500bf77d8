package expectations_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/controllerutil"
	"github.com/informerkit/informerkit/controller/expectations"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// Tests of expectations in a controller: a ReplicaSet-like controller that keeps
// spec.replicas ConfigMaps per Widget, against apitest.

var quiet = slog.New(slog.DiscardHandler)

const testTimeout = 20 * time.Second

func newServer(t *testing.T) *apitest.Server {
	t.Helper()
	srv := apitest.NewServer()
	t.Cleanup(srv.Close)
	if err := srv.AddResource(apitest.ResourceType{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true, StatusSubresource: true}); err != nil {
		t.Fatal(err)
	}
	return srv
}

func newManager(t *testing.T, srv *apitest.Server) *controller.Manager {
	t.Helper()
	m, err := controller.NewManager(srv.Config(), controller.ManagerOptions{Kinds: testobj.NewRegistry(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func start(t *testing.T, m *controller.Manager, ctl *controller.Controller) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Start: %v", err)
			}
		case <-time.After(testTimeout):
			t.Error("the manager did not stop")
		}
	})
	select {
	case <-ctl.Started():
	case err := <-done:
		t.Fatalf("the manager stopped: %v", err)
	case <-time.After(testTimeout):
		t.Fatal("the controller did not start")
	}
}

// reconciled is what one reconcile saw.
type reconciled struct {
	touch string // the widget's "touch" label
}

// replicas is the ReplicaSet-like reconciler: it creates or deletes children until the
// widget has spec.replicas of them, trusting the cache only when exp (if set) is satisfied,
// as the seed's ReplicaSet controller does.
type replicas struct {
	widgets  *controller.PrimaryType[*testobj.Widget]
	children *controller.OwnedType[*testobj.ConfigMap]
	cms      *client.Typed[*testobj.ConfigMap]
	reg      *kinds.Registry
	exp      *expectations.UIDTracking[controller.Request]
	done     chan reconciled
}

func (r *replicas) Reconcile(ctx context.Context, req controller.Request) (controller.Result, error) {
	w, err := r.widgets.Informer().Lister().Get(req.Namespace, req.Name)
	if meta.IsNotFound(err) {
		if r.exp != nil {
			r.exp.DeleteExpectations(req)
		}
		return controller.Result{}, nil
	}
	if err != nil {
		return controller.Result{}, err
	}
	defer func() { r.done <- reconciled{touch: w.Labels["touch"]} }()
	if r.exp != nil && !r.exp.SatisfiedExpectations(req) {
		return controller.Result{}, nil // the child events will requeue the widget
	}
	kids, err := r.children.ChildrenOf(w)
	if err != nil {
		return controller.Result{}, err
	}
	diff := w.Spec.Replicas - len(kids)
	switch {
	case diff > 0:
		if r.exp != nil {
			r.exp.ExpectCreations(req, diff)
		}
		for range diff {
			cm := &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: w.Namespace, GenerateName: w.Name + "-"}}
			if err := controllerutil.SetControllerReferenceWithOptions(w, cm, controllerutil.OwnerReferenceOptions{Registry: r.reg}); err != nil {
				return controller.Result{}, err
			}
			if _, err := r.cms.Create(ctx, cm, client.CreateOptions{}); err != nil {
				if r.exp != nil {
					r.exp.LowerExpectations(req, 1) // never observed
				}
				return controller.Result{}, err
			}
		}
	case diff < 0:
		victims := kids[:-diff]
		var uids []string
		for _, k := range victims {
			uids = append(uids, k.UID)
		}
		if r.exp != nil {
			r.exp.ExpectDeletions(req, uids)
		}
		for _, k := range victims {
			if err := r.cms.Delete(ctx, k, client.DeleteOptions{}); err != nil {
				if r.exp != nil {
					r.exp.DeletionObserved(req, k.UID)
				}
				if !meta.IsNotFound(err) {
					return controller.Result{}, err
				}
			}
		}
	}
	return controller.Result{}, nil
}

func waitReconcile(t *testing.T, done <-chan reconciled, touch string) {
	t.Helper()
	deadline := time.After(testTimeout)
	for {
		select {
		case r := <-done:
			if r.touch == touch {
				return
			}
		case <-deadline:
			t.Fatalf("no reconcile of the widget with touch=%q", touch)
		}
	}
}

func countConfigMaps(t *testing.T, srv *apitest.Server) int {
	t.Helper()
	objs, _, err := srv.List("configmaps", "default")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range objs {
		if o.Name() != "kube-root-ca.crt" {
			n++
		}
	}
	return n
}

func touch(t *testing.T, srv *apitest.Server, value string) {
	t.Helper()
	if _, err := srv.Mutate("widgets", "default", "w", func(o apitest.Object) {
		o["metadata"].(map[string]any)["labels"] = map[string]any{"touch": value}
	}); err != nil {
		t.Fatal(err)
	}
}

// While the child watch lags (stalled by apitest), a controller without expectations that is
// woken again counts the children it just created as missing and creates them a second
// time; with expectations it waits for their events and never does.
func TestExpectationsPreventDuplicateCreates(t *testing.T) {
	for _, withExpectations := range []bool{false, true} {
		t.Run(fmt.Sprintf("expectations=%v", withExpectations), func(t *testing.T) {
			srv := newServer(t)
			m := newManager(t, srv)
			r := &replicas{
				widgets: controller.Primary[*testobj.Widget](),
				cms:     client.TypedFor[*testobj.ConfigMap](m.Client()),
				reg:     m.Kinds(),
				done:    make(chan reconciled, 100),
			}
			opts := controller.OwnedOptions[*testobj.ConfigMap]{}
			if withExpectations {
				r.exp = expectations.NewUIDTracking[controller.Request](expectations.Options{})
				opts.Expectations = r.exp
			}
			r.children = controller.OwnedWithOptions(opts)
			ctl, err := controller.NewBuilder(m, "replicas").For(r.widgets).Owns(r.children).
				WithOptions(controller.Options{Logger: quiet}).Build(r)
			if err != nil {
				t.Fatal(err)
			}
			start(t, m, ctl)
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			if _, err := srv.WaitForWatches(ctx, "configmaps", 1); err != nil {
				t.Fatal(err)
			}
			release, n, err := srv.Faults().StallWatches("configmaps", 0)
			if err != nil || n == 0 {
				t.Fatalf("stall: %d watches, %v", n, err)
			}
			defer release()

			if _, err := srv.Create("widgets", map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
				"metadata": map[string]any{"namespace": "default", "name": "w"}, "spec": map[string]any{"replicas": 2}}); err != nil {
				t.Fatal(err)
			}
			waitReconcile(t, r.done, "")
			if got := countConfigMaps(t, srv); got != 2 {
				t.Fatalf("first reconcile: %d children on the server, want 2", got)
			}
			// Something else wakes the controller while the child events are held back.
			touch(t, srv, "1")
			waitReconcile(t, r.done, "1")
			got := countConfigMaps(t, srv)
			if !withExpectations {
				if got != 4 {
					t.Fatalf("without expectations: %d children on the server, want the duplicate creates (4)", got)
				}
				return
			}
			if got != 2 {
				t.Fatalf("with expectations: %d children on the server, want 2", got)
			}

			// The watch catches up: the creations are observed, the widget is requeued and
			// finds its two children; a later wake-up creates nothing either.
			release()
			wait(t, "the expectations to be satisfied", func() bool {
				return r.exp.SatisfiedExpectations(controller.Request{Namespace: "default", Name: "w"})
			})
			touch(t, srv, "2")
			waitReconcile(t, r.done, "2")
			if got := countConfigMaps(t, srv); got != 2 || srv.CountRequests(apitest.VerbCreate, "configmaps") != 2 {
				t.Fatalf("after the watch caught up: %d children, %d creates", got, srv.CountRequests(apitest.VerbCreate, "configmaps"))
			}
		})
	}
}

// wait polls cond (the recorded state) until it holds, with a generous deadline.
func wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Owns reports deletions by uid: a graceful deletion (a finalizer holds the child), the
// delete that follows, and a deletion the watch missed (a tombstone from a relist) each
// count once for an expected uid; creations are observed too.
func TestOwnsObservesDeletions(t *testing.T) {
	srv := newServer(t)
	m := newManager(t, srv)
	exp := expectations.NewUIDTracking[controller.Request](expectations.Options{})
	var mu sync.Mutex
	var tombstones []string
	children := controller.OwnedWithOptions(controller.OwnedOptions[*testobj.ConfigMap]{
		Expectations: exp,
		Predicates: []controller.Predicate[*testobj.ConfigMap]{controller.PredicateFuncs[*testobj.ConfigMap]{
			DeleteFunc: func(e controller.DeleteEvent[*testobj.ConfigMap]) bool {
				if e.DeleteStateUnknown {
					mu.Lock()
					tombstones = append(tombstones, e.Object.Name)
					mu.Unlock()
				}
				return true
			},
		}},
	})
	ctl, err := controller.NewBuilder(m, "observer").For(controller.Primary[*testobj.Widget]()).Owns(children).
		WithOptions(controller.Options{Logger: quiet}).
		Build(controller.ReconcilerFunc(func(context.Context, controller.Request) (controller.Result, error) { return controller.Result{}, nil }))
	if err != nil {
		t.Fatal(err)
	}
	start(t, m, ctl)
	w, err := srv.Create("widgets", map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": "default", "name": "w"}, "spec": map[string]any{"replicas": 3}})
	if err != nil {
		t.Fatal(err)
	}
	key := controller.Request{Namespace: "default", Name: "w"}
	child := func(name string, finalizers ...any) map[string]any {
		meta := map[string]any{"namespace": "default", "name": name, "ownerReferences": []any{map[string]any{
			"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": w.UID(), "controller": true}}}
		if len(finalizers) > 0 {
			meta["finalizers"] = finalizers
		}
		return map[string]any{"metadata": meta}
	}

	exp.ExpectCreations(key, 3)
	uids := map[string]string{}
	for i, name := range []string{"held", "lost", "kept"} {
		var c apitest.Object
		if i == 0 {
			c, err = srv.Create("configmaps", child(name, "example.com/hold"))
		} else {
			c, err = srv.Create("configmaps", child(name))
		}
		if err != nil {
			t.Fatal(err)
		}
		uids[name] = c.UID()
	}
	wait(t, "the creations to be observed", func() bool { return exp.SatisfiedExpectations(key) })
	wait(t, "the children in the cache", func() bool { kids, _ := children.ChildrenOfUID(w.UID()); return len(kids) == 3 })

	exp.ExpectDeletions(key, []string{uids["held"], uids["lost"]})
	// Graceful: the finalizer keeps the object, with a deletion timestamp.
	if err := srv.Delete("configmaps", "default", "held"); err != nil {
		t.Fatal(err)
	}
	wait(t, "the graceful deletion", func() bool {
		return slices.Equal(exp.PendingDeletions(key), []string{uids["lost"]})
	})
	if p, _ := exp.Get(key); p.Del != 1 {
		t.Fatalf("after the graceful deletion: %+v", p)
	}
	// The finalizer goes: the delete event observes "held" again, which must not count.
	if _, err := srv.Mutate("configmaps", "default", "held", func(o apitest.Object) {
		delete(o["metadata"].(map[string]any), "finalizers")
	}); err != nil {
		t.Fatal(err)
	}
	wait(t, "the finalized child to leave the cache", func() bool { kids, _ := children.ChildrenOfUID(w.UID()); return len(kids) == 2 })
	if p, _ := exp.Get(key); p.Del != 1 {
		t.Fatalf("the second observation of one uid counted: %+v", p)
	}

	// A deletion the watch misses: the watch is held, "lost" is deleted, the history
	// compacted, and the watch cut; the reflector's re-watch gets 410, relists, and the
	// informer delivers "lost" as a tombstone.
	release, _, err := srv.Faults().StallWatches("configmaps", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Delete("configmaps", "default", "lost"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Compact("configmaps"); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Faults().CutWatches("configmaps"); err != nil {
		t.Fatal(err)
	}
	release()
	wait(t, "the missed deletion", func() bool { return exp.SatisfiedExpectations(key) })
	if p, _ := exp.Get(key); p.Del != 0 {
		t.Fatalf("after the tombstone: %+v", p)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(tombstones, []string{"lost"}) {
		t.Fatalf("tombstones %v: the deletion was not inferred from a relist", tombstones)
	}
}

// UIDTracking is what OwnedOptions.Expectations takes.
var _ controller.ExpectationsObserver = (*expectations.UIDTracking[controller.Request])(nil)
