package printers

import (
	"encoding/json"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/apitest/internal/selector"
)

// Cell helpers, and the cells of the core kinds, as the kube-apiserver's printers
// (k8s.io/kubernetes pkg/printers/internalversion) compute them from the internal types.

// at is the value at a path of the object.
func at(o map[string]any, path ...string) any {
	var cur any = o
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func str(path ...string) cellFunc {
	return func(o map[string]any, _ time.Time) any { s, _ := at(o, path...).(string); return s }
}

func strOr(def string, path ...string) cellFunc {
	return func(o map[string]any, _ time.Time) any {
		if s, _ := at(o, path...).(string); s != "" {
			return s
		}
		return def
	}
}

func num(path ...string) cellFunc {
	return func(o map[string]any, _ time.Time) any { return jsonobj.Num(at(o, path...)) }
}

// length counts a list's items or a map's keys.
func length(path ...string) cellFunc {
	return func(o map[string]any, _ time.Time) any {
		switch v := at(o, path...).(type) {
		case []any:
			return int64(len(v))
		case map[string]any:
			return int64(len(v))
		}
		return int64(0)
	}
}

// boolean is a bool field's value, def when unset.
func boolean(def bool, path ...string) cellFunc {
	return func(o map[string]any, _ time.Time) any {
		if b, ok := at(o, path...).(bool); ok {
			return b
		}
		return def
	}
}

func printBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// boolPtr is printBoolPtr: True, False, or <unset>.
func boolPtr(path ...string) cellFunc {
	return func(o map[string]any, _ time.Time) any {
		if b, ok := at(o, path...).(bool); ok {
			return printBool(b)
		}
		return "<unset>"
	}
}

// since is the age of a timestamp field, <none> when unset (noneIfUnset) or <unknown>.
func sinceAt(noneIfUnset bool, path ...string) cellFunc {
	return func(o map[string]any, now time.Time) any {
		s, _ := at(o, path...).(string)
		if s == "" && noneIfUnset {
			return "<none>"
		}
		return since(s, now)
	}
}

func labelsAt(path ...string) cellFunc {
	return func(o map[string]any, _ time.Time) any { return formatLabels(jsonobj.Map(at(o, path...))) }
}

func selectorAt(path ...string) cellFunc {
	return func(o map[string]any, _ time.Time) any {
		return selector.FormatLabelSelector(jsonobj.Map(at(o, path...)))
	}
}

// containers and images are the names and images of a template's containers.
func containers(template ...string) cellFunc {
	return func(o map[string]any, _ time.Time) any {
		n, _ := containerCells(jsonobj.Map(at(o, template...)))
		return n
	}
}

func images(template ...string) cellFunc {
	return func(o map[string]any, _ time.Time) any {
		_, i := containerCells(jsonobj.Map(at(o, template...)))
		return i
	}
}

// quantityString prints a quantity as written.
func quantityString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

// intOrString prints an int-or-string.
func intOrString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return jsonobj.NumString(v)
}

// accessModes is GetAccessModesAsString.
func accessModes(v any) string {
	have := map[string]bool{}
	for _, m := range jsonobj.Strings(v) {
		have[m] = true
	}
	var out []string
	for _, m := range []struct{ mode, short string }{{"ReadWriteOnce", "RWO"}, {"ReadOnlyMany", "ROX"}, {"ReadWriteMany", "RWX"}, {"ReadWriteOncePod", "RWOP"}} {
		if have[m.mode] {
			out = append(out, m.short)
		}
	}
	return strings.Join(out, ",")
}

// listWithMore joins at most max items, "+ N more..." for the rest, <unset> for none.
func listWithMore(items []string, max int) string {
	if len(items) > max {
		return fmt.Sprintf("%s + %d more...", strings.Join(items[:max], ","), len(items)-max)
	}
	if len(items) == 0 {
		return "<unset>"
	}
	return strings.Join(items, ",")
}

// phaseOrTerminating is a status phase, Terminating once deletion started.
func phaseOrTerminating(o map[string]any) string {
	if at(o, "metadata", "deletionTimestamp") != nil {
		return "Terminating"
	}
	return jsonobj.StrAt(o, "status", "phase")
}

// conditionStatus is the status of the first condition of a type ("" if none).
func conditionStatus(conds []any, typ string) (status, reason string, ok bool) {
	for _, c := range conds {
		cm := jsonobj.Map(c)
		if jsonobj.Str(cm, "type") == typ {
			return jsonobj.Str(cm, "status"), jsonobj.Str(cm, "reason"), true
		}
	}
	return "", "", false
}

// storageClassOf is GetPersistentVolume(Claim)Class: the beta annotation, then the field.
func storageClassOf(o map[string]any, field string) string {
	if c := jsonobj.StrAt(o, "metadata", "annotations", "volume.beta.kubernetes.io/storage-class"); c != "" {
		return c
	}
	return jsonobj.StrAt(o, "spec", field)
}

// kinds are the cells of every kind apitest prints as the kube-apiserver does.
var kinds = map[string]kindCells{}

func register(groupKind string, cells map[string]cellFunc) {
	kinds[groupKind] = kindCells{cells: cells}
}

func init() {
	registerWorkloads()
	registerCore()
	registerVolumes()
}

func registerWorkloads() {
	register("/Pod", map[string]cellFunc{
		"Ready":    func(o map[string]any, now time.Time) any { return podRow(o, now).ready },
		"Status":   func(o map[string]any, now time.Time) any { return podRow(o, now).status },
		"Restarts": func(o map[string]any, now time.Time) any { return podRow(o, now).restarts },
		"IP": func(o map[string]any, _ time.Time) any {
			if ips := jsonobj.ListAt(o, "status", "podIPs"); len(ips) > 0 {
				if ip := jsonobj.Str(jsonobj.Map(ips[0]), "ip"); ip != "" {
					return ip
				}
			}
			return "<none>"
		},
		"Node":            strOr("<none>", "spec", "nodeName"),
		"Nominated Node":  strOr("<none>", "status", "nominatedNodeName"),
		"Readiness Gates": readinessGates,
	})
	register("/PodTemplate", map[string]cellFunc{
		"Containers": containers("template"), "Images": images("template"), "Pod Labels": labelsAt("template", "metadata", "labels"),
	})
	register("/ReplicationController", map[string]cellFunc{
		"Desired": num("spec", "replicas"), "Current": num("status", "replicas"), "Ready": num("status", "readyReplicas"),
		"Containers": containers("spec", "template"), "Images": images("spec", "template"), "Selector": labelsAt("spec", "selector"),
	})
}

func registerCore() {
	register("/Namespace", map[string]cellFunc{"Status": str("status", "phase")})
	register("/ConfigMap", map[string]cellFunc{"Data": func(o map[string]any, _ time.Time) any {
		return int64(len(jsonobj.Map(o["data"])) + len(jsonobj.Map(o["binaryData"])))
	}})
	register("/Secret", map[string]cellFunc{"Type": str("type"), "Data": length("data")})
	register("/Service", map[string]cellFunc{
		"Type": str("spec", "type"),
		"Cluster-IP": func(o map[string]any, _ time.Time) any {
			if ips := jsonobj.Strings(at(o, "spec", "clusterIPs")); len(ips) > 0 {
				return ips[0]
			}
			return "<none>"
		},
		"External-IP": serviceExternalIP,
		"Port(s)": func(o map[string]any, _ time.Time) any {
			var parts []string
			for _, p := range jsonobj.ListAt(o, "spec", "ports") {
				pm := jsonobj.Map(p)
				s := fmt.Sprintf("%s/%s", jsonobj.NumString(pm["port"]), jsonobj.Str(pm, "protocol"))
				if np := jsonobj.NumString(pm["nodePort"]); np != "0" {
					s = fmt.Sprintf("%s:%s/%s", jsonobj.NumString(pm["port"]), np, jsonobj.Str(pm, "protocol"))
				}
				parts = append(parts, s)
			}
			return orNone(strings.Join(parts, ","))
		},
		"Selector": labelsAt("spec", "selector"),
	})
	events := map[string]cellFunc{
		"Last Seen": func(o map[string]any, now time.Time) any { return eventTimes(o, now).last },
		"Type":      str("type"),
		"Reason":    str("reason"),
		"Object": func(o map[string]any, _ time.Time) any {
			ref := eventRef(o)
			if n := jsonobj.Str(ref, "name"); n != "" {
				return strings.ToLower(jsonobj.Str(ref, "kind")) + "/" + n
			}
			return strings.ToLower(jsonobj.Str(ref, "kind"))
		},
		"Subobject": func(o map[string]any, _ time.Time) any { return jsonobj.Str(eventRef(o), "fieldPath") },
		"Source": func(o map[string]any, _ time.Time) any {
			src := jsonobj.Map(o["source"])
			if src == nil {
				src = jsonobj.Map(o["deprecatedSource"])
			}
			comp := firstNonEmpty(jsonobj.Str(src, "component"), jsonobj.Str(o, "reportingController"), jsonobj.Str(o, "reportingComponent"))
			if inst := firstNonEmpty(jsonobj.Str(src, "host"), jsonobj.Str(o, "reportingInstance")); inst != "" {
				return comp + ", " + inst
			}
			return comp
		},
		"Message": func(o map[string]any, _ time.Time) any {
			return strings.TrimSpace(firstNonEmpty(jsonobj.Str(o, "message"), jsonobj.Str(o, "note")))
		},
		"First Seen": func(o map[string]any, now time.Time) any { return eventTimes(o, now).first },
		"Count":      func(o map[string]any, now time.Time) any { return eventTimes(o, now).count },
	}
	register("/Event", events)
	register("events.k8s.io/Event", events)
	register("/Endpoints", map[string]cellFunc{"Endpoints": endpointsCell})
	register("/Node", map[string]cellFunc{
		"Status": nodeStatus,
		"Roles": func(o map[string]any, _ time.Time) any {
			roles := map[string]bool{}
			for k, v := range jsonobj.Map(at(o, "metadata", "labels")) {
				if r, ok := strings.CutPrefix(k, "node-role.kubernetes.io/"); ok && r != "" {
					roles[r] = true
				} else if s, _ := v.(string); k == "kubernetes.io/role" && s != "" {
					roles[s] = true
				}
			}
			if len(roles) == 0 {
				return "<none>"
			}
			return strings.Join(sortedKeys(roles), ",")
		},
		"Version":     str("status", "nodeInfo", "kubeletVersion"),
		"Internal-IP": nodeAddress("InternalIP"),
		"External-IP": nodeAddress("ExternalIP"),
		"OS-Image":    strOr("<unknown>", "status", "nodeInfo", "osImage"),
		"Kernel-Version": func(o map[string]any, _ time.Time) any {
			k := firstNonEmpty(jsonobj.StrAt(o, "status", "nodeInfo", "kernelVersion"), "<unknown>")
			if a := jsonobj.StrAt(o, "status", "nodeInfo", "architecture"); a != "" {
				k += " (" + a + ")"
			}
			return k
		},
		"Container-Runtime": strOr("<unknown>", "status", "nodeInfo", "containerRuntimeVersion"),
	})
}

func registerVolumes() {
	register("/PersistentVolume", map[string]cellFunc{
		"Capacity":       func(o map[string]any, _ time.Time) any { return quantityString(at(o, "spec", "capacity", "storage")) },
		"Access Modes":   func(o map[string]any, _ time.Time) any { return accessModes(at(o, "spec", "accessModes")) },
		"Reclaim Policy": str("spec", "persistentVolumeReclaimPolicy"),
		"Status":         func(o map[string]any, _ time.Time) any { return phaseOrTerminating(o) },
		"Claim": func(o map[string]any, _ time.Time) any {
			if ref := jsonobj.Map(at(o, "spec", "claimRef")); ref != nil {
				return jsonobj.Str(ref, "namespace") + "/" + jsonobj.Str(ref, "name")
			}
			return ""
		},
		"StorageClass":          func(o map[string]any, _ time.Time) any { return storageClassOf(o, "storageClassName") },
		"VolumeAttributesClass": strOr("<unset>", "spec", "volumeAttributesClassName"),
		"Reason":                str("status", "reason"),
		"VolumeMode":            strOr("<unset>", "spec", "volumeMode"),
	})
	register("/PersistentVolumeClaim", map[string]cellFunc{
		"Status": func(o map[string]any, _ time.Time) any { return phaseOrTerminating(o) },
		"Volume": str("spec", "volumeName"),
		"Capacity": func(o map[string]any, _ time.Time) any {
			if jsonobj.StrAt(o, "spec", "volumeName") == "" {
				return ""
			}
			return quantityString(at(o, "status", "capacity", "storage"))
		},
		"Access Modes": func(o map[string]any, _ time.Time) any {
			if jsonobj.StrAt(o, "spec", "volumeName") == "" {
				return ""
			}
			return accessModes(at(o, "status", "accessModes"))
		},
		"StorageClass":          func(o map[string]any, _ time.Time) any { return storageClassOf(o, "storageClassName") },
		"VolumeAttributesClass": strOr("<unset>", "spec", "volumeAttributesClassName"),
		"VolumeMode":            strOr("<unset>", "spec", "volumeMode"),
	})
	register("/ResourceQuota", map[string]cellFunc{
		"Request": func(o map[string]any, _ time.Time) any { r, _ := quotaCells(o); return r },
		"Limit":   func(o map[string]any, _ time.Time) any { _, l := quotaCells(o); return l },
	})
	register("/ComponentStatus", map[string]cellFunc{
		"Status":  func(o map[string]any, _ time.Time) any { s, _, _ := componentHealth(o); return s },
		"Message": func(o map[string]any, _ time.Time) any { _, m, _ := componentHealth(o); return m },
		"Error":   func(o map[string]any, _ time.Time) any { _, _, e := componentHealth(o); return e },
	})
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func nodeStatus(o map[string]any, _ time.Time) any {
	var status []string
	if s, _, ok := conditionStatus(jsonobj.ListAt(o, "status", "conditions"), "Ready"); ok {
		if s == "True" {
			status = append(status, "Ready")
		} else {
			status = append(status, "NotReady")
		}
	}
	if len(status) == 0 {
		status = append(status, "Unknown")
	}
	if b, _ := at(o, "spec", "unschedulable").(bool); b {
		status = append(status, "SchedulingDisabled")
	}
	return strings.Join(status, ",")
}

func nodeAddress(typ string) cellFunc {
	return func(o map[string]any, _ time.Time) any {
		for _, a := range jsonobj.ListAt(o, "status", "addresses") {
			if am := jsonobj.Map(a); jsonobj.Str(am, "type") == typ {
				return jsonobj.Str(am, "address")
			}
		}
		return "<none>"
	}
}

// endpointsCell is formatEndpoints: at most three address:port pairs.
func endpointsCell(o map[string]any, _ time.Time) any {
	subsets := jsonobj.ListAt(o, "subsets")
	if len(subsets) == 0 {
		return "<none>"
	}
	var list []string
	count := 0
	for _, ss := range subsets {
		sm := jsonobj.Map(ss)
		addrs := jsonobj.ListAt(sm, "addresses")
		ports := jsonobj.ListAt(sm, "ports")
		if len(ports) == 0 {
			count += len(addrs)
			for _, a := range addrs {
				if len(list) < 3 {
					list = append(list, jsonobj.Str(jsonobj.Map(a), "ip"))
				}
			}
			continue
		}
		for _, p := range ports {
			count += len(addrs)
			for _, a := range addrs {
				if len(list) < 3 {
					list = append(list, net.JoinHostPort(jsonobj.Str(jsonobj.Map(a), "ip"), jsonobj.NumString(jsonobj.Map(p)["port"])))
				}
			}
		}
	}
	ret := strings.Join(list, ",")
	if count > 3 {
		return fmt.Sprintf("%s + %d more...", ret, count-3)
	}
	return ret
}

// quotaCells are a ResourceQuota's Request and Limit cells: "name: used/hard" of its
// status's resources, limits.* in Limit.
func quotaCells(o map[string]any) (request, limit string) {
	hard, used := jsonobj.Map(at(o, "status", "hard")), jsonobj.Map(at(o, "status", "used"))
	names := make([]string, 0, len(hard))
	for k := range hard {
		names = append(names, k)
	}
	sort.Strings(names)
	var req, lim []string
	for _, n := range names {
		u := quantityString(used[n])
		if u == "" {
			u = "0"
		}
		cell := fmt.Sprintf("%s: %s/%s", n, u, quantityString(hard[n]))
		if strings.HasPrefix(n, "limits.") {
			lim = append(lim, cell)
		} else {
			req = append(req, cell)
		}
	}
	return strings.Join(req, ", "), strings.Join(lim, ", ")
}

func componentHealth(o map[string]any) (status, message, errText string) {
	for _, c := range jsonobj.ListAt(o, "conditions") {
		cm := jsonobj.Map(c)
		if jsonobj.Str(cm, "type") == "Healthy" {
			status = "Unhealthy"
			if jsonobj.Str(cm, "status") == "True" {
				status = "Healthy"
			}
			return status, jsonobj.Str(cm, "message"), jsonobj.Str(cm, "error")
		}
	}
	return "Unknown", "", ""
}
