package printers

import (
	"fmt"
	"strconv"
	"time"

	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
)

// The kube-apiserver's pod printer (Ready, Status and Restarts), on the JSON form.

type podCells struct{ ready, status, restarts string }

// podState is what the pod printer gathers from the container statuses.
type podState struct {
	reason      string
	ready       int
	restarts    int64
	lastRestart time.Time
	// The restarts of restartable init containers (sidecars), which count again once the
	// pod is initialized.
	sidecarRestarts    int64
	lastSidecarRestart time.Time
}

func podRow(o map[string]any, now time.Time) podCells {
	spec, status := jsonobj.Map(o["spec"]), jsonobj.Map(o["status"])
	phase := jsonobj.Str(status, "phase")
	p := podState{reason: phase}
	if r := jsonobj.Str(status, "reason"); r != "" {
		p.reason = r
	}
	for _, c := range jsonobj.ListAt(status, "conditions") {
		if cm := jsonobj.Map(c); jsonobj.Str(cm, "type") == "PodScheduled" && jsonobj.Str(cm, "reason") == "SchedulingGated" {
			p.reason = "SchedulingGated"
		}
	}
	total := len(jsonobj.ListAt(spec, "containers"))
	restartable := map[string]bool{}
	for _, c := range jsonobj.ListAt(spec, "initContainers") {
		if cm := jsonobj.Map(c); jsonobj.Str(cm, "restartPolicy") == "Always" {
			restartable[jsonobj.Str(cm, "name")] = true
			total++
		}
	}
	initializing := p.initContainers(spec, status, restartable)
	if !initializing || hasCondition(status, "Initialized") {
		p.containers(status)
	}
	if jsonobj.Map(o["metadata"])["deletionTimestamp"] != nil {
		if jsonobj.Str(status, "reason") == "NodeLost" {
			p.reason = "Unknown"
		} else if phase != "Succeeded" && phase != "Failed" {
			p.reason = "Terminating"
		}
	}
	rs := strconv.FormatInt(p.restarts, 10)
	if p.restarts != 0 && !p.lastRestart.IsZero() {
		rs = fmt.Sprintf("%d (%s ago)", p.restarts, humanDuration(now.Sub(p.lastRestart)))
	}
	return podCells{ready: fmt.Sprintf("%d/%d", p.ready, total), status: p.reason, restarts: rs}
}

// initContainers counts the init containers' restarts and ready sidecars, and reports
// whether the pod is still initializing (p.reason then says at which init container).
func (p *podState) initContainers(spec, status map[string]any, restartable map[string]bool) (initializing bool) {
	inits := jsonobj.ListAt(status, "initContainerStatuses")
	for i, c := range inits {
		cs := jsonobj.Map(c)
		p.restarts += jsonobj.Num(cs["restartCount"])
		if t := terminatedAt(cs); t.After(p.lastRestart) {
			p.lastRestart = t
		}
		if restartable[jsonobj.Str(cs, "name")] {
			p.sidecarRestarts += jsonobj.Num(cs["restartCount"])
			if t := terminatedAt(cs); t.After(p.lastSidecarRestart) {
				p.lastSidecarRestart = t
			}
		}
		state := jsonobj.Map(cs["state"])
		term, wait := jsonobj.Map(state["terminated"]), jsonobj.Map(state["waiting"])
		started, _ := cs["started"].(bool)
		csReady, _ := cs["ready"].(bool)
		switch {
		case term != nil && jsonobj.Num(term["exitCode"]) == 0:
			continue
		case restartable[jsonobj.Str(cs, "name")] && started:
			if csReady {
				p.ready++
			}
			continue
		case term != nil:
			p.reason = "Init:" + terminatedReason(term)
		case wait != nil && jsonobj.Str(wait, "reason") != "" && jsonobj.Str(wait, "reason") != "PodInitializing":
			p.reason = "Init:" + jsonobj.Str(wait, "reason")
		default:
			p.reason = fmt.Sprintf("Init:%d/%d", i, len(jsonobj.ListAt(spec, "initContainers")))
		}
		return true
	}
	return false
}

// containers counts the restarts and ready containers of an initialized pod, and takes
// its reason from the containers that wait or have terminated (the first listed wins).
func (p *podState) containers(status map[string]any) {
	p.restarts, p.lastRestart = p.sidecarRestarts, p.lastSidecarRestart
	hasRunning, errorReason := false, ""
	cstats := jsonobj.ListAt(status, "containerStatuses")
	for i := len(cstats) - 1; i >= 0; i-- {
		cs := jsonobj.Map(cstats[i])
		p.restarts += jsonobj.Num(cs["restartCount"])
		if t := terminatedAt(cs); t.After(p.lastRestart) {
			p.lastRestart = t
		}
		state := jsonobj.Map(cs["state"])
		term, wait := jsonobj.Map(state["terminated"]), jsonobj.Map(state["waiting"])
		csReady, _ := cs["ready"].(bool)
		switch {
		case wait != nil && jsonobj.Str(wait, "reason") != "":
			p.reason = jsonobj.Str(wait, "reason")
		case term != nil:
			p.reason = terminatedReason(term)
			if jsonobj.Num(term["exitCode"]) != 0 {
				errorReason = p.reason
			}
		case csReady && state["running"] != nil:
			hasRunning = true
			p.ready++
		}
	}
	if p.reason != "Completed" {
		return
	}
	switch {
	case hasRunning && hasCondition(status, "Ready"):
		p.reason = "Running"
	case errorReason != "":
		p.reason = errorReason
	case hasRunning:
		p.reason = "NotReady"
	}
}

// terminatedReason is a terminated container's reason, else its signal or exit code.
func terminatedReason(term map[string]any) string {
	switch {
	case jsonobj.Str(term, "reason") != "":
		return jsonobj.Str(term, "reason")
	case jsonobj.Num(term["signal"]) != 0:
		return fmt.Sprintf("Signal:%d", jsonobj.Num(term["signal"]))
	}
	return fmt.Sprintf("ExitCode:%d", jsonobj.Num(term["exitCode"]))
}

// terminatedAt is when a container last terminated (zero if it never did).
func terminatedAt(cs map[string]any) time.Time {
	t, _ := time.Parse(time.RFC3339, jsonobj.StrAt(cs, "lastState", "terminated", "finishedAt"))
	return t
}

// hasCondition reports whether the pod status has condition typ with status True.
func hasCondition(status map[string]any, typ string) bool {
	for _, c := range jsonobj.ListAt(status, "conditions") {
		if cm := jsonobj.Map(c); jsonobj.Str(cm, "type") == typ && jsonobj.Str(cm, "status") == "True" {
			return true
		}
	}
	return false
}
