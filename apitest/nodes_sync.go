package apitest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/apitest/internal/kubelet"
)

// podView is what the kubelets read of a Pod.
type podView struct {
	Metadata struct {
		Namespace, Name, UID string
		DeletionTimestamp    *string `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
		NodeName      string            `json:"nodeName"`
		SchedulerName string            `json:"schedulerName"`
		NodeSelector  map[string]string `json:"nodeSelector"`
		RestartPolicy string            `json:"restartPolicy"`
		Containers    []struct {
			Name, Image    string
			ReadinessProbe *probe `json:"readinessProbe"`
			StartupProbe   *probe `json:"startupProbe"`
		} `json:"containers"`
		Tolerations []struct {
			Key, Operator, Effect string
			TolerationSeconds     *int64 `json:"tolerationSeconds"`
		} `json:"tolerations"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

type probe struct {
	InitialDelaySeconds int64 `json:"initialDelaySeconds"`
}

const notReadyTaint = "node.kubernetes.io/not-ready"

// sync brings every Pod's status to what its kubelet reports at now, schedules new Pods,
// finishes graceful deletions and evicts the Pods of NotReady Nodes. It returns the next
// time something changes by itself (zero: none).
func (n *Nodes) sync(now time.Time) time.Time {
	objs, _, err := n.s.List("pods", "")
	if err != nil {
		return time.Time{}
	}
	var next time.Time
	later := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	seen := map[string]bool{}
	for _, o := range objs {
		var p podView
		if o.Into(&p) != nil {
			continue
		}
		seen[p.Metadata.UID] = true
		later(n.syncPod(&p, now))
	}
	n.mu.Lock()
	for uid := range n.pods {
		if !seen[uid] {
			delete(n.pods, uid)
		}
	}
	n.mu.Unlock()
	return next
}

// syncPod handles one Pod; it returns when it next changes by itself.
func (n *Nodes) syncPod(p *podView, now time.Time) time.Time {
	deleting := p.Metadata.DeletionTimestamp != nil
	if p.Spec.NodeName == "" {
		if !deleting && (p.Spec.SchedulerName == "" || p.Spec.SchedulerName == "default-scheduler") {
			n.schedule(p, now)
		}
		return time.Time{}
	}
	n.mu.Lock()
	node := n.node(p.Spec.NodeName)
	if node == nil {
		n.mu.Unlock()
		return time.Time{} // not one of ours
	}
	sp := n.pods[p.Metadata.UID]
	if sp == nil {
		sp = &simPod{model: n.newModel(p, node, now)}
		n.pods[p.Metadata.UID] = sp
	}
	nodeReady := node.ready
	var next time.Time
	finish := false
	switch {
	case deleting && nodeReady:
		if sp.deleteSeen.IsZero() {
			sp.deleteSeen = now
		}
		stopAt := sp.deleteSeen.Add(n.stopIn)
		if deadline, err := time.Parse(time.RFC3339, *p.Metadata.DeletionTimestamp); err == nil && deadline.Before(stopAt) {
			stopAt = deadline
		}
		if now.Before(stopAt) {
			next = stopAt
		} else {
			sp.model.Stop(now)
			finish = true
		}
	case !deleting && !nodeReady && !sp.evicted:
		if at, ok := evictionTime(p, node); ok {
			if now.Before(at) {
				next = at
			} else {
				sp.evicted = true
				defer n.evict(p)
			}
		}
	}
	status, changesAt := sp.model.Status(now, nodeReady)
	n.mu.Unlock()
	if deleting && !nodeReady {
		return next // a NotReady Node's kubelet reports nothing
	}
	n.writePodStatus(p, status)
	if finish {
		zero := int64(0)
		n.s.mu.Lock()
		if r := n.s.resources["pods"]; r != nil {
			uid := p.Metadata.UID
			opts := deleteOptions{GracePeriodSeconds: &zero}
			opts.Preconditions = &struct {
				UID             *string `json:"uid"`
				ResourceVersion *string `json:"resourceVersion"`
			}{UID: &uid}
			n.s.deleteLocked(r, p.Metadata.Namespace, p.Metadata.Name, opts, false)
		}
		n.s.mu.Unlock()
		return time.Time{}
	}
	if next.IsZero() || !changesAt.IsZero() && changesAt.Before(next) {
		next = changesAt
	}
	return next
}

// evictionTime is when the taint-based eviction deletes a Pod of a NotReady node: at once
// without a toleration of the not-ready NoExecute taint, after its tolerationSeconds with
// one, never with one that tolerates it for ever.
func evictionTime(p *podView, node *simNode) (time.Time, bool) {
	for _, t := range p.Spec.Tolerations {
		if (t.Key == notReadyTaint || t.Key == "" && t.Operator == "Exists") && (t.Effect == "" || t.Effect == "NoExecute") {
			if t.TolerationSeconds == nil {
				return time.Time{}, false
			}
			return node.notReadySince.Add(time.Duration(*t.TolerationSeconds) * time.Second), true
		}
	}
	return node.notReadySince, true
}

// evict deletes a Pod as the taint manager does (gracefully: it stays Terminating while
// its Node is NotReady).
func (n *Nodes) evict(p *podView) {
	n.s.mu.Lock()
	defer n.s.mu.Unlock()
	if r := n.s.resources["pods"]; r != nil {
		uid := p.Metadata.UID
		opts := deleteOptions{}
		opts.Preconditions = &struct {
			UID             *string `json:"uid"`
			ResourceVersion *string `json:"resourceVersion"`
		}{UID: &uid}
		n.s.deleteLocked(r, p.Metadata.Namespace, p.Metadata.Name, opts, false)
	}
}

// node returns the simulated node name (nil if it is not one). n.mu held.
func (n *Nodes) node(name string) *simNode {
	for _, node := range n.nodes {
		if node.name == name {
			return node
		}
	}
	return nil
}

// newModel makes the kubelet's model of a Pod that runs on node from now. n.mu held.
func (n *Nodes) newModel(p *podView, node *simNode, now time.Time) *kubelet.Pod {
	var cs []*kubelet.Container
	for _, c := range p.Spec.Containers {
		var after int64
		if c.StartupProbe != nil {
			after += c.StartupProbe.InitialDelaySeconds
		}
		if c.ReadinessProbe != nil {
			after += c.ReadinessProbe.InitialDelaySeconds
		}
		cs = append(cs, &kubelet.Container{Name: c.Name, Image: c.Image, ReadyAfter: time.Duration(after) * time.Second})
	}
	node.seq++
	ip := fmt.Sprintf("10.%d.%d.%d", 100+node.index, node.seq/250, node.seq%250+2)
	m := kubelet.NewPod(node.name, ip, node.ip, now, p.Spec.RestartPolicy == "Never", cs, n.timing)
	for _, c := range m.Containers {
		if n.pullFail[c.Image] > 0 {
			c.PullFailing(true, now, n.timing)
		}
	}
	return m
}

// schedule binds a Pod to the Ready Node, among those its nodeSelector allows, that runs
// the fewest Pods; without one it marks the Pod Unschedulable, as the scheduler does.
func (n *Nodes) schedule(p *podView, now time.Time) {
	n.mu.Lock()
	count := map[string]int{}
	for _, sp := range n.pods {
		count[sp.model.Node]++
	}
	var best *simNode
	for _, node := range n.nodes {
		if !node.ready || !selects(p.Spec.NodeSelector, node) {
			continue
		}
		if best == nil || count[node.name] < count[best.name] {
			best = node
		}
	}
	total := len(n.nodes)
	n.mu.Unlock()
	if best == nil {
		n.s.mu.Lock()
		defer n.s.mu.Unlock()
		r := n.s.resources["pods"]
		cur := r.objects[objectKey(p.Metadata.Namespace, p.Metadata.Name)]
		if cur == nil || cur.uid != p.Metadata.UID {
			return
		}
		obj := mustDecode(cur.raw)
		status := jsonobj.Map(obj["status"])
		if status == nil {
			status = map[string]any{}
			obj["status"] = status
		}
		msg := fmt.Sprintf("0/%d nodes are available: %d node(s) were not ready or did not match Pod's node affinity/selector.", total, total)
		cond := map[string]any{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": msg,
			"lastProbeTime": nil, "lastTransitionTime": now.UTC().Truncate(time.Second).Format(time.RFC3339)}
		for _, c := range jsonobj.ListAt(status, "conditions") {
			if c := jsonobj.Map(c); jsonobj.Str(c, "type") == "PodScheduled" && jsonobj.Str(c, "reason") == "Unschedulable" {
				return // said so already
			}
		}
		status["conditions"] = append(withoutCondition(jsonobj.ListAt(status, "conditions"), "PodScheduled"), cond)
		n.s.updateLocked(r, p.Metadata.Namespace, p.Metadata.Name, obj, updateStatus, kubeletWrite("default-scheduler"))
		return
	}
	if n.s.bind(p.Metadata.Namespace, p.Metadata.Name, map[string]any{"target": map[string]any{"kind": "Node", "name": best.name}}) != nil {
		return
	}
	// Counted at once, so that the next Pod of this pass goes to the emptier node.
	n.mu.Lock()
	if n.pods[p.Metadata.UID] == nil {
		n.pods[p.Metadata.UID] = &simPod{model: n.newModel(p, best, now)}
	}
	n.mu.Unlock()
}

func selects(sel map[string]string, node *simNode) bool {
	labels := nodeLabels(node)
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func withoutCondition(conds []any, t string) []any {
	return slices.DeleteFunc(slices.Clone(conds), func(c any) bool { return jsonobj.Str(jsonobj.Map(c), "type") == t })
}

func kubeletWrite(manager string) writeOptions {
	return writeOptions{track: true, manager: manager, fieldManagerParam: manager}
}

// writePodStatus writes the kubelet's status of a Pod if it differs from the stored one,
// keeping the fields the kubelet does not own (PodScheduled, qosClass).
func (n *Nodes) writePodStatus(p *podView, kstatus map[string]any) {
	n.s.mu.Lock()
	defer n.s.mu.Unlock()
	r := n.s.resources["pods"]
	cur := r.objects[objectKey(p.Metadata.Namespace, p.Metadata.Name)]
	if cur == nil || cur.uid != p.Metadata.UID {
		return
	}
	obj := mustDecode(cur.raw)
	old := jsonobj.Map(obj["status"])
	next := map[string]any{}
	for k, v := range old {
		next[k] = v
	}
	delete(next, "message")
	for k, v := range kstatus {
		next[k] = v
	}
	var conds []any
	for _, c := range jsonobj.ListAt(old, "conditions") {
		if jsonobj.Str(jsonobj.Map(c), "type") == "PodScheduled" {
			conds = append(conds, c)
		}
	}
	next["conditions"] = append(conds, jsonobj.ListAt(kstatus, "conditions")...)
	if sameJSON(old, next) {
		return
	}
	obj["status"] = next
	n.s.updateLocked(r, p.Metadata.Namespace, p.Metadata.Name, obj, updateStatus, kubeletWrite("kubelet"))
}

func sameJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var x, y any
	_ = json.Unmarshal(ja, &x)
	_ = json.Unmarshal(jb, &y)
	return reflect.DeepEqual(x, y)
}

// nodeLabels are the well-known labels of a simulated Node.
func nodeLabels(node *simNode) map[string]string {
	return map[string]string{"kubernetes.io/hostname": node.name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
}

// nodeObject is a simulated Node as created.
func nodeObject(node *simNode) map[string]any {
	labels := map[string]any{}
	for k, v := range nodeLabels(node) {
		labels[k] = v
	}
	return map[string]any{"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": node.name, "labels": labels},
		"spec":     map[string]any{"podCIDR": fmt.Sprintf("10.%d.0.0/16", 100+node.index)}}
}

// writeNodeStatus writes a Node's conditions, capacity, addresses and, when NotReady, its
// not-ready taints.
func (n *Nodes) writeNodeStatus(node *simNode) error {
	now := time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
	ready := map[string]any{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status",
		"lastHeartbeatTime": now, "lastTransitionTime": now}
	var taints []any
	if !node.ready {
		ready["status"], ready["reason"], ready["message"] = "False", "KubeletNotReady", "container runtime network not ready"
		taints = []any{map[string]any{"key": notReadyTaint, "effect": "NoSchedule"},
			map[string]any{"key": notReadyTaint, "effect": "NoExecute", "timeAdded": now}}
	}
	conds := []any{ready}
	for _, t := range []string{"MemoryPressure", "DiskPressure", "PIDPressure"} {
		conds = append(conds, map[string]any{"type": t, "status": "False", "reason": "KubeletHas" + map[string]string{
			"MemoryPressure": "SufficientMemory", "DiskPressure": "NoDiskPressure", "PIDPressure": "SufficientPID"}[t],
			"lastHeartbeatTime": now, "lastTransitionTime": now})
	}
	capacity := map[string]any{"cpu": "4", "memory": "16Gi", "pods": "110", "ephemeral-storage": "100Gi"}
	_, err := n.s.Mutate("nodes", "", node.name, func(o Object) {
		spec := jsonobj.Map(o["spec"])
		if spec == nil {
			spec = map[string]any{}
			o["spec"] = spec
		}
		if taints != nil {
			spec["taints"] = taints
		} else {
			delete(spec, "taints")
		}
		o["status"] = map[string]any{"conditions": conds, "capacity": capacity, "allocatable": capacity,
			"addresses": []any{map[string]any{"type": "InternalIP", "address": node.ip}, map[string]any{"type": "Hostname", "address": node.name}},
			"nodeInfo": map[string]any{"kubeletVersion": n.s.rel.git, "containerRuntimeVersion": "containerd://2.0.0", "operatingSystem": "linux",
				"architecture": "amd64", "osImage": "apitest", "kernelVersion": "6.0.0", "machineID": node.name, "systemUUID": node.name, "bootID": node.name}}
	})
	return err
}
