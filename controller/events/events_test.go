package events

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

type node struct {
	meta.ObjectMeta `json:"metadata"`
}

type env struct {
	srv *apitest.Server
	b   *Broadcaster
	rec *Recorder
	reg *kinds.Registry
}

// newEnv starts apitest and a broadcaster (not running: call run).
func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	return newEnvOn(t, apitest.Options{}, opts)
}

// newEnvOn is newEnv with the server's options (InMemory for a synctest bubble).
func newEnvOn(t *testing.T, so apitest.Options, opts Options) *env {
	t.Helper()
	srv := apitest.NewServerWithOptions(so)
	t.Cleanup(srv.Close)
	for _, ns := range []string{"shop", "sentinel"} {
		if _, err := srv.Create("namespaces", map[string]any{"metadata": map[string]any{"name": ns}}); err != nil {
			t.Fatal(err)
		}
	}
	client, err := apiclient.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	reg := kinds.NewRegistry()
	if err := reg.Register(reflect.TypeFor[*testobj.Widget](), testobj.WidgetInfo); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(reflect.TypeFor[*node](), kinds.Node); err != nil {
		t.Fatal(err)
	}
	opts.Registry = reg
	opts.Instance = "replica-1"
	if opts.RetryInterval == 0 {
		opts.RetryInterval = 5 * time.Millisecond
	}
	b, err := NewBroadcaster(client, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &env{srv: srv, b: b, rec: b.NewRecorder("widget-controller"), reg: reg}
}

// run runs the broadcaster until the test ends (then it must drain cleanly).
func (e *env) run(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func (e *env) events(t *testing.T, ns string) []Event {
	t.Helper()
	objs, _, err := e.srv.List("events", ns)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]Event, len(objs))
	for i, o := range objs {
		if err := o.Into(&out[i]); err != nil {
			t.Fatal(err)
		}
	}
	slices.SortFunc(out, func(a, b Event) int { return strings.Compare(a.Message, b.Message) })
	return out
}

// waitEvents waits until cond holds for the events of ns.
func (e *env) waitEvents(t *testing.T, ns string, what string, cond func([]Event) bool) []Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var got []Event
	if err := e.srv.WaitFor(ctx, func() bool { got = e.events(t, ns); return cond(got) }); err != nil {
		t.Fatalf("waiting for %s: %v; events: %+v", what, err, got)
	}
	return got
}

// sentinel records an event about another object and waits until it is written: the
// broadcaster writes in order, so every event recorded before it has been processed.
func (e *env) sentinel(t *testing.T) {
	t.Helper()
	e.rec.Event(testobj.NewWidget("sentinel", "s"), Normal, "Sentinel", "done")
	e.waitEvents(t, "sentinel", "the sentinel event", func(ev []Event) bool { return len(ev) == 1 })
}

// waitStats polls the broadcaster's Stats until cond holds (counters have no change
// notification) and returns them.
func (e *env) waitStats(t *testing.T, what string, cond func(Stats) bool) Stats {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		s := e.b.Stats()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; stats = %+v", what, s)
		}
		<-tick.C
	}
}

// w is a widget as informers cache it: without apiVersion or kind, which the registry gives.
func w(name string) *testobj.Widget {
	return &testobj.Widget{ObjectMeta: meta.ObjectMeta{Namespace: "shop", Name: name, UID: "uid-" + name, ResourceVersion: "42"}}
}

func TestEventFields(t *testing.T) {
	e := newEnv(t, Options{})
	e.run(t)
	e.rec.AnnotatedEventf(w("a"), map[string]string{"k": "v"}, Warning, "FailedCreate", "could not create %d pods", 3)
	e.rec.Event(&node{meta.ObjectMeta{Name: "node-1", UID: "n1"}}, Normal, "Ready", "node is ready")
	got := e.waitEvents(t, "shop", "the event", func(ev []Event) bool { return len(ev) == 1 })[0]
	want := ObjectReference{Kind: "Widget", APIVersion: "example.com/v1", Namespace: "shop", Name: "a", UID: "uid-a", ResourceVersion: "42"}
	if got.InvolvedObject != want {
		t.Errorf("involvedObject = %+v, want %+v", got.InvolvedObject, want)
	}
	if got.Type != Warning || got.Reason != "FailedCreate" || got.Message != "could not create 3 pods" || got.Count != 1 ||
		got.Source.Component != "widget-controller" || got.ReportingController != "widget-controller" || got.ReportingInstance != "replica-1" ||
		got.Annotations["k"] != "v" || got.FirstTimestamp.IsZero() || !got.FirstTimestamp.Equal(got.LastTimestamp.Time) ||
		!strings.HasPrefix(got.Name, "a.") {
		t.Errorf("event = %+v", got)
	}
	// A cluster-scoped object's events go to namespace default.
	ev := e.waitEvents(t, "default", "the node event", func(ev []Event) bool { return len(ev) == 1 })
	if ev[0].InvolvedObject.Kind != "Node" || ev[0].InvolvedObject.APIVersion != "v1" || ev[0].InvolvedObject.Namespace != "" {
		t.Errorf("node event = %+v", ev[0].InvolvedObject)
	}
}

func TestRejectedEvents(t *testing.T) {
	e := newEnv(t, Options{})
	e.run(t)
	type unknown struct{ meta.ObjectMeta }
	e.rec.Event(&unknown{meta.ObjectMeta{Name: "x"}}, Normal, "R", "unregistered type without TypeMeta")
	e.rec.Event(w("a"), "Info", "R", "not a valid type")
	e.rec.Event(nil, Normal, "R", "nil object")
	if s := e.b.Stats(); s.Rejected != 3 || s.Queued != 0 || s.Recorded != 3 {
		t.Fatalf("stats = %+v", s)
	}
	// An Unstructured names its own kind.
	u := &meta.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"namespace": "shop", "name": "d", "uid": "u"}}}
	e.rec.Event(u, Normal, "R", "unstructured")
	ev := e.waitEvents(t, "shop", "the event", func(ev []Event) bool { return len(ev) == 1 })
	if ev[0].InvolvedObject.Kind != "Deployment" || ev[0].InvolvedObject.APIVersion != "apps/v1" || ev[0].InvolvedObject.UID != "u" {
		t.Fatalf("involvedObject = %+v", ev[0].InvolvedObject)
	}
}

func TestIdenticalEventsPatchTheCount(t *testing.T) {
	e := newEnv(t, Options{})
	e.run(t)
	for range 4 {
		e.rec.Event(w("a"), Normal, "Scaled", "scaled to 3")
	}
	got := e.waitEvents(t, "shop", "count 4", func(ev []Event) bool { return len(ev) == 1 && ev[0].Count == 4 })
	if got[0].Message != "scaled to 3" {
		t.Fatalf("event = %+v", got[0])
	}
	if c, p := e.srv.CountRequests(apitest.VerbCreate, "events"), e.srv.CountRequests(apitest.VerbPatch, "events"); c != 1 || p != 3 {
		t.Fatalf("%d creates and %d patches, want 1 and 3", c, p)
	}
	// The same reason with another message, or another object, is another event.
	e.rec.Event(w("a"), Normal, "Scaled", "scaled to 4")
	e.rec.Event(w("b"), Normal, "Scaled", "scaled to 3")
	e.waitEvents(t, "shop", "three events", func(ev []Event) bool { return len(ev) == 3 })
}

func TestSimilarEventsAreAggregated(t *testing.T) {
	e := newEnv(t, Options{})
	e.run(t)
	for i := 1; i <= 11; i++ {
		e.rec.Eventf(w("a"), Warning, "BackOff", "attempt %02d failed", i)
	}
	e.sentinel(t)
	got := e.events(t, "shop")
	// Nine events of their own, then one combined event for the 10th and 11th.
	if len(got) != 10 {
		t.Fatalf("%d events, want 10: %+v", len(got), got)
	}
	var combined []Event
	for _, ev := range got {
		if strings.HasPrefix(ev.Message, aggregatePrefix) {
			combined = append(combined, ev)
		} else if ev.Count != 1 {
			t.Errorf("single event with count %d", ev.Count)
		}
	}
	if len(combined) != 1 || combined[0].Count != 2 || combined[0].Message != aggregatePrefix+"attempt 11 failed" || combined[0].Reason != "BackOff" {
		t.Fatalf("combined = %+v", combined)
	}
	// Another reason is another group.
	e.rec.Event(w("a"), Warning, "Other", "x")
	e.waitEvents(t, "shop", "the other reason", func(ev []Event) bool { return len(ev) == 11 })
}

func TestSpamFilter(t *testing.T) {
	e := newEnv(t, Options{})
	e.run(t)
	for i := range DefaultSpamBurst + 5 {
		e.rec.Event(w("a"), Normal, fmt.Sprintf("Reason%02d", i), "m")
	}
	e.sentinel(t)
	if got := e.events(t, "shop"); len(got) != DefaultSpamBurst {
		t.Fatalf("%d events written, want the burst %d", len(got), DefaultSpamBurst)
	}
	// The broadcaster counts a write after the server has answered it: the sentinel is on
	// the server before it is counted, so wait for the count itself.
	if s := e.waitStats(t, "the sentinel's creation counted", func(s Stats) bool { return s.Created == DefaultSpamBurst+1 }); s.Filtered != 5 {
		t.Fatalf("stats = %+v", s)
	}
	// Another object has its own budget.
	e.rec.Event(w("b"), Normal, "R", "m")
	e.waitEvents(t, "shop", "b's event", func(ev []Event) bool { return len(ev) == DefaultSpamBurst+1 })
}

func TestFullQueueDrops(t *testing.T) {
	e := newEnv(t, Options{QueueSize: 5})
	for i := range 8 {
		e.rec.Event(w(fmt.Sprint("o", i)), Normal, "R", "m") // not running: the queue fills
	}
	if s := e.b.Stats(); s.Queued != 5 || s.Dropped != 3 || s.Recorded != 8 {
		t.Fatalf("stats = %+v", s)
	}
	e.run(t)
	e.waitEvents(t, "shop", "the five queued events", func(ev []Event) bool { return len(ev) == 5 })
}

func TestShutdownFlushes(t *testing.T) {
	e := newEnv(t, Options{})
	// Slow writes, so that most events are still queued when the context ends.
	if err := e.srv.Faults().SetWriteDelay("events", 5*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.b.Run(ctx) }()
	for i := range 40 {
		e.rec.Event(w(fmt.Sprint("o", i)), Normal, "R", "m")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	// Run has returned: everything recorded before the cancel is on the server.
	if got := e.events(t, "shop"); len(got) != 40 {
		t.Fatalf("%d events after shutdown, want 40", len(got))
	}
	e.rec.Event(w("late"), Normal, "R", "m")
	if s := e.b.Stats(); s.Late != 1 || s.Created != 40 {
		t.Fatalf("stats = %+v", s)
	}
	if err := e.b.Run(context.Background()); err == nil {
		t.Fatal("second Run succeeded")
	}
}

func TestDrainTimeout(t *testing.T) {
	e := newEnv(t, Options{DrainTimeout: 50 * time.Millisecond})
	if err := e.srv.Faults().SetWriteDelay("events", time.Second); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	for i := range 3 {
		e.rec.Event(w(fmt.Sprint("o", i)), Normal, "R", "m")
	}
	cancel()
	err := e.b.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "not written within the drain timeout") {
		t.Fatalf("Run = %v", err)
	}
	if s := e.b.Stats(); s.Failed != 3 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestRetries(t *testing.T) {
	e := newEnv(t, Options{})
	e.run(t)
	// 503 and 429 are retried.
	if err := e.srv.Faults().FailRequests(apitest.VerbCreate, "events", 2, 503, 0); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.Faults().FailRequests(apitest.VerbCreate, "events", 1, 429, 0); err != nil {
		t.Fatal(err)
	}
	e.rec.Event(w("a"), Normal, "R", "retried")
	e.waitEvents(t, "shop", "the retried event", func(ev []Event) bool { return len(ev) == 1 })
	if s := e.b.Stats(); s.Retries != 3 || s.Failed != 0 {
		t.Fatalf("stats = %+v", s)
	}
	// 422 is not: the write is abandoned.
	if err := e.srv.Faults().FailRequests(apitest.VerbCreate, "events", 1, 422, 0); err != nil {
		t.Fatal(err)
	}
	e.rec.Event(w("b"), Normal, "R", "invalid")
	e.sentinel(t)
	if s := e.b.Stats(); s.Retries != 3 || s.Failed != 1 {
		t.Fatalf("stats = %+v", s)
	}
	if got := e.events(t, "shop"); len(got) != 1 {
		t.Fatalf("events = %+v", got)
	}
}

func TestRetriesGiveUp(t *testing.T) {
	e := newEnv(t, Options{MaxTries: 3})
	e.run(t)
	if err := e.srv.Faults().FailRequests(apitest.VerbCreate, "events", 3, 500, 0); err != nil {
		t.Fatal(err)
	}
	e.rec.Event(w("a"), Normal, "R", "m")
	e.sentinel(t)
	if s := e.b.Stats(); s.Retries != 2 || s.Failed != 1 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestPatchOfDeletedEventCreatesIt(t *testing.T) {
	e := newEnv(t, Options{})
	e.run(t)
	e.rec.Event(w("a"), Normal, "R", "m")
	first := e.waitEvents(t, "shop", "the event", func(ev []Event) bool { return len(ev) == 1 })[0]
	if err := e.srv.Delete("events", "shop", first.Name); err != nil {
		t.Fatal(err)
	}
	e.rec.Event(w("a"), Normal, "R", "m")
	got := e.waitEvents(t, "shop", "the re-created event", func(ev []Event) bool { return len(ev) == 1 && ev[0].Count == 2 })
	if got[0].Name != first.Name {
		t.Fatalf("re-created as %s, want %s", got[0].Name, first.Name)
	}
	e.rec.Event(w("a"), Normal, "R", "m")
	e.waitEvents(t, "shop", "count 3", func(ev []Event) bool { return len(ev) == 1 && ev[0].Count == 3 })
}

func TestNewBroadcasterValidates(t *testing.T) {
	srv := apitest.NewServer()
	defer srv.Close()
	client, err := apiclient.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if _, err := NewBroadcaster(client, Options{QueueSize: -1}); err == nil || !strings.Contains(err.Error(), "QueueSize") {
		t.Fatalf("negative QueueSize: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("nil client did not panic")
		}
	}()
	_, _ = NewBroadcaster(nil, Options{})
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	e := newEnv(t, Options{})
	e.run(t)
	// A 429 asking for 1 s, longer than the 5 ms retry interval of these tests.
	if err := e.srv.Faults().FailRequests(apitest.VerbCreate, "events", 1, 429, time.Second); err != nil {
		t.Fatal(err)
	}
	e.rec.Event(w("a"), Normal, "R", "m")
	e.waitEvents(t, "shop", "the event", func(ev []Event) bool { return len(ev) == 1 })
	reqs := e.srv.RequestsFor(apitest.VerbCreate, "events")
	if len(reqs) != 2 || reqs[0].Code != 429 {
		t.Fatalf("requests %+v", reqs)
	}
	if gap := reqs[1].Time.Sub(reqs[0].Time); gap < time.Second {
		t.Fatalf("retried after %v, before the server's Retry-After of 1s", gap)
	}
}
