package kubelet

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

var timing = Timing{Start: 2 * time.Second, Restart: 10 * time.Second, PullRetry: 10 * time.Second}

func at(d time.Duration) time.Time { return t0.Add(d) }

func newPod(restartNever bool) *Pod {
	return NewPod("node-1", "10.244.1.1", "10.0.1.1", t0, restartNever,
		[]*Container{{Name: "web", Image: "nginx", ReadyAfter: 5 * time.Second}, {Name: "sidecar", Image: "busybox"}}, timing)
}

// view is what the tests read of a status.
type view struct {
	phase, ready, containersReady, webState, webReason string
	webReady                                           bool
	restarts                                           int32
	next                                               time.Duration
}

func look(t *testing.T, p *Pod, now time.Time, nodeReady bool) view {
	t.Helper()
	st, next := p.Status(now, nodeReady)
	v := view{phase: st["phase"].(string)}
	for _, c := range st["conditions"].([]any) {
		c := c.(map[string]any)
		s := c["status"].(string)
		if r, ok := c["reason"]; ok {
			s += "/" + r.(string)
		}
		switch c["type"] {
		case "Ready":
			v.ready = s
		case "ContainersReady":
			v.containersReady = s
		}
	}
	web := st["containerStatuses"].([]any)[0].(map[string]any)
	v.webReady, v.restarts = web["ready"].(bool), web["restartCount"].(int32)
	for k, s := range web["state"].(map[string]any) {
		v.webState = k
		if r, ok := s.(map[string]any)["reason"]; ok {
			v.webReason = r.(string)
		}
	}
	if !next.IsZero() {
		v.next = next.Sub(t0)
	}
	return v
}

func expect(t *testing.T, got, want view) {
	t.Helper()
	if got != want {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
}

// Scheduled, then running after Start, then ready after the readiness delay.
func TestLifecycle(t *testing.T) {
	p := newPod(false)
	expect(t, look(t, p, t0, true), view{phase: "Pending", ready: "False/ContainersNotReady", containersReady: "False/ContainersNotReady",
		webState: "waiting", webReason: "ContainerCreating", next: 2 * time.Second})
	expect(t, look(t, p, at(2*time.Second), true), view{phase: "Running", ready: "False/ContainersNotReady", containersReady: "False/ContainersNotReady",
		webState: "running", next: 7 * time.Second})
	expect(t, look(t, p, at(7*time.Second), true), view{phase: "Running", ready: "True", containersReady: "True", webState: "running", webReady: true})
	st, _ := p.Status(at(9*time.Second), true)
	for _, c := range st["conditions"].([]any) {
		if c := c.(map[string]any); c["type"] == "Ready" && c["lastTransitionTime"] != "2026-01-02T03:04:12Z" {
			t.Errorf("Ready since %v, want when it became True", c["lastTransitionTime"])
		}
	}
	if st["podIP"] != "10.244.1.1" || st["hostIP"] != "10.0.1.1" || st["startTime"] != "2026-01-02T03:04:05Z" {
		t.Errorf("IPs and start time: %v", st)
	}
	// The node stops reporting: the Pod is not Ready, its containers still are.
	expect(t, look(t, p, at(9*time.Second), false), view{phase: "Running", ready: "False/NodeNotReady", containersReady: "True", webState: "running", webReady: true})
}

// A crash: not ready, CrashLoopBackOff for the restart delay, running again, ready again.
func TestCrash(t *testing.T) {
	p := newPod(false)
	if err := p.Crash(p.Container("web"), at(time.Second), timing); err == nil {
		t.Error("crash of a container not running yet: accepted")
	}
	if err := p.Crash(p.Container("web"), at(10*time.Second), timing); err != nil {
		t.Fatal(err)
	}
	expect(t, look(t, p, at(10*time.Second), true), view{phase: "Running", ready: "False/ContainersNotReady", containersReady: "False/ContainersNotReady",
		webState: "waiting", webReason: "CrashLoopBackOff", restarts: 1, next: 20 * time.Second})
	expect(t, look(t, p, at(20*time.Second), true), view{phase: "Running", ready: "False/ContainersNotReady", containersReady: "False/ContainersNotReady",
		webState: "running", restarts: 1, next: 25 * time.Second})
	expect(t, look(t, p, at(25*time.Second), true), view{phase: "Running", ready: "True", containersReady: "True", webState: "running", webReady: true, restarts: 1})
	st, _ := p.Status(at(25*time.Second), true)
	last := st["containerStatuses"].([]any)[0].(map[string]any)["lastState"].(map[string]any)["terminated"].(map[string]any)
	if last["exitCode"] != int32(1) || last["reason"] != "Error" || last["finishedAt"] != "2026-01-02T03:04:15Z" {
		t.Errorf("lastState %v", last)
	}
	// restartPolicy Never: the crash fails the Pod.
	never := newPod(true)
	if err := never.Crash(never.Container("web"), at(10*time.Second), timing); err != nil {
		t.Fatal(err)
	}
	expect(t, look(t, never, at(11*time.Second), true), view{phase: "Failed", ready: "False/PodCompleted", containersReady: "False/PodCompleted",
		webState: "terminated", webReason: "Error"})
}

// A failing pull: ErrImagePull, then ImagePullBackOff; fixed, the next retry pulls it.
func TestImagePull(t *testing.T) {
	p := newPod(false)
	p.Container("web").PullFailing(true, at(time.Second), timing)
	expect(t, look(t, p, at(time.Second), true), view{phase: "Pending", ready: "False/ContainersNotReady", containersReady: "False/ContainersNotReady",
		webState: "waiting", webReason: "ContainerCreating", next: 2 * time.Second})
	expect(t, look(t, p, at(2*time.Second), true), view{phase: "Pending", ready: "False/ContainersNotReady", containersReady: "False/ContainersNotReady",
		webState: "waiting", webReason: "ErrImagePull", next: 3 * time.Second})
	expect(t, look(t, p, at(3*time.Second), true), view{phase: "Pending", ready: "False/ContainersNotReady", containersReady: "False/ContainersNotReady",
		webState: "waiting", webReason: "ImagePullBackOff"})
	p.Container("web").PullFailing(false, at(30*time.Second), timing)
	expect(t, look(t, p, at(30*time.Second), true), view{phase: "Pending", ready: "False/ContainersNotReady", containersReady: "False/ContainersNotReady",
		webState: "waiting", webReason: "ContainerCreating", next: 34 * time.Second})
	expect(t, look(t, p, at(39*time.Second), true), view{phase: "Running", ready: "True", containersReady: "True", webState: "running", webReady: true})
}

// Fail and Stop end every container for good.
func TestFailAndStop(t *testing.T) {
	p := newPod(false)
	p.Fail(at(8*time.Second), "evicted by the test")
	st, next := p.Status(at(8*time.Second), true)
	if st["phase"] != "Failed" || st["message"] != "evicted by the test" || !next.IsZero() {
		t.Errorf("failed: %v next %v", st, next)
	}
	s := newPod(false)
	s.Stop(at(8 * time.Second))
	expect(t, look(t, s, at(8*time.Second), true), view{phase: "Succeeded", ready: "False/PodCompleted", containersReady: "False/PodCompleted",
		webState: "terminated", webReason: "Completed"})
}
