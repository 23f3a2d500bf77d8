package informer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/indexer"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/reflector"
)

// testTimeout bounds every wait of these tests; it is a failure guard, never a way to
// synchronise (every wait ends on a channel or a server condition).
const testTimeout = 30 * time.Second

func newServer(t testing.TB) *apitest.Server {
	t.Helper()
	return newServerWithOptions(t, apitest.Options{})
}

func newServerWithOptions(t testing.TB, opts apitest.Options) *apitest.Server {
	t.Helper()
	s := apitest.NewServerWithOptions(opts)
	t.Cleanup(s.Close)
	return s
}

func newClient(t testing.TB, s *apitest.Server) *apiclient.Client {
	t.Helper()
	c, err := apiclient.New(s.Config())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func configMaps(c *apiclient.Client) *apiclient.Resource[*testobj.ConfigMap] {
	return apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR)
}

// fastOptions are reflector timings that make the tests quick, and a logger into the test log.
func fastOptions(t testing.TB) Options[*testobj.ConfigMap] {
	return Options[*testobj.ConfigMap]{
		Logger:          testLogger(t),
		Backoff:         reflector.Backoff{Initial: time.Millisecond, Max: 10 * time.Millisecond, Jitter: -1},
		MinWatchTimeout: time.Minute,
	}
}

// start runs inf until the test ends.
func start[T meta.Object](t testing.TB, inf *Informer[T]) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	go inf.Run(ctx)
	t.Cleanup(func() {
		cancel()
		<-inf.Done()
	})
}

func wait(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(testTimeout):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func mkCM(t testing.TB, s *apitest.Server, ns, name string, data map[string]string) apitest.Object {
	t.Helper()
	o, err := s.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": ns, "name": name}, "data": data})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func setData(t testing.TB, s *apitest.Server, ns, name, k, v string) apitest.Object {
	t.Helper()
	o, err := s.Mutate("configmaps", ns, name, func(o apitest.Object) {
		d, _ := o["data"].(map[string]any)
		if d == nil {
			d = map[string]any{}
			o["data"] = d
		}
		d[k] = v
	})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// calls is a handler that sends a line per call to a channel.
type calls struct {
	ch chan string
}

func newCalls() *calls { return &calls{ch: make(chan string, 10000)} }

func (c *calls) OnAdd(o *testobj.ConfigMap, initial bool) {
	c.ch <- fmt.Sprintf("add %s/%s %s %v", o.Namespace, o.Name, o.ResourceVersion, initial)
}
func (c *calls) OnUpdate(old, o *testobj.ConfigMap) {
	c.ch <- fmt.Sprintf("update %s/%s %s→%s", o.Namespace, o.Name, old.ResourceVersion, o.ResourceVersion)
}
func (c *calls) OnDelete(o *testobj.ConfigMap, unknown bool) {
	c.ch <- fmt.Sprintf("delete %s/%s %s %v", o.Namespace, o.Name, o.ResourceVersion, unknown)
}

func (c *calls) next(t testing.TB) string {
	t.Helper()
	select {
	case s := <-c.ch:
		return s
	case <-time.After(testTimeout):
		t.Fatal("timed out waiting for a handler call")
		return ""
	}
}

func (c *calls) expect(t testing.TB, want ...string) {
	t.Helper()
	for _, w := range want {
		if got := c.next(t); got != w {
			t.Fatalf("handler call = %q, want %q", got, w)
		}
	}
}

func (c *calls) none(t testing.TB) {
	t.Helper()
	select {
	case s := <-c.ch:
		t.Fatalf("unexpected handler call %q", s)
	default:
	}
}

var modes = []fifoMode{fifoCoalescing, fifoInOrder, fifoAtomic}

func TestInformerListsThenFollowsEveryChange(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			s := newServer(t)
			c := newClient(t, s)
			a := mkCM(t, s, "default", "a", nil)
			b := mkCM(t, s, "default", "b", nil)

			opts := fastOptions(t)
			opts.mode = mode
			inf := New(configMaps(c), opts)
			h := newCalls()
			reg, err := inf.AddEventHandler(h)
			if err != nil {
				t.Fatal(err)
			}
			if inf.HasSynced() || reg.HasSynced() {
				t.Fatal("synced before Run")
			}
			start(t, inf)
			wait(t, reg.Synced(), "the registration to sync")
			if !inf.HasSynced() {
				t.Fatal("registration synced before the informer")
			}
			initial := []string{h.next(t), h.next(t)}
			slices.Sort(initial)
			want := []string{"add default/a " + a.ResourceVersion() + " true", "add default/b " + b.ResourceVersion() + " true"}
			if !slices.Equal(initial, want) {
				t.Fatalf("initial calls = %q, want %q", initial, want)
			}

			cc := mkCM(t, s, "kube-system", "c", map[string]string{"k": "v"})
			a2 := setData(t, s, "default", "a", "k", "v")
			if err := s.Delete("configmaps", "default", "b"); err != nil {
				t.Fatal(err)
			}
			h.expect(t,
				"add kube-system/c "+cc.ResourceVersion()+" false",
				"update default/a "+a.ResourceVersion()+"→"+a2.ResourceVersion(),
				// The DELETED event carries the object at the deletion's resourceVersion.
				"delete default/b "+s.ResourceVersion()+" false",
			)
			h.none(t)

			l := inf.Lister()
			got, err := l.Get("default", "a")
			if err != nil || got.ResourceVersion != a2.ResourceVersion() || got.Data["k"] != "v" {
				t.Fatalf("Get(default, a) = %+v, %v", got, err)
			}
			if _, err := l.Get("default", "b"); !meta.IsNotFound(err) {
				t.Fatalf("Get of a deleted object: err = %v, want NotFound", err)
			}
			if n := len(l.List(labels.Everything())); n != 2 {
				t.Fatalf("List = %d objects, want 2", n)
			}
			if objs := l.Namespace("kube-system").List(labels.Everything()); len(objs) != 1 || objs[0].Name != "c" {
				t.Fatalf("Namespace(kube-system).List = %v", objs)
			}
			if _, err := l.Namespace("kube-system").Get("a"); !meta.IsNotFound(err) {
				t.Fatalf("kube-system/a: err = %v, want NotFound", err)
			}
			if rv := inf.LastSyncResourceVersion(); rv == "" {
				t.Fatal("empty LastSyncResourceVersion after sync")
			}
		})
	}
}

func TestLateHandlerGetsTheCacheAsInitialAdds(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	a := mkCM(t, s, "default", "a", nil)
	inf := New(configMaps(c), fastOptions(t))
	first, _ := inf.AddEventHandler(newCalls())
	start(t, inf)
	wait(t, first.Synced(), "the first handler to sync")

	late := newCalls()
	reg, err := inf.AddEventHandler(late)
	if err != nil {
		t.Fatal(err)
	}
	late.expect(t, "add default/a "+a.ResourceVersion()+" true")
	wait(t, reg.Synced(), "the late handler to sync")
	b := mkCM(t, s, "default", "b", nil)
	late.expect(t, "add default/b "+b.ResourceVersion()+" false")
}

// gated is a handler whose calls wait until release is closed.
type gated struct {
	calls
	release chan struct{}
}

func (g *gated) OnAdd(o *testobj.ConfigMap, initial bool) {
	g.calls.OnAdd(o, initial)
	<-g.release
}

func TestRegistrationSyncedOnlyAfterItsHandlerProcessedTheList(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	mkCM(t, s, "default", "a", nil)
	mkCM(t, s, "default", "b", nil)
	inf := New(configMaps(c), fastOptions(t))
	slow := &gated{calls: *newCalls(), release: make(chan struct{})}
	reg, _ := inf.AddEventHandler(slow)
	fast, _ := inf.AddEventHandler(newCalls())
	start(t, inf)
	wait(t, inf.Synced(), "the informer to sync")
	wait(t, fast.Synced(), "the fast handler to sync")
	slow.next(t) // the slow handler is inside its first OnAdd
	if reg.HasSynced() {
		t.Fatal("registration synced while its handler is still in the initial list")
	}
	close(slow.release)
	wait(t, reg.Synced(), "the slow handler to sync")
}

func TestRemoveEventHandler(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	inf := New(configMaps(c), fastOptions(t))
	h, stay := newCalls(), newCalls()
	reg, _ := inf.AddEventHandler(h)
	regStay, _ := inf.AddEventHandler(stay)
	start(t, inf)
	wait(t, reg.Synced(), "sync")
	a := mkCM(t, s, "default", "a", nil)
	h.expect(t, "add default/a "+a.ResourceVersion()+" false")
	stay.next(t)

	if err := inf.RemoveEventHandlerAndWait(ctxT(t), reg); err != nil {
		t.Fatal(err)
	}
	if err := inf.RemoveEventHandler(reg); err != nil {
		t.Fatalf("second removal: %v", err)
	}
	// client-go returns nil here and removes nothing; informerkit says so.
	other := New(configMaps(c), fastOptions(t))
	if err := other.RemoveEventHandler(regStay); !errors.Is(err, ErrForeignRegistration) {
		t.Fatalf("removing another informer's registration: %v, want ErrForeignRegistration", err)
	}
	if err := inf.RemoveEventHandler(nil); !errors.Is(err, ErrForeignRegistration) {
		t.Fatalf("removing a nil registration: %v, want ErrForeignRegistration", err)
	}
	b := mkCM(t, s, "default", "b", nil)
	stay.expect(t, "add default/b "+b.ResourceVersion()+" false")
	h.none(t)
	if st := inf.Stats(); st.Handlers != 1 {
		t.Fatalf("Stats.Handlers = %d, want 1", st.Handlers)
	}
}

func TestAHandlerCanRemoveItself(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	inf := New(configMaps(c), fastOptions(t))
	var reg *Registration[*testobj.ConfigMap]
	removed := make(chan error, 1)
	regReady := make(chan struct{})
	reg, _ = inf.AddEventHandler(ResourceEventHandlerFuncs[*testobj.ConfigMap]{
		AddFunc: func(*testobj.ConfigMap, bool) {
			<-regReady
			removed <- inf.RemoveEventHandler(reg)
		},
	})
	close(regReady)
	start(t, inf)
	mkCM(t, s, "default", "a", nil)
	if err := <-removed; err != nil {
		t.Fatal(err)
	}
	wait(t, reg.Done(), "the handler to stop")
}

func TestStopEndsHandlersAndRefusesNewOnes(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	inf := New(configMaps(c), fastOptions(t))
	reg, _ := inf.AddEventHandler(newCalls())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	wait(t, reg.Synced(), "sync")
	if err := inf.SetTransform(nil); err == nil {
		t.Fatal("SetTransform after start succeeded")
	}
	if err := inf.SetWatchErrorHandler(func(context.Context, error) {}); err == nil {
		t.Fatal("SetWatchErrorHandler after start succeeded")
	}
	inf.Run(ctx) // a second Run returns at once
	cancel()
	wait(t, done, "Run to return")
	wait(t, reg.Done(), "the handler to stop")
	if !inf.IsStopped() {
		t.Fatal("IsStopped false after Run returned")
	}
	if _, err := inf.AddEventHandler(newCalls()); !errors.Is(err, ErrStopped) {
		t.Fatalf("AddEventHandler after stop: %v, want ErrStopped", err)
	}
	if _, err := inf.AddEventHandlerWithOptions(newCalls(), HandlerOptions{}); !errors.Is(err, ErrStopped) {
		t.Fatalf("AddEventHandlerWithOptions after stop: %v, want ErrStopped", err)
	}
	if err := inf.AddIndexers(nil); err == nil {
		t.Fatal("AddIndexers after stop succeeded")
	}
}

func TestDefaultTransformDropsManagedFields(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	// A valid entry: apitest, as the kube-apiserver, keeps the managedFields a create
	// carries only when they are.
	mf := []any{map[string]any{"manager": "kubectl", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{}}}}
	if _, err := s.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "a", "managedFields": mf}}); err != nil {
		t.Fatal(err)
	}
	dropped := New(configMaps(c), fastOptions(t))
	kept := New(configMaps(c), fastOptions(t))
	if err := kept.SetTransform(nil); err != nil {
		t.Fatal(err)
	}
	start(t, dropped)
	start(t, kept)
	wait(t, dropped.Synced(), "sync")
	wait(t, kept.Synced(), "sync")
	if o, err := dropped.Lister().Get("default", "a"); err != nil || o.ManagedFields != nil {
		t.Fatalf("default transform: %v, managedFields %s", err, o.ManagedFields)
	}
	if o, err := kept.Lister().Get("default", "a"); err != nil || !strings.Contains(string(o.ManagedFields), "kubectl") {
		t.Fatalf("without transform: %v, managedFields %s", err, o.ManagedFields)
	}

	u := &meta.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x", "managedFields": mf}}}
	if _, err := DropManagedFields(u); err != nil {
		t.Fatal(err)
	}
	if _, ok := u.Object["metadata"].(map[string]any)["managedFields"]; ok {
		t.Fatal("Unstructured kept managedFields")
	}
}

func TestCustomTransform(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	mkCM(t, s, "default", "a", map[string]string{"big": strings.Repeat("x", 100), "small": "y"})
	opts := fastOptions(t)
	opts.Transform = func(o *testobj.ConfigMap) (*testobj.ConfigMap, error) {
		delete(o.Data, "big")
		return o, nil
	}
	inf := New(configMaps(c), opts)
	start(t, inf)
	wait(t, inf.Synced(), "sync")
	o, _ := inf.Lister().Get("default", "a")
	if _, ok := o.Data["big"]; ok || o.Data["small"] != "y" {
		t.Fatalf("transform not applied: %v", o.Data)
	}
}

// The transform runs once per object received, a streaming-list sync included (client-go runs
// it twice there, and asks for idempotent transforms): a transform that is not idempotent
// leaves each cached object transformed exactly once.
func TestTransformRunsOncePerObject(t *testing.T) {
	for _, mode := range []reflector.WatchListMode{reflector.WatchListOn, reflector.WatchListOff} {
		t.Run(mode.String(), func(t *testing.T) {
			s := newServer(t)
			c := newClient(t, s)
			for i := range 5 {
				mkCM(t, s, "default", fmt.Sprintf("cm%d", i), map[string]string{"v": "0"})
			}
			opts := fastOptions(t)
			opts.WatchList = mode
			var mu sync.Mutex
			calls := map[string]int{} // name@resourceVersion → transform calls
			opts.Transform = func(o *testobj.ConfigMap) (*testobj.ConfigMap, error) {
				mu.Lock()
				calls[o.Name+"@"+o.ResourceVersion]++
				mu.Unlock()
				if o.Data == nil {
					o.Data = map[string]string{}
				}
				o.Data["t"] += "x" // not idempotent on purpose
				return o, nil
			}
			inf := New(configMaps(c), opts)
			h := newCalls()
			reg, _ := inf.AddEventHandler(h)
			start(t, inf)
			wait(t, reg.Synced(), "sync")
			for range 5 {
				h.next(t)
			}
			u := setData(t, s, "default", "cm0", "v", "1")
			if got := h.next(t); !strings.HasPrefix(got, "update default/cm0 ") || !strings.HasSuffix(got, "→"+u.ResourceVersion()) {
				t.Fatalf("handler call %q, want the update of cm0 to %s", got, u.ResourceVersion())
			}
			for _, o := range inf.GetStore().List() {
				if o.Data["t"] != "x" {
					t.Errorf("%s cached with t=%q, want one transform (x)", o.Name, o.Data["t"])
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(calls) != 6 {
				t.Errorf("transform saw %d object versions, want 6: %v", len(calls), calls)
			}
			for k, n := range calls {
				if n != 1 {
					t.Errorf("transform ran %d times on %s, want once", n, k)
				}
			}
			if st := inf.Stats().Reflector; (st.WatchListSyncs == 1) != (mode == reflector.WatchListOn) {
				t.Errorf("reflector stats %+v: the sync was not done the way under test", st)
			}
		})
	}
}

func TestHandlerPanicIsRecoveredAndCounted(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	inf := New(configMaps(c), fastOptions(t))
	inf.logger = discardLogger()
	after := newCalls()
	reg, _ := inf.AddEventHandler(ResourceEventHandlerFuncs[*testobj.ConfigMap]{
		AddFunc: func(o *testobj.ConfigMap, initial bool) {
			if o.Name == "bad" {
				panic("bad object")
			}
			after.OnAdd(o, initial)
		},
	})
	start(t, inf)
	wait(t, reg.Synced(), "sync")
	mkCM(t, s, "default", "bad", nil)
	g := mkCM(t, s, "default", "good", nil)
	after.expect(t, "add default/good "+g.ResourceVersion()+" false")
	if b := reg.Backlog(); b.Panics != 1 {
		t.Fatalf("Backlog.Panics = %d, want 1", b.Panics)
	}
}

// TestRelistTurnsMissedDeletesIntoTombstones makes the informer miss a DELETED event: its
// watch stalls, the object is deleted and the history moves on beyond the watcher, which
// the server then closes; the informer's re-watch gets 410 and relists, and the object's
// absence becomes OnDelete(last known state, finalStateUnknown=true).
func TestRelistTurnsMissedDeletesIntoTombstones(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			s := newServerWithOptions(t, apitest.Options{HistorySize: 4})
			c := newClient(t, s)
			a := mkCM(t, s, "default", "a", nil)
			opts := fastOptions(t)
			opts.mode = mode
			opts.WatchList = reflector.WatchListOff
			inf := New(configMaps(c), opts)
			h := newCalls()
			reg, _ := inf.AddEventHandler(h)
			start(t, inf)
			wait(t, reg.Synced(), "sync")
			h.expect(t, "add default/a "+a.ResourceVersion()+" true")
			if _, err := s.WaitForWatches(ctxT(t), "configmaps", 1); err != nil {
				t.Fatal(err)
			}
			release, n, err := s.Faults().StallWatches("configmaps", 0)
			if err != nil || n != 1 {
				t.Fatalf("StallWatches: %d, %v", n, err)
			}
			if err := s.Delete("configmaps", "default", "a"); err != nil {
				t.Fatal(err)
			}
			var last apitest.Object
			for i := range 6 {
				last = mkCM(t, s, "default", fmt.Sprint("filler-", i), nil)
			}
			if err := s.Compact("configmaps"); err != nil {
				t.Fatal(err)
			}
			release()
			// The deletion arrives as a tombstone, and the fillers as adds, in some order.
			var got []string
			for range 7 {
				got = append(got, h.next(t))
			}
			if !slices.Contains(got, "delete default/a "+a.ResourceVersion()+" true") {
				t.Fatalf("calls %q lack the tombstone of a", got)
			}
			if !slices.Contains(got, "add default/filler-5 "+last.ResourceVersion()+" false") {
				t.Fatalf("calls %q lack the last filler", got)
			}
			// (Only a relist produces finalStateUnknown deletes; the reflector's Relists
			// counter is bumped after the store got the list, so it may lag the handler.)
		})
	}
}

func TestNotServedResourceIsRetriedQuietly(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	logs := &logBuffer{}
	opts := Options[*testobj.ConfigMap]{
		Logger:              logs.logger(),
		Backoff:             reflector.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond, Jitter: -1},
		NotFoundGracePeriod: -1, // TestNotFoundIsLoggedAfterTheGracePeriod covers the grace
	}
	gvr := testobj.WidgetGVR
	inf := New(apiclient.NewResource[*testobj.ConfigMap](c, gvr), opts)
	var handlerErrs sync.WaitGroup
	handlerErrs.Add(1)
	var once sync.Once
	if err := inf.SetWatchErrorHandler(func(context.Context, error) { once.Do(handlerErrs.Done) }); err != nil {
		t.Fatal(err)
	}
	start(t, inf)
	f := apitest.RequestFilter{Verb: apitest.VerbList}
	if _, err := s.WaitForRequests(ctxT(t), f, 20); err != nil {
		t.Fatal(err)
	}
	handlerErrs.Wait()
	if st := inf.Stats(); st.NotFound < 19 || st.Synced {
		t.Fatalf("Stats = %+v, want ≥ 19 NotFound and not synced", st)
	}
	if n := logs.count("(404)"); n != 1 { // "(404)": a bare 404 also matches a timestamp (…T20:15:44.404Z)
		t.Fatalf("%d log lines mention the 404, want exactly 1:\n%s", n, logs.String())
	}
	if err := s.AddResource(apitest.ResourceType{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create("widgets.example.com", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "w"}}); err != nil {
		t.Fatal(err)
	}
	wait(t, inf.Synced(), "the informer to sync once the resource is served")
	// A list between AddResource and Create syncs the informer empty; w then comes as an
	// event: wait for it in the cache.
	if err := inf.WaitUntil(ctxT(t), func() bool { _, err := inf.Lister().Get("default", "w"); return err == nil }); err != nil {
		t.Fatalf("w not cached after the sync: %v", err)
	}
}

func TestStalenessFollowsEvents(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	inf := New(configMaps(c), fastOptions(t))
	if inf.Staleness() != 0 {
		t.Fatal("Staleness before Run is not 0")
	}
	h := newCalls()
	reg, _ := inf.AddEventHandler(h)
	start(t, inf)
	wait(t, reg.Synced(), "sync")
	before := time.Now()
	mkCM(t, s, "default", "a", nil)
	h.next(t)
	// The reflector records the event (counters, then the contact time) after handing it to
	// the store, so the handler may run first: wait for the record itself. Staleness stays
	// above the time since the write until the contact is recorded.
	pollUntil(t, "the event in the reflector's stats and in Staleness", func() bool {
		st := inf.Stats().Reflector
		return st.Events > 0 && !st.LastEvent.Before(before) && inf.Staleness() <= time.Since(before)
	})
}

// pollUntil evaluates cond every millisecond until it holds, for state that has no change
// notification (counters), or fails after testTimeout.
func pollUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

func TestAddIndexersBackfills(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	mkCM(t, s, "default", "a", map[string]string{"team": "x"})
	mkCM(t, s, "default", "b", map[string]string{"team": "y"})
	inf := New(configMaps(c), fastOptions(t))
	start(t, inf)
	wait(t, inf.Synced(), "sync")
	if err := inf.AddIndexers(indexer.Indexers[*testobj.ConfigMap]{
		"team": func(o *testobj.ConfigMap) ([]string, error) { return []string{o.Data["team"]}, nil },
	}); err != nil {
		t.Fatal(err)
	}
	objs, err := inf.GetIndexer().ByIndex("team", "y")
	if err != nil || len(objs) != 1 || objs[0].Name != "b" {
		t.Fatalf("ByIndex(team, y) = %v, %v", objs, err)
	}
}

func TestLabelSelectorListing(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	for i, labels := range []map[string]any{{"app": "web", "tier": "front"}, {"app": "db"}, {"app": "web"}, nil} {
		if _, err := s.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": []string{"default", "kube-system"}[i%2], "name": fmt.Sprint("o", i), "labels": labels}}); err != nil {
			t.Fatal(err)
		}
	}
	inf := New(configMaps(c), fastOptions(t))
	start(t, inf)
	wait(t, inf.Synced(), "sync")
	names := func(objs []*testobj.ConfigMap) []string {
		var out []string
		for _, o := range objs {
			out = append(out, o.Namespace+"/"+o.Name)
		}
		slices.Sort(out)
		return out
	}
	l := inf.Lister()
	for _, tc := range []struct {
		ns, sel string
		want    []string
	}{
		{"", "app=web", []string{"default/o0", "default/o2"}},
		{"", "app in (web,db),!tier", []string{"default/o2", "kube-system/o1"}},
		{"", "app!=web", []string{"kube-system/o1", "kube-system/o3"}},
		{"kube-system", "", []string{"kube-system/o1", "kube-system/o3"}},
		{"default", "tier", []string{"default/o0"}},
	} {
		sel := labels.MustParse(tc.sel)
		var got []string
		if tc.ns == "" {
			got = names(l.List(sel))
		} else {
			got = names(l.Namespace(tc.ns).List(sel))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ns %q selector %q: %v, want %v", tc.ns, tc.sel, got, tc.want)
		}
	}
}

func TestFilteringResourceEventHandler(t *testing.T) {
	h := newCalls()
	f := FilteringResourceEventHandler[*testobj.ConfigMap]{
		FilterFunc: func(o *testobj.ConfigMap) bool { return o.Labels["keep"] == "yes" },
		Handler:    h,
	}
	obj := func(rv, keep string) *testobj.ConfigMap {
		return &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: "n", Name: "o", ResourceVersion: rv, Labels: map[string]string{"keep": keep}}}
	}
	f.OnAdd(obj("1", "no"), true)
	f.OnAdd(obj("2", "yes"), true)
	f.OnUpdate(obj("2", "yes"), obj("3", "yes"))
	f.OnUpdate(obj("3", "yes"), obj("4", "no"))
	f.OnUpdate(obj("4", "no"), obj("5", "no"))
	f.OnUpdate(obj("5", "no"), obj("6", "yes"))
	f.OnDelete(obj("6", "yes"), true)
	f.OnDelete(obj("7", "no"), false)
	h.expect(t, "add n/o 2 true", "update n/o 2→3", "delete n/o 4 false", "add n/o 6 false", "delete n/o 6 true")
	h.none(t)
}

// logBuffer collects log lines.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) count(substr string) int {
	n := 0
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// testLogger writes into t's log; informers using it must stop before the test ends.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// foreignMeta and foreignObj mimic client-go's typed objects: an embedded metadata struct
// that is not meta.ObjectMeta.
type foreignMeta struct {
	Name          string
	ManagedFields []string
}

type foreignObj struct {
	foreignMeta
	Spec string
}

func TestDropManagedFieldsOfOtherTypes(t *testing.T) {
	for range 2 { // the second round uses the cached field path
		o := &foreignObj{foreignMeta: foreignMeta{Name: "x", ManagedFields: []string{"m"}}, Spec: "s"}
		if _, err := DropManagedFields(o); err != nil {
			t.Fatal(err)
		}
		if o.ManagedFields != nil || o.Name != "x" || o.Spec != "s" {
			t.Fatalf("after DropManagedFields: %+v", o)
		}
		type plain struct{ A string }
		p := &plain{A: "a"}
		if _, err := DropManagedFields(p); err != nil || p.A != "a" {
			t.Fatalf("a type without managedFields changed: %+v, %v", p, err)
		}
		var nilObj *foreignObj
		if _, err := DropManagedFields(nilObj); err != nil {
			t.Fatal(err)
		}
	}
}

// Options.MaxInternalErrorRetryDuration reaches the reflector: a watch ended by a 500 is
// re-opened where it was, without a relist.
func TestMaxInternalErrorRetryDurationReachesTheReflector(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	opts := fastOptions(t)
	opts.MaxInternalErrorRetryDuration = time.Minute
	inf := New(configMaps(c), opts)
	h := newCalls()
	reg, _ := inf.AddEventHandler(h)
	start(t, inf)
	wait(t, reg.Synced(), "sync")
	if _, err := s.WaitForWatches(ctxT(t), "configmaps", 1); err != nil {
		t.Fatal(err)
	}
	a := mkCM(t, s, "default", "a", nil) // an event: the watch is not "very short"
	h.expect(t, "add default/a "+a.ResourceVersion()+" false")
	seq := s.LastRequestSeq()
	if n, err := s.Faults().SendWatchError("configmaps", &meta.Status{Status: "Failure", Code: 500, Reason: meta.StatusReasonInternalError, Message: "boom"}); err != nil || n != 1 {
		t.Fatalf("SendWatchError = %d, %v", n, err)
	}
	w, err := s.WaitForRequest(ctxT(t), apitest.RequestFilter{Verb: apitest.VerbWatch, Resource: "configmaps", After: seq})
	if err != nil {
		t.Fatal(err)
	}
	if w.Param("resourceVersion") != a.ResourceVersion() {
		t.Fatalf("re-watch at %q, want %s", w.Param("resourceVersion"), a.ResourceVersion())
	}
	b := mkCM(t, s, "default", "b", nil)
	h.expect(t, "add default/b "+b.ResourceVersion()+" false")
	if st := inf.Stats().Reflector; st.Relists != 0 || st.WatchErrors != 1 {
		t.Fatalf("reflector stats %+v", st)
	}
}
