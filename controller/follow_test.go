package controller

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// widgetCRD is testobj.Widget's CustomResourceDefinition, with v2 as well when withV2.
func widgetCRD(withV2, v2Served bool) map[string]any {
	schema := map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
	versions := []any{map[string]any{"name": "v1", "served": true, "storage": true, "schema": schema,
		"subresources": map[string]any{"status": map[string]any{}}}}
	if withV2 {
		versions = append(versions, map[string]any{"name": "v2", "served": v2Served, "storage": false, "schema": schema})
	}
	return map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{"group": "example.com", "scope": "Namespaced",
			"names": map[string]any{"kind": "Widget", "plural": "widgets"}, "versions": versions}}
}

const crdsName = "customresourcedefinitions.apiextensions.k8s.io"

// levelLog records every log line with its level (with warnOnly, the warnings and errors
// only).
type levelLog struct {
	mu       sync.Mutex
	lines    []string
	warnOnly bool
}

func (l *levelLog) Enabled(_ context.Context, level slog.Level) bool {
	return !l.warnOnly || level >= slog.LevelWarn
}
func (l *levelLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	line := r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool { line += " " + a.String(); return true })
	l.lines = append(l.lines, line)
	return nil
}
func (l *levelLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *levelLog) WithGroup(string) slog.Handler      { return l }

// above returns the lines at level or above.
func (l *levelLog) above(level slog.Level) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		lv, _, _ := strings.Cut(line, " ")
		var x slog.Level
		if x.UnmarshalText([]byte(lv)) == nil && x >= level {
			out = append(out, line)
		}
	}
	return out
}

// waitFor waits, at most testTimeout, until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// readyz returns the Manager's /readyz?verbose answer.
func readyz(t *testing.T, m *Manager) string {
	t.Helper()
	resp, err := http.Get("http://" + m.HTTPAddr() + "/readyz?verbose")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// followingWidgets builds a Manager with a Widget controller that follows its resources,
// watching gvr, and starts it.
func followingWidgets(t *testing.T, srv *apitest.Server, gvr meta.GroupVersionResource, log *levelLog) (*Manager, *Controller, <-chan Request) {
	t.Helper()
	reg := testobj.NewRegistry()
	m := newManager(t, srv, ManagerOptions{Kinds: reg, Logger: slog.New(log), HTTPAddress: "127.0.0.1:0"})
	got := make(chan Request, 100)
	ctl, err := NewBuilder(m, "widgets").
		For(PrimaryWithOptions(PrimaryOptions[*testobj.Widget]{Resource: gvr})).
		Owns(Owned[*testobj.ConfigMap]()).
		WithOptions(Options{FollowResources: true}).
		Build(recordingReconciler(got))
	if err != nil {
		t.Fatal(err)
	}
	startManager(t, m)
	waitFor(t, "the manager's endpoints", func() bool { return m.HTTPAddr() != "" })
	return m, ctl, got
}

// widgetInformers returns the Manager's informers of widgets.
func widgetInformers(m *Manager) int {
	n := 0
	for _, inf := range m.Factory().Informers() {
		if gvr, _ := m.Factory().ResourceOf(inf); gvr.Resource == "widgets" {
			n++
		}
	}
	return n
}

func TestControllerFollowsItsCRD(t *testing.T) {
	srv := newTestServerWithOptions(t, apitest.Options{CRDWatchTeardownDelay: -1})
	log := &levelLog{}
	m, ctl, got := followingWidgets(t, srv, testobj.WidgetGVR, log)

	// No CRD: the controller waits, quietly, and says what for.
	waitFor(t, "the controller to wait", func() bool { return len(ctl.Waiting()) == 1 })
	if r := readyz(t, m); !strings.Contains(r, "[-]resources-widgets failed: waiting for resource widgets.v1.example.com to be served") {
		t.Fatalf("readyz while waiting:\n%s", r)
	}
	if ctl.Running() || widgetInformers(m) != 0 || srv.CountRequests(apitest.VerbList, "widgets.example.com") != 0 {
		t.Fatal("the controller runs without its CRD")
	}

	for round := range 3 {
		// The CRD comes: the controller starts and reconciles.
		if _, err := srv.Create(crdsName, widgetCRD(false, false)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the controller to start", ctl.Running)
		if _, err := srv.Create("widgets", widget("default", "w")); err != nil {
			t.Fatal(err)
		}
		expect(t, got, Request{Namespace: "default", Name: "w"}, "a widget")
		if r := readyz(t, m); !strings.Contains(r, "[+]resources-widgets ok") {
			t.Fatalf("round %d: readyz while running:\n%s", round, r)
		}
		if widgetInformers(m) != 1 {
			t.Fatalf("round %d: %d widget informers", round, widgetInformers(m))
		}
		if !strings.Contains(scrape(t, m.Registry()), `informer="widgets.v1.example.com"`) {
			t.Fatalf("round %d: no metrics of the widget informer while it runs", round)
		}
		q := ctl.Queue()

		// The CRD goes: its widget is deleted (a reconcile), the controller stops, its queue
		// shuts down, its informer is released, and it waits again.
		if err := srv.Delete(crdsName, "", "widgets.example.com"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the controller to stop", func() bool { return !ctl.Running() && len(ctl.Waiting()) == 1 })
		if !q.ShuttingDown() {
			t.Fatalf("round %d: the stopped life's queue is not shut down", round)
		}
		waitFor(t, "the widget informer to go", func() bool { return widgetInformers(m) == 0 })
		// The metrics are computed at each scrape (the Stats are reused for 100 ms).
		waitFor(t, "the widget informer's metrics to go", func() bool {
			return !strings.Contains(scrape(t, m.Registry()), "widgets.v1.example.com")
		})
		for len(got) > 0 {
			<-got // the deletion's reconcile
		}
		if r := readyz(t, m); !strings.Contains(r, "[-]resources-widgets failed: waiting for resource widgets.v1.example.com to be served") {
			t.Fatalf("round %d: readyz after the CRD went:\n%s", round, r)
		}
	}
	if bad := log.above(slog.LevelWarn); len(bad) > 0 {
		t.Fatalf("warnings or errors logged:\n%s", strings.Join(bad, "\n"))
	}
}

func TestControllerFollowsAServedVersion(t *testing.T) {
	srv := newTestServerWithOptions(t, apitest.Options{CRDWatchTeardownDelay: -1})
	if _, err := srv.Create(crdsName, widgetCRD(false, false)); err != nil {
		t.Fatal(err)
	}
	log := &levelLog{}
	v2 := meta.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "widgets"}
	m, ctl, got := followingWidgets(t, srv, v2, log)
	waitFor(t, "the controller to wait for v2", func() bool { return len(ctl.Waiting()) == 1 && ctl.Waiting()[0] == v2 })

	setV2 := func(served string) {
		t.Helper()
		patch := `{"spec":{"versions":[{"name":"v1","served":true,"storage":true},{"name":"v2","served":` + served + `,"storage":false}]}}`
		if _, err := srv.Patch(crdsName, "", "widgets.example.com", apiclient.MergePatchType, []byte(patch)); err != nil {
			t.Fatal(err)
		}
	}
	setV2("true")
	waitFor(t, "the controller to start once v2 is served", ctl.Running)
	if _, err := srv.Create("widgets", widget("default", "w")); err != nil {
		t.Fatal(err)
	}
	expect(t, got, Request{Namespace: "default", Name: "w"}, "a widget created at v1, seen at v2")

	setV2("false")
	waitFor(t, "the controller to stop once v2 is not served", func() bool { return !ctl.Running() && len(ctl.Waiting()) == 1 })
	waitFor(t, "the widget informer to go", func() bool { return widgetInformers(m) == 0 })
	if bad := log.above(slog.LevelWarn); len(bad) > 0 {
		t.Fatalf("warnings or errors logged:\n%s", strings.Join(bad, "\n"))
	}
}

func TestFollowResourcesNeedsSourcesThatRunAgain(t *testing.T) {
	srv := newTestServer(t)
	m := newManager(t, srv, ManagerOptions{})
	cms := mustInformer[*testobj.ConfigMap](t, m)
	c, err := New("fixed", ReconcilerFunc(func(context.Context, Request) (Result, error) { return Result{}, nil }),
		Options{FollowResources: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Watch(FromInformer[*testobj.ConfigMap](cms, EnqueueRequestForObject[*testobj.ConfigMap]())); err != nil {
		t.Fatal(err)
	}
	// Without a Manager: no resource tracker.
	if err := c.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "FollowResources needs a Manager") {
		t.Fatalf("Start without a Manager: %v", err)
	}

	c2, _ := New("fixed", ReconcilerFunc(func(context.Context, Request) (Result, error) { return Result{}, nil }),
		Options{FollowResources: true, Logger: quiet})
	_ = c2.Watch(FromInformer[*testobj.ConfigMap](cms, EnqueueRequestForObject[*testobj.ConfigMap]()))
	if err := m.Add(c2); err != nil {
		t.Fatal(err)
	}
	stop, done := startManager(t, m)
	waitClosed(t, done, "the manager to fail")
	if err := stop(); err == nil || !strings.Contains(err.Error(), "source 0 (informer configmaps.v1) cannot run again") {
		t.Fatalf("a following controller over a fixed informer: %v", err)
	}
}

// A Kind source of a controller that follows its resources runs, stops and runs again,
// each time over a fresh informer that its stop releases.
func TestFollowingKindRunsAgain(t *testing.T) {
	srv := newTestServer(t)
	m := newManager(t, srv, ManagerOptions{})
	unbound := Kind[*testobj.ConfigMap](m, EnqueueRequestForObject[*testobj.ConfigMap]())
	if err := unbound.Run(context.Background(), newQueue()); err == nil {
		t.Fatal("an unbound Kind source ran")
	}
	src, err := unbound.(binder).bind(true)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Run(context.Background(), newQueue()); err == nil {
		t.Fatal("Kind ran before the Manager started")
	}
	if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "a"}}); err != nil {
		t.Fatal(err)
	}
	startManager(t, m)
	waitFor(t, "the manager to start", func() bool { return m.startInformers() == nil })
	for range 3 {
		q := newQueue()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- src.Run(ctx, q) }()
		waitFor(t, "the source to sync", src.HasSynced)
		if got := drain(q); len(got) != 1 || got[0].Name != "a" {
			t.Fatalf("requests %v", got)
		}
		if len(m.Factory().Informers()) != 1 {
			t.Fatalf("%d informers while the source runs", len(m.Factory().Informers()))
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if src.HasSynced() || len(m.Factory().Informers()) != 0 {
			t.Fatalf("after the stop: synced %v, %d informers", src.HasSynced(), len(m.Factory().Informers()))
		}
	}
}

// The tracker without the right to list CRDs follows through discovery.
func TestTrackerFallsBackToDiscovery(t *testing.T) {
	srv := newTestServer(t)
	if err := srv.Faults().FailRequests(apitest.VerbList, crdsName, 1, http.StatusForbidden, 0); err != nil {
		t.Fatal(err)
	}
	c, err := apiclient.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tr := newResourceTracker(c, quiet, time.Hour, "")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); tr.run(ctx) }()
	defer func() { cancel(); <-done }()
	wctx, wcancel := context.WithTimeout(ctx, testTimeout)
	defer wcancel()
	if err := tr.waitServed(wctx, []meta.GroupVersionResource{testobj.ConfigMapGVR}, func([]meta.GroupVersionResource) {}); err != nil {
		t.Fatal(err)
	}
	if miss, _ := tr.missing([]meta.GroupVersionResource{testobj.WidgetGVR}); len(miss) != 1 {
		t.Fatalf("an unserved resource is served: %v", miss)
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		t.Fatal("cancelled early")
	}
}

// A following controller's registered kind is checked against its CRD when the CRD comes,
// though discovery, read at intervals, does not list the resource yet.
func TestFollowingControllerKindCheckedAgainstItsCRD(t *testing.T) {
	srv := newTestServerWithOptions(t, apitest.Options{CRDWatchTeardownDelay: -1})
	wrong := testobj.WidgetInfo
	wrong.Kind = "Widgets"
	reg := kinds.NewRegistry()
	if err := reg.Register(reflect.TypeFor[*testobj.Widget](), wrong); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, srv, ManagerOptions{Kinds: reg, DiscoveryInterval: time.Hour})
	ctl, err := NewBuilder(m, "widgets").For(Primary[*testobj.Widget]()).
		WithOptions(Options{FollowResources: true, Logger: quiet}).
		Build(ReconcilerFunc(func(context.Context, Request) (Result, error) { return Result{}, nil }))
	if err != nil {
		t.Fatal(err)
	}
	stop, done := startManager(t, m)
	waitFor(t, "the controller to wait", func() bool { return len(ctl.Waiting()) == 1 })
	if _, err := srv.Create(crdsName, widgetCRD(false, false)); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, done, "the manager to fail")
	var km *KindMismatchError
	if err := stop(); !errors.As(err, &km) || km.Served == nil || km.Served.Kind != "Widget" || km.Watched != testobj.WidgetGVR {
		t.Fatalf("Start: %v", err)
	}
}

// A resource newly served is confirmed by a watch: while the kube-apiserver initialises a
// new CRD's watch cache it serves lists but answers watches 429 with Retry-After 1 s, and the
// controller's informer must not be the one to meet those answers (it would back off for
// the second). Here the resource's first three watches once v2 is served are refused so
// (apitest's fault rules need a served resource: v1 is).
func TestTrackerWaitsForTheWatchCache(t *testing.T) {
	srv := newTestServerWithOptions(t, apitest.Options{CRDWatchTeardownDelay: -1})
	if _, err := srv.Create(crdsName, widgetCRD(true, false)); err != nil {
		t.Fatal(err)
	}
	log := &levelLog{}
	v2 := meta.GroupVersionResource{Group: "example.com", Version: "v2", Resource: "widgets"}
	_, ctl, got := followingWidgets(t, srv, v2, log)
	waitFor(t, "the controller to wait for v2", func() bool { return len(ctl.Waiting()) == 1 })
	if err := srv.Faults().FailRequests(apitest.VerbWatch, "widgets.example.com", 3, http.StatusTooManyRequests, time.Second); err != nil {
		t.Fatal(err)
	}
	seq := srv.LastRequestSeq()
	patch := `{"spec":{"versions":[{"name":"v1","served":true,"storage":true},{"name":"v2","served":true,"storage":false}]}}`
	if _, err := srv.Patch(crdsName, "", "widgets.example.com", apiclient.MergePatchType, []byte(patch)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the controller to start", ctl.Running)
	if _, err := srv.Create("widgets", widget("default", "w")); err != nil {
		t.Fatal(err)
	}
	expect(t, got, Request{Namespace: "default", Name: "w"}, "a widget")
	refused := 0
	for _, r := range srv.RequestsMatching(apitest.RequestFilter{Verb: apitest.VerbWatch, Resource: "widgets.example.com", After: seq}) {
		if r.Code == http.StatusTooManyRequests {
			refused++
		}
	}
	if refused != 3 {
		t.Fatalf("%d watches of widgets refused, want the 3 of the rule", refused)
	}
	for _, l := range log.above(slog.LevelDebug) {
		if strings.Contains(l, "backing off") {
			t.Fatalf("the informer met the refusals: %s", l)
		}
	}
}
