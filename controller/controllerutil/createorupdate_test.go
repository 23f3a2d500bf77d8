package controllerutil

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/reflector"
)

type cuEnv struct {
	srv     *apitest.Server
	widgets *client.Typed[*testobj.Widget]
	cms     *client.Typed[*testobj.ConfigMap]
}

func newCUEnv(t *testing.T) *cuEnv {
	t.Helper()
	srv := apitest.NewServer()
	t.Cleanup(srv.Close)
	if err := srv.AddResource(apitest.ResourceType{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true, StatusSubresource: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Create("namespaces", map[string]any{"metadata": map[string]any{"name": "shop"}}); err != nil {
		t.Fatal(err)
	}
	api, err := apiclient.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)
	factory := informer.NewFactoryWithOptions(api, informer.FactoryOptions{Logger: slog.New(slog.DiscardHandler),
		Backoff: reflector.Backoff{Initial: time.Millisecond, Max: 10 * time.Millisecond, Jitter: -1}})
	reg := kinds.NewRegistry()
	if err := reg.Register(reflect.TypeFor[*testobj.Widget](), testobj.WidgetInfo); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(reflect.TypeFor[*testobj.ConfigMap](), kinds.ConfigMap); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(api, factory, client.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.Start(ctx)
	t.Cleanup(func() { cancel(); factory.Shutdown() })
	return &cuEnv{srv: srv, widgets: client.TypedFor[*testobj.Widget](c), cms: client.TypedFor[*testobj.ConfigMap](c)}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// writes counts the write requests to widgets since the last call.
type writeCounter struct {
	srv  *apitest.Server
	seen int64
}

func (w *writeCounter) since() []string {
	var out []string
	for _, r := range w.srv.Requests() {
		if r.Seq <= w.seen {
			continue
		}
		w.seen = r.Seq
		if r.Verb == apitest.VerbCreate || r.Verb == apitest.VerbUpdate || r.Verb == apitest.VerbPatch {
			out = append(out, fmt.Sprintf("%s %s", r.Verb, r.Subresource))
		}
	}
	return out
}

func TestCreateOrUpdate(t *testing.T) {
	for _, patch := range []bool{false, true} {
		t.Run(fmt.Sprint("patch=", patch), func(t *testing.T) {
			e := newCUEnv(t)
			op := CreateOrUpdate[*testobj.Widget]
			updateVerb := apitest.VerbUpdate
			if patch {
				op, updateVerb = CreateOrPatch[*testobj.Widget], apitest.VerbPatch
			}
			wc := &writeCounter{srv: e.srv}
			state := struct {
				size  int
				ready bool
				label string
			}{size: 1, ready: true, label: "a"}
			mutate := func(w *testobj.Widget) error {
				w.Spec.Size = state.size
				w.Status.Ready = state.ready
				if state.label == "" {
					delete(w.Labels, "l")
				} else {
					if w.Labels == nil {
						w.Labels = map[string]string{}
					}
					w.Labels["l"] = state.label
				}
				return nil
			}
			step := func(want OperationResult, wantWrites ...string) *testobj.Widget {
				t.Helper()
				got, res, err := op(ctxT(t), e.widgets, testobj.NewWidget("shop", "w"), mutate)
				if err != nil || res != want {
					t.Fatalf("result %q, %v; want %q", res, err, want)
				}
				w := wc.since()
				if want == OperationResultCreated && len(w) == 1 && w[0] == "create " {
					// apitest keeps a created object's status where the kube-apiserver drops it
					// (a subresource): then no status write is needed. The stored status is
					// checked below either way.
					w = wantWrites
				}
				if !reflect.DeepEqual(w, wantWrites) && !(len(w) == 0 && len(wantWrites) == 0) {
					t.Fatalf("writes %q, want %q", w, wantWrites)
				}
				stored, err := e.srv.Get("widgets", "shop", "w")
				if err != nil {
					t.Fatal(err)
				}
				var sw testobj.Widget
				if err := stored.Into(&sw); err != nil {
					t.Fatal(err)
				}
				if sw.Spec.Size != state.size || sw.Status.Ready != state.ready || sw.Labels["l"] != state.label {
					t.Fatalf("stored %+v, want %+v", sw, state)
				}
				if got.ResourceVersion != sw.ResourceVersion {
					t.Fatalf("returned resourceVersion %s, stored %s", got.ResourceVersion, sw.ResourceVersion)
				}
				return got
			}
			statusVerb := string(updateVerb) + " status"
			step(OperationResultCreated, "create ", statusVerb)
			step(OperationResultNone)
			state.size = 2
			step(OperationResultUpdated, string(updateVerb)+" ")
			state.ready = false
			step(OperationResultUpdatedStatusOnly, statusVerb)
			state.size, state.ready = 3, true
			step(OperationResultUpdatedStatus, string(updateVerb)+" ", statusVerb)
			state.label = "" // a removed label: a null in the patch, absent from the update
			step(OperationResultUpdated, string(updateVerb)+" ")
			step(OperationResultNone)
		})
	}
}

func TestCreateOrUpdateWithoutStatusSubresource(t *testing.T) {
	e := newCUEnv(t)
	data := "1"
	mutate := func(c *testobj.ConfigMap) error { c.Data = map[string]string{"v": data}; return nil }
	obj := testobj.NewConfigMap("shop", "c", nil)
	if _, res, err := CreateOrUpdate(ctxT(t), e.cms, obj, mutate); err != nil || res != OperationResultCreated {
		t.Fatalf("%q %v", res, err)
	}
	if _, res, err := CreateOrPatch(ctxT(t), e.cms, obj, mutate); err != nil || res != OperationResultNone {
		t.Fatalf("%q %v", res, err)
	}
	data = "2"
	got, res, err := CreateOrPatch(ctxT(t), e.cms, obj, mutate)
	if err != nil || res != OperationResultUpdated || got.Data["v"] != "2" {
		t.Fatalf("%q %v %+v", res, err, got)
	}
}

func TestCreateOrUpdateErrors(t *testing.T) {
	e := newCUEnv(t)
	boom := errors.New("boom")
	if _, _, err := CreateOrUpdate(ctxT(t), e.widgets, testobj.NewWidget("shop", "w"), func(*testobj.Widget) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("mutate error: %v", err)
	}
	if _, _, err := CreateOrUpdate(ctxT(t), e.widgets, testobj.NewWidget("shop", "w"), func(w *testobj.Widget) error { w.Name = "other"; return nil }); !errors.Is(err, ErrMutateChangedKey) {
		t.Fatalf("renaming mutate: %v", err)
	}
	if e.srv.CountRequests(apitest.VerbCreate, "widgets") != 0 {
		t.Fatal("a failed mutate wrote")
	}
	if _, _, err := CreateOrUpdate(ctxT(t), e.widgets, nil, func(*testobj.Widget) error { return nil }); err == nil {
		t.Fatal("nil object accepted")
	}

	// A change the cache has not seen: the update carries the old resourceVersion and
	// conflicts.
	if _, _, err := CreateOrUpdate(ctxT(t), e.widgets, testobj.NewWidget("shop", "w"), func(w *testobj.Widget) error { w.Spec.Size = 1; return nil }); err != nil {
		t.Fatal(err)
	}
	// The cache has the widget (a read through the client waits for its own create).
	if _, err := e.widgets.Get(ctxT(t), "shop", "w", client.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.srv.WaitForWatches(ctxT(t), "widgets", 1); err != nil {
		t.Fatal(err)
	}
	release, _, err := e.srv.Faults().StallWatches("widgets", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := e.srv.Mutate("widgets", "shop", "w", func(o apitest.Object) { o["spec"] = map[string]any{"size": 7} }); err != nil {
		t.Fatal(err)
	}
	if _, _, err := CreateOrUpdate(ctxT(t), e.widgets, testobj.NewWidget("shop", "w"), func(w *testobj.Widget) error { w.Spec.Size = 2; return nil }); !meta.IsConflict(err) {
		t.Fatalf("stale update: %v", err)
	}
}

// Someone else changes the Widget between CreateOrPatch's read and its patch (inside
// mutate, deterministically): with OptimisticLock the patch is refused with 409 Conflict
// and the other change stands; without, the patch overwrites the size they set.
func TestCreateOrPatchOptimisticLock(t *testing.T) {
	for _, lock := range []bool{true, false} {
		t.Run(fmt.Sprint("lock=", lock), func(t *testing.T) {
			e := newCUEnv(t)
			if _, err := e.srv.Create("widgets", map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
				"metadata": map[string]any{"namespace": "shop", "name": "w"}, "spec": map[string]any{"size": 1}}); err != nil {
				t.Fatal(err)
			}
			mutate := func(w *testobj.Widget) error {
				if _, err := e.srv.Mutate("widgets", "shop", "w", func(o apitest.Object) { o["spec"].(map[string]any)["size"] = 5 }); err != nil {
					return err
				}
				w.Spec.Size = 2
				return nil
			}
			_, res, err := CreateOrPatchWithOptions(ctxT(t), e.widgets, testobj.NewWidget("shop", "w"), mutate, CreateOrPatchOptions{OptimisticLock: lock})
			o, _ := e.srv.Get("widgets", "shop", "w")
			size := o["spec"].(map[string]any)["size"]
			if lock && (!meta.IsConflict(err) || size != json.Number("5")) {
				t.Fatalf("locked: %q, %v, size %v; want a 409 and their size 5", res, err, size)
			}
			if !lock && (err != nil || res != OperationResultUpdated || size != json.Number("2")) {
				t.Fatalf("unlocked: %q, %v, size %v; want updated to 2", res, err, size)
			}
		})
	}
}
