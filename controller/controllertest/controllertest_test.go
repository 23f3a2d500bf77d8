package controllertest_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/controllertest"
	"github.com/informerkit/informerkit/controller/events"
	"github.com/informerkit/informerkit/controller/runner"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// Pod is what the tests' controller reads of a Pod.
type Pod struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Status          struct {
		Conditions []struct {
			Type, Status string
		} `json:"conditions"`
	} `json:"status"`
}

func (p *Pod) ready() bool {
	for _, c := range p.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

var podGVR = kinds.Pod.GroupVersionResource()

// readiness is a controller that records a Ready event once a Pod is Ready, asks to be
// called again in a minute while it is not, and fails once for a Pod named "flaky".
func readiness(mgr *controller.Manager) error {
	rec := mgr.EventRecorderFor("readiness")
	var mu sync.Mutex
	failed := map[string]bool{}
	pods := controller.Primary[*Pod]()
	return controller.NewBuilder(mgr, "readiness").For(pods).
		WithOptions(controller.Options{MaxRetries: 1}).
		Complete(controller.ReconcilerFunc(func(_ context.Context, req controller.Request) (controller.Result, error) {
			p, err := pods.Informer().Lister().Get(req.Namespace, req.Name)
			if err != nil {
				return controller.Result{}, nil
			}
			mu.Lock()
			first := !failed[req.Name]
			failed[req.Name] = true
			mu.Unlock()
			if req.Name == "flaky" && first {
				return controller.Result{}, errors.New("flaky")
			}
			if req.Name == "broken" {
				return controller.Result{}, errors.New("always")
			}
			if !p.ready() {
				return controller.Result{RequeueAfter: time.Minute}, nil
			}
			rec.Eventf(p, events.Normal, "Ready", "pod %s is ready", p.Name)
			return controller.Result{}, nil
		}))
}

func createPod(env *controllertest.Env, name string, readyAfter int) {
	env.Create("pods", map[string]any{"metadata": map[string]any{"namespace": "default", "name": name},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "app:1",
			"readinessProbe": map[string]any{"initialDelaySeconds": readyAfter, "exec": map[string]any{"command": []any{"true"}}}}}}})
}

// The whole workbench in a synctest bubble: simulated nodes make a Pod Ready after its
// readiness delay, the controller's requeues and events follow on the fake clock.
func TestWorkbenchInSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The waits run on the fake clock too: longer than the 92 s the Pod takes.
		env := controllertest.New(t, controllertest.Options{Server: apitest.Options{InMemory: true},
			Nodes: &apitest.NodesOptions{StartDelay: 2 * time.Second}, Timeout: 5 * time.Minute})
		kinds.MustRegister[*Pod](kinds.Pod)
		run := env.StartManager(controller.ManagerOptions{}, readiness)
		start := time.Now()
		createPod(env, "web", 90)
		createPod(env, "flaky", 0)
		createPod(env, "broken", 0)
		p := controllertest.WaitFor(env, "pods", "default", "web", (*Pod).ready)
		if d := time.Since(start); d < 92*time.Second || d > 93*time.Second {
			t.Errorf("Ready after %v of fake time, want 92 s (start 2 s + probe 90 s)", d)
		}
		if p.Name != "web" {
			t.Errorf("WaitFor returned %+v", p)
		}
		env.WaitForEvent("default", "Pod", "web", "Ready")
		env.WaitForEvent("default", "Pod", "flaky", "Ready")
		if got := env.EventReasons("default", "Pod", "web"); !reflect.DeepEqual(got, []string{"Ready"}) {
			t.Errorf("events of web: %q", got)
		}
		run.WaitForStats("readiness", func(s controller.Stats) bool { return s.Dropped >= 1 })
		synctest.Wait() // every reconcile due has run
		st := run.Stats("readiness")
		// broken fails twice (MaxRetries 1) per event that enqueues it, then is dropped;
		// flaky fails once; web requeued itself every minute until Ready at 92 s.
		if st.Errors != 1+2*st.Dropped || st.Requeues < 1+st.Dropped+1 || st.Reconciles < st.Errors+3 {
			t.Errorf("stats %+v", st)
		}
		if err := run.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
		if run.Err() != nil {
			t.Errorf("Err after a clean stop: %v", run.Err())
		}
	})
}

// A Runner with leader election: the Lease holder, then failover to a second replica.
func TestRunnerAndLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		env := controllertest.New(t, controllertest.Options{Server: apitest.Options{InMemory: true}})
		kinds.MustRegister[*Pod](kinds.Pod)
		descs := []runner.Descriptor{{Name: "readiness", Init: func(_ context.Context, cc runner.ControllerContext) (bool, error) {
			return true, readiness(cc.Manager)
		}}}
		le := func(id string) controller.ManagerOptions {
			return controller.ManagerOptions{LeaderElection: true, LeaderElectionID: "cm", LeaderElectionIdentity: id}
		}
		a := env.StartRunner(le("a"), descs, runner.Options{})
		env.WaitForLeaseHolder("default", "cm", "a")
		env.StartRunner(le("b"), descs, runner.Options{})
		if err := a.Stop(); err != nil {
			t.Fatal(err)
		}
		env.WaitForLeaseHolder("default", "cm", "b")
		if a.Runner == nil || a.Runner.Statuses()[0].Status != runner.StatusStarted {
			t.Errorf("runner statuses %+v", a.Runner.Statuses())
		}
	})
}

// fatalTB records a Fatalf and ends the goroutine, as testing.T does.
type fatalTB struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.msg = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

// A wait that times out fails the test with what it waited for and what it last saw.
func TestWaitFailsWithTheLastState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, c := range []struct {
			wait func(e *controllertest.Env)
			want string
		}{
			{func(e *controllertest.Env) { controllertest.WaitFor(e, "pods", "default", "web", (*Pod).ready) }, `waiting for pods default/web: context deadline exceeded; last seen: {"apiVersion":"v1","kind":"Pod","metadata":{"creationTimestamp"`},
			{func(e *controllertest.Env) { controllertest.WaitFor(e, "pods", "default", "nope", (*Pod).ready) }, "pods default/nope: context deadline exceeded; it does not exist"},
			{func(e *controllertest.Env) { e.WaitForEvent("default", "Pod", "web", "Ready") }, "waiting for a Ready event about Pod default/web"},
			{func(e *controllertest.Env) { e.WaitGone("pods", "default", "web") }, "waiting for pods default/web to be gone"},
		} {
			tb := &fatalTB{TB: t}
			fe := controllertest.New(tb, controllertest.Options{Server: apitest.Options{InMemory: true}, Timeout: 10 * time.Second})
			createPod(fe, "web", 0)
			done := make(chan struct{})
			go func() { defer close(done); c.wait(fe) }()
			<-done
			if !strings.Contains(tb.msg, c.want) {
				t.Errorf("failure %q, want it to say %q", tb.msg, c.want)
			}
		}
	})
}

// The Events of a cluster-scoped object live in namespace "default" with an involvedObject
// without namespace: WaitForEvent finds them given the object's namespace "" (or "default").
func TestWaitForEventOfAClusterScopedObject(t *testing.T) {
	env := controllertest.New(t, controllertest.Options{})
	env.Create("events", map[string]any{
		"metadata":       map[string]any{"namespace": "default", "name": "n1.1"},
		"involvedObject": map[string]any{"apiVersion": "v1", "kind": "Node", "name": "n1"},
		"reason":         "Drained", "type": "Normal", "count": 1,
	})
	for _, ns := range []string{"", "default"} {
		if ev := env.WaitForEvent(ns, "Node", "n1", "Drained"); ev.Name != "n1.1" {
			t.Errorf("WaitForEvent(%q) = %+v", ns, ev)
		}
	}
	if got := env.Events("kube-system", "Node", "n1"); len(got) != 0 {
		t.Errorf("Events in kube-system: %+v", got)
	}
}
