package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/indexer"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/reflector"
)

type Namespace struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
}

const timeout = 30 * time.Second

type env struct {
	srv     *apitest.Server
	api     *apiclient.Client
	factory *informer.Factory
	c       *Client
	cms     *Typed[*testobj.ConfigMap]
}

// newEnv starts apitest, a factory and a started client over it.
func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	srv := apitest.NewServer()
	t.Cleanup(srv.Close)
	if err := srv.AddResource(apitest.ResourceType{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true, StatusSubresource: true}); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"a", "b"} {
		if _, err := srv.Create("namespaces", map[string]any{"metadata": map[string]any{"name": ns}}); err != nil {
			t.Fatal(err)
		}
	}
	api, err := apiclient.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)
	factory := informer.NewFactoryWithOptions(api, informer.FactoryOptions{
		Logger:  slog.New(slog.DiscardHandler),
		Backoff: reflector.Backoff{Initial: time.Millisecond, Max: 10 * time.Millisecond, Jitter: -1},
	})
	reg := kinds.NewRegistry()
	for typ, info := range map[reflect.Type]kinds.Info{
		reflect.TypeFor[*testobj.ConfigMap](): kinds.ConfigMap, reflect.TypeFor[*Namespace](): kinds.Namespace, reflect.TypeFor[*testobj.Widget](): testobj.WidgetInfo,
	} {
		if err := reg.Register(typ, info); err != nil {
			t.Fatal(err)
		}
	}
	opts.Registry = reg
	c, err := New(api, factory, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.Start(ctx)
	t.Cleanup(func() { cancel(); factory.Shutdown() })
	return &env{srv: srv, api: api, factory: factory, c: c, cms: TypedFor[*testobj.ConfigMap](c)}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return ctx
}

func TestGetStartsTheInformerAndReturnsCopies(t *testing.T) {
	e := newEnv(t, Options{})
	if _, err := e.srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "a", "name": "x"}, "data": map[string]any{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := informer.Lookup[*testobj.ConfigMap](e.factory, kinds.ConfigMap.GroupVersionResource()); ok {
		t.Fatal("informer exists before the first read")
	}
	got, err := e.cms.Get(ctxT(t), "a", "x", GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Data["k"] != "v" {
		t.Fatalf("got %+v", got)
	}
	inf, ok := informer.Lookup[*testobj.ConfigMap](e.factory, kinds.ConfigMap.GroupVersionResource())
	if !ok || !inf.HasSynced() {
		t.Fatal("no synced informer after the first read")
	}
	// The result is the caller's: changing it leaves the cache alone (the mutation detector,
	// on in these tests, would panic otherwise).
	got.Data["k"] = "changed"
	again, err := e.cms.Get(ctxT(t), "a", "x", GetOptions{})
	if err != nil || again.Data["k"] != "v" {
		t.Fatalf("cache changed through a Get result: %+v %v", again, err)
	}
	// UnsafeDisableDeepCopy hands out the cached object itself.
	shared1, _ := e.cms.Get(ctxT(t), "a", "x", GetOptions{UnsafeDisableDeepCopy: true})
	shared2, _ := e.cms.Get(ctxT(t), "a", "x", GetOptions{UnsafeDisableDeepCopy: true})
	if shared1 != shared2 {
		t.Fatal("UnsafeDisableDeepCopy copied")
	}
	if _, err := e.cms.Get(ctxT(t), "a", "missing", GetOptions{}); !meta.IsNotFound(err) {
		t.Fatalf("missing object: %v", err)
	}
}

func TestList(t *testing.T) {
	e := newEnv(t, Options{})
	for _, o := range []struct{ ns, name, tier string }{{"a", "1", "web"}, {"a", "2", "db"}, {"b", "3", "web"}} {
		if _, err := e.srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": o.ns, "name": o.name, "labels": map[string]any{"tier": o.tier}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.cms.AddIndexers(indexer.Indexers[*testobj.ConfigMap]{"byTier": func(o *testobj.ConfigMap) ([]string, error) { return []string{o.Labels["tier"]}, nil }}); err != nil {
		t.Fatal(err)
	}
	names := func(opts ListOptions) []string {
		t.Helper()
		objs, err := e.cms.List(ctxT(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range objs {
			out = append(out, o.Name)
		}
		slices.Sort(out)
		return out
	}
	web := labels.SelectorFromSet(map[string]string{"tier": "web"})
	for _, tc := range []struct {
		opts ListOptions
		want []string
	}{
		{ListOptions{}, []string{"1", "2", "3"}},
		{ListOptions{Namespace: "a"}, []string{"1", "2"}},
		{ListOptions{LabelSelector: web}, []string{"1", "3"}},
		{ListOptions{Namespace: "a", LabelSelector: web}, []string{"1"}},
		{ListOptions{Index: "byTier", IndexValue: "web"}, []string{"1", "3"}},
		{ListOptions{Index: "byTier", IndexValue: "web", Namespace: "b"}, []string{"3"}},
	} {
		if got := names(tc.opts); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("List(%+v) = %v, want %v", tc.opts, got, tc.want)
		}
	}
	if _, err := e.cms.List(ctxT(t), ListOptions{Index: "nope", IndexValue: "x"}); !errors.Is(err, indexer.ErrNoSuchIndex) {
		t.Errorf("unknown index: %v", err)
	}
}

func TestReadStartRules(t *testing.T) {
	e := newEnv(t, Options{DisableStartOnRead: true})
	if _, err := e.cms.Get(ctxT(t), "a", "x", GetOptions{}); !errors.Is(err, ErrNoInformer) {
		t.Fatalf("DisableStartOnRead: %v", err)
	}
	// An informer created beforehand is used.
	if _, err := e.cms.Informer(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.cms.Get(ctxT(t), "a", "x", GetOptions{}); !meta.IsNotFound(err) {
		t.Fatalf("with an informer: %v", err)
	}

	// Before Start nothing runs informers.
	c, err := New(e.api, informer.NewFactory(e.api), Options{Registry: e.c.Registry()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TypedFor[*testobj.ConfigMap](c).Get(ctxT(t), "a", "x", GetOptions{}); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("before Start: %v", err)
	}
}

func TestUnregisteredType(t *testing.T) {
	e := newEnv(t, Options{})
	type other struct{ meta.ObjectMeta }
	o := TypedFor[*other](e.c)
	var nre *kinds.NotRegisteredError
	if _, err := o.Get(ctxT(t), "a", "x", GetOptions{}); !errors.As(err, &nre) {
		t.Fatalf("Get: %v", err)
	}
	if _, err := o.Create(ctxT(t), &other{}, CreateOptions{}); !errors.As(err, &nre) {
		t.Fatalf("Create: %v", err)
	}
	if err := o.Delete(ctxT(t), &other{}, DeleteOptions{}); !errors.As(err, &nre) {
		t.Fatalf("Delete: %v", err)
	}
	// ForKind works for any type, Unstructured included.
	u := TypedForKind[*meta.Unstructured](e.c, kinds.ConfigMap)
	created, err := u.Create(ctxT(t), &meta.Unstructured{Object: map[string]any{"metadata": map[string]any{"namespace": "a", "name": "u"}}}, CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.GetKind() != "ConfigMap" {
		t.Fatalf("created %v", created.Object)
	}
	got, err := u.Get(ctxT(t), "a", "u", GetOptions{})
	if err != nil || got.GetName() != "u" {
		t.Fatalf("Get unstructured: %v %v", got, err)
	}
}

func TestClusterScopedIgnoresNamespace(t *testing.T) {
	e := newEnv(t, Options{})
	ns, err := TypedFor[*Namespace](e.c).Get(ctxT(t), "whatever", "a", GetOptions{})
	if err != nil || ns.Name != "a" {
		t.Fatalf("Get of a cluster-scoped object with a namespace: %v %v", ns, err)
	}
}

func TestWritesSetTypeMeta(t *testing.T) {
	e := newEnv(t, Options{})
	obj := testobj.NewConfigMap("a", "x", nil)
	if _, err := e.cms.Create(ctxT(t), obj, CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if obj.APIVersion != "v1" || obj.Kind != "ConfigMap" {
		t.Fatalf("TypeMeta = %+v", obj.TypeMeta)
	}
	reqs := e.srv.RequestsFor(apitest.VerbCreate, "configmaps")
	if len(reqs) != 1 {
		t.Fatalf("requests %+v", reqs)
	}
}

// The newcomer's hazard: a reconciler writes, is woken again at once, and reads a cache that
// has not seen its write yet. With read-your-writes the read waits for the write; without,
// it sees the old version.
func TestReadYourWrites(t *testing.T) {
	for _, ryw := range []bool{true, false} {
		t.Run(fmt.Sprint("readYourWrites=", ryw), func(t *testing.T) {
			opts := Options{}
			if !ryw {
				opts.ReadYourWritesTimeout = -1
			}
			e := newEnv(t, opts)
			created, err := e.cms.Create(ctxT(t), testobj.NewConfigMap("a", "x", map[string]string{"v": "1"}), CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got, err := e.cms.Get(ctxT(t), "a", "x", GetOptions{}); err != nil || got.ResourceVersion != created.ResourceVersion {
				t.Fatalf("Get after Create: %+v %v", got, err)
			}
			if _, err := e.srv.WaitForWatches(ctxT(t), "configmaps", 1); err != nil {
				t.Fatal(err)
			}
			release, _, err := e.srv.Faults().StallWatches("configmaps", 0)
			if err != nil {
				t.Fatal(err)
			}
			created.Data["v"] = "2"
			updated, err := e.cms.Update(ctxT(t), created, UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !ryw {
				got, err := e.cms.Get(ctxT(t), "a", "x", GetOptions{})
				release()
				if err != nil || got.Data["v"] != "1" {
					t.Fatalf("without read-your-writes the stalled cache answers: %+v %v", got, err)
				}
				return
			}
			// The read blocks until the watch delivers the update.
			got := make(chan *testobj.ConfigMap, 1)
			errs := make(chan error, 1)
			go func() {
				o, err := e.cms.Get(ctxT(t), "a", "x", GetOptions{})
				got <- o
				errs <- err
			}()
			// Whenever the release comes, before or after the read starts waiting, the read
			// returns the update (TestReadYourWritesTimeout shows it waits while stalled).
			release()
			if o, err := <-got, <-errs; err != nil || o.ResourceVersion != updated.ResourceVersion || o.Data["v"] != "2" {
				t.Fatalf("Get after Update: %+v %v", o, err)
			}
		})
	}
}

func TestReadYourWritesTimeout(t *testing.T) {
	e := newEnv(t, Options{ReadYourWritesTimeout: 50 * time.Millisecond})
	created, err := e.cms.Create(ctxT(t), testobj.NewConfigMap("a", "x", nil), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.cms.Get(ctxT(t), "a", "x", GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.srv.WaitForWatches(ctxT(t), "configmaps", 1); err != nil {
		t.Fatal(err)
	}
	release, _, err := e.srv.Faults().StallWatches("configmaps", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	created.Data = map[string]string{"v": "2"}
	updated, err := e.cms.Update(ctxT(t), created, UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.cms.Get(ctxT(t), "a", "x", GetOptions{})
	var stale *StaleCacheError
	if !errors.As(err, &stale) || !errors.Is(err, ErrStaleCache) || stale.Key != "a/x" || stale.Written != updated.ResourceVersion ||
		stale.Cached != created.ResourceVersion || stale.Waited < 50*time.Millisecond {
		t.Fatalf("Get with a stalled watch: %v (%+v)", err, stale)
	}
	// List waits too.
	if _, err := e.cms.List(ctxT(t), ListOptions{Namespace: "a"}); !errors.As(err, &stale) {
		t.Fatalf("List with a stalled watch: %v", err)
	}
	// Another namespace has no pending write.
	if _, err := e.cms.List(ctxT(t), ListOptions{Namespace: "b"}); err != nil {
		t.Fatalf("List of another namespace: %v", err)
	}
	release()
	if got, err := e.cms.Get(ctxT(t), "a", "x", GetOptions{}); err != nil || got.ResourceVersion != updated.ResourceVersion {
		t.Fatalf("after release: %+v %v", got, err)
	}
}

func TestDeleteIsReadBack(t *testing.T) {
	e := newEnv(t, Options{})
	created, err := e.cms.Create(ctxT(t), testobj.NewConfigMap("a", "x", nil), CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.cms.Get(ctxT(t), "a", "x", GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.srv.WaitForWatches(ctxT(t), "configmaps", 1); err != nil {
		t.Fatal(err)
	}
	release, _, err := e.srv.Faults().StallWatches("configmaps", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.cms.Delete(ctxT(t), created, DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := e.cms.Get(ctxT(t), "a", "x", GetOptions{})
		done <- err
	}()
	release()
	if err := <-done; !meta.IsNotFound(err) {
		t.Fatalf("Get after Delete: %v", err)
	}
}

func TestStatus(t *testing.T) {
	e := newEnv(t, Options{})
	widgets := TypedFor[*testobj.Widget](e.c)
	w := testobj.NewWidget("a", "w")
	w.Spec.Size = 3
	created, err := widgets.Create(ctxT(t), w, CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status.Ready = true
	created.Spec.Size = 99 // ignored by a status update
	updated, err := widgets.Status().Update(ctxT(t), created, UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := widgets.Get(ctxT(t), "a", "w", GetOptions{})
	if err != nil || !got.Status.Ready || got.Spec.Size != 3 || got.ResourceVersion != updated.ResourceVersion {
		t.Fatalf("after the status update: %+v %v", got, err)
	}
	patched, err := widgets.Status().Patch(ctxT(t), "a", "w", MergePatchType, []byte(`{"status":{"ready":false}}`), PatchOptions{})
	if err != nil || patched.Status.Ready {
		t.Fatalf("status patch: %+v %v", patched, err)
	}
	if got, err := widgets.Get(ctxT(t), "a", "w", GetOptions{}); err != nil || got.Status.Ready {
		t.Fatalf("after the status patch: %+v %v", got, err)
	}
	if _, err := e.cms.Status().Update(ctxT(t), testobj.NewConfigMap("a", "x", nil), UpdateOptions{}); !errors.Is(err, ErrNoStatusSubresource) {
		t.Fatalf("status of a kind without one: %v", err)
	}
	p, err := e.cms.Patch(ctxT(t), "a", "missing", MergePatchType, []byte(`{}`), PatchOptions{})
	if !meta.IsNotFound(err) || p != nil {
		t.Fatalf("patch of a missing object: %v", err)
	}
}

func TestConcurrentWritersAndReaders(t *testing.T) {
	e := newEnv(t, Options{})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			name := fmt.Sprint("x", i)
			obj, err := e.cms.Create(ctxT(t), testobj.NewConfigMap("a", name, map[string]string{"n": "0"}), CreateOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			for n := 1; n <= 10; n++ {
				got, err := e.cms.Get(ctxT(t), "a", name, GetOptions{})
				if err != nil || got.ResourceVersion != obj.ResourceVersion {
					t.Errorf("read %s: %v (rv %s, wrote %s)", name, err, got.ResourceVersion, obj.ResourceVersion)
					return
				}
				got.Data["n"] = fmt.Sprint(n)
				if obj, err = e.cms.Update(ctxT(t), got, UpdateOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestForResolvesOnFirstUse(t *testing.T) {
	e := newEnv(t, Options{})
	type late struct {
		meta.TypeMeta
		meta.ObjectMeta `json:"metadata"`
	}
	typed := TypedFor[*late](e.c) // before the registration
	if _, err := typed.Get(ctxT(t), "a", "x", GetOptions{}); !errors.Is(err, kinds.ErrNotRegistered) {
		t.Fatalf("before registration: %v", err)
	}
	if err := e.c.Registry().Register(reflect.TypeFor[*late](), kinds.ConfigMap); err != nil {
		t.Fatal(err)
	}
	if _, err := typed.Get(ctxT(t), "a", "x", GetOptions{}); !meta.IsNotFound(err) {
		t.Fatalf("after registration: %v", err)
	}
	if typed.Info() != kinds.ConfigMap {
		t.Fatalf("Info = %v", typed.Info())
	}
	if _, err := TypedForKind[*late](e.c, kinds.Info{Kind: "X"}).Get(ctxT(t), "a", "x", GetOptions{}); err == nil {
		t.Fatal("invalid ForKind info accepted")
	}
}

func TestWritesOutsideTheFactoryNamespaceAreNotWaitedFor(t *testing.T) {
	e := newEnv(t, Options{ReadYourWritesTimeout: time.Hour})
	factory := informer.NewFactoryWithOptions(e.api, informer.FactoryOptions{Namespace: "a", Logger: slog.New(slog.DiscardHandler)})
	c, err := New(e.api, factory, Options{Registry: e.c.Registry(), ReadYourWritesTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.Start(ctx)
	defer func() { cancel(); factory.Shutdown() }()
	cms := TypedFor[*testobj.ConfigMap](c)
	if _, err := cms.Create(ctxT(t), testobj.NewConfigMap("b", "x", nil), CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Not in the cache, and no wait for a write the cache will never show.
	if _, err := cms.Get(ctxT(t), "b", "x", GetOptions{}); !meta.IsNotFound(err) {
		t.Fatalf("Get outside the factory's namespace: %v", err)
	}
}
