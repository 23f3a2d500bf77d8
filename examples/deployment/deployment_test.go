package deployment

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/conditions"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/meta"
)

const timeout = 30 * time.Second

type env struct {
	srv *apitest.Server
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv := apitest.NewServer()
	t.Cleanup(srv.Close)
	if err := srv.AddCRD(CRDYAML); err != nil {
		t.Fatal(err)
	}
	return &env{srv: srv}
}

// start runs a manager with the controller until the test ends (or stop is called) and
// returns stop.
func (e *env) start(t *testing.T, opts controller.ManagerOptions) (stop func()) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	mgr, err := controller.NewManager(e.srv.Config(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Setup(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(stop)
	return stop
}

func (e *env) createDeployment(t *testing.T, name string, replicas int) {
	t.Helper()
	_, err := e.srv.Create(DeploymentKind.Resource, map[string]any{"apiVersion": DeploymentKind.APIVersion(), "kind": DeploymentKind.Kind,
		"metadata": map[string]any{"namespace": "default", "name": name},
		"spec": map[string]any{"replicas": replicas, "template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": name}},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx"}}}}}})
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) scale(t *testing.T, name string, replicas int) {
	t.Helper()
	if _, err := e.srv.Mutate(DeploymentKind.Resource, "default", name, func(o apitest.Object) {
		o["spec"].(map[string]any)["replicas"] = replicas
	}); err != nil {
		t.Fatal(err)
	}
}

// pods returns the live (not terminating) Pods of the MiniDeployment name on the server.
func (e *env) pods(t *testing.T, name string) []Pod {
	t.Helper()
	objs, _, err := e.srv.List("pods", "default")
	if err != nil {
		t.Fatal(err)
	}
	var out []Pod
	for _, o := range objs {
		var p Pod
		if err := o.Into(&p); err != nil {
			t.Fatal(err)
		}
		if p.Labels[LabelOwner] == name && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

func (e *env) deployment(t *testing.T, name string) (*MiniDeployment, bool) {
	t.Helper()
	o, err := e.srv.Get(DeploymentKind.Resource, "default", name)
	if meta.IsNotFound(err) {
		return nil, false
	} else if err != nil {
		t.Fatal(err)
	}
	var d MiniDeployment
	if err := o.Into(&d); err != nil {
		t.Fatal(err)
	}
	return &d, true
}

// settled reports whether name has n Pods controlled by it and a status saying so.
func (e *env) settled(t *testing.T, name string, n int) bool {
	d, ok := e.deployment(t, name)
	if !ok || len(e.pods(t, name)) != n {
		return false
	}
	return d.Status.Replicas == int32(n) && d.Status.ObservedGeneration == d.Generation &&
		conditions.IsTrue(d.Status.Conditions, ConditionAvailable)
}

func (e *env) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := e.srv.WaitFor(ctx, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func (e *env) creates() int {
	return len(e.srv.RequestsMatching(apitest.RequestFilter{Verb: apitest.VerbCreate, Resource: "pods"}))
}

func (e *env) eventReasons(t *testing.T) []string {
	t.Helper()
	objs, _, err := e.srv.List("events", "default")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range objs {
		out = append(out, fmt.Sprint(o["reason"]))
	}
	return out
}

func TestCreateScaleUpAndDown(t *testing.T) {
	e := newEnv(t)
	e.start(t, controller.ManagerOptions{})
	e.createDeployment(t, "web", 3)
	e.waitFor(t, "3 pods", func() bool { return e.settled(t, "web", 3) })
	d, _ := e.deployment(t, "web")
	if !slices.Contains(d.Finalizers, Finalizer) {
		t.Errorf("finalizers %q", d.Finalizers)
	}
	for _, p := range e.pods(t, "web") {
		ref := p.OwnerReferences
		if len(ref) != 1 || !ref[0].IsController() || ref[0].UID != d.UID || ref[0].Kind != DeploymentKind.Kind || ref[0].APIVersion != DeploymentKind.APIVersion() {
			t.Errorf("pod %s owner references %+v", p.Name, ref)
		}
		if p.Labels["app"] != "web" || len(p.Spec.Containers) != 1 || p.Spec.Containers[0].Image != "nginx" {
			t.Errorf("pod %s not from the template: %+v", p.Name, p)
		}
	}

	e.scale(t, "web", 5)
	e.waitFor(t, "5 pods", func() bool { return e.settled(t, "web", 5) })
	e.scale(t, "web", 1)
	e.waitFor(t, "1 pod", func() bool { return e.settled(t, "web", 1) })
	if n := e.creates(); n != 5 {
		t.Errorf("%d pod creations, want 5 (3, then 2)", n)
	}
	if n := len(e.srv.RequestsMatching(apitest.RequestFilter{Verb: apitest.VerbDelete, Resource: "pods"})); n != 4 {
		t.Errorf("%d pod deletions, want 4", n)
	}
	e.waitFor(t, "events", func() bool {
		r := e.eventReasons(t)
		return slices.Contains(r, "SuccessfulCreate") && slices.Contains(r, "SuccessfulDelete") && slices.Contains(r, "Available")
	})
}

// Pods deleted by someone else are replaced, once each.
func TestPodsDeletedBehindItsBack(t *testing.T) {
	e := newEnv(t)
	e.start(t, controller.ManagerOptions{})
	e.createDeployment(t, "web", 3)
	e.waitFor(t, "3 pods", func() bool { return e.settled(t, "web", 3) })
	for _, p := range e.pods(t, "web")[:2] {
		if err := e.srv.Delete("pods", "default", p.Name); err != nil {
			t.Fatal(err)
		}
	}
	e.waitFor(t, "3 pods again", func() bool { return e.settled(t, "web", 3) && e.creates() == 5 })
}

// Conflicts on the MiniDeployment's writes (finalizer, status) are retried until it settles.
func TestInjectedConflicts(t *testing.T) {
	e := newEnv(t)
	if err := e.srv.FailRequests(apitest.VerbUpdate, DeploymentKind.Resource, 4, http.StatusConflict, 0); err != nil {
		t.Fatal(err)
	}
	e.start(t, controller.ManagerOptions{})
	e.createDeployment(t, "web", 2)
	e.waitFor(t, "2 pods", func() bool { return e.settled(t, "web", 2) })
	failed := 0
	for _, r := range e.srv.RequestsMatching(apitest.RequestFilter{Verb: apitest.VerbUpdate, Resource: DeploymentKind.Resource}) {
		if r.Code == http.StatusConflict {
			failed++
		}
	}
	if failed != 4 {
		t.Errorf("%d conflicts answered, want 4", failed)
	}
	if n := e.creates(); n != 2 {
		t.Errorf("%d pod creations, want 2", n)
	}
}

// Deleting a MiniDeployment deletes its Pods, then the finalizer goes and so does it.
func TestDeleteWithFinalizer(t *testing.T) {
	e := newEnv(t)
	e.start(t, controller.ManagerOptions{})
	e.createDeployment(t, "web", 3)
	e.waitFor(t, "3 pods", func() bool { return e.settled(t, "web", 3) })
	if err := e.srv.Delete(DeploymentKind.Resource, "default", "web"); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, "the MiniDeployment and its pods gone", func() bool {
		_, exists := e.deployment(t, "web")
		objs, _, _ := e.srv.List("pods", "default")
		return !exists && len(objs) == 0
	})
}

// Two replicas with leader election: the standby takes over when the leader stops (and
// releases the Lease: the long lease duration keeps a loaded machine from losing it), and
// scales the MiniDeployment it has never reconciled; no Pod is created twice.
func TestLeaderFailover(t *testing.T) {
	e := newEnv(t)
	le := func(id string) controller.ManagerOptions {
		return controller.ManagerOptions{LeaderElection: true, LeaderElectionID: Name, LeaderElectionIdentity: id,
			LeaderElectionReleaseOnCancel: true, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 100 * time.Millisecond}
	}
	stopA := e.start(t, le("a"))
	e.waitFor(t, "a leads", func() bool { return e.holder(t) == "a" })
	e.start(t, le("b"))
	e.createDeployment(t, "web", 2)
	e.waitFor(t, "2 pods", func() bool { return e.settled(t, "web", 2) })
	stopA()
	e.waitFor(t, "b leads", func() bool { return e.holder(t) == "b" })
	e.scale(t, "web", 4)
	e.waitFor(t, "4 pods", func() bool { return e.settled(t, "web", 4) })
	if n := e.creates(); n != 4 {
		t.Errorf("%d pod creations, want 4", n)
	}
}

func (e *env) holder(t *testing.T) string {
	o, err := e.srv.Get("leases", "default", Name)
	if err != nil {
		if !meta.IsNotFound(err) {
			t.Error(err)
		}
		return ""
	}
	var l struct {
		Spec struct {
			HolderIdentity string `json:"holderIdentity"`
		} `json:"spec"`
	}
	if err := o.Into(&l); err != nil {
		t.Error(err)
	}
	return l.Spec.HolderIdentity
}

// While the Pod watch is stalled the cache shows none of the Pods the controller created; a
// scale-up then must not create them again (expectations), and once the watch catches up
// exactly the missing one is created.
func TestStalledPodWatchCreatesNoDuplicates(t *testing.T) {
	e := newEnv(t)
	// Stall detection off: the stall must last until released.
	e.start(t, controller.ManagerOptions{InformerOptions: informer.FactoryOptions{StallTimeout: -1}})
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if _, err := e.srv.WaitForWatches(ctx, "pods", 1); err != nil {
		t.Fatal(err)
	}
	release, n, err := e.srv.StallWatches("pods", 0)
	if err != nil || n == 0 {
		t.Fatalf("stall: %d watches, %v", n, err)
	}
	defer release()
	e.createDeployment(t, "web", 2)
	e.waitFor(t, "2 pods created", func() bool { return e.creates() == 2 })
	e.scale(t, "web", 3)
	e.waitFor(t, "the scale-up reconciled", func() bool {
		d, ok := e.deployment(t, "web")
		return ok && d.Generation == 2 && d.Status.ObservedGeneration == 2
	})
	if n := e.creates(); n != 2 {
		t.Fatalf("%d pod creations while the cache lagged, want 2", n)
	}
	release()
	e.waitFor(t, "3 pods", func() bool { return e.settled(t, "web", 3) })
	if n := e.creates(); n != 3 {
		t.Errorf("%d pod creations, want 3", n)
	}
}

// A Pod delete answered NotFound lowers the expectation at once, as upstream's
// ReplicaSetController does: the Pod's delete event may have come before the deletion was
// expected (and counted for nothing), or, as here, never come. Without that, the
// MiniDeployment waits for the 5-minute expiry of its expectations.
func TestDeleteAnsweredNotFound(t *testing.T) {
	e := newEnv(t)
	e.start(t, controller.ManagerOptions{})
	e.createDeployment(t, "web", 3)
	e.waitFor(t, "3 pods", func() bool { return e.settled(t, "web", 3) })
	if err := e.srv.FailRequests(apitest.VerbDelete, "pods", 1, http.StatusNotFound, 0); err != nil {
		t.Fatal(err)
	}
	e.scale(t, "web", 2)
	e.waitFor(t, "2 pods", func() bool { return e.settled(t, "web", 2) })
	var notFound int
	for _, r := range e.srv.RequestsMatching(apitest.RequestFilter{Verb: apitest.VerbDelete, Resource: "pods"}) {
		if r.Code == http.StatusNotFound {
			notFound++
		}
	}
	if notFound != 1 {
		t.Errorf("%d deletes answered NotFound, want 1", notFound)
	}
}
