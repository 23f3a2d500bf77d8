package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// A controller that follows its CRD (controller.Options.FollowResources) on the real
// kube-apiserver, through create/delete cycles of the CRD: each cycle it starts after the
// CRD is Established, reconciles an object, and stops once the CRD is deleted. Measured:
// pickup (the CRD's Established event, as a watch of the test sees it, to the controller's
// "starting workers" line) and teardown (the answer to the CRD's DELETE, and its DELETED
// event, to the controller's "stopped" line), goroutines and live heap before and after, and
// the log lines at each level. It runs 20 cycles (about 45 s) unless E2E_FOLLOW_CYCLES says
// otherwise; bench/README.md's figures are of 100 (E2E_FOLLOW_CYCLES=100).

// followGizmo is the custom resource of the test.
type followGizmo struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
}

const (
	followGroup = "follow.informerkit.io"
	followCRD   = "gizmos." + followGroup
)

var followGVR = meta.GroupVersionResource{Group: followGroup, Version: "v1", Resource: "gizmos"}

// timedLog records every log line with its time and level.
type timedLog struct {
	mu    sync.Mutex
	lines []timedLine
}

type timedLine struct {
	at    time.Time
	level slog.Level
	msg   string
	attrs string
}

func (l *timedLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *timedLog) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	r.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.String()); return true })
	l.mu.Lock()
	l.lines = append(l.lines, timedLine{at: time.Now(), level: r.Level, msg: r.Message, attrs: b.String()})
	l.mu.Unlock()
	return nil
}
func (l *timedLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &attrLog{l, attrs}
}
func (l *timedLog) WithGroup(string) slog.Handler { return l }

type attrLog struct {
	l     *timedLog
	attrs []slog.Attr
}

func (a *attrLog) Enabled(context.Context, slog.Level) bool { return true }
func (a *attrLog) Handle(ctx context.Context, r slog.Record) error {
	r.AddAttrs(a.attrs...)
	return a.l.Handle(ctx, r)
}
func (a *attrLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &attrLog{a.l, append(slices.Clone(a.attrs), attrs...)}
}
func (a *attrLog) WithGroup(string) slog.Handler { return a }

// first returns the time of the first line after since whose message is msg and whose
// attributes contain attr.
func (l *timedLog) first(since time.Time, msg, attr string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if line.at.After(since) && line.msg == msg && strings.Contains(line.attrs, attr) {
			return line.at, true
		}
	}
	return time.Time{}, false
}

// trim forgets the lines below Warn: the log of a run's cycles is not the controller's heap.
func (l *timedLog) trim() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = slices.DeleteFunc(l.lines, func(line timedLine) bool { return line.level < slog.LevelWarn })
}

func (l *timedLog) atLeast(level slog.Level) []timedLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []timedLine
	for _, line := range l.lines {
		if line.level >= level {
			out = append(out, line)
		}
	}
	return out
}

func followCRDObject() *meta.Unstructured {
	return &meta.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": followCRD},
		"spec": map[string]any{"group": followGroup, "scope": "Namespaced",
			"names": map[string]any{"kind": "Gizmo", "plural": "gizmos"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}},
	}}
}

// liveHeap returns the goroutines and the live heap once the goroutines are at most want
// (any, if negative).
func liveHeap(t *testing.T, want int) (int, uint64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		runtime.GC()
		n := runtime.NumGoroutine()
		if want < 0 || n <= want || time.Now().After(deadline) {
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			return n, ms.HeapAlloc
		}
		time.Sleep(20 * time.Millisecond) // polling the state asserted
	}
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p)
	return s[i]
}

func TestControllerFollowsCRDCycles(t *testing.T) {
	c := cluster.ForTest(t)
	cycles := 20
	if n, err := strconv.Atoi(os.Getenv("E2E_FOLLOW_CYCLES")); err == nil && n > 0 {
		cycles = n
	}
	ns := newNamespace(t, c)
	ac := acClient(t, c, nil)
	crds := apiclient.NewResource[*meta.Unstructured](ac, acCRDs)
	gizmos := apiclient.NewResource[*followGizmo](ac, followGVR).Namespace(ns)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	// A CRD left by an earlier run goes first.
	if err := crds.Delete(ctx, followCRD, apiclient.DeleteOptions{}); err != nil && !meta.IsNotFound(err) {
		t.Fatal(err)
	}

	logs := &timedLog{}
	reg := kinds.NewRegistry()
	if err := reg.Register(reflect.TypeFor[*followGizmo](), kinds.Info{Group: followGroup, Version: "v1", Kind: "Gizmo", Resource: "gizmos", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	mgr, err := controller.NewManager(mustConfig(t, c), controller.ManagerOptions{Logger: slog.New(logs), Kinds: reg,
		GracefulShutdownTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	reconciled := make(chan controller.Request, 100)
	ctl, err := controller.NewBuilder(mgr, "gizmos").
		For(controller.Primary[*followGizmo]()).
		WithOptions(controller.Options{FollowResources: true}).
		Build(controller.ReconcilerFunc(func(_ context.Context, req controller.Request) (controller.Result, error) {
			reconciled <- req
			return controller.Result{}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stopRun := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(runCtx) }()
	defer func() {
		stopRun()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	until := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within a minute", what)
			}
			time.Sleep(2 * time.Millisecond) // polling the state asserted
		}
	}
	until("the controller to wait for its CRD", func() bool { return len(ctl.Waiting()) == 1 })

	// The CRD's events, as a watch of the test sees them: when it is Established, when it
	// is gone.
	list, err := crds.List(ctx, apiclient.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := crds.Watch(ctx, apiclient.ListOptions{FieldSelector: "metadata.name=" + followCRD, ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	nextCRDEvent := func(want string) time.Time {
		t.Helper()
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatal("the CRD watch ended")
				}
				if want == "established" && ev.Type != apiclient.Deleted && ev.Object != nil && crdEstablished(ev.Object) ||
					want == "deleted" && ev.Type == apiclient.Deleted {
					return time.Now()
				}
			case <-time.After(time.Minute):
				t.Fatalf("no %s event", want)
			}
		}
	}

	var pickup, teardownFromDelete, teardownFromEvent []time.Duration
	var g0 int
	var h0 uint64
	const warm = 5
	for i := range cycles + warm {
		if i == warm {
			g0, h0 = liveHeap(t, -1)
		}
		created := time.Now()
		if _, err := crds.Create(ctx, followCRDObject(), apiclient.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		established := nextCRDEvent("established")
		until("the controller to start", ctl.Running)
		started, ok := logs.first(created, "starting workers", "controller=gizmos")
		if !ok {
			t.Fatal("no starting workers line")
		}
		g := &followGizmo{TypeMeta: meta.TypeMeta{APIVersion: followGroup + "/v1", Kind: "Gizmo"}, ObjectMeta: meta.ObjectMeta{Name: fmt.Sprint("g-", i)}}
		if _, err := gizmos.Create(ctx, g, apiclient.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		select {
		case req := <-reconciled:
			if req.Name != g.Name {
				t.Fatalf("cycle %d: reconciled %v, want %s", i, req, g.Name)
			}
		case <-time.After(time.Minute):
			t.Fatalf("cycle %d: no reconcile", i)
		}
		deleteSent := time.Now()
		if err := crds.Delete(ctx, followCRD, apiclient.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		deleteAnswered := time.Now()
		deleted := nextCRDEvent("deleted")
		until("the controller to stop", func() bool { return !ctl.Running() && len(ctl.Waiting()) == 1 })
		// On a loaded machine the controller can stop (the CRD's watch event) before this
		// goroutine has read the DELETE's answer: look from the request on.
		stopped, ok := logs.first(deleteSent, "stopped", "controller=gizmos")
		if !ok {
			t.Fatal("no stopped line")
		}
		for len(reconciled) > 0 {
			<-reconciled // the deletion of the gizmo, reconciled before the stop
		}
		logs.trim()
		if i >= warm {
			pickup = append(pickup, started.Sub(established))
			teardownFromDelete = append(teardownFromDelete, max(stopped.Sub(deleteAnswered), 0))
			teardownFromEvent = append(teardownFromEvent, stopped.Sub(deleted))
		}
	}
	until("the informer of gizmos to go", func() bool {
		for _, inf := range mgr.Factory().Informers() {
			if gvr, _ := mgr.Factory().ResourceOf(inf); gvr == followGVR {
				return false
			}
		}
		return true
	})
	g1, h1 := liveHeap(t, g0)
	t.Logf("%d cycles: pickup (Established event → workers started) median %v, p95 %v, max %v",
		cycles, percentile(pickup, 0.5), percentile(pickup, 0.95), percentile(pickup, 1))
	t.Logf("teardown (DELETE answered → stopped) median %v, p95 %v, max %v; (DELETED event → stopped) median %v, p95 %v",
		percentile(teardownFromDelete, 0.5), percentile(teardownFromDelete, 0.95), percentile(teardownFromDelete, 1),
		percentile(teardownFromEvent, 0.5), percentile(teardownFromEvent, 0.95))
	t.Logf("goroutines %d → %d; live heap %d → %d bytes (%+d, %+.0f B per cycle)", g0, g1, h0, h1, int64(h1)-int64(h0), float64(int64(h1)-int64(h0))/float64(cycles))
	warns, errs := logs.atLeast(slog.LevelWarn), logs.atLeast(slog.LevelError)
	t.Logf("log lines at warning or above: %d, at error: %d", len(warns), len(errs))
	for _, l := range warns {
		t.Logf("  %v %s%s", l.level, l.msg, l.attrs)
	}
	if len(errs) > 0 {
		t.Errorf("%d error-level log lines", len(errs))
	}
	if g1 > g0 {
		t.Errorf("goroutines grew from %d to %d", g0, g1)
	}
	if grown := int64(h1) - int64(h0); grown > 8<<10*int64(cycles) {
		t.Errorf("live heap grew by %d bytes over %d cycles", grown, cycles)
	}
	// The bounds (pickup within 2 s, teardown within 5 s) are figures to report, not
	// assertions: a loaded machine's timings must not fail the test.
	t.Logf("pickups over 2 s: %d of %d; teardowns over 5 s: %d of %d",
		countOver(pickup, 2*time.Second), len(pickup), countOver(teardownFromDelete, 5*time.Second), len(teardownFromDelete))
}

func countOver(ds []time.Duration, limit time.Duration) int {
	n := 0
	for _, d := range ds {
		if d > limit {
			n++
		}
	}
	return n
}
