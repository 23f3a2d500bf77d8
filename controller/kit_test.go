package controller

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/controller/events"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/internal/promtest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/workqueue"
)

// Tests of what the Manager hands controllers: event recorders, the client, MaxRetries and
// the cache mutation detector.

func metricValue(t *testing.T, m *Manager, name string, labels map[string]string) float64 {
	t.Helper()
	var b bytes.Buffer
	if err := m.Registry().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	fams, err := promtest.Parse(b.String())
	if err != nil {
		t.Fatal(err)
	}
	return promtest.Value(t, fams, name, labels)
}

func serverEvents(t *testing.T, srv *apitest.Server, ns string) []events.Event {
	t.Helper()
	objs, _, err := srv.List("events", ns)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]events.Event, len(objs))
	for i, o := range objs {
		if err := o.Into(&out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func waitServer(t *testing.T, srv *apitest.Server, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := srv.WaitFor(ctx, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func TestManagerEventRecorder(t *testing.T) {
	srv := newTestServer(t)
	m := newManager(t, srv, ManagerOptions{Kinds: kinds.NewRegistry(), LeaderElection: true, LeaderElectionID: "kit", LeaderElectionIdentity: "replica-7"})
	rec := m.EventRecorderFor("cm-controller")
	inReconcile := make(chan struct{})
	finish := make(chan struct{})
	configMapController(t, m, "cm-controller", ReconcilerFunc(func(ctx context.Context, req Request) (Result, error) {
		cm, err := mustInformer[*testobj.ConfigMap](t, m).Lister().Get(req.Namespace, req.Name)
		if err != nil {
			return Result{}, nil
		}
		rec.Eventf(cm, events.Normal, "Seen", "saw %s", cm.Name)
		if cm.Name == "slow" {
			close(inReconcile)
			<-finish
			rec.Event(cm, events.Warning, "Drained", "recorded while the manager stops")
		}
		return Result{}, nil
	}))
	// The ConfigMap type was registered by For: ConfigMap is a built-in resource.
	if info, err := kinds.InfoForIn[*testobj.ConfigMap](m.Kinds()); err != nil || info != kinds.ConfigMap {
		t.Fatalf("For did not register the type: %v %v", info, err)
	}
	stop, _ := startManager(t, m)
	if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "a"}}); err != nil {
		t.Fatal(err)
	}
	waitServer(t, srv, "the event", func() bool { return len(serverEvents(t, srv, "default")) == 1 })
	ev := serverEvents(t, srv, "default")[0]
	if ev.InvolvedObject.Kind != "ConfigMap" || ev.InvolvedObject.APIVersion != "v1" || ev.InvolvedObject.Name != "a" ||
		ev.Source.Component != "cm-controller" || ev.ReportingController != "cm-controller" || ev.ReportingInstance != "replica-7" ||
		ev.Reason != "Seen" || ev.Message != "saw a" {
		t.Fatalf("event %+v", ev)
	}

	// An event recorded by a reconcile that finishes while the manager stops is written.
	if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "slow"}}); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, inReconcile, "the slow reconcile")
	stopped := make(chan error)
	go func() { stopped <- stop() }()
	close(finish)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, e := range serverEvents(t, srv, "default") {
		reasons = append(reasons, e.Reason)
	}
	if len(reasons) != 3 {
		t.Fatalf("events after shutdown: %v", reasons)
	}
	if s := m.EventBroadcaster().Stats(); s.Created != 3 || s.Late != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// A reconciler that writes and is requeued at once reads its own write through the
// manager's client: no conflict, however fast it goes.
func TestManagerClientReadsItsWrites(t *testing.T) {
	srv := newTestServer(t)
	m := newManager(t, srv, ManagerOptions{Kinds: kinds.NewRegistry()})
	cms := client.TypedFor[*testobj.ConfigMap](m.Client())
	done := make(chan struct{})
	configMapController(t, m, "counter", ReconcilerFunc(func(ctx context.Context, req Request) (Result, error) {
		cm, err := cms.Get(ctx, req.Namespace, req.Name, client.GetOptions{})
		if err != nil {
			return Result{}, err
		}
		n, _ := strconv.Atoi(cm.Data["n"])
		if n == 20 {
			close(done)
			return Result{}, nil
		}
		cm.Data = map[string]string{"n": strconv.Itoa(n + 1)}
		if _, err := cms.Update(ctx, cm, client.UpdateOptions{}); err != nil {
			return Result{}, err
		}
		return Result{Requeue: true}, nil
	}))
	if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "c"}, "data": map[string]any{"n": "0"}}); err != nil {
		t.Fatal(err)
	}
	startManager(t, m)
	waitClosed(t, done, "20 increments")
	for _, r := range srv.RequestsFor(apitest.VerbUpdate, "configmaps") {
		if r.Code == 409 {
			t.Fatalf("an update conflicted: the reconciler read a stale version (%+v)", r)
		}
	}
	if n := len(srv.RequestsFor(apitest.VerbUpdate, "configmaps")); n != 20 {
		t.Fatalf("%d updates, want 20", n)
	}
}

func TestMaxRetries(t *testing.T) {
	srv := newTestServer(t)
	m := newManager(t, srv, ManagerOptions{Kinds: kinds.NewRegistry()})
	var calls atomic.Int32
	reconciled := make(chan int32, 100)
	c, err := New("failing", ReconcilerFunc(func(context.Context, Request) (Result, error) {
		n := calls.Add(1)
		reconciled <- n
		return Result{}, errors.New("always fails")
	}), Options{Logger: quiet, MaxRetries: 3,
		RateLimiter: workqueue.NewItemExponentialFailureRateLimiter[Request](time.Millisecond, 10*time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Watch(FromInformer[*testobj.ConfigMap](mustInformer[*testobj.ConfigMap](t, m), EnqueueRequestForObject[*testobj.ConfigMap]())); err != nil {
		t.Fatal(err)
	}
	if err := m.Add(c); err != nil {
		t.Fatal(err)
	}
	if _, err := New("bad", ReconcilerFunc(func(context.Context, Request) (Result, error) { return Result{}, nil }), Options{MaxRetries: -1}); err == nil {
		t.Fatal("negative MaxRetries accepted")
	}
	startManager(t, m)
	if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "c"}}); err != nil {
		t.Fatal(err)
	}
	// The first reconcile and 3 retries, then the request is dropped and counted.
	for want := int32(1); want <= 4; want++ {
		select {
		case n := <-reconciled:
			if n != want {
				t.Fatalf("reconcile %d, want %d", n, want)
			}
		case <-time.After(testTimeout):
			t.Fatalf("no reconcile %d", want)
		}
	}
	pollUntil(t, "the dropped-requests metric", func() bool {
		return metricValue(t, m, "informerkit_controller_dropped_requests_total", map[string]string{"controller": "failing"}) == 1
	})
	if n := calls.Load(); n != 4 {
		t.Fatalf("%d reconciles once dropped, want 4", n)
	}
	// A new event starts over.
	if _, err := srv.Mutate("configmaps", "default", "c", func(o apitest.Object) { o["data"] = map[string]any{"x": "y"} }); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-reconciled:
		if n != 5 {
			t.Fatalf("reconcile %d after the event, want 5", n)
		}
	case <-time.After(testTimeout):
		t.Fatal("no reconcile after a new event")
	}
}

// A reconciler that changes what a lister returned corrupts the shared cache: the detector
// reports the object and the field.
func TestReconcilerMutatingAListerResultIsCaught(t *testing.T) {
	srv := newTestServer(t)
	found := make(chan *informer.CacheMutationError, 10)
	m := newManager(t, srv, ManagerOptions{Kinds: kinds.NewRegistry(), InformerOptions: informer.FactoryOptions{
		DetectCacheMutations: true,
		OnCacheMutation:      func(e *informer.CacheMutationError) { found <- e },
		// No periodic sweep: it would race with the mutation under -race. The informer's
		// last check, when the manager stops, happens after it.
		CacheMutationCheckInterval: -1,
	}})
	mutated := make(chan struct{})
	configMapController(t, m, "mutator", ReconcilerFunc(func(ctx context.Context, req Request) (Result, error) {
		cm, err := mustInformer[*testobj.ConfigMap](t, m).Lister().Get(req.Namespace, req.Name)
		if err != nil {
			return Result{}, nil
		}
		cm.Data["owner"] = "me" // the bug under test: cm is the cached object
		close(mutated)
		return Result{}, nil
	}))
	if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "c"}, "data": map[string]any{"owner": "you"}}); err != nil {
		t.Fatal(err)
	}
	stop, _ := startManager(t, m)
	waitClosed(t, mutated, "the reconcile")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-found:
		if e.Key != "default/c" || e.Path != `data["owner"]` || e.Cached != `"you"` || e.Now != `"me"` {
			t.Fatalf("report %+v", e)
		}
	case <-time.After(testTimeout):
		t.Fatal("the mutation was not reported")
	}
	if v := metricValue(t, m, "informerkit_informer_cache_mutations", map[string]string{"informer": "configmaps.v1"}); v != 1 {
		t.Fatalf("cache mutations metric = %v", v)
	}
}
