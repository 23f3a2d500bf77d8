package kubelet

import (
	"time"
)

// Status returns the Pod's status at now, as the kubelet writes it (the fields it owns:
// phase, conditions but PodScheduled, containerStatuses, IPs, startTime), and the next time
// it changes by itself (zero: not before a fault, a deletion or a change of the node).
// nodeReady false is a node that stopped reporting: its Pods' Ready conditions are False
// (as the node lifecycle controller marks them) and nothing else changes.
func (p *Pod) Status(now time.Time, nodeReady bool) (map[string]any, time.Time) {
	var next time.Time
	allRan, allReady := true, true
	statuses := make([]any, 0, len(p.Containers))
	for _, c := range p.Containers {
		statuses = append(statuses, c.status(now))
		if !c.ready(now) {
			allReady = false
		}
		// Running once every container has been created (run at least once), as the
		// kubelet's phase: a container still waiting for its image keeps the Pod Pending.
		if c.restarts == 0 && !c.running(now) && (c.done == nil || c.done.started.IsZero()) {
			allRan = false
		}
		if n := c.next(now); !n.IsZero() && (next.IsZero() || n.Before(next)) {
			next = n
		}
	}
	phase := "Pending"
	switch {
	case p.failed:
		phase = "Failed"
	case p.stopped:
		phase = "Succeeded"
	case allRan:
		phase = "Running"
	}
	ready := allReady && !p.failed && !p.stopped
	podReady := ready && nodeReady
	st := map[string]any{
		"phase":             phase,
		"hostIP":            p.HostIP,
		"hostIPs":           []any{map[string]any{"ip": p.HostIP}},
		"podIP":             p.IP,
		"podIPs":            []any{map[string]any{"ip": p.IP}},
		"startTime":         stamp(p.Scheduled),
		"containerStatuses": statuses,
		"conditions": []any{
			p.condition("PodReadyToStartContainers", !p.stopped && !p.failed, now, ""),
			p.condition("Initialized", true, now, ""),
			p.condition("Ready", podReady, now, readyReason(ready, nodeReady, p)),
			p.condition("ContainersReady", ready, now, readyReason(ready, true, p)),
		},
	}
	if p.message != "" {
		st["message"] = p.message
	}
	return st, next
}

func readyReason(ready, nodeReady bool, p *Pod) string {
	switch {
	case ready && !nodeReady:
		return "NodeNotReady"
	case ready:
		return ""
	case p.stopped || p.failed:
		return "PodCompleted"
	}
	return "ContainersNotReady"
}

// condition returns the condition of type t, True if ok, whose lastTransitionTime is when
// it last changed status (now, the first time the model sees it so); reason says why it is
// False.
func (p *Pod) condition(t string, ok bool, now time.Time, reason string) map[string]any {
	status := "False"
	if ok {
		status = "True"
	}
	c, seen := p.conds[t]
	if !seen || c.status != status {
		c = cond{status: status, since: now}
		p.conds[t] = c
	}
	out := map[string]any{"type": t, "status": status, "lastProbeTime": nil, "lastTransitionTime": stamp(c.since)}
	if !ok && reason != "" {
		out["reason"] = reason
	}
	return out
}

// status is a containerStatuses entry.
func (c *Container) status(now time.Time) map[string]any {
	running, ready := c.running(now), c.ready(now)
	st := map[string]any{
		"name": c.Name, "image": c.Image, "imageID": "", "containerID": "",
		"ready": ready, "started": running, "restartCount": c.restarts,
	}
	switch {
	case c.done != nil:
		st["state"] = map[string]any{"terminated": c.done.json()}
	case running:
		st["state"] = map[string]any{"running": map[string]any{"startedAt": stamp(c.runAt)}}
	case !c.pullFailed.IsZero() && !now.Before(c.pullFailed):
		reason := "ImagePullBackOff"
		if now.Before(c.pullFailed.Add(errImagePullFor)) {
			reason = "ErrImagePull"
		}
		st["state"] = map[string]any{"waiting": map[string]any{"reason": reason,
			"message": "Back-off pulling image \"" + c.Image + "\""}}
	default:
		st["state"] = map[string]any{"waiting": map[string]any{"reason": c.waitReason}}
	}
	if running || c.done != nil && !c.done.started.IsZero() || c.restarts > 0 {
		st["imageID"] = "sha256:" + fakeDigest(c.Image)
		st["containerID"] = "containerd://" + fakeDigest(c.Name+"/"+c.Image)
	}
	if c.last != nil {
		st["lastState"] = map[string]any{"terminated": c.last.json()}
	} else {
		st["lastState"] = map[string]any{}
	}
	return st
}

func (t *terminated) json() map[string]any {
	out := map[string]any{"exitCode": t.exitCode, "reason": t.reason, "finishedAt": stamp(t.finished)}
	if !t.started.IsZero() {
		out["startedAt"] = stamp(t.started)
	}
	return out
}

// stamp is a time as the API writes it.
func stamp(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

// fakeDigest is a stable 64-hex-digit stand-in for an image or container digest.
func fakeDigest(s string) string {
	const hex = "0123456789abcdef"
	var h uint64 = 14695981039346656037
	out := make([]byte, 64)
	for i := range out {
		for j := 0; j < len(s); j++ {
			h ^= uint64(s[j])
			h *= 1099511628211
		}
		h ^= uint64(i)
		h *= 1099511628211
		out[i] = hex[h&15]
	}
	return string(out)
}
