package runner

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/meta"
)

const testTimeout = 30 * time.Second

var (
	configmaps = meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets    = meta.GroupVersionResource{Version: "v1", Resource: "secrets"}
	widgets    = meta.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
)

// logRecorder keeps every log record's message and controller attribute.
type logRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, r.Message)
	return nil
}
func (l *logRecorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	for _, a := range attrs {
		if a.Key == "controller" {
			return &prefixed{l, a.Value.String()}
		}
	}
	return l
}
func (l *logRecorder) WithGroup(string) slog.Handler { return l }

func (l *logRecorder) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}

type prefixed struct {
	l    *logRecorder
	name string
}

func (p *prefixed) Enabled(context.Context, slog.Level) bool { return true }
func (p *prefixed) Handle(_ context.Context, r slog.Record) error {
	p.l.mu.Lock()
	defer p.l.mu.Unlock()
	p.l.lines = append(p.l.lines, p.name+": "+r.Message)
	return nil
}
func (p *prefixed) WithAttrs([]slog.Attr) slog.Handler { return p }
func (p *prefixed) WithGroup(string) slog.Handler      { return p }

func newManager(t *testing.T, srv *apitest.Server, log *slog.Logger) *controller.Manager {
	t.Helper()
	mgr, err := controller.NewManager(srv.Config(), controller.ManagerOptions{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

// informerOf starts nothing: it only asks the factory for an informer, as a controller's
// setup does.
func informerOf(gvr meta.GroupVersionResource) InitFunc {
	return func(_ context.Context, cc ControllerContext) (bool, error) {
		_, err := controller.InformerForWithOptions[*meta.ObjectMeta](cc.Manager, controller.InformerOptions{Resource: gvr})
		return err == nil, err
	}
}

// readyz returns the body of the manager's /readyz?verbose.
func readyz(mgr *controller.Manager) string {
	rec := httptest.NewRecorder()
	mgr.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz?verbose", nil))
	return rec.Body.String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling the asserted state, not synchronising on it
	}
}

func TestIsEnabled(t *testing.T) {
	on := Descriptor{Name: "on"}
	off := Descriptor{Name: "off", DisabledByDefault: true}
	for _, tc := range []struct {
		list        []string
		wantOn, off bool
	}{
		{[]string{"*"}, true, false},
		{[]string{"*", "off"}, true, true},
		{[]string{"off"}, false, true},
		{[]string{"*", "-on"}, false, false},
		{[]string{"-on", "*"}, false, false},
		{[]string{"on", "-on"}, true, false}, // the first mention wins, as kube-controller-manager
		{nil, false, false},
		{[]string{"-off", "*"}, true, false},
	} {
		if got := IsEnabled(on, tc.list); got != tc.wantOn {
			t.Errorf("IsEnabled(on, %q) = %v", tc.list, got)
		}
		if got := IsEnabled(off, tc.list); got != tc.off {
			t.Errorf("IsEnabled(off, %q) = %v", tc.list, got)
		}
	}
}

func TestNewRejectsUnknownAndDuplicateNames(t *testing.T) {
	srv := apitest.NewServer()
	defer srv.Close()
	mgr := newManager(t, srv, slog.New(slog.DiscardHandler))
	descs := []Descriptor{{Name: "a", Init: informerOf(configmaps)}}
	_, err := New(mgr, descs, Options{Controllers: []string{"*", "-b"}})
	if !errors.Is(err, ErrUnknownController) || !strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("unknown name: %v", err)
	}
	if _, err := New(mgr, append(descs, descs[0]), Options{}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("duplicate: %v", err)
	}
}

func TestControllersFlag(t *testing.T) {
	descs := []Descriptor{{Name: "a"}, {Name: "b"}, {Name: "c", DisabledByDefault: true}}
	var list []string
	fs := flag.NewFlagSet("kcm", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	ControllersVar(fs, &list, descs)
	if !slices.Equal(list, []string{"*"}) {
		t.Fatalf("default %q", list)
	}
	if err := fs.Parse([]string{"--controllers=*,-a", "--controllers", "c"}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"*", "-a", "c"}; !slices.Equal(list, want) {
		t.Fatalf("list %q, want %q", list, want)
	}
	usage := fs.Lookup("controllers").Usage
	if !strings.Contains(usage, "a, b, c") || !strings.Contains(usage, "Off by default: c") {
		t.Errorf("usage %q", usage)
	}

	var list2 []string
	fs2 := flag.NewFlagSet("kcm", flag.ContinueOnError)
	fs2.SetOutput(io.Discard)
	ControllersVar(fs2, &list2, descs)
	// The flag package formats Set's error with %v: the message is what reaches the user.
	err := fs2.Parse([]string{"--controllers=a,-nope"})
	if err == nil || !strings.Contains(err.Error(), `"nope" is not in the list of known controllers`) {
		t.Fatalf("unknown name in the flag: %v", err)
	}
	if err := NewControllersValue(&list2, descs).Set("x"); !errors.Is(err, ErrUnknownController) {
		t.Fatalf("Set: %v", err)
	}
}

// TestRun runs five controllers: started, skipped for a missing resource, skipped quietly
// (Optional), skipped by its initializer, and disabled by default; it checks the log lines,
// the statuses, the /readyz entries, and that the shared informers start only after every
// initializer ran.
func TestRun(t *testing.T) {
	srv := apitest.NewServer()
	defer srv.Close()
	logs := &logRecorder{}
	mgr := newManager(t, srv, slog.New(logs))
	var startedEarly []string
	descs := []Descriptor{
		{Name: "alpha", Init: informerOf(configmaps), Resources: []meta.GroupVersionResource{configmaps}},
		{Name: "beta", Init: informerOf(widgets), Resources: []meta.GroupVersionResource{widgets}},
		{Name: "delta", Init: func(context.Context, ControllerContext) (bool, error) { return false, nil }},
		{Name: "gamma", Init: informerOf(secrets), DisabledByDefault: true},
		{Name: "omega", Init: informerOf(widgets), Resources: []meta.GroupVersionResource{widgets}, Optional: true},
		{Name: "zeta", Init: func(_ context.Context, cc ControllerContext) (bool, error) {
			// Runs last (name order): alpha's informer must not run yet.
			for _, inf := range cc.Factory.Informers() {
				if inf.HasStarted() {
					startedEarly = append(startedEarly, inf.Name())
				}
			}
			if !cc.IsServed(configmaps) || cc.IsServed(widgets) {
				return false, fmt.Errorf("AvailableResources: configmaps %v widgets %v", cc.IsServed(configmaps), cc.IsServed(widgets))
			}
			return true, nil
		}},
	}
	r, err := New(mgr, descs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	waitFor(t, "readyz with alpha synced", func() bool {
		return strings.Contains(readyz(mgr), "[+]controller-alpha ok")
	})
	if len(startedEarly) > 0 {
		t.Errorf("informers started before the last initializer: %q", startedEarly)
	}
	body := readyz(mgr)
	for _, want := range []string{
		"[-]controller-beta failed: resource example.com/v1/widgets is not served",
		"[+]controller-delta ok", "[+]controller-omega ok", "[+]controller-zeta ok",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("readyz lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "controller-gamma") {
		t.Errorf("a disabled controller has a readyz entry:\n%s", body)
	}
	var got []string
	for _, s := range r.Statuses() {
		got = append(got, fmt.Sprintf("%s=%s", s.Name, s.Status))
		if s.Name == "beta" && (!errors.Is(s.Err, ErrNotServed) || s.Err.(*NotServedError).Resource != widgets) {
			t.Errorf("beta's reason %v", s.Err)
		}
	}
	want := []string{"alpha=started", "beta=skipped", "delta=skipped", "gamma=disabled", "omega=skipped", "zeta=started"}
	if !slices.Equal(got, want) {
		t.Errorf("statuses %q, want %q", got, want)
	}
	lines := logs.all()
	for _, w := range []string{
		"alpha: Starting controller", "alpha: Started controller", "beta: Skipping controller",
		"delta: Starting controller", "delta: Skipping controller", "gamma: Controller is disabled",
		"omega: Skipping controller", "zeta: Started controller",
	} {
		if !slices.Contains(lines, w) {
			t.Errorf("no log line %q in %q", w, lines)
		}
	}
	if slices.Contains(lines, "beta: Starting controller") {
		t.Errorf("beta's initializer ran although its resource is not served")
	}
}

// TestRunMissingCRDFailsAtOnce: an initializer that watches a resource the server does not
// serve (not declared in Resources) makes Run fail with the NotServedError instead of
// waiting for a cache sync that cannot happen (CacheSyncTimeout is an hour here).
func TestRunMissingCRDFailsAtOnce(t *testing.T) {
	srv := apitest.NewServer()
	defer srv.Close()
	mgr, err := controller.NewManager(srv.Config(), controller.ManagerOptions{
		Logger: slog.New(slog.DiscardHandler), CacheSyncTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(mgr, []Descriptor{
		{Name: "ok", Init: informerOf(configmaps)},
		{Name: "widgets", Init: informerOf(widgets)},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = r.Run(context.Background())
	var nse *NotServedError
	if !errors.As(err, &nse) || nse.Controller != "widgets" || nse.Resource != widgets {
		t.Fatalf("Run: %v", err)
	}
	if !strings.Contains(err.Error(), `controller "widgets": resource example.com/v1/widgets is not served`) {
		t.Errorf("message %q", err)
	}
	if body := readyz(mgr); !strings.Contains(body, "[-]controller-widgets failed: resource example.com/v1/widgets is not served") {
		t.Errorf("readyz:\n%s", body)
	}
	// Once the resource is served (the CRD installed), a new runner starts it.
	if err := srv.AddResource(apitest.ResourceType{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	mgr2 := newManager(t, srv, slog.New(slog.DiscardHandler))
	r2, err := New(mgr2, []Descriptor{{Name: "widgets", Init: informerOf(widgets)}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r2.Run(ctx) }()
	waitFor(t, "widgets ready", func() bool { return strings.Contains(readyz(mgr2), "[+]controller-widgets ok") })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestRunInitError(t *testing.T) {
	srv := apitest.NewServer()
	defer srv.Close()
	mgr := newManager(t, srv, slog.New(slog.DiscardHandler))
	boom := errors.New("boom")
	ran := false
	r, err := New(mgr, []Descriptor{
		{Name: "a", Init: func(context.Context, ControllerContext) (bool, error) { return false, boom }},
		{Name: "b", Init: func(context.Context, ControllerContext) (bool, error) { ran = true; return true, nil }},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background()); !errors.Is(err, boom) || !strings.Contains(err.Error(), `"a"`) {
		t.Fatalf("Run: %v", err)
	}
	if ran {
		t.Error("b was set up after a failed")
	}
	if err := r.Run(context.Background()); err == nil {
		t.Error("a second Run")
	}
}

// TestStartJitter: after each started controller the runner waits between StartInterval
// and twice it (synctest's clock).
func TestStartJitter(t *testing.T) {
	srv := apitest.NewServer()
	defer srv.Close()
	mgr := newManager(t, srv, slog.New(slog.DiscardHandler))
	const interval = time.Second
	synctest.Test(t, func(t *testing.T) {
		var at []time.Time
		rec := func(context.Context, ControllerContext) (bool, error) { at = append(at, time.Now()); return true, nil }
		r, err := New(mgr, []Descriptor{{Name: "a", Init: rec}, {Name: "b", Init: rec}, {Name: "c", Init: rec}}, Options{StartInterval: interval})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := r.initAll(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		if len(at) != 3 || !at[0].Equal(start) {
			t.Fatalf("inits at %v (start %v)", at, start)
		}
		for i := 1; i < len(at); i++ {
			if gap := at[i].Sub(at[i-1]); gap < interval || gap > 2*interval {
				t.Errorf("gap %d: %v, want [%v, %v]", i, gap, interval, 2*interval)
			}
		}
	})
}

// A shutdown while the controllers are being set up ends Run with nil, without setting up
// the rest or starting the manager.
func TestRunCancelledDuringSetup(t *testing.T) {
	srv := apitest.NewServer()
	defer srv.Close()
	mgr := newManager(t, srv, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ranB := false
	r, err := New(mgr, []Descriptor{
		{Name: "a", Init: func(context.Context, ControllerContext) (bool, error) { cancel(); return true, nil }},
		{Name: "b", Init: func(context.Context, ControllerContext) (bool, error) { ranB = true; return true, nil }},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if ranB {
		t.Error("b was set up after the shutdown")
	}
	if s := r.Statuses(); s[0].Status != StatusStarted || s[1].Status != StatusPending {
		t.Errorf("statuses %+v", s)
	}
	if mgr.IsLeader() {
		t.Error("the manager started")
	}
}

// widget is what the tests read of a Widget.
type widget struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
}

// A Follow descriptor is set up although its resource is not served; its controller waits
// for the CRD, runs while it is installed, and waits again once it is deleted; /readyz
// names the resource while it waits (an Optional one passes).
func TestRunFollowsTheCRD(t *testing.T) {
	srv := apitest.NewServerWithOptions(apitest.Options{CRDWatchTeardownDelay: -1})
	defer srv.Close()
	mgr := newManager(t, srv, slog.New(slog.DiscardHandler))
	reconciled := make(chan controller.Request, 10)
	var ctl *controller.Controller
	follow := func(_ context.Context, cc ControllerContext) (bool, error) {
		var err error
		ctl, err = controller.New(cc.Name, controller.ReconcilerFunc(func(_ context.Context, req controller.Request) (controller.Result, error) {
			reconciled <- req
			return controller.Result{}, nil
		}), controller.Options{FollowResources: cc.Follow})
		if err != nil {
			return false, err
		}
		if err := ctl.Watch(controller.KindWithOptions(cc.Manager, controller.EnqueueRequestForObject[*widget](),
			controller.KindOptions[*widget]{Informer: controller.InformerOptions{Resource: widgets}})); err != nil {
			return false, err
		}
		return true, cc.Manager.Add(ctl)
	}
	r, err := New(mgr, []Descriptor{
		{Name: "widgets", Init: follow, Resources: []meta.GroupVersionResource{widgets}, Follow: true},
		{Name: "optional", Init: func(context.Context, ControllerContext) (bool, error) { return true, nil },
			Resources: []meta.GroupVersionResource{widgets}, Follow: true, Optional: true},
	}, Options{StartInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	waiting := "[-]controller-widgets failed: waiting for resource widgets.v1.example.com to be served"
	waitFor(t, "the controller to wait", func() bool { return strings.Contains(readyz(mgr), waiting) })
	if body := readyz(mgr); !strings.Contains(body, "[+]controller-optional ok") {
		t.Fatalf("an optional follower fails readyz:\n%s", body)
	}
	crd := map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{"group": "example.com", "scope": "Namespaced", "names": map[string]any{"kind": "Widget", "plural": "widgets"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true}}}}
	if _, err := srv.Create("customresourcedefinitions.apiextensions.k8s.io", crd); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the controller to run", func() bool { return ctl.Running() && strings.Contains(readyz(mgr), "[+]controller-widgets ok") })
	if _, err := srv.Create("widgets", map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": "default"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case req := <-reconciled:
		if req.Name != "w" {
			t.Fatalf("reconciled %v", req)
		}
	case <-time.After(testTimeout):
		t.Fatal("no reconcile")
	}
	if err := srv.Delete("customresourcedefinitions.apiextensions.k8s.io", "", "widgets.example.com"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the controller to wait again", func() bool { return !ctl.Running() && strings.Contains(readyz(mgr), waiting) })
}
