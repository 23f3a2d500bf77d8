package deployment

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
)

// A rollout replaces the Pods of an older template one at a time, as a Deployment's
// RollingUpdate with maxSurge 1 and maxUnavailable 0 does: one Pod of the current template
// beyond Spec.Replicas is created, and an old Pod goes only once a new one is Ready, so that
// Spec.Replicas Pods are Ready throughout. A new Pod that never gets Ready (its image does
// not pull, its container crashes) holds the rollout where it is.

// plan is what one reconcile does: create Pods of the current template, or delete Pods.
type plan struct {
	create  int
	victims []*Pod
}

// templateHash names a template: Pods carry it in LabelTemplateHash (upstream's
// pod-template-hash).
func templateHash(t PodTemplate) string {
	b, _ := json.Marshal(t)
	h := fnv.New32a()
	h.Write(b)
	return fmt.Sprintf("%08x", h.Sum32())
}

// planPods decides one step towards desired Ready Pods of the template hash, from the
// active (not terminating) Pods.
func planPods(desired int, hash string, active []*Pod) plan {
	var cur, old []*Pod
	for _, p := range active {
		if p.Labels[LabelTemplateHash] == hash {
			cur = append(cur, p)
		} else {
			old = append(old, p)
		}
	}
	if len(old) == 0 { // scaling
		switch diff := desired - len(cur); {
		case diff > 0:
			return plan{create: diff}
		case diff < 0:
			return plan{victims: victims(cur, -diff)}
		}
		return plan{}
	}
	// Rolling: surge 1 Pod of the current template over desired...
	if n := min(desired+1-len(active), desired-len(cur)); n > 0 {
		return plan{create: n}
	}
	// ...and delete old Pods while desired Pods stay Ready: the old ones that are not
	// Ready first (they cost no availability), then as many Ready ones as there are Ready
	// Pods beyond desired. New Pods not Ready yet count against it (upstream's
	// maxScaledDown).
	maxDown := len(active) - desired - (len(cur) - countReady(cur))
	if maxDown <= 0 {
		return plan{}
	}
	var p plan
	for _, o := range victims(old, len(old)) {
		if len(p.victims) == maxDown {
			break
		}
		if !o.Ready() {
			p.victims = append(p.victims, o)
		}
	}
	spare := countReady(active) - desired
	for _, o := range old {
		if len(p.victims) == maxDown || spare <= 0 {
			break
		}
		if o.Ready() {
			p.victims = append(p.victims, o)
			spare--
		}
	}
	return p
}

// victims returns the n Pods to delete first: those not Ready, then the newest.
func victims(pods []*Pod, n int) []*Pod {
	sorted := slices.Clone(pods)
	slices.SortFunc(sorted, func(a, b *Pod) int {
		if a.Ready() != b.Ready() {
			if a.Ready() {
				return 1
			}
			return -1
		}
		return cmp.Or(b.CreationTimestamp.Compare(a.CreationTimestamp.Time), cmp.Compare(b.Name, a.Name))
	})
	return sorted[:n]
}

func countReady(pods []*Pod) int {
	n := 0
	for _, p := range pods {
		if p.Ready() {
			n++
		}
	}
	return n
}
