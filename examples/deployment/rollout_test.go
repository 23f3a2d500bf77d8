package deployment

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/conditions"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/controllertest"
)

// Rollouts on simulated nodes, in synctest bubbles: readiness delays, crash back-offs and
// eviction timeouts pass on the fake clock.

// availability follows the Pods of a MiniDeployment through a watch, event by event, and
// keeps the fewest Ready and the most live (not terminating) Pods it saw.
type availability struct {
	mu                 sync.Mutex
	pods               map[string]*Pod
	minReady, maxTotal int
	stop               func()
}

func watchAvailability(t *testing.T, e *env, name string) *availability {
	t.Helper()
	c, err := apiclient.New(e.srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	w, err := apiclient.NewResource[*Pod](c, PodGVR).Namespace("default").Watch(context.Background(),
		apiclient.ListOptions{LabelSelector: LabelOwner + "=" + name, ResourceVersion: e.srv.ResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	a := &availability{pods: map[string]*Pod{}, minReady: 1 << 30}
	for _, p := range e.pods(t, name) {
		a.pods[p.UID] = p
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if ev.Object == nil {
				continue
			}
			a.mu.Lock()
			if ev.Type == apiclient.Deleted {
				delete(a.pods, ev.Object.UID)
			} else {
				a.pods[ev.Object.UID] = ev.Object
			}
			live, ready := 0, 0
			for _, p := range a.pods {
				if p.DeletionTimestamp == nil {
					live++
					if p.Ready() {
						ready++
					}
				}
			}
			a.minReady, a.maxTotal = min(a.minReady, ready), max(a.maxTotal, live)
			a.mu.Unlock()
		}
	}()
	a.stop = func() { w.Stop(); <-done; c.Close() }
	t.Cleanup(a.stop)
	return a
}

func (a *availability) bounds() (minReady, maxTotal int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.minReady, a.maxTotal
}

// A new image replaces the Pods one at a time: never more than one Pod beyond the three
// asked for, never fewer than three Ready, every Pod of the new template at the end.
func TestRollout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newNodesEnv(t)
		run := e.start(controller.ManagerOptions{})
		e.createDeployment("web", 3, "app:v1", 10)
		d := e.rolledOut("web", 3)
		if d.Status.ReadyReplicas != 3 || d.Status.UpdatedReplicas != 3 {
			t.Fatalf("status %+v", d.Status)
		}
		watch := watchAvailability(t, e, "web")
		start := time.Now()
		e.setImage("web", "app:v2")
		d = e.rolledOut("web", 3)
		took := time.Since(start)
		for _, p := range e.pods(t, "web") {
			if p.Spec.Containers[0].Image != "app:v2" || p.Labels[LabelTemplateHash] != templateHash(d.Spec.Template) {
				t.Errorf("pod %s of the old template after the rollout", p.Name)
			}
		}
		minReady, maxTotal := watch.bounds()
		if minReady < 3 || maxTotal > 4 {
			t.Errorf("during the rollout: %d Ready at least (want 3), %d Pods at most (want 4)", minReady, maxTotal)
		}
		// One at a time: each new Pod runs 2 s after it is created and is Ready 10 s later.
		if took < 36*time.Second {
			t.Errorf("rolled out in %v of fake time: faster than one Pod at a time (3 × 12 s)", took)
		}
		if n := e.creates(); n != 6 {
			t.Errorf("%d pod creations, want 6", n)
		}
		e.WaitForEvent("default", DeploymentKind.Kind, "web", "RolledOut")
		if st := run.Stats(Name); st.Errors != 0 || st.Dropped != 0 {
			t.Errorf("stats %+v", st)
		}
	})
}

// A new image that does not pull holds the rollout with the old Pods serving; once it
// pulls, the rollout completes.
func TestRolloutHeldByImagePull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newNodesEnv(t)
		e.start(controller.ManagerOptions{})
		e.createDeployment("web", 3, "app:v1", 5)
		e.rolledOut("web", 3)
		restore := e.Nodes.FailImagePulls("app:v2")
		e.setImage("web", "app:v2")
		time.Sleep(10 * time.Minute)
		d, _ := e.deployment(t, "web")
		if d.Status.ReadyReplicas != 3 || d.Status.UpdatedReplicas != 1 || d.Status.Replicas != 4 ||
			conditions.IsTrue(d.Status.Conditions, ConditionRolledOut) {
			t.Fatalf("10 min with the image not pulling: %+v", d.Status)
		}
		restore()
		e.rolledOut("web", 3)
	})
}

// A new Pod whose container crashes during the rollout holds it until the container is
// back and Ready.
func TestRolloutWaitsForACrashedPod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newNodesEnv(t)
		e.start(controller.ManagerOptions{})
		e.createDeployment("web", 2, "app:v1", 5)
		e.rolledOut("web", 2)
		e.setImage("web", "app:v2")
		var surge *Pod
		e.waitFor(t, "the first new pod running", func() bool {
			for _, p := range e.pods(t, "web") {
				if p.Spec.Containers[0].Image == "app:v2" {
					surge = p
					return true
				}
			}
			return false
		})
		time.Sleep(3 * time.Second) // running (2 s), not Ready yet (5 s more)
		if err := e.Nodes.CrashContainer("default", surge.Name, "web"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(12 * time.Second) // without the crash it would be Ready by now
		if d, _ := e.deployment(t, "web"); d.Status.UpdatedReplicas != 1 || d.Status.ReadyReplicas != 2 {
			t.Fatalf("the rollout went on past a crashed pod: %+v", d.Status)
		}
		e.rolledOut("web", 2)
	})
}

// A node that stops reporting: its Pods are not Ready (RolledOut False), are evicted after
// their 300 s toleration, and the controller replaces them on the other node; they stay
// Terminating until their node is back.
func TestNodeNotReadyReplacesItsPods(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newNodesEnv(t)
		e.start(controller.ManagerOptions{})
		e.createDeployment("web", 4, "app:v1", 0)
		e.rolledOut("web", 4)
		onNode1 := 0
		for _, p := range controllertest.List[*nodePod](e.Env, "pods", "default") {
			if p.Spec.NodeName == "node-1" {
				onNode1++
			}
		}
		if onNode1 != 2 {
			t.Fatalf("%d pods on node-1, want 2 of 4 (spread over 2 nodes)", onNode1)
		}
		if err := e.Nodes.SetNodeReady("node-1", false); err != nil {
			t.Fatal(err)
		}
		controllertest.WaitFor(e.Env, DeploymentKind.Resource, "default", "web", func(d *MiniDeployment) bool {
			return d.Status.ReadyReplicas == 2 && !conditions.IsTrue(d.Status.Conditions, ConditionRolledOut)
		})
		start := time.Now()
		d := e.rolledOut("web", 4)
		if took := time.Since(start); took < 300*time.Second {
			t.Errorf("replaced after %v, before the 300 s toleration ran out", took)
		}
		terminating := 0
		for _, p := range controllertest.List[*nodePod](e.Env, "pods", "default") {
			if p.DeletionTimestamp != nil {
				terminating++
				if p.Spec.NodeName != "node-1" {
					t.Errorf("pod %s on %s terminating", p.Name, p.Spec.NodeName)
				}
			} else if p.Spec.NodeName != "node-2" {
				t.Errorf("live pod %s on %s, want node-2", p.Name, p.Spec.NodeName)
			}
		}
		if terminating != 2 || d.Status.Replicas != 4 {
			t.Errorf("%d terminating pods (want the 2 of node-1), status %+v", terminating, d.Status)
		}
		if err := e.Nodes.SetNodeReady("node-1", true); err != nil {
			t.Fatal(err)
		}
		e.waitFor(t, "node-1's pods gone", func() bool { return len(controllertest.List[*nodePod](e.Env, "pods", "default")) == 4 })
	})
}

// MaxRetries: a Pod create that keeps failing is retried with backoff (5 ms doubling, a
// few minutes in all, on the fake clock) and dropped after 15 retries.
func TestDroppedAfterMaxRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newNodesEnv(t)
		if err := e.srv.Faults().FailRequests(apitest.VerbCreate, "pods", 1000, http.StatusInternalServerError, 0); err != nil {
			t.Fatal(err)
		}
		run := e.start(controller.ManagerOptions{})
		e.createDeployment("web", 1, "app:v1", 0)
		st := run.WaitForStats(Name, func(s controller.Stats) bool { return s.Dropped == 1 })
		if st.Errors != MaxRetries+1 || st.Requeues != MaxRetries {
			t.Errorf("stats %+v: want %d failures, %d retries, then the drop", st, MaxRetries+1, MaxRetries)
		}
		e.WaitForEvent("default", DeploymentKind.Kind, "web", "FailedCreate")
	})
}

// nodePod is a Pod with the node it runs on.
type nodePod struct {
	Pod
	Spec struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
}
