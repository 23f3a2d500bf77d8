package printers

import (
	"fmt"
	"strings"
	"time"

	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/apitest/internal/selector"
	"github.com/informerkit/informerkit/internal/kubeschema"
)

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
		cell: func(o map[string]any, _ time.Time) any { return jsonobj.Str(jsonobj.Map(o["metadata"]), "name") }}
}

func ageColumn() column {
	return column{name: "Age", typ: "string", desc: doc(metaType, "creationTimestamp"),
		cell: func(o map[string]any, now time.Time) any {
			return since(jsonobj.Str(jsonobj.Map(o["metadata"]), "creationTimestamp"), now)
		}}
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
			if ips := jsonobj.ListAt(o, "status", "podIPs"); len(ips) > 0 {
				if ip := jsonobj.Str(jsonobj.Map(ips[0]), "ip"); ip != "" {
					return ip
				}
			}
			return "<none>"
		}},
		{name: "Node", typ: "string", priority: 1, desc: doc("io.k8s.api.core.v1.PodSpec", "nodeName"), cell: func(o map[string]any, _ time.Time) any { return orNone(jsonobj.StrAt(o, "spec", "nodeName")) }},
		{name: "Nominated Node", typ: "string", priority: 1, desc: doc("io.k8s.api.core.v1.PodStatus", "nominatedNodeName"), cell: func(o map[string]any, _ time.Time) any {
			return orNone(jsonobj.StrAt(o, "status", "nominatedNodeName"))
		}},
		{name: "Readiness Gates", typ: "string", priority: 1, desc: doc("io.k8s.api.core.v1.PodSpec", "readinessGates"), cell: readinessGates},
	},
	"/PodTemplate": {
		nameColumn(),
		{name: "Containers", typ: "string", desc: containersMsg, cell: func(o map[string]any, _ time.Time) any { n, _ := containerCells(jsonobj.Map(o["template"])); return n }},
		{name: "Images", typ: "string", desc: imagesMsg, cell: func(o map[string]any, _ time.Time) any { _, i := containerCells(jsonobj.Map(o["template"])); return i }},
		{name: "Pod Labels", typ: "string", desc: "The labels for the pod template.", cell: func(o map[string]any, _ time.Time) any {
			return formatLabels(jsonobj.Map(jsonobj.Map(jsonobj.Map(o["template"])["metadata"])["labels"]))
		}},
	},
	"/Namespace": {
		nameColumn(),
		{name: "Status", typ: "string", desc: "The status of the namespace", cell: func(o map[string]any, _ time.Time) any { return jsonobj.StrAt(o, "status", "phase") }},
		ageColumn(),
	},
	"/ConfigMap": {
		nameColumn(),
		{name: "Data", typ: "string", desc: doc("io.k8s.api.core.v1.ConfigMap", "data"), cell: func(o map[string]any, _ time.Time) any {
			return int64(len(jsonobj.Map(o["data"])) + len(jsonobj.Map(o["binaryData"])))
		}},
		ageColumn(),
	},
	"/Secret": {
		nameColumn(),
		{name: "Type", typ: "string", desc: doc("io.k8s.api.core.v1.Secret", "type"), cell: func(o map[string]any, _ time.Time) any { return jsonobj.Str(o, "type") }},
		{name: "Data", typ: "string", desc: doc("io.k8s.api.core.v1.Secret", "data"), cell: func(o map[string]any, _ time.Time) any { return int64(len(jsonobj.Map(o["data"]))) }},
		ageColumn(),
	},
	"/Service": {
		nameColumn(),
		{name: "Type", typ: "string", desc: doc("io.k8s.api.core.v1.ServiceSpec", "type"), cell: func(o map[string]any, _ time.Time) any { return jsonobj.StrAt(o, "spec", "type") }},
		{name: "Cluster-IP", typ: "string", desc: doc("io.k8s.api.core.v1.ServiceSpec", "clusterIP"), cell: func(o map[string]any, _ time.Time) any {
			if ips := jsonobj.ListAt(o, "spec", "clusterIPs"); len(ips) > 0 {
				s, _ := ips[0].(string)
				return s
			}
			return "<none>"
		}},
		{name: "External-IP", typ: "string", desc: doc("io.k8s.api.core.v1.ServiceSpec", "externalIPs"), cell: serviceExternalIP},
		{name: "Port(s)", typ: "string", desc: doc("io.k8s.api.core.v1.ServiceSpec", "ports"), cell: func(o map[string]any, _ time.Time) any {
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
		}},
		ageColumn(),
		{name: "Selector", typ: "string", priority: 1, desc: doc("io.k8s.api.core.v1.ServiceSpec", "selector"), cell: func(o map[string]any, _ time.Time) any {
			return formatLabels(jsonobj.Map(jsonobj.Map(o["spec"])["selector"]))
		}},
	},
	"/Event":              eventColumns(),
	"events.k8s.io/Event": eventColumns(),
	"apps/Deployment": {
		nameColumn(),
		{name: "Ready", typ: "string", desc: "Number of the pod with ready state", cell: func(o map[string]any, _ time.Time) any {
			return jsonobj.NumString(jsonobj.Map(o["status"])["readyReplicas"]) + "/" + jsonobj.NumString(jsonobj.Map(o["spec"])["replicas"])
		}},
		{name: "Up-to-date", typ: "string", desc: doc("io.k8s.api.apps.v1.DeploymentStatus", "updatedReplicas"), cell: func(o map[string]any, _ time.Time) any {
			return jsonobj.Num(jsonobj.Map(o["status"])["updatedReplicas"])
		}},
		{name: "Available", typ: "string", desc: doc("io.k8s.api.apps.v1.DeploymentStatus", "availableReplicas"), cell: func(o map[string]any, _ time.Time) any {
			return jsonobj.Num(jsonobj.Map(o["status"])["availableReplicas"])
		}},
		ageColumn(),
		{name: "Containers", typ: "string", priority: 1, desc: containersMsg, cell: func(o map[string]any, _ time.Time) any {
			n, _ := containerCells(jsonobj.Map(jsonobj.Map(o["spec"])["template"]))
			return n
		}},
		{name: "Images", typ: "string", priority: 1, desc: imagesMsg, cell: func(o map[string]any, _ time.Time) any {
			_, i := containerCells(jsonobj.Map(jsonobj.Map(o["spec"])["template"]))
			return i
		}},
		{name: "Selector", typ: "string", priority: 1, desc: doc("io.k8s.api.apps.v1.DeploymentSpec", "selector"), cell: func(o map[string]any, _ time.Time) any {
			if s := selector.FormatLabelSelector(jsonobj.Map(jsonobj.Map(o["spec"])["selector"])); s != "<none>" {
				return s
			}
			return ""
		}},
	},
	"apps/ReplicaSet": {
		nameColumn(),
		{name: "Desired", typ: "integer", desc: doc("io.k8s.api.apps.v1.ReplicaSetSpec", "replicas"), cell: func(o map[string]any, _ time.Time) any { return jsonobj.Num(jsonobj.Map(o["spec"])["replicas"]) }},
		{name: "Current", typ: "integer", desc: doc("io.k8s.api.apps.v1.ReplicaSetStatus", "replicas"), cell: func(o map[string]any, _ time.Time) any { return jsonobj.Num(jsonobj.Map(o["status"])["replicas"]) }},
		{name: "Ready", typ: "integer", desc: doc("io.k8s.api.apps.v1.ReplicaSetStatus", "readyReplicas"), cell: func(o map[string]any, _ time.Time) any { return jsonobj.Num(jsonobj.Map(o["status"])["readyReplicas"]) }},
		ageColumn(),
		{name: "Containers", typ: "string", priority: 1, desc: containersMsg, cell: func(o map[string]any, _ time.Time) any {
			n, _ := containerCells(jsonobj.Map(jsonobj.Map(o["spec"])["template"]))
			return n
		}},
		{name: "Images", typ: "string", priority: 1, desc: imagesMsg, cell: func(o map[string]any, _ time.Time) any {
			_, i := containerCells(jsonobj.Map(jsonobj.Map(o["spec"])["template"]))
			return i
		}},
		{name: "Selector", typ: "string", priority: 1, desc: doc("io.k8s.api.apps.v1.ReplicaSetSpec", "selector"), cell: func(o map[string]any, _ time.Time) any {
			return selector.FormatLabelSelector(jsonobj.Map(jsonobj.Map(o["spec"])["selector"]))
		}},
	},
	"coordination.k8s.io/Lease": {
		nameColumn(),
		{name: "Holder", typ: "string", desc: doc("io.k8s.api.coordination.v1.LeaseSpec", "holderIdentity"), cell: func(o map[string]any, _ time.Time) any { return jsonobj.StrAt(o, "spec", "holderIdentity") }},
		ageColumn(),
	},
}

func eventColumns() []column {
	ev := "io.k8s.api.core.v1.Event"
	return []column{
		{name: "Last Seen", typ: "string", desc: doc(ev, "lastTimestamp"), cell: func(o map[string]any, now time.Time) any { return eventTimes(o, now).last }},
		{name: "Type", typ: "string", desc: doc(ev, "type"), cell: func(o map[string]any, _ time.Time) any { return jsonobj.Str(o, "type") }},
		{name: "Reason", typ: "string", desc: doc(ev, "reason"), cell: func(o map[string]any, _ time.Time) any { return jsonobj.Str(o, "reason") }},
		{name: "Object", typ: "string", desc: doc(ev, "involvedObject"), cell: func(o map[string]any, _ time.Time) any {
			ref := eventRef(o)
			if n := jsonobj.Str(ref, "name"); n != "" {
				return strings.ToLower(jsonobj.Str(ref, "kind")) + "/" + n
			}
			return strings.ToLower(jsonobj.Str(ref, "kind"))
		}},
		{name: "Subobject", typ: "string", priority: 1, desc: doc("io.k8s.api.core.v1.ObjectReference", "fieldPath"), cell: func(o map[string]any, _ time.Time) any { return jsonobj.Str(eventRef(o), "fieldPath") }},
		{name: "Source", typ: "string", priority: 1, desc: doc(ev, "source"), cell: func(o map[string]any, _ time.Time) any {
			src := jsonobj.Map(o["source"])
			if src == nil {
				src = jsonobj.Map(o["deprecatedSource"])
			}
			comp := firstNonEmpty(jsonobj.Str(src, "component"), jsonobj.Str(o, "reportingController"), jsonobj.Str(o, "reportingComponent"))
			inst := firstNonEmpty(jsonobj.Str(src, "host"), jsonobj.Str(o, "reportingInstance"))
			switch {
			case comp == "":
				return "<unknown>"
			case inst == "":
				return comp
			}
			return comp + ", " + inst
		}},
		{name: "Message", typ: "string", desc: doc(ev, "message"), cell: func(o map[string]any, _ time.Time) any {
			return strings.TrimSpace(firstNonEmpty(jsonobj.Str(o, "message"), jsonobj.Str(o, "note")))
		}},
		{name: "First Seen", typ: "string", priority: 1, desc: doc(ev, "firstTimestamp"), cell: func(o map[string]any, now time.Time) any { return eventTimes(o, now).first }},
		{name: "Count", typ: "string", priority: 1, desc: doc(ev, "count"), cell: func(o map[string]any, now time.Time) any { return eventTimes(o, now).count }},
		{name: "Name", typ: "string", priority: 1, format: "name", desc: doc(metaType, "name"), cell: func(o map[string]any, _ time.Time) any { return jsonobj.Str(jsonobj.Map(o["metadata"]), "name") }},
	}
}

func containerCells(template map[string]any) (names, images string) {
	var n, i []string
	for _, c := range jsonobj.ListAt(jsonobj.Map(template["spec"]), "containers") {
		cm := jsonobj.Map(c)
		n = append(n, jsonobj.Str(cm, "name"))
		i = append(i, jsonobj.Str(cm, "image"))
	}
	return strings.Join(n, ","), strings.Join(i, ",")
}

func serviceExternalIP(o map[string]any, _ time.Time) any {
	spec := jsonobj.Map(o["spec"])
	ext := jsonobj.Strings(spec["externalIPs"])
	switch jsonobj.Str(spec, "type") {
	case "ClusterIP", "NodePort":
		if len(ext) > 0 {
			return strings.Join(ext, ",")
		}
		return "<none>"
	case "LoadBalancer":
		var ips []string
		for _, ing := range jsonobj.ListAt(jsonobj.Map(o["status"]), "loadBalancer", "ingress") {
			im := jsonobj.Map(ing)
			ips = append(ips, firstNonEmpty(jsonobj.Str(im, "ip"), jsonobj.Str(im, "hostname")))
		}
		ips = append(ips, ext...)
		if len(ips) > 0 {
			return strings.Join(ips, ",")
		}
		return "<pending>"
	case "ExternalName":
		return jsonobj.Str(spec, "externalName")
	}
	return "<unknown>"
}

func readinessGates(o map[string]any, _ time.Time) any {
	gates := jsonobj.ListAt(o, "spec", "readinessGates")
	if len(gates) == 0 {
		return "<none>"
	}
	conds := jsonobj.ListAt(o, "status", "conditions")
	ok := 0
	for _, g := range gates {
		for _, c := range conds {
			if jsonobj.Str(jsonobj.Map(c), "type") == jsonobj.Str(jsonobj.Map(g), "conditionType") && jsonobj.Str(jsonobj.Map(c), "status") == "True" {
				ok++
			}
		}
	}
	return fmt.Sprintf("%d/%d", ok, len(gates))
}

func eventRef(o map[string]any) map[string]any {
	if ref := jsonobj.Map(o["involvedObject"]); ref != nil {
		return ref
	}
	return jsonobj.Map(o["regarding"])
}

type evTimes struct {
	first, last string
	count       int64
}

// eventTimes are an Event's First Seen, Last Seen and Count cells (core/v1 and
// events.k8s.io/v1 field names).
func eventTimes(o map[string]any, now time.Time) evTimes {
	first := firstNonEmpty(jsonobj.Str(o, "firstTimestamp"), jsonobj.Str(o, "deprecatedFirstTimestamp"))
	var t evTimes
	if first != "" {
		t.first = since(first, now)
	} else {
		t.first = since(jsonobj.Str(o, "eventTime"), now)
	}
	last := firstNonEmpty(jsonobj.Str(o, "lastTimestamp"), jsonobj.Str(o, "deprecatedLastTimestamp"))
	t.last = t.first
	if last != "" {
		t.last = since(last, now)
	}
	t.count = jsonobj.Num(firstNonNil(o["count"], o["deprecatedCount"]))
	if series := jsonobj.Map(o["series"]); series != nil {
		t.last = since(jsonobj.Str(series, "lastObservedTime"), now)
		t.count = jsonobj.Num(series["count"])
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
