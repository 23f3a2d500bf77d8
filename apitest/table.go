package apitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/meta"
)

// Tables (Accept: application/json;as=Table;g=meta.k8s.io;v=v1, what kubectl get asks for)
// with the kube-apiserver's columns per built-in kind (its printers, always "wide": kubectl
// hides priority-1 columns unless -o wide). Custom resources get Name and Age.

// column is one Table column: its definition and how a row's cell is computed.
type column struct {
	name, typ, format string
	priority          int
	desc              string
	cell              func(obj map[string]any, now time.Time) any
}

// doc is the OpenAPI description of a field (what the kube-apiserver's printers take from
// the Go types' SwaggerDoc).
func doc(typ, field string) string {
	if t := kubeschema.Lookup(typ); t != nil {
		if f := t.Field(field); f != nil {
			// SwaggerDoc is the Go comment, without the OpenAPI's list of enum values.
			d, _, _ := strings.Cut(f.Description, "\n\nPossible enum values:")
			return d
		}
	}
	return ""
}

const (
	metaType      = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	containersMsg = "Names of each container in the template."
	imagesMsg     = "Images referenced by each container in the template."
)

func nameColumn() column {
	return column{name: "Name", typ: "string", format: "name", desc: doc(metaType, "name"),
		cell: func(o map[string]any, _ time.Time) any { return str(metaOf(o), "name") }}
}

func ageColumn() column {
	return column{name: "Age", typ: "string", desc: doc(metaType, "creationTimestamp"),
		cell: func(o map[string]any, now time.Time) any { return since(str(metaOf(o), "creationTimestamp"), now) }}
}

// tableColumns maps "group/Kind" to its columns.
var tableColumns = map[string][]column{
	"/Pod": {
		nameColumn(),
		{name: "Ready", typ: "string", desc: "The aggregate readiness state of this pod for accepting traffic.", cell: func(o map[string]any, now time.Time) any { return podRow(o, now).ready }},
		{name: "Status", typ: "string", desc: "The aggregate status of the containers in this pod.", cell: func(o map[string]any, now time.Time) any { return podRow(o, now).status }},
		{name: "Restarts", typ: "string", desc: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.", cell: func(o map[string]any, now time.Time) any { return podRow(o, now).restarts }},
		ageColumn(),
		{name: "IP", typ: "string", priority: 1, desc: doc("io.k8s.api.core.v1.PodStatus", "podIP"), cell: func(o map[string]any, _ time.Time) any {
			if ips := listAt(o, "status", "podIPs"); len(ips) > 0 {
				if ip := str(asMap(ips[0]), "ip"); ip != "" {
					return ip
				}
			}
			return "<none>"
		}},
		{name: "Node", typ: "string", priority: 1, desc: doc("io.k8s.api.core.v1.PodSpec", "nodeName"), cell: func(o map[string]any, _ time.Time) any { return orNone(strAt(o, "spec", "nodeName")) }},
		{name: "Nominated Node", typ: "string", priority: 1, desc: doc("io.k8s.api.core.v1.PodStatus", "nominatedNodeName"), cell: func(o map[string]any, _ time.Time) any {
			return orNone(strAt(o, "status", "nominatedNodeName"))
		}},
		{name: "Readiness Gates", typ: "string", priority: 1, desc: doc("io.k8s.api.core.v1.PodSpec", "readinessGates"), cell: readinessGates},
	},
	"/PodTemplate": {
		nameColumn(),
		{name: "Containers", typ: "string", desc: containersMsg, cell: func(o map[string]any, _ time.Time) any { n, _ := containerCells(asMap(o["template"])); return n }},
		{name: "Images", typ: "string", desc: imagesMsg, cell: func(o map[string]any, _ time.Time) any { _, i := containerCells(asMap(o["template"])); return i }},
		{name: "Pod Labels", typ: "string", desc: "The labels for the pod template.", cell: func(o map[string]any, _ time.Time) any {
			return formatLabels(asMap(metaOf(asMap(o["template"]))["labels"]))
		}},
	},
	"/Namespace": {
		nameColumn(),
		{name: "Status", typ: "string", desc: "The status of the namespace", cell: func(o map[string]any, _ time.Time) any { return strAt(o, "status", "phase") }},
		ageColumn(),
	},
	"/ConfigMap": {
		nameColumn(),
		{name: "Data", typ: "string", desc: doc("io.k8s.api.core.v1.ConfigMap", "data"), cell: func(o map[string]any, _ time.Time) any {
			return int64(len(asMap(o["data"])) + len(asMap(o["binaryData"])))
		}},
		ageColumn(),
	},
	"/Secret": {
		nameColumn(),
		{name: "Type", typ: "string", desc: doc("io.k8s.api.core.v1.Secret", "type"), cell: func(o map[string]any, _ time.Time) any { return str(o, "type") }},
		{name: "Data", typ: "string", desc: doc("io.k8s.api.core.v1.Secret", "data"), cell: func(o map[string]any, _ time.Time) any { return int64(len(asMap(o["data"]))) }},
		ageColumn(),
	},
	"/Service": {
		nameColumn(),
		{name: "Type", typ: "string", desc: doc("io.k8s.api.core.v1.ServiceSpec", "type"), cell: func(o map[string]any, _ time.Time) any { return strAt(o, "spec", "type") }},
		{name: "Cluster-IP", typ: "string", desc: doc("io.k8s.api.core.v1.ServiceSpec", "clusterIP"), cell: func(o map[string]any, _ time.Time) any {
			if ips := listAt(o, "spec", "clusterIPs"); len(ips) > 0 {
				s, _ := ips[0].(string)
				return s
			}
			return "<none>"
		}},
		{name: "External-IP", typ: "string", desc: doc("io.k8s.api.core.v1.ServiceSpec", "externalIPs"), cell: serviceExternalIP},
		{name: "Port(s)", typ: "string", desc: doc("io.k8s.api.core.v1.ServiceSpec", "ports"), cell: func(o map[string]any, _ time.Time) any {
			var parts []string
			for _, p := range listAt(o, "spec", "ports") {
				pm := asMap(p)
				s := fmt.Sprintf("%s/%s", numString(pm["port"]), str(pm, "protocol"))
				if np := numString(pm["nodePort"]); np != "0" {
					s = fmt.Sprintf("%s:%s/%s", numString(pm["port"]), np, str(pm, "protocol"))
				}
				parts = append(parts, s)
			}
			return orNone(strings.Join(parts, ","))
		}},
		ageColumn(),
		{name: "Selector", typ: "string", priority: 1, desc: doc("io.k8s.api.core.v1.ServiceSpec", "selector"), cell: func(o map[string]any, _ time.Time) any {
			return formatLabels(asMap(asMap(o["spec"])["selector"]))
		}},
	},
	"/Event":              eventColumns(),
	"events.k8s.io/Event": eventColumns(),
	"apps/Deployment": {
		nameColumn(),
		{name: "Ready", typ: "string", desc: "Number of the pod with ready state", cell: func(o map[string]any, _ time.Time) any {
			return numString(asMap(o["status"])["readyReplicas"]) + "/" + numString(asMap(o["spec"])["replicas"])
		}},
		{name: "Up-to-date", typ: "string", desc: doc("io.k8s.api.apps.v1.DeploymentStatus", "updatedReplicas"), cell: func(o map[string]any, _ time.Time) any { return num(asMap(o["status"])["updatedReplicas"]) }},
		{name: "Available", typ: "string", desc: doc("io.k8s.api.apps.v1.DeploymentStatus", "availableReplicas"), cell: func(o map[string]any, _ time.Time) any { return num(asMap(o["status"])["availableReplicas"]) }},
		ageColumn(),
		{name: "Containers", typ: "string", priority: 1, desc: containersMsg, cell: func(o map[string]any, _ time.Time) any {
			n, _ := containerCells(asMap(asMap(o["spec"])["template"]))
			return n
		}},
		{name: "Images", typ: "string", priority: 1, desc: imagesMsg, cell: func(o map[string]any, _ time.Time) any {
			_, i := containerCells(asMap(asMap(o["spec"])["template"]))
			return i
		}},
		{name: "Selector", typ: "string", priority: 1, desc: doc("io.k8s.api.apps.v1.DeploymentSpec", "selector"), cell: func(o map[string]any, _ time.Time) any {
			if s := formatSelector(asMap(asMap(o["spec"])["selector"])); s != "<none>" {
				return s
			}
			return ""
		}},
	},
	"apps/ReplicaSet": {
		nameColumn(),
		{name: "Desired", typ: "integer", desc: doc("io.k8s.api.apps.v1.ReplicaSetSpec", "replicas"), cell: func(o map[string]any, _ time.Time) any { return num(asMap(o["spec"])["replicas"]) }},
		{name: "Current", typ: "integer", desc: doc("io.k8s.api.apps.v1.ReplicaSetStatus", "replicas"), cell: func(o map[string]any, _ time.Time) any { return num(asMap(o["status"])["replicas"]) }},
		{name: "Ready", typ: "integer", desc: doc("io.k8s.api.apps.v1.ReplicaSetStatus", "readyReplicas"), cell: func(o map[string]any, _ time.Time) any { return num(asMap(o["status"])["readyReplicas"]) }},
		ageColumn(),
		{name: "Containers", typ: "string", priority: 1, desc: containersMsg, cell: func(o map[string]any, _ time.Time) any {
			n, _ := containerCells(asMap(asMap(o["spec"])["template"]))
			return n
		}},
		{name: "Images", typ: "string", priority: 1, desc: imagesMsg, cell: func(o map[string]any, _ time.Time) any {
			_, i := containerCells(asMap(asMap(o["spec"])["template"]))
			return i
		}},
		{name: "Selector", typ: "string", priority: 1, desc: doc("io.k8s.api.apps.v1.ReplicaSetSpec", "selector"), cell: func(o map[string]any, _ time.Time) any {
			return formatSelector(asMap(asMap(o["spec"])["selector"]))
		}},
	},
	"coordination.k8s.io/Lease": {
		nameColumn(),
		{name: "Holder", typ: "string", desc: doc("io.k8s.api.coordination.v1.LeaseSpec", "holderIdentity"), cell: func(o map[string]any, _ time.Time) any { return strAt(o, "spec", "holderIdentity") }},
		ageColumn(),
	},
}

func eventColumns() []column {
	ev := "io.k8s.api.core.v1.Event"
	return []column{
		{name: "Last Seen", typ: "string", desc: doc(ev, "lastTimestamp"), cell: func(o map[string]any, now time.Time) any { return eventTimes(o, now).last }},
		{name: "Type", typ: "string", desc: doc(ev, "type"), cell: func(o map[string]any, _ time.Time) any { return str(o, "type") }},
		{name: "Reason", typ: "string", desc: doc(ev, "reason"), cell: func(o map[string]any, _ time.Time) any { return str(o, "reason") }},
		{name: "Object", typ: "string", desc: doc(ev, "involvedObject"), cell: func(o map[string]any, _ time.Time) any {
			ref := eventRef(o)
			if n := str(ref, "name"); n != "" {
				return strings.ToLower(str(ref, "kind")) + "/" + n
			}
			return strings.ToLower(str(ref, "kind"))
		}},
		{name: "Subobject", typ: "string", priority: 1, desc: doc("io.k8s.api.core.v1.ObjectReference", "fieldPath"), cell: func(o map[string]any, _ time.Time) any { return str(eventRef(o), "fieldPath") }},
		{name: "Source", typ: "string", priority: 1, desc: doc(ev, "source"), cell: func(o map[string]any, _ time.Time) any {
			src := asMap(o["source"])
			if src == nil {
				src = asMap(o["deprecatedSource"])
			}
			comp := firstNonEmpty(str(src, "component"), str(o, "reportingController"), str(o, "reportingComponent"))
			inst := firstNonEmpty(str(src, "host"), str(o, "reportingInstance"))
			switch {
			case comp == "":
				return "<unknown>"
			case inst == "":
				return comp
			}
			return comp + ", " + inst
		}},
		{name: "Message", typ: "string", desc: doc(ev, "message"), cell: func(o map[string]any, _ time.Time) any {
			return strings.TrimSpace(firstNonEmpty(str(o, "message"), str(o, "note")))
		}},
		{name: "First Seen", typ: "string", priority: 1, desc: doc(ev, "firstTimestamp"), cell: func(o map[string]any, now time.Time) any { return eventTimes(o, now).first }},
		{name: "Count", typ: "string", priority: 1, desc: doc(ev, "count"), cell: func(o map[string]any, now time.Time) any { return eventTimes(o, now).count }},
		{name: "Name", typ: "string", priority: 1, format: "name", desc: doc(metaType, "name"), cell: func(o map[string]any, _ time.Time) any { return str(metaOf(o), "name") }},
	}
}

// tableOptions reads includeObject (None, Object, Metadata or empty).
func tableOptions(r *http.Request) (string, *meta.Status) {
	v := r.URL.Query().Get("includeObject")
	switch v {
	case "", "None", "Object", "Metadata":
		return v, nil
	}
	return "", errBadRequest(fmt.Sprintf("Unable to convert to Table as requested: includeObject: Invalid value: %q: must be 'Metadata', 'Object', 'None', or empty", v))
}

// table renders objects as a meta.k8s.io/v1 Table.
func (s *Server) table(res *resource, items []*storedObj, lm meta.ListMeta, includeObject string, headers bool) map[string]any {
	cols := tableColumns[res.typ.Group+"/"+res.typ.Kind]
	if cols == nil || res.typ.custom {
		cols = []column{nameColumn(), ageColumn()}
	}
	now := time.Now()
	rows := make([]map[string]any, 0, len(items))
	for _, o := range items {
		m := mustDecode(o.raw)
		cells := make([]any, len(cols))
		for i, c := range cols {
			cells[i] = c.cell(m, now)
		}
		row := map[string]any{"cells": cells}
		switch includeObject {
		case "None":
			row["object"] = nil
		case "Object":
			row["object"] = m
		default:
			row["object"] = map[string]any{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": m["metadata"]}
		}
		if res.typ.Group == "" && res.typ.Kind == "Pod" {
			switch strAt(m, "status", "phase") {
			case "Succeeded":
				row["conditions"] = []any{map[string]any{"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}}
			case "Failed":
				row["conditions"] = []any{map[string]any{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}}
			}
		}
		rows = append(rows, row)
	}
	t := map[string]any{"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": lm, "rows": rows}
	if headers {
		defs := make([]map[string]any, len(cols))
		for i, c := range cols {
			defs[i] = map[string]any{"name": c.name, "type": c.typ, "format": c.format, "description": c.desc, "priority": c.priority}
		}
		t["columnDefinitions"] = defs
	} else {
		t["columnDefinitions"] = nil
	}
	return t
}

// ---- cell helpers (on the JSON form) ----

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

func strAt(o map[string]any, path ...string) string {
	for _, p := range path[:len(path)-1] {
		o = asMap(o[p])
	}
	return str(o, path[len(path)-1])
}

func listAt(o map[string]any, path ...string) []any {
	for _, p := range path[:len(path)-1] {
		o = asMap(o[p])
	}
	l, _ := o[path[len(path)-1]].([]any)
	return l
}

func num(v any) int64 {
	switch x := v.(type) {
	case json.Number:
		n, _ := x.Int64()
		return n
	case float64:
		return int64(x)
	case int64:
		return x
	case int:
		return int64(x)
	}
	return 0
}

func numString(v any) string { return strconv.FormatInt(num(v), 10) }

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// since formats the time since an RFC 3339 timestamp as kubectl does.
func since(ts string, now time.Time) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil || ts == "" {
		return "<unknown>"
	}
	return humanDuration(now.Sub(t))
}

// humanDuration is the kube-apiserver's duration.HumanDuration.
func humanDuration(d time.Duration) string {
	if s := int(d.Seconds()); s < -1 {
		return "<invalid>"
	} else if s < 0 {
		return "0s"
	} else if s < 60*2 {
		return fmt.Sprintf("%ds", s)
	}
	minutes := int(d / time.Minute)
	if minutes < 10 {
		if s := int(d/time.Second) % 60; s != 0 {
			return fmt.Sprintf("%dm%ds", minutes, s)
		}
		return fmt.Sprintf("%dm", minutes)
	} else if minutes < 60*3 {
		return fmt.Sprintf("%dm", minutes)
	}
	hours := int(d / time.Hour)
	switch {
	case hours < 8:
		if m := int(d/time.Minute) % 60; m != 0 {
			return fmt.Sprintf("%dh%dm", hours, m)
		}
		return fmt.Sprintf("%dh", hours)
	case hours < 48:
		return fmt.Sprintf("%dh", hours)
	case hours < 24*8:
		if h := hours % 24; h != 0 {
			return fmt.Sprintf("%dd%dh", hours/24, h)
		}
		return fmt.Sprintf("%dd", hours/24)
	case hours < 24*365*2:
		return fmt.Sprintf("%dd", hours/24)
	case hours < 24*365*8:
		if dy := (hours / 24) % 365; dy != 0 {
			return fmt.Sprintf("%dy%dd", hours/24/365, dy)
		}
		return fmt.Sprintf("%dy", hours/24/365)
	}
	return fmt.Sprintf("%dy", hours/24/365)
}

func formatLabels(l map[string]any) string {
	if len(l) == 0 {
		return "<none>"
	}
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v, _ := l[k].(string)
		parts[i] = k + "=" + v
	}
	return strings.Join(parts, ",")
}

// formatSelector is metav1.FormatLabelSelector.
func formatSelector(sel map[string]any) string {
	if sel == nil {
		return "<none>"
	}
	var parts []string
	ml := asMap(sel["matchLabels"])
	keys := make([]string, 0, len(ml))
	for k := range ml {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, _ := ml[k].(string)
		parts = append(parts, k+"="+v)
	}
	for _, e := range listAt(sel, "matchExpressions") {
		em := asMap(e)
		key, op := str(em, "key"), str(em, "operator")
		vals := stringList(em["values"])
		sort.Strings(vals)
		switch op {
		case "In":
			parts = append(parts, key+" in ("+strings.Join(vals, ",")+")")
		case "NotIn":
			parts = append(parts, key+" notin ("+strings.Join(vals, ",")+")")
		case "Exists":
			parts = append(parts, key)
		case "DoesNotExist":
			parts = append(parts, "!"+key)
		}
	}
	if len(parts) == 0 {
		return "<none>"
	}
	return strings.Join(parts, ",")
}

func containerCells(template map[string]any) (names, images string) {
	var n, i []string
	for _, c := range listAt(asMap(template["spec"]), "containers") {
		cm := asMap(c)
		n = append(n, str(cm, "name"))
		i = append(i, str(cm, "image"))
	}
	return strings.Join(n, ","), strings.Join(i, ",")
}

func serviceExternalIP(o map[string]any, _ time.Time) any {
	spec := asMap(o["spec"])
	ext := stringList(spec["externalIPs"])
	switch str(spec, "type") {
	case "ClusterIP", "NodePort":
		if len(ext) > 0 {
			return strings.Join(ext, ",")
		}
		return "<none>"
	case "LoadBalancer":
		var ips []string
		for _, ing := range listAt(asMap(o["status"]), "loadBalancer", "ingress") {
			im := asMap(ing)
			ips = append(ips, firstNonEmpty(str(im, "ip"), str(im, "hostname")))
		}
		ips = append(ips, ext...)
		if len(ips) > 0 {
			return strings.Join(ips, ",")
		}
		return "<pending>"
	case "ExternalName":
		return str(spec, "externalName")
	}
	return "<unknown>"
}

func readinessGates(o map[string]any, _ time.Time) any {
	gates := listAt(o, "spec", "readinessGates")
	if len(gates) == 0 {
		return "<none>"
	}
	conds := listAt(o, "status", "conditions")
	ok := 0
	for _, g := range gates {
		for _, c := range conds {
			if str(asMap(c), "type") == str(asMap(g), "conditionType") && str(asMap(c), "status") == "True" {
				ok++
			}
		}
	}
	return fmt.Sprintf("%d/%d", ok, len(gates))
}

func eventRef(o map[string]any) map[string]any {
	if ref := asMap(o["involvedObject"]); ref != nil {
		return ref
	}
	return asMap(o["regarding"])
}

type evTimes struct {
	first, last string
	count       int64
}

// eventTimes are an Event's First Seen, Last Seen and Count cells (core/v1 and
// events.k8s.io/v1 field names).
func eventTimes(o map[string]any, now time.Time) evTimes {
	first := firstNonEmpty(str(o, "firstTimestamp"), str(o, "deprecatedFirstTimestamp"))
	var t evTimes
	if first != "" {
		t.first = since(first, now)
	} else {
		t.first = since(str(o, "eventTime"), now)
	}
	last := firstNonEmpty(str(o, "lastTimestamp"), str(o, "deprecatedLastTimestamp"))
	t.last = t.first
	if last != "" {
		t.last = since(last, now)
	}
	t.count = num(firstNonNil(o["count"], o["deprecatedCount"]))
	if series := asMap(o["series"]); series != nil {
		t.last = since(str(series, "lastObservedTime"), now)
		t.count = num(series["count"])
	} else if t.count == 0 {
		t.count = 1
	}
	return t
}

func firstNonNil(vs ...any) any {
	for _, v := range vs {
		if v != nil {
			return v
		}
	}
	return nil
}

type podCells struct{ ready, status, restarts string }

// podRow is the kube-apiserver's pod printer (Ready, Status and Restarts) on the JSON form.
func podRow(o map[string]any, now time.Time) podCells {
	spec, status := asMap(o["spec"]), asMap(o["status"])
	phase := str(status, "phase")
	reason := phase
	if r := str(status, "reason"); r != "" {
		reason = r
	}
	for _, c := range listAt(status, "conditions") {
		if cm := asMap(c); str(cm, "type") == "PodScheduled" && str(cm, "reason") == "SchedulingGated" {
			reason = "SchedulingGated"
		}
	}
	total := len(listAt(spec, "containers"))
	restartable := map[string]bool{}
	for _, c := range listAt(spec, "initContainers") {
		if cm := asMap(c); str(cm, "restartPolicy") == "Always" {
			restartable[str(cm, "name")] = true
			total++
		}
	}
	ready, restarts, sidecarRestarts := 0, int64(0), int64(0)
	var lastRestart, lastSidecarRestart time.Time
	terminatedAt := func(cs map[string]any) time.Time {
		t, _ := time.Parse(time.RFC3339, str(asMap(asMap(cs["lastState"])["terminated"]), "finishedAt"))
		return t
	}
	initializing := false
	inits := listAt(status, "initContainerStatuses")
	for i, c := range inits {
		cs := asMap(c)
		restarts += num(cs["restartCount"])
		if t := terminatedAt(cs); t.After(lastRestart) {
			lastRestart = t
		}
		if restartable[str(cs, "name")] {
			sidecarRestarts += num(cs["restartCount"])
			if t := terminatedAt(cs); t.After(lastSidecarRestart) {
				lastSidecarRestart = t
			}
		}
		state := asMap(cs["state"])
		term, wait := asMap(state["terminated"]), asMap(state["waiting"])
		started, _ := cs["started"].(bool)
		csReady, _ := cs["ready"].(bool)
		switch {
		case term != nil && num(term["exitCode"]) == 0:
			continue
		case restartable[str(cs, "name")] && started:
			if csReady {
				ready++
			}
			continue
		case term != nil:
			switch {
			case str(term, "reason") != "":
				reason = "Init:" + str(term, "reason")
			case num(term["signal"]) != 0:
				reason = fmt.Sprintf("Init:Signal:%d", num(term["signal"]))
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", num(term["exitCode"]))
			}
		case wait != nil && str(wait, "reason") != "" && str(wait, "reason") != "PodInitializing":
			reason = "Init:" + str(wait, "reason")
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(listAt(spec, "initContainers")))
		}
		initializing = true
		break
	}
	initialized := false
	for _, c := range listAt(status, "conditions") {
		if cm := asMap(c); str(cm, "type") == "Initialized" && str(cm, "status") == "True" {
			initialized = true
		}
	}
	if !initializing || initialized {
		restarts, lastRestart = sidecarRestarts, lastSidecarRestart
		hasRunning, errorReason := false, ""
		cstats := listAt(status, "containerStatuses")
		for i := len(cstats) - 1; i >= 0; i-- {
			cs := asMap(cstats[i])
			restarts += num(cs["restartCount"])
			if t := terminatedAt(cs); t.After(lastRestart) {
				lastRestart = t
			}
			state := asMap(cs["state"])
			term, wait := asMap(state["terminated"]), asMap(state["waiting"])
			csReady, _ := cs["ready"].(bool)
			switch {
			case wait != nil && str(wait, "reason") != "":
				reason = str(wait, "reason")
			case term != nil:
				switch {
				case str(term, "reason") != "":
					reason = str(term, "reason")
				case num(term["signal"]) != 0:
					reason = fmt.Sprintf("Signal:%d", num(term["signal"]))
				default:
					reason = fmt.Sprintf("ExitCode:%d", num(term["exitCode"]))
				}
				if num(term["exitCode"]) != 0 {
					errorReason = reason
				}
			case csReady && state["running"] != nil:
				hasRunning = true
				ready++
			}
		}
		if reason == "Completed" {
			podReady := false
			for _, c := range listAt(status, "conditions") {
				if cm := asMap(c); str(cm, "type") == "Ready" && str(cm, "status") == "True" {
					podReady = true
				}
			}
			switch {
			case hasRunning && podReady:
				reason = "Running"
			case errorReason != "":
				reason = errorReason
			case hasRunning:
				reason = "NotReady"
			}
		}
	}
	if metaOf(o)["deletionTimestamp"] != nil {
		if str(status, "reason") == "NodeLost" {
			reason = "Unknown"
		} else if phase != "Succeeded" && phase != "Failed" {
			reason = "Terminating"
		}
	}
	rs := strconv.FormatInt(restarts, 10)
	if restarts != 0 && !lastRestart.IsZero() {
		rs = fmt.Sprintf("%d (%s ago)", restarts, humanDuration(now.Sub(lastRestart)))
	}
	return podCells{ready: fmt.Sprintf("%d/%d", ready, total), status: reason, restarts: rs}
}
