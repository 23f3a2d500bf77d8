package controller

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/internal/promtest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/reflector"
)

func newTestServer(t *testing.T) *apitest.Server {
	t.Helper()
	return newTestServerWithOptions(t, apitest.Options{})
}

func newTestServerWithOptions(t *testing.T, opts apitest.Options) *apitest.Server {
	t.Helper()
	srv := apitest.NewServerWithOptions(opts)
	t.Cleanup(srv.Close)
	return srv
}

// fastBackoff makes reflectors retry quickly in tests.
var fastBackoff = reflector.Backoff{Initial: 10 * time.Millisecond, Max: 100 * time.Millisecond, Jitter: -1}

func newManager(t *testing.T, srv *apitest.Server, opts ManagerOptions) *Manager {
	t.Helper()
	return newManagerWithConfig(t, srv.Config(), opts)
}

// newManagerWithConfig is newManager with a client configuration of the test's own.
func newManagerWithConfig(t *testing.T, cfg *apiclient.Config, opts ManagerOptions) *Manager {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	if opts.Kinds == nil {
		opts.Kinds = testobj.NewRegistry()
	}
	// The built-in test types are registered in every test's registry (a test that needs
	// one unregistered declares a type of its own).
	for typ, info := range map[reflect.Type]kinds.Info{reflect.TypeFor[*testobj.ConfigMap](): kinds.ConfigMap, reflect.TypeFor[*testobj.Pod](): kinds.Pod} {
		if _, ok := opts.Kinds.Lookup(typ); !ok {
			if err := opts.Kinds.Register(typ, info); err != nil {
				t.Fatal(err)
			}
		}
	}
	opts.InformerOptions.Backoff = fastBackoff
	m, err := NewManager(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// startManager runs m.Start in the background. stop cancels it and returns Start's error;
// done is closed when Start has returned, and stop then returns at once.
func startManager(t *testing.T, m *Manager) (stop func() error, done <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	finished := make(chan struct{})
	var err error
	go func() { err = m.Start(ctx); close(finished) }()
	stop = func() error {
		cancel()
		select {
		case <-finished:
		case <-time.After(testTimeout):
			t.Fatal("Manager.Start did not return")
		}
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop, finished
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(testTimeout):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// configMapController adds to m a controller of ConfigMaps that sends every Request to got.
func configMapController(t *testing.T, m *Manager, name string, rec Reconciler) {
	t.Helper()
	cms := mustInformer[*testobj.ConfigMap](t, m)
	c, err := New(name, rec, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Watch(FromInformer[*testobj.ConfigMap](cms, EnqueueRequestForObject[*testobj.ConfigMap]())); err != nil {
		t.Fatal(err)
	}
	if err := m.Add(c); err != nil {
		t.Fatal(err)
	}
}

func forward(got chan<- Request) Reconciler {
	return ReconcilerFunc(func(_ context.Context, req Request) (Result, error) {
		got <- req
		return Result{}, nil
	})
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// pollUntil evaluates cond every 20 ms until it holds (the condition depends on elapsed
// time, like staleness, so there is no event to wait for).
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

func TestManagerRunsControllersAndServesEndpoints(t *testing.T) {
	srv := newTestServer(t)
	if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "before"}}); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, srv, ManagerOptions{HTTPAddress: "127.0.0.1:0"})
	got := make(chan Request, 10)
	configMapController(t, m, "cm", forward(got))
	var ranOthers sync.WaitGroup
	ranOthers.Add(1)
	if err := m.Add(WithoutLeaderElection(RunnableFunc(func(ctx context.Context) error {
		ranOthers.Done()
		<-ctx.Done()
		return nil
	}))); err != nil {
		t.Fatal(err)
	}
	stop, _ := startManager(t, m)
	waitClosed(t, m.Elected(), "elected")
	if !m.IsLeader() || m.Identity() != "" {
		t.Fatal("a manager without leader election must lead once synced, without identity")
	}
	expect(t, got, Request{"default", "before"}, "existing object")
	if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "after"}}); err != nil {
		t.Fatal(err)
	}
	expect(t, got, Request{"default", "after"}, "new object")
	ranOthers.Wait()

	base := "http://" + m.HTTPAddr()
	if code, body := httpGet(t, base+"/healthz"); code != 200 || body != "ok" {
		t.Fatalf("/healthz = %d %q", code, body)
	}
	if code, body := httpGet(t, base+"/readyz?verbose"); code != 200 || !strings.Contains(body, "[+]informers ok") {
		t.Fatalf("/readyz = %d %q", code, body)
	}
	// The reconciler sent the Request before it returned, so the controller may not have
	// recorded the second reconcile yet: wait for the recorded figure itself.
	var fams map[string]*promtest.Family
	pollUntil(t, "two successful reconciles in /metrics", func() bool {
		code, body := httpGet(t, base+"/metrics")
		if code != 200 {
			t.Fatalf("/metrics = %d", code)
		}
		var err error
		if fams, err = promtest.Parse(body); err != nil {
			t.Fatalf("/metrics does not parse: %v\n%s", err, body)
		}
		return promtest.Value(t, fams, "controller_runtime_reconcile_total", map[string]string{"controller": "cm", "result": "success"}) >= 2
	})
	promtest.CheckHistograms(t, fams)
	if v := promtest.Value(t, fams, "workqueue_adds_total", map[string]string{"name": "cm"}); v < 2 {
		t.Errorf("workqueue_adds_total = %v, want >= 2", v)
	}
	if v := promtest.Value(t, fams, "controller_runtime_reconcile_time_seconds_count", map[string]string{"controller": "cm"}); v < 2 {
		t.Errorf("reconcile_time count = %v", v)
	}
	if v := promtest.Value(t, fams, "informerkit_informer_synced", map[string]string{"informer": "configmaps.v1"}); v != 1 {
		t.Errorf("informer synced = %v", v)
	}
	promtest.Value(t, fams, "controller_runtime_active_workers", map[string]string{"controller": "cm"})
	promtest.Value(t, fams, "informerkit_informer_staleness_seconds", map[string]string{"informer": "configmaps.v1"})
	if err := stop(); err != nil {
		t.Fatalf("Start = %v after cancel", err)
	}
	if err := m.Add(RunnableFunc(func(context.Context) error { return nil })); err == nil {
		t.Fatal("Add after Start accepted")
	}
	if err := m.Start(context.Background()); err == nil {
		t.Fatal("second Start accepted")
	}
}

func TestReadyzFailsWhileAWatchIsStalled(t *testing.T) {
	// Bookmarks every 50 ms that carry the global resourceVersion, which a heartbeat on
	// another resource keeps moving (apitest, like the watch cache, sends a bookmark only when
	// there is progress to confirm).
	srv := newTestServerWithOptions(t, apitest.Options{BookmarkInterval: 50 * time.Millisecond, ProgressNotify: true})
	heartbeat(t, srv)
	m := newManager(t, srv, ManagerOptions{
		MaxStaleness: 500 * time.Millisecond,
		// Stall detection off: the stall must show in readiness, not be repaired.
		InformerOptions: informer.FactoryOptions{StallTimeout: -1},
	})
	configMapController(t, m, "cm", forward(make(chan Request, 10)))
	h := m.Handler()
	ready := func() (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := ready(); code != 500 || !strings.Contains(body, "caches not synced") {
		t.Fatalf("/readyz before Start = %d %q", code, body)
	}
	startManager(t, m)
	waitClosed(t, m.Elected(), "elected")
	pollUntil(t, "ready", func() bool { c, _ := ready(); return c == 200 })

	release, n, err := srv.Faults().StallWatches("configmaps", 0)
	if err != nil || n == 0 {
		t.Fatalf("StallWatches: %d, %v", n, err)
	}
	pollUntil(t, "unready during the stall", func() bool { c, _ := ready(); return c == 500 })
	if _, body := ready(); !strings.Contains(body, "[-]informers failed: stale informers: configmaps.v1 (") {
		t.Fatalf("/readyz does not name the stale informer: %q", body)
	}
	release()
	pollUntil(t, "ready after the stall", func() bool { c, _ := ready(); return c == 200 })
}

func TestReadyzCoversInformersMadeOnTheFactory(t *testing.T) {
	srv := newTestServerWithOptions(t, apitest.Options{BookmarkInterval: 50 * time.Millisecond, ProgressNotify: true})
	heartbeat(t, srv)
	m := newManager(t, srv, ManagerOptions{
		MaxStaleness:    500 * time.Millisecond,
		InformerOptions: informer.FactoryOptions{StallTimeout: -1},
	})
	// Made with informer.InformerFor on the manager's factory, not with For: no controller and no
	// Add registers it.
	cms := informer.InformerFor[*testobj.ConfigMap](m.Factory(), testobj.ConfigMapGVR)
	h := m.Handler()
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := get("/readyz"); code != 500 || !strings.Contains(body, "caches not synced yet: configmaps.v1") {
		t.Fatalf("/readyz before Start = %d %q, want the factory's informer named", code, body)
	}
	startManager(t, m)
	waitClosed(t, m.Elected(), "elected")
	pollUntil(t, "ready", func() bool { c, _ := get("/readyz"); return c == 200 })
	if !cms.HasSynced() {
		t.Fatal("ready before the factory's informer synced")
	}
	_, body := get("/metrics")
	fams, err := promtest.Parse(body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	if v := promtest.Value(t, fams, "informerkit_informer_synced", map[string]string{"informer": "configmaps.v1"}); v != 1 {
		t.Errorf("informer synced = %v", v)
	}

	release, n, err := srv.Faults().StallWatches("configmaps", 0)
	if err != nil || n == 0 {
		t.Fatalf("StallWatches: %d, %v", n, err)
	}
	pollUntil(t, "unready during the stall", func() bool { c, _ := get("/readyz"); return c == 500 })
	if _, body := get("/readyz"); !strings.Contains(body, "[-]informers failed: stale informers: configmaps.v1 (") {
		t.Fatalf("/readyz does not name the stale informer: %q", body)
	}
	release()
	pollUntil(t, "ready after the stall", func() bool { c, _ := get("/readyz"); return c == 200 })
}

// heartbeat writes a Secret every 20 ms until the test ends.
func heartbeat(t *testing.T, srv *apitest.Server) {
	t.Helper()
	if _, err := srv.Create("secrets", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "heartbeat"}}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			_, _ = srv.Mutate("secrets", "default", "heartbeat", func(o apitest.Object) {
				o["data"] = map[string]any{"n": base64.StdEncoding.EncodeToString([]byte(strconv.Itoa(n)))}
			})
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}

func TestCacheSyncTimeoutNamesTheInformer(t *testing.T) {
	srv := newTestServer(t)
	m := newManager(t, srv, ManagerOptions{CacheSyncTimeout: 300 * time.Millisecond})
	// Widgets are not served: the informer retries quietly and never syncs.
	widgets := mustInformer[*testobj.Widget](t, m)
	c, _ := New("widgets", ReconcilerFunc(func(context.Context, Request) (Result, error) { return Result{}, nil }), Options{Logger: quiet})
	_ = c.Watch(FromInformer[*testobj.Widget](widgets, EnqueueRequestForObject[*testobj.Widget]()))
	_ = m.Add(c)
	_ = mustInformer[*testobj.ConfigMap](t, m)
	err := m.Start(context.Background())
	var nse *informer.NotSyncedError
	if !errors.As(err, &nse) || len(nse.Informers) != 1 || nse.Informers[0] != "widgets.v1.example.com" {
		t.Fatalf("Start = %v, want a NotSyncedError naming widgets.v1.example.com only", err)
	}
	if !strings.Contains(err.Error(), "caches did not sync within 300ms") {
		t.Fatalf("error %q does not say what timed out", err)
	}
}

func TestRunnableErrorStopsTheManager(t *testing.T) {
	srv := newTestServer(t)
	m := newManager(t, srv, ManagerOptions{})
	boom := errors.New("boom")
	otherStopped := make(chan struct{})
	_ = m.Add(RunnableFunc(func(context.Context) error { return boom }))
	_ = m.Add(WithoutLeaderElection(RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		close(otherStopped)
		return nil
	})))
	err := m.Start(context.Background())
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "runnable controller.RunnableFunc: boom") {
		t.Fatalf("Start = %v", err)
	}
	waitClosed(t, otherStopped, "the other runnable to stop")
}

func TestGracefulShutdownTimeoutNamesStuckRunnables(t *testing.T) {
	srv := newTestServer(t)
	m := newManager(t, srv, ManagerOptions{GracefulShutdownTimeout: 100 * time.Millisecond})
	unstick := make(chan struct{})
	stuckDone := make(chan struct{})
	_ = m.Add(stuck{unstick: unstick, done: stuckDone})
	stop, _ := startManager(t, m)
	waitClosed(t, m.Elected(), "elected")
	err := stop()
	if err == nil || !strings.Contains(err.Error(), "still running after the graceful shutdown timeout 100ms: stuck-runnable") {
		t.Fatalf("Start = %v", err)
	}
	close(unstick)
	<-stuckDone
}

type stuck struct{ unstick, done chan struct{} }

func (s stuck) Start(context.Context) error { defer close(s.done); <-s.unstick; return nil }
func (s stuck) String() string              { return "stuck-runnable" }

func TestNewManagerValidatesLeaderElection(t *testing.T) {
	srv := newTestServer(t)
	for _, tc := range []struct {
		opts ManagerOptions
		want string
	}{
		{ManagerOptions{LeaderElection: true}, "needs a LeaderElectionID"},
		{ManagerOptions{LeaderElection: true, LeaderElectionID: "x", LeaseDuration: 5 * time.Second}, "LeaseDuration (5s) must be greater than RenewDeadline (10s)"},
		{ManagerOptions{LeaderElection: true, LeaderElectionID: "x", RetryPeriod: 9 * time.Second}, "RenewDeadline (10s) must be greater than 1.2 × RetryPeriod"},
	} {
		_, err := NewManager(srv.Config(), tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewManager(%+v) = %v, want %q", tc.opts, err, tc.want)
		}
	}
	if _, err := NewManager(nil, ManagerOptions{}); err == nil {
		t.Error("nil config accepted")
	}
	if _, err := NewManager(&apiclient.Config{Host: "::bad"}, ManagerOptions{}); err == nil {
		t.Error("bad host accepted")
	}
	m := newManager(t, srv, ManagerOptions{})
	if err := m.AddReadyzCheck("x", func(*http.Request) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := m.AddReadyzCheck("x", func(*http.Request) error { return nil }); err == nil {
		t.Error("duplicate check accepted")
	}
	if err := m.AddHealthzCheck("", nil); err == nil {
		t.Error("unnamed check accepted")
	}
	if err := m.Add(nil); err == nil {
		t.Error("nil runnable accepted")
	}
	m.client.Close()
}

func TestHealthzReportsFailingChecks(t *testing.T) {
	srv := newTestServer(t)
	m := newManager(t, srv, ManagerOptions{})
	defer m.client.Close()
	_ = m.AddHealthzCheck("disk", func(*http.Request) error { return errors.New("full") })
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != 500 || rec.Body.String() != "[+]ping ok\n[-]disk failed: full\nhealthz check failed\n" {
		t.Fatalf("/healthz = %d %q", rec.Code, rec.Body.String())
	}
}

// A controller built without a Logger logs through the Manager it is added to (as
// ManagerOptions.Logger says); one built with a Logger keeps it.
func TestControllersLogThroughTheManagersLogger(t *testing.T) {
	srv := newTestServer(t)
	var mgrOut, ownOut bytes.Buffer
	m := newManager(t, srv, ManagerOptions{Logger: slog.New(slog.NewTextHandler(&mgrOut, nil))})
	nop := ReconcilerFunc(func(context.Context, Request) (Result, error) { return Result{}, nil })
	defaulted, err := New("defaulted", nop, Options{})
	if err != nil {
		t.Fatal(err)
	}
	own, err := New("own", nop, Options{Logger: slog.New(slog.NewTextHandler(&ownOut, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Controller{defaulted, own} {
		if err := m.Add(c); err != nil {
			t.Fatal(err)
		}
		c.log.Info("hello")
	}
	if got := mgrOut.String(); !strings.Contains(got, "controller=defaulted") || strings.Contains(got, "controller=own") {
		t.Errorf("manager's log = %q, want the defaulted controller's line only", got)
	}
	if got := ownOut.String(); !strings.Contains(got, "controller=own") {
		t.Errorf("own logger's log = %q, want the own controller's line", got)
	}
}

// mustInformer is InformerFor for tests: an error fails the test.
func mustInformer[T meta.Object](t testing.TB, m *Manager) *informer.Informer[T] {
	t.Helper()
	inf, err := InformerFor[T](m)
	if err != nil {
		t.Fatal(err)
	}
	return inf
}
