package controller

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// signalling wraps a handler: after each call (the Requests enqueued), it says so on ch.
func signalling[T any](h EventHandler[T], ch chan<- string) EventHandler[T] {
	return EventHandlerFuncs[T]{
		CreateFunc: func(ctx context.Context, e CreateEvent[T], q Queue) { h.Create(ctx, e, q); ch <- "create" },
		UpdateFunc: func(ctx context.Context, e UpdateEvent[T], q Queue) { h.Update(ctx, e, q); ch <- "update" },
		DeleteFunc: func(ctx context.Context, e DeleteEvent[T], q Queue) { h.Delete(ctx, e, q); ch <- "delete" },
	}
}

// TestTriggersNameWhatCausedAReconcile: through a Manager on apitest, each reconcile knows
// its causes. The initial list; three updates of the object and the creation of a child
// while the reconcile is busy, merged into the next reconcile (the updates into one trigger
// ×3, with the newest resourceVersion); a retry with the error; a RequeueAfter. The
// triggers metric counts them by kind.
func TestTriggersNameWhatCausedAReconcile(t *testing.T) {
	srv := newTestServer(t)
	m := newManager(t, srv, ManagerOptions{})
	if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "a"}}); err != nil {
		t.Fatal(err)
	}
	type seen struct {
		n   int
		trs Triggers
	}
	got := make(chan seen, 10)
	gate := make(chan struct{})
	n := 0
	rec := ReconcilerFunc(func(ctx context.Context, req Request) (Result, error) {
		n++
		got <- seen{n, TriggersFrom(ctx)}
		switch n {
		case 1:
			<-gate // busy while the events arrive
		case 2:
			return Result{}, errors.New("boom")
		case 3:
			return Result{RequeueAfter: time.Millisecond}, nil
		}
		return Result{}, nil
	})
	c, err := New("triggers", rec, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	handled := make(chan string, 10)
	cms := mustInformer[*testobj.ConfigMap](t, m)
	pods := mustInformer[*testobj.Pod](t, m)
	if err := c.Watch(FromInformer[*testobj.ConfigMap](cms, signalling(EnqueueRequestForObject[*testobj.ConfigMap](), handled))); err != nil {
		t.Fatal(err)
	}
	if err := c.Watch(FromInformer[*testobj.Pod](pods, signalling(EnqueueRequestForOwner[*testobj.Pod]("", "ConfigMap", OwnerOptions{}), handled))); err != nil {
		t.Fatal(err)
	}
	if err := m.Add(c); err != nil {
		t.Fatal(err)
	}
	startManager(t, m)
	next := func(want int) Triggers {
		t.Helper()
		select {
		case s := <-got:
			if s.n != want {
				t.Fatalf("reconcile %d, want %d", s.n, want)
			}
			return s.trs
		case <-time.After(testTimeout):
			t.Fatalf("no reconcile %d", want)
		}
		return Triggers{}
	}
	waitHandled := func(want string) {
		t.Helper()
		for {
			select {
			case h := <-handled:
				if h == want {
					return
				}
			case <-time.After(testTimeout):
				t.Fatalf("the handler saw no %s", want)
			}
		}
	}

	trs := next(1)
	if len(trs.List) != 1 || trs.List[0].Kind != TriggerInitialList || trs.List[0].Source != cms.Name() || trs.List[0].Name != "a" {
		t.Fatalf("first reconcile: %s, want the initial list", trs)
	}
	waitHandled("create") // the initial list's
	var rv string
	for i := range 3 {
		obj, err := srv.Update("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "a"},
			"data": map[string]any{"i": string(rune('0' + i))}})
		if err != nil {
			t.Fatal(err)
		}
		rv = obj.ResourceVersion()
		waitHandled("update")
	}
	if _, err := srv.Create("pods", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "child",
		"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "u"}}},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i"}}}}); err != nil {
		t.Fatal(err)
	}
	waitHandled("create")
	close(gate)

	trs = next(2)
	if len(trs.List) != 2 || trs.Dropped != 0 {
		t.Fatalf("second reconcile: %s, want the merged updates and the child", trs)
	}
	up, child := trs.List[0], trs.List[1]
	if up.Kind != TriggerUpdate || up.Count != 3 || up.ResourceVersion != rv || up.Name != "a" || up.Time.IsZero() {
		t.Fatalf("updates: %s, want one trigger ×3 at %s", up, rv)
	}
	if child.Kind != TriggerCreate || child.Source != pods.Name() || child.Name != "child" || child.Namespace != "default" {
		t.Fatalf("child: %s, want the creation of pod default/child", child)
	}
	if s := trs.String(); !strings.Contains(s, "×3") || !strings.Contains(s, "default/child") {
		t.Fatalf("String %q", s)
	}

	trs = next(3)
	if len(trs.List) != 1 || trs.List[0].Kind != TriggerRetry || trs.List[0].Reason != "boom" || trs.List[0].Name != "a" {
		t.Fatalf("third reconcile: %s, want the retry of boom", trs)
	}
	trs = next(4)
	if len(trs.List) != 1 || trs.List[0].Kind != TriggerRequeueAfter {
		t.Fatalf("fourth reconcile: %s, want the requeue after", trs)
	}

	for kind, want := range map[string]float64{"initial_list": 1, "update": 3, "create": 1, "retry": 1, "requeue_after": 1, "delete": 0} {
		if v := metricValue(t, m, "informerkit_controller_triggers_total", map[string]string{"controller": "triggers", "kind": kind}); v != want {
			t.Errorf("triggers_total{kind=%q} = %v, want %v", kind, v, want)
		}
	}
}

// TriggersFrom outside a reconcile is empty; a Trigger describes itself.
func TestTriggerStrings(t *testing.T) {
	if trs := TriggersFrom(context.Background()); len(trs.List) != 0 || trs.Dropped != 0 {
		t.Fatalf("outside a reconcile: %s", trs)
	}
	trs := Triggers{List: []Trigger{
		{Kind: TriggerUpdate, Source: "configmaps.v1", Namespace: "ns", Name: "a", ResourceVersion: "42", Count: 3},
		{Kind: TriggerRetry, Namespace: "ns", Name: "a", Count: 1, Reason: "boom"},
		{Kind: TriggerGeneric, Source: "channel", Name: "cluster-wide", Count: 1},
	}, Dropped: 2}
	want := "update configmaps.v1 ns/a@42 ×3; retry ns/a: boom; generic channel cluster-wide; 2 more dropped"
	if got := trs.String(); got != want {
		t.Fatalf("String:\n got %q\nwant %q", got, want)
	}
	if !trs.Has(TriggerRetry) || trs.Has(TriggerDelete) {
		t.Fatal("Has")
	}
	for _, k := range TriggerKinds {
		if strings.HasPrefix(k.String(), "unknown") {
			t.Errorf("kind %d has no name", k)
		}
	}
	if got := TriggerKind(0).String(); got != "unknown(0)" {
		t.Fatalf("zero kind: %q", got)
	}
}

// A Channel source's events are generic triggers naming their object.
func TestChannelEventsAreGenericTriggers(t *testing.T) {
	ch := make(chan GenericEvent[*testobj.ConfigMap], 1)
	got := make(chan Triggers, 1)
	c, err := New("generic", ReconcilerFunc(func(ctx context.Context, _ Request) (Result, error) {
		got <- TriggersFrom(ctx)
		return Result{}, nil
	}), Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Watch(Channel(ch, EnqueueRequestForObject[*testobj.ConfigMap]())); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	defer func() { cancel(); <-done }()
	ch <- GenericEvent[*testobj.ConfigMap]{Object: &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: "ns", Name: "x"}}}
	select {
	case trs := <-got:
		if len(trs.List) != 1 || trs.List[0].Kind != TriggerGeneric || trs.List[0].Source != "channel" || trs.List[0].Name != "x" {
			t.Fatalf("triggers %s", trs)
		}
	case <-time.After(testTimeout):
		t.Fatal("no reconcile")
	}
}
