// Package kubelet is the model behind apitest's simulated nodes: what the kubelet would
// report of a Pod (its phase, conditions and container statuses) at a given time, from the
// Pod's spec, when it was scheduled, and the faults a test injected. It holds no timers and
// talks to no server: apitest drives it, and asks it when the status changes next.
package kubelet

import (
	"fmt"
	"time"
)

// Timing is how long the simulated containers take.
type Timing struct {
	// Start is the time from scheduling (or a restart) to a container running: pulling the
	// image and starting it.
	Start time.Duration
	// Restart is the back-off before a crashed container runs again (CrashLoopBackOff).
	Restart time.Duration
	// PullRetry is the back-off before a failed image pull is tried again
	// (ImagePullBackOff).
	PullRetry time.Duration
}

// errImagePullFor is how long a failed pull shows ErrImagePull before ImagePullBackOff.
const errImagePullFor = time.Second

// Container is the simulated state of one container of a Pod.
type Container struct {
	Name, Image string
	// ReadyAfter is the time from running to ready: the readiness probe's
	// initialDelaySeconds, after the startup probe's (0: ready once running).
	ReadyAfter time.Duration

	runAt      time.Time // when the current run starts (zero: not planned: pulls failing)
	restarts   int32
	last       *terminated // the previous run's end
	pullFailed time.Time   // when the current pull failed (zero: not failing)
	waitReason string      // the reason of a Waiting state before runAt
	done       *terminated // set once the container stopped for good
}

type terminated struct {
	exitCode           int32
	reason             string
	started, finished  time.Time
	restartedAfterward bool
}

// Pod is the simulated state of one Pod on a node.
type Pod struct {
	Node, IP, HostIP string
	Scheduled        time.Time
	// RestartNever is restartPolicy Never: a crashed container fails the Pod.
	RestartNever bool
	Containers   []*Container

	failed  bool
	message string
	stopped bool // terminated for a graceful deletion
	conds   map[string]cond
}

type cond struct {
	status string
	since  time.Time
}

// NewPod returns the model of a Pod scheduled at t: its containers start t.Start later.
func NewPod(node, ip, hostIP string, scheduled time.Time, restartNever bool, containers []*Container, t Timing) *Pod {
	p := &Pod{Node: node, IP: ip, HostIP: hostIP, Scheduled: scheduled, RestartNever: restartNever, Containers: containers,
		conds: map[string]cond{}}
	for _, c := range containers {
		c.runAt = scheduled.Add(t.Start)
		c.waitReason = "ContainerCreating"
	}
	return p
}

// Container returns the container name (nil if the Pod has none).
func (p *Pod) Container(name string) *Container {
	for _, c := range p.Containers {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Fail makes the Pod fail at now: every container exits 1, none restarts.
func (p *Pod) Fail(now time.Time, message string) {
	if p.failed || p.stopped {
		return
	}
	p.failed, p.message = true, message
	for _, c := range p.Containers {
		c.stop(now, 1, "Error")
	}
}

// Crash makes container c exit 1 at now; it runs again after t.Restart unless the Pod's
// restart policy is Never, which fails the Pod.
func (p *Pod) Crash(c *Container, now time.Time, t Timing) error {
	if p.failed || p.stopped || c.done != nil {
		return fmt.Errorf("the pod is not running")
	}
	if !c.running(now) {
		return fmt.Errorf("container %s is not running", c.Name)
	}
	if p.RestartNever {
		c.stop(now, 1, "Error")
		p.failed, p.message = true, ""
		return nil
	}
	c.last = &terminated{exitCode: 1, reason: "Error", started: c.runAt, finished: now}
	c.restarts++
	c.runAt = now.Add(t.Restart)
	c.waitReason = "CrashLoopBackOff"
	return nil
}

// PullFailing tells the model whether the pulls of c's image fail from now on.
func (c *Container) PullFailing(failing bool, now time.Time, t Timing) {
	switch {
	case failing && c.pullFailed.IsZero() && !c.runAt.IsZero() && now.Before(c.runAt) && c.restarts == 0:
		// Not started yet: the pull fails when it would have started.
		c.pullFailed = c.runAt
		c.runAt = time.Time{}
	case !failing && !c.pullFailed.IsZero():
		// Pulled at the next retry.
		next := c.pullFailed.Add(t.PullRetry)
		for next.Before(now) {
			next = next.Add(t.PullRetry)
		}
		c.pullFailed, c.runAt, c.waitReason = time.Time{}, next.Add(t.Start), "ContainerCreating"
	}
}

// Stop stops every container at now for a graceful deletion: they exit 0.
func (p *Pod) Stop(now time.Time) {
	if p.stopped {
		return
	}
	p.stopped = true
	for _, c := range p.Containers {
		c.stop(now, 0, "Completed")
	}
}

func (c *Container) stop(now time.Time, code int32, reason string) {
	if c.done != nil {
		return
	}
	started := c.runAt
	if !c.running(now) {
		started = time.Time{}
	}
	c.done = &terminated{exitCode: code, reason: reason, started: started, finished: now}
}

// running reports whether c runs at now.
func (c *Container) running(now time.Time) bool {
	return c.done == nil && !c.runAt.IsZero() && !now.Before(c.runAt)
}

// ready reports whether c is ready at now.
func (c *Container) ready(now time.Time) bool {
	return c.running(now) && !now.Before(c.runAt.Add(c.ReadyAfter))
}

// next returns the next time c's state changes by itself after now (zero: none).
func (c *Container) next(now time.Time) time.Time {
	switch {
	case c.done != nil, c.runAt.IsZero() && c.pullFailed.IsZero():
		return time.Time{}
	case !c.pullFailed.IsZero() && now.Before(c.pullFailed):
		return c.pullFailed
	case !c.pullFailed.IsZero() && now.Before(c.pullFailed.Add(errImagePullFor)):
		return c.pullFailed.Add(errImagePullFor)
	case !c.pullFailed.IsZero():
		return time.Time{} // retried once PullFailing(false)
	case now.Before(c.runAt):
		return c.runAt
	case c.ReadyAfter > 0 && now.Before(c.runAt.Add(c.ReadyAfter)):
		return c.runAt.Add(c.ReadyAfter)
	}
	return time.Time{}
}
