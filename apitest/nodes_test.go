package apitest_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/meta"
)

// simPod is what the tests read of a Pod on a simulated node.
type simPod struct {
	meta.ObjectMeta `json:"metadata"`
	Spec            struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
	Status struct {
		Phase      string `json:"phase"`
		PodIP      string `json:"podIP"`
		Conditions []struct {
			Type, Status, Reason string
		} `json:"conditions"`
		ContainerStatuses []struct {
			Name         string
			Ready        bool
			RestartCount int32 `json:"restartCount"`
			State        map[string]struct {
				Reason string `json:"reason"`
			} `json:"state"`
		} `json:"containerStatuses"`
	} `json:"status"`
}

func (p simPod) cond(t string) string {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

// state is "<state>/<reason>" of the pod's first container.
func (p simPod) state() string {
	if len(p.Status.ContainerStatuses) == 0 {
		return ""
	}
	for k, v := range p.Status.ContainerStatuses[0].State {
		return k + "/" + v.Reason
	}
	return ""
}

func getPod(t *testing.T, s *apitest.Server, name string) (simPod, bool) {
	t.Helper()
	synctest.Wait() // the kubelets have acted on everything due
	o, err := s.Get("pods", "default", name)
	if meta.IsNotFound(err) {
		return simPod{}, false
	} else if err != nil {
		t.Fatal(err)
	}
	var p simPod
	if err := o.Into(&p); err != nil {
		t.Fatal(err)
	}
	return p, true
}

func createPod(t *testing.T, s *apitest.Server, name string, readyDelay int, extra map[string]any) {
	t.Helper()
	c := map[string]any{"name": "app", "image": "example.com/app:1"}
	if readyDelay > 0 {
		c["readinessProbe"] = map[string]any{"initialDelaySeconds": readyDelay, "httpGet": map[string]any{"port": 80}}
	}
	spec := map[string]any{"containers": []any{c}}
	for k, v := range extra {
		spec[k] = v
	}
	if _, err := s.Create("pods", map[string]any{"metadata": map[string]any{"namespace": "default", "name": name}, "spec": spec}); err != nil {
		t.Fatal(err)
	}
}

func startNodes(t *testing.T, opts apitest.NodesOptions) (*apitest.Server, *apitest.Nodes) {
	t.Helper()
	s := apitest.NewServerWithOptions(apitest.Options{InMemory: true})
	t.Cleanup(s.Close)
	n, err := s.StartNodes(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s, n
}

// A Pod is scheduled at once, runs StartDelay later and is Ready once its readiness
// probe's initial delay has passed; deleted, it stays Terminating until its containers have
// stopped, and is then gone. All on synctest's fake clock.
func TestNodesRunPods(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, n := startNodes(t, apitest.NodesOptions{Count: 2, StartDelay: 2 * time.Second, StopDelay: 3 * time.Second})
		if names := n.Names(); len(names) != 2 || names[1] != "node-2" {
			t.Fatalf("nodes %v", names)
		}
		node, err := s.Get("nodes", "", "node-1")
		if err != nil {
			t.Fatal(err)
		}
		if conds := node["status"].(map[string]any)["conditions"].([]any); conds[0].(map[string]any)["status"] != "True" {
			t.Errorf("node-1 conditions %v", conds)
		}
		createPod(t, s, "web", 5, nil)
		p, _ := getPod(t, s, "web")
		if p.Spec.NodeName == "" || p.cond("PodScheduled") != "True" || p.Status.Phase != "Pending" || p.state() != "waiting/ContainerCreating" {
			t.Fatalf("just created: %+v", p)
		}
		time.Sleep(2 * time.Second)
		p, _ = getPod(t, s, "web")
		if p.Status.Phase != "Running" || p.cond("Ready") != "False" || p.state() != "running/" || p.Status.PodIP == "" {
			t.Fatalf("after StartDelay: %+v", p)
		}
		time.Sleep(5 * time.Second)
		if p, _ = getPod(t, s, "web"); p.cond("Ready") != "True" || !p.Status.ContainerStatuses[0].Ready {
			t.Fatalf("after the readiness delay: %+v", p)
		}
		createPod(t, s, "other", 0, nil)
		if o, _ := getPod(t, s, "other"); o.Spec.NodeName == p.Spec.NodeName {
			t.Errorf("both pods on %s: want the emptier node", o.Spec.NodeName)
		}
		if err := s.Delete("pods", "default", "web"); err != nil {
			t.Fatal(err)
		}
		p, ok := getPod(t, s, "web")
		if !ok || p.DeletionTimestamp == nil || p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != 30 {
			t.Fatalf("deleted: want it Terminating with 30s of grace, got %+v (there: %v)", p.ObjectMeta, ok)
		}
		time.Sleep(3 * time.Second)
		if _, ok := getPod(t, s, "web"); ok {
			t.Fatal("still there once its containers stopped")
		}
	})
}

// Faults: a crashed container restarts after the back-off; a failed pod is Failed; a
// failing image pull keeps a pod Pending until restored.
func TestNodesFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, n := startNodes(t, apitest.NodesOptions{StartDelay: time.Second, RestartDelay: 10 * time.Second, PullRetryDelay: 20 * time.Second})
		createPod(t, s, "crashy", 2, nil)
		time.Sleep(3 * time.Second)
		if err := n.CrashContainer("default", "crashy", "app"); err != nil {
			t.Fatal(err)
		}
		p, _ := getPod(t, s, "crashy")
		if p.cond("Ready") != "False" || p.state() != "waiting/CrashLoopBackOff" || p.Status.ContainerStatuses[0].RestartCount != 1 {
			t.Fatalf("crashed: %+v", p.Status)
		}
		time.Sleep(10 * time.Second)
		if p, _ = getPod(t, s, "crashy"); p.state() != "running/" || p.cond("Ready") != "False" {
			t.Fatalf("restarted: %+v", p.Status)
		}
		time.Sleep(2 * time.Second)
		if p, _ = getPod(t, s, "crashy"); p.cond("Ready") != "True" {
			t.Fatalf("ready again: %+v", p.Status)
		}
		if err := n.FailPod("default", "crashy"); err != nil {
			t.Fatal(err)
		}
		if p, _ = getPod(t, s, "crashy"); p.Status.Phase != "Failed" || p.cond("Ready") != "False" || p.state() != "terminated/Error" {
			t.Fatalf("failed: %+v", p.Status)
		}
		if err := s.Delete("pods", "default", "crashy"); err != nil {
			t.Fatal(err)
		}
		if _, ok := getPod(t, s, "crashy"); ok {
			t.Error("a failed pod is deleted at once")
		}

		restore := n.FailImagePulls("example.com/app:1")
		createPod(t, s, "pull", 0, nil)
		time.Sleep(time.Second)
		if p, _ = getPod(t, s, "pull"); p.Status.Phase != "Pending" || p.state() != "waiting/ErrImagePull" {
			t.Fatalf("pull failing: %+v", p.Status)
		}
		time.Sleep(time.Second)
		if p, _ = getPod(t, s, "pull"); p.state() != "waiting/ImagePullBackOff" {
			t.Fatalf("pull backing off: %+v", p.Status)
		}
		restore()
		time.Sleep(20 * time.Second) // the next retry, then StartDelay
		if p, _ = getPod(t, s, "pull"); p.Status.Phase != "Running" || p.cond("Ready") != "True" {
			t.Fatalf("pulled at the retry: %+v", p.Status)
		}
		if err := n.CrashContainer("default", "nothere", "app"); !meta.IsNotFound(err) {
			t.Errorf("crash of a missing pod: %v", err)
		}
		if err := n.CrashContainer("default", "pull", "nosuch"); err == nil {
			t.Error("crash of a missing container: accepted")
		}
	})
}

// A NotReady node: its pods are not Ready, new pods go elsewhere, and after the default
// 300 s toleration its pods are evicted, staying Terminating until the node is back.
func TestNodeNotReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, n := startNodes(t, apitest.NodesOptions{Count: 2, StartDelay: time.Second})
		createPod(t, s, "a", 0, map[string]any{"nodeSelector": map[string]any{"kubernetes.io/hostname": "node-1"}})
		time.Sleep(time.Second)
		if p, _ := getPod(t, s, "a"); p.Spec.NodeName != "node-1" || p.cond("Ready") != "True" {
			t.Fatalf("a: %+v %+v", p.Spec, p.Status)
		}
		if err := n.SetNodeReady("node-1", false); err != nil {
			t.Fatal(err)
		}
		if p, _ := getPod(t, s, "a"); p.cond("Ready") != "False" || p.cond("ContainersReady") != "True" {
			t.Fatalf("a on a NotReady node: %+v", p.Status)
		}
		createPod(t, s, "b", 0, nil)
		if p, _ := getPod(t, s, "b"); p.Spec.NodeName != "node-2" {
			t.Errorf("b went to %q, want the Ready node-2", p.Spec.NodeName)
		}
		createPod(t, s, "c", 0, map[string]any{"nodeSelector": map[string]any{"kubernetes.io/hostname": "node-1"}})
		if p, _ := getPod(t, s, "c"); p.Spec.NodeName != "" || p.cond("PodScheduled") != "False" {
			t.Errorf("c selects only the NotReady node: %+v %+v", p.Spec, p.Status)
		}
		time.Sleep(299 * time.Second)
		if p, _ := getPod(t, s, "a"); p.DeletionTimestamp != nil {
			t.Fatal("evicted before its 300 s toleration ran out")
		}
		time.Sleep(time.Second)
		if p, _ := getPod(t, s, "a"); p.DeletionTimestamp == nil {
			t.Fatal("not evicted after 300 s")
		}
		time.Sleep(time.Minute)
		if _, ok := getPod(t, s, "a"); !ok {
			t.Fatal("gone while its node is NotReady: nothing stopped it")
		}
		if err := n.SetNodeReady("node-1", true); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if _, ok := getPod(t, s, "a"); ok {
			t.Fatal("still Terminating once its node is back")
		}
		if p, _ := getPod(t, s, "c"); p.Spec.NodeName != "node-1" {
			t.Errorf("c not scheduled once node-1 is back: %+v", p.Spec)
		}
		if err := n.SetNodeReady("node-9", false); err == nil {
			t.Error("SetNodeReady of a missing node: accepted")
		}
	})
}

// Pods created together are spread: each Pod bound counts at once for the next.
func TestNodesSpreadABurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := startNodes(t, apitest.NodesOptions{Count: 2})
		for _, name := range []string{"a", "b", "c", "d"} {
			createPod(t, s, name, 0, nil)
		}
		per := map[string]int{}
		for _, name := range []string{"a", "b", "c", "d"} {
			p, _ := getPod(t, s, name)
			per[p.Spec.NodeName]++
		}
		if per["node-1"] != 2 || per["node-2"] != 2 {
			t.Errorf("pods per node %v, want 2 and 2", per)
		}
	})
}

// DeleteWithOptions honours a DELETE's options as the kube-apiserver: a grace period
// shorter than the Pod's brings its deletion closer (its kubelet stops it by then), 0
// deletes it at once, and a precondition that does not hold is a 409 Conflict.
func TestDeleteWithGracePeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := startNodes(t, apitest.NodesOptions{StopDelay: time.Minute})
		createPod(t, s, "a", 0, nil)
		createPod(t, s, "b", 0, nil)
		time.Sleep(2 * time.Second)
		one, zero, wrong := int64(1), int64(0), "not-the-uid"
		err := s.DeleteWithOptions("pods", "default", "a", apiclient.DeleteOptions{Preconditions: &apiclient.Preconditions{UID: &wrong}})
		if !meta.IsConflict(err) {
			t.Fatalf("delete with a wrong uid: %v, want a 409", err)
		}
		if err := s.DeleteWithOptions("pods", "default", "a", apiclient.DeleteOptions{GracePeriodSeconds: &one}); err != nil {
			t.Fatal(err)
		}
		p, ok := getPod(t, s, "a")
		if !ok || p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != 1 {
			t.Fatalf("deleted with 1s of grace: %+v (there: %v)", p.ObjectMeta, ok)
		}
		time.Sleep(time.Second)
		if _, ok := getPod(t, s, "a"); ok {
			t.Fatal("still there after its 1s of grace")
		}
		if err := s.DeleteWithOptions("pods", "default", "b", apiclient.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatal(err)
		}
		if _, ok := getPod(t, s, "b"); ok {
			t.Fatal("deleted with a grace period of 0, still there")
		}
	})
}
