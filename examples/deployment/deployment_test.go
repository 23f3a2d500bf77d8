package deployment

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/conditions"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/controllertest"
	"github.com/informerkit/informerkit/informer"
)

// The controller's tests on the workbench (controller/controllertest): without nodes for
// the counting of Pods, with simulated nodes in a synctest bubble for what depends on
// readiness (rollouts, failures).

const timeout = 30 * time.Second

type env struct {
	*controllertest.Env
	srv *apitest.Server
	t   *testing.T
}

// newEnv is an apitest server with the CRD, no nodes: Pods are never scheduled.
func newEnv(t *testing.T) *env {
	e := controllertest.New(t, controllertest.Options{CRDs: [][]byte{CRDYAML}, Timeout: timeout})
	return &env{Env: e, srv: e.Server, t: t}
}

// newNodesEnv is an in-memory server with the CRD and two simulated nodes (Pods run 2 s
// after they are scheduled), for a test inside synctest.Test: its waits run on the fake
// clock, for up to an hour.
func newNodesEnv(t *testing.T) *env {
	e := controllertest.New(t, controllertest.Options{CRDs: [][]byte{CRDYAML}, Timeout: time.Hour,
		Server: apitest.Options{InMemory: true}, Nodes: &apitest.NodesOptions{Count: 2, StartDelay: 2 * time.Second}})
	return &env{Env: e, srv: e.Server, t: t}
}

func (e *env) start(opts controller.ManagerOptions) *controllertest.Running {
	return e.StartManager(opts, func(m *controller.Manager) error { _, err := Setup(m); return err })
}

func (e *env) waitFor(_ *testing.T, what string, cond func() bool) { e.Wait(what, cond) }

// createDeployment creates a MiniDeployment of replicas Pods of image, whose readiness
// probe waits readyAfter seconds (0: no probe).
func (e *env) createDeployment(name string, replicas int, image string, readyAfter int) {
	c := map[string]any{"name": "web", "image": image}
	if readyAfter > 0 {
		c["readinessProbe"] = map[string]any{"initialDelaySeconds": readyAfter, "httpGet": map[string]any{"port": 80}}
	}
	e.Create(DeploymentKind.Resource, map[string]any{"apiVersion": DeploymentKind.APIVersion(), "kind": DeploymentKind.Kind,
		"metadata": map[string]any{"namespace": "default", "name": name},
		"spec": map[string]any{"replicas": replicas, "template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": name}},
			"spec":     map[string]any{"containers": []any{c}}}}})
}

func (e *env) scale(name string, replicas int) {
	e.Mutate(DeploymentKind.Resource, "default", name, func(o apitest.Object) {
		o["spec"].(map[string]any)["replicas"] = replicas
	})
}

func (e *env) setImage(name, image string) {
	e.Mutate(DeploymentKind.Resource, "default", name, func(o apitest.Object) {
		c := o["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0]
		c.(map[string]any)["image"] = image
	})
}

// pods returns the live (not terminating) Pods of the MiniDeployment name.
func (e *env) pods(_ *testing.T, name string) []*Pod {
	return slices.DeleteFunc(controllertest.List[*Pod](e.Env, "pods", "default"), func(p *Pod) bool {
		return p.Labels[LabelOwner] != name || p.DeletionTimestamp != nil
	})
}

func (e *env) deployment(_ *testing.T, name string) (*MiniDeployment, bool) {
	return controllertest.Get[*MiniDeployment](e.Env, DeploymentKind.Resource, "default", name)
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

// rolledOut waits until name has rolled out: n Pods, all of the current template and Ready.
func (e *env) rolledOut(name string, n int) *MiniDeployment {
	return controllertest.WaitFor(e.Env, DeploymentKind.Resource, "default", name, func(d *MiniDeployment) bool {
		return d.Status.ObservedGeneration == d.Generation && conditions.IsTrue(d.Status.Conditions, ConditionRolledOut) &&
			d.Status.Replicas == int32(n) && len(e.pods(e.t, name)) == n
	})
}

func (e *env) creates() int {
	return len(e.srv.RequestsMatching(apitest.RequestFilter{Verb: apitest.VerbCreate, Resource: "pods"}))
}

func TestCreateScaleUpAndDown(t *testing.T) {
	e := newEnv(t)
	e.start(controller.ManagerOptions{})
	e.createDeployment("web", 3, "nginx", 0)
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
	e.scale("web", 5)
	e.waitFor(t, "5 pods", func() bool { return e.settled(t, "web", 5) })
	e.scale("web", 1)
	e.waitFor(t, "1 pod", func() bool { return e.settled(t, "web", 1) })
	if n := e.creates(); n != 5 {
		t.Errorf("%d pod creations, want 5 (3, then 2)", n)
	}
	if n := len(e.srv.RequestsMatching(apitest.RequestFilter{Verb: apitest.VerbDelete, Resource: "pods"})); n != 4 {
		t.Errorf("%d pod deletions, want 4", n)
	}
	for _, reason := range []string{"SuccessfulCreate", "SuccessfulDelete", "Available"} {
		e.WaitForEvent("default", DeploymentKind.Kind, "web", reason)
	}
}

// Pods deleted by someone else are replaced, once each.
func TestPodsDeletedBehindItsBack(t *testing.T) {
	e := newEnv(t)
	e.start(controller.ManagerOptions{})
	e.createDeployment("web", 3, "nginx", 0)
	e.waitFor(t, "3 pods", func() bool { return e.settled(t, "web", 3) })
	for _, p := range e.pods(t, "web")[:2] {
		e.Delete("pods", "default", p.Name)
	}
	e.waitFor(t, "3 pods again", func() bool { return e.settled(t, "web", 3) && e.creates() == 5 })
}

// Conflicts on the MiniDeployment's writes (finalizer, status) are retried until it
// settles, and counted (without scraping /metrics).
func TestInjectedConflicts(t *testing.T) {
	e := newEnv(t)
	if err := e.srv.Faults().FailRequests(apitest.VerbUpdate, DeploymentKind.Resource+"/status", 2, http.StatusConflict, 0); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.Faults().FailRequests(apitest.VerbUpdate, DeploymentKind.Resource, 2, http.StatusConflict, 0); err != nil {
		t.Fatal(err)
	}
	run := e.start(controller.ManagerOptions{})
	e.createDeployment("web", 2, "nginx", 0)
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
	if st := run.Stats(Name); st.Conflicts != 4 || st.Dropped != 0 {
		t.Errorf("stats %+v, want the 4 conflicts", st)
	}
	if n := e.creates(); n != 2 {
		t.Errorf("%d pod creations, want 2", n)
	}
}

// Deleting a MiniDeployment deletes its Pods, then the finalizer goes and so does it.
func TestDeleteWithFinalizer(t *testing.T) {
	e := newEnv(t)
	e.start(controller.ManagerOptions{})
	e.createDeployment("web", 3, "nginx", 0)
	e.waitFor(t, "3 pods", func() bool { return e.settled(t, "web", 3) })
	e.Delete(DeploymentKind.Resource, "default", "web")
	e.WaitGone(DeploymentKind.Resource, "default", "web")
	if pods := controllertest.List[*Pod](e.Env, "pods", "default"); len(pods) != 0 {
		t.Errorf("%d pods left", len(pods))
	}
}

// Two replicas with leader election: the standby takes over when the leader stops (and
// releases the Lease: the long lease duration keeps a loaded machine from losing it), and
// scales the MiniDeployment it has never reconciled; no Pod is created twice.
func TestLeaderFailover(t *testing.T) {
	e := newEnv(t)
	le := func(id string) controller.ManagerOptions {
		return controller.ManagerOptions{LeaderElection: true, LeaderElectionID: Name, LeaderElectionIdentity: id,
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 100 * time.Millisecond}
	}
	a := e.start(le("a"))
	e.WaitForLeaseHolder("default", Name, "a")
	e.start(le("b"))
	e.createDeployment("web", 2, "nginx", 0)
	e.waitFor(t, "2 pods", func() bool { return e.settled(t, "web", 2) })
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	e.WaitForLeaseHolder("default", Name, "b")
	e.scale("web", 4)
	e.waitFor(t, "4 pods", func() bool { return e.settled(t, "web", 4) })
	if n := e.creates(); n != 4 {
		t.Errorf("%d pod creations, want 4", n)
	}
}

// While the Pod watch is stalled the cache shows none of the Pods the controller created; a
// scale-up then must not create them again (expectations), and once the watch catches up
// exactly the missing one is created.
func TestStalledPodWatchCreatesNoDuplicates(t *testing.T) {
	e := newEnv(t)
	// Stall detection off: the stall must last until released.
	e.start(controller.ManagerOptions{InformerOptions: informer.FactoryOptions{StallTimeout: -1}})
	e.waitFor(t, "the pods watch", func() bool { return len(e.srv.Watches("pods")) > 0 })
	release, n, err := e.srv.Faults().StallWatches("pods", 0)
	if err != nil || n == 0 {
		t.Fatalf("stall: %d watches, %v", n, err)
	}
	defer release()
	e.createDeployment("web", 2, "nginx", 0)
	e.waitFor(t, "2 pods created", func() bool { return e.creates() == 2 })
	e.scale("web", 3)
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
	e.start(controller.ManagerOptions{})
	e.createDeployment("web", 3, "nginx", 0)
	e.waitFor(t, "3 pods", func() bool { return e.settled(t, "web", 3) })
	if err := e.srv.Faults().FailRequests(apitest.VerbDelete, "pods", 1, http.StatusNotFound, 0); err != nil {
		t.Fatal(err)
	}
	e.scale("web", 2)
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
