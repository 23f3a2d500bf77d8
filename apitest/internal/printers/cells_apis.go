package printers

import (
	"fmt"
	"strings"
	"time"

	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/apitest/internal/selector"
)

// The cells of the kinds of the named API groups.

func init() {
	register("apiregistration.k8s.io/APIService", map[string]cellFunc{
		"Service": func(o map[string]any, _ time.Time) any {
			if svc := jsonobj.Map(at(o, "spec", "service")); svc != nil {
				return jsonobj.Str(svc, "namespace") + "/" + jsonobj.Str(svc, "name")
			}
			return "Local"
		},
		"Available": func(o map[string]any, _ time.Time) any {
			s, reason, ok := conditionStatus(jsonobj.ListAt(o, "status", "conditions"), "Available")
			switch {
			case !ok:
				return "Unknown"
			case s != "True" && reason != "":
				return s + " (" + reason + ")"
			}
			return s
		},
	})
	registerApps()
	registerBatchAndAutoscaling()
	registerNetworking()
	registerStorage()
	registerAdmission()
	registerOthers()
}

func registerApps() {
	tmpl := []string{"spec", "template"}
	register("apps/Deployment", map[string]cellFunc{
		"Ready": func(o map[string]any, _ time.Time) any {
			return jsonobj.NumString(at(o, "status", "readyReplicas")) + "/" + jsonobj.NumString(at(o, "spec", "replicas"))
		},
		"Up-to-date": num("status", "updatedReplicas"), "Available": num("status", "availableReplicas"),
		"Containers": containers(tmpl...), "Images": images(tmpl...),
		"Selector": func(o map[string]any, _ time.Time) any {
			if s := selector.FormatLabelSelector(jsonobj.Map(at(o, "spec", "selector"))); s != "<none>" {
				return s
			}
			return ""
		},
	})
	register("apps/ReplicaSet", map[string]cellFunc{
		"Desired": num("spec", "replicas"), "Current": num("status", "replicas"), "Ready": num("status", "readyReplicas"),
		"Containers": containers(tmpl...), "Images": images(tmpl...), "Selector": selectorAt("spec", "selector"),
	})
	register("apps/StatefulSet", map[string]cellFunc{
		"Ready": func(o map[string]any, _ time.Time) any {
			return jsonobj.NumString(at(o, "status", "readyReplicas")) + "/" + jsonobj.NumString(at(o, "spec", "replicas"))
		},
		"Containers": containers(tmpl...), "Images": images(tmpl...),
	})
	register("apps/DaemonSet", map[string]cellFunc{
		"Desired": num("status", "desiredNumberScheduled"), "Current": num("status", "currentNumberScheduled"),
		"Ready": num("status", "numberReady"), "Up-to-date": num("status", "updatedNumberScheduled"),
		"Available": num("status", "numberAvailable"), "Node Selector": labelsAt("spec", "template", "spec", "nodeSelector"),
		"Containers": containers(tmpl...), "Images": images(tmpl...), "Selector": selectorAt("spec", "selector"),
	})
	register("apps/ControllerRevision", map[string]cellFunc{
		"Controller": func(o map[string]any, _ time.Time) any {
			for _, r := range jsonobj.ListAt(o, "metadata", "ownerReferences") {
				rm := jsonobj.Map(r)
				if c, _ := rm["controller"].(bool); !c {
					continue
				}
				group, _, _ := strings.Cut(jsonobj.Str(rm, "apiVersion"), "/")
				if !strings.Contains(jsonobj.Str(rm, "apiVersion"), "/") {
					group = ""
				}
				kind := strings.ToLower(jsonobj.Str(rm, "kind"))
				if group != "" {
					kind += "." + group
				}
				return kind + "/" + jsonobj.Str(rm, "name")
			}
			return "<none>"
		},
		"Revision": num("revision"),
	})
}

func registerBatchAndAutoscaling() {
	register("batch/Job", map[string]cellFunc{
		"Status": jobStatus,
		"Completions": func(o map[string]any, _ time.Time) any {
			succeeded := jsonobj.NumString(at(o, "status", "succeeded"))
			if c := at(o, "spec", "completions"); c != nil {
				return succeeded + "/" + jsonobj.NumString(c)
			}
			if p := jsonobj.Num(at(o, "spec", "parallelism")); p > 1 {
				return fmt.Sprintf("%s/1 of %d", succeeded, p)
			}
			return succeeded + "/1"
		},
		"Duration": func(o map[string]any, now time.Time) any {
			start, _ := time.Parse(time.RFC3339, jsonobj.StrAt(o, "status", "startTime"))
			if start.IsZero() {
				return ""
			}
			if end, err := time.Parse(time.RFC3339, jsonobj.StrAt(o, "status", "completionTime")); err == nil {
				return humanDuration(end.Sub(start))
			}
			return humanDuration(now.Sub(start))
		},
		"Containers": containers("spec", "template"), "Images": images("spec", "template"), "Selector": selectorAt("spec", "selector"),
	})
	jt := []string{"spec", "jobTemplate", "spec", "template"}
	register("batch/CronJob", map[string]cellFunc{
		"Schedule": str("spec", "schedule"), "Timezone": strOr("<none>", "spec", "timeZone"),
		"Suspend": boolPtr("spec", "suspend"), "Active": length("status", "active"),
		"Last Schedule": sinceAt(true, "status", "lastScheduleTime"),
		"Containers":    containers(jt...), "Images": images(jt...), "Selector": selectorAt("spec", "jobTemplate", "spec", "selector"),
	})
	register("autoscaling/HorizontalPodAutoscaler", map[string]cellFunc{
		"Reference": func(o map[string]any, _ time.Time) any {
			return jsonobj.StrAt(o, "spec", "scaleTargetRef", "kind") + "/" + jsonobj.StrAt(o, "spec", "scaleTargetRef", "name")
		},
		"Targets": hpaTargets,
		"MinPods": func(o map[string]any, _ time.Time) any {
			if m := at(o, "spec", "minReplicas"); m != nil {
				return jsonobj.NumString(m)
			}
			return "<unset>"
		},
		"MaxPods": num("spec", "maxReplicas"), "Replicas": num("status", "currentReplicas"),
	})
}

func jobStatus(o map[string]any, _ time.Time) any {
	conds := jsonobj.ListAt(o, "status", "conditions")
	has := func(t string) bool { s, _, ok := conditionStatus(conds, t); return ok && s == "True" }
	switch {
	case has("Complete"):
		return "Complete"
	case has("Failed"):
		return "Failed"
	case at(o, "metadata", "deletionTimestamp") != nil:
		return "Terminating"
	case has("Suspended"):
		return "Suspended"
	case has("FailureTarget"):
		return "FailureTarget"
	case has("SuccessCriteriaMet"):
		return "SuccessCriteriaMet"
	}
	return "Running"
}

// hpaTargets is formatHPAMetrics for an autoscaling/v2 object (or v1's CPU target).
func hpaTargets(o map[string]any, _ time.Time) any {
	specs := jsonobj.ListAt(o, "spec", "metrics")
	statuses := jsonobj.ListAt(o, "status", "currentMetrics")
	if len(specs) == 0 {
		if cpu := at(o, "spec", "targetCPUUtilizationPercentage"); cpu != nil {
			cur := "<unknown>"
			if c := at(o, "status", "currentCPUUtilizationPercentage"); c != nil {
				cur = jsonobj.NumString(c) + "%"
			}
			return "cpu: " + cur + "/" + jsonobj.NumString(cpu) + "%"
		}
		return "<none>"
	}
	var list []string
	for i, s := range specs {
		sm := jsonobj.Map(s)
		var st map[string]any
		if i < len(statuses) {
			st = jsonobj.Map(statuses[i])
		}
		typ := jsonobj.Str(sm, "type")
		key := map[string]string{"External": "external", "Pods": "pods", "Object": "object", "Resource": "resource", "ContainerResource": "containerResource"}[typ]
		src, cur := jsonobj.Map(sm[key]), jsonobj.Map(jsonobj.Map(st[key])["current"])
		target := jsonobj.Map(src["target"])
		current := "<unknown>"
		switch typ {
		case "External", "Object":
			if av := target["averageValue"]; av != nil {
				if c := cur["averageValue"]; c != nil {
					current = quantityString(c)
				}
				list = append(list, fmt.Sprintf("%s/%s (avg)", current, quantityString(av)))
				continue
			}
			if c := cur["value"]; c != nil {
				current = quantityString(c)
			}
			list = append(list, fmt.Sprintf("%s/%s", current, quantityString(target["value"])))
		case "Pods":
			if c := cur["averageValue"]; c != nil {
				current = quantityString(c)
			}
			list = append(list, fmt.Sprintf("%s/%s", current, quantityString(target["averageValue"])))
		case "Resource", "ContainerResource":
			name := jsonobj.Str(src, "name")
			if av := target["averageValue"]; av != nil {
				if c := cur["averageValue"]; c != nil {
					current = quantityString(c)
				}
				list = append(list, fmt.Sprintf("%s: %s/%s", name, current, quantityString(av)))
				continue
			}
			if c := cur["averageUtilization"]; c != nil {
				current = jsonobj.NumString(c) + "%"
			}
			t := "<auto>"
			if u := target["averageUtilization"]; u != nil {
				t = jsonobj.NumString(u) + "%"
			}
			list = append(list, fmt.Sprintf("%s: %s/%s", name, current, t))
		default:
			list = append(list, "<unknown type>")
		}
	}
	if len(list) > 2 {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:2], ", "), len(list)-2)
	}
	return strings.Join(list, ", ")
}

func registerNetworking() {
	register("networking.k8s.io/Ingress", map[string]cellFunc{
		"Class": strOr("<none>", "spec", "ingressClassName"),
		"Hosts": func(o map[string]any, _ time.Time) any {
			rules := jsonobj.ListAt(o, "spec", "rules")
			var hosts []string
			for i, r := range rules {
				if i == 3 {
					return fmt.Sprintf("%s + %d more...", strings.Join(hosts, ","), len(rules)-3)
				}
				if h := jsonobj.Str(jsonobj.Map(r), "host"); h != "" {
					hosts = append(hosts, h)
				}
			}
			if len(hosts) == 0 {
				return "*"
			}
			return strings.Join(hosts, ",")
		},
		"Address": func(o map[string]any, _ time.Time) any {
			seen := map[string]bool{}
			for _, ing := range jsonobj.ListAt(o, "status", "loadBalancer", "ingress") {
				im := jsonobj.Map(ing)
				if a := firstNonEmpty(jsonobj.Str(im, "ip"), jsonobj.Str(im, "hostname")); a != "" {
					seen[a] = true
				}
			}
			return strings.Join(sortedKeys(seen), ",")
		},
		"Ports": func(o map[string]any, _ time.Time) any {
			if len(jsonobj.ListAt(o, "spec", "tls")) > 0 {
				return "80, 443"
			}
			return "80"
		},
	})
	register("networking.k8s.io/IngressClass", map[string]cellFunc{
		"Name":       defaultMarked("ingressclass.kubernetes.io/is-default-class"),
		"Controller": str("spec", "controller"),
		"Parameters": func(o map[string]any, _ time.Time) any {
			p := jsonobj.Map(at(o, "spec", "parameters"))
			if p == nil {
				return "<none>"
			}
			s := jsonobj.Str(p, "kind")
			if g, ok := p["apiGroup"].(string); ok {
				s += "." + g
			}
			return s + "/" + jsonobj.Str(p, "name")
		},
	})
	register("networking.k8s.io/NetworkPolicy", map[string]cellFunc{"Pod-Selector": func(o map[string]any, _ time.Time) any {
		return selector.FormatLabelSelector(jsonobj.Map(at(o, "spec", "podSelector")))
	}})
	register("networking.k8s.io/ServiceCIDR", map[string]cellFunc{"CIDRs": func(o map[string]any, _ time.Time) any {
		return strings.Join(jsonobj.Strings(at(o, "spec", "cidrs")), ",")
	}})
	kinds["networking.k8s.io/IPAddress"] = kindCells{cells: map[string]cellFunc{"ParentRef": func(o map[string]any, _ time.Time) any {
		ref := jsonobj.Map(at(o, "spec", "parentRef"))
		if ref == nil {
			return "<none>"
		}
		s := strings.ToLower(jsonobj.Str(ref, "resource"))
		if g := jsonobj.Str(ref, "group"); g != "" {
			s += "." + strings.ToLower(g)
		}
		if ns := jsonobj.Str(ref, "namespace"); ns != "" {
			s += "/" + ns
		}
		return s + "/" + jsonobj.Str(ref, "name")
	}}, extra: []cellFunc{ageColumn().cell}}
	register("discovery.k8s.io/EndpointSlice", map[string]cellFunc{
		"AddressType": str("addressType"),
		"Ports": func(o map[string]any, _ time.Time) any {
			var ports []string
			for _, p := range jsonobj.ListAt(o, "ports") {
				pm := jsonobj.Map(p)
				switch {
				case pm["port"] != nil:
					ports = append(ports, jsonobj.NumString(pm["port"]))
				case pm["name"] != nil:
					ports = append(ports, jsonobj.Str(pm, "name"))
				default:
					ports = append(ports, "*")
				}
			}
			return listWithMore(ports, 3)
		},
		"Endpoints": func(o map[string]any, _ time.Time) any {
			var addrs []string
			for _, e := range jsonobj.ListAt(o, "endpoints") {
				addrs = append(addrs, jsonobj.Strings(jsonobj.Map(e)["addresses"])...)
			}
			return listWithMore(addrs, 3)
		},
	})
}

// defaultMarked is the Name cell of a class that an annotation can mark the default.
func defaultMarked(annotation string) cellFunc {
	return func(o map[string]any, _ time.Time) any {
		name := jsonobj.StrAt(o, "metadata", "name")
		if jsonobj.StrAt(o, "metadata", "annotations", annotation) == "true" {
			name += " (default)"
		}
		return name
	}
}

func registerStorage() {
	register("storage.k8s.io/StorageClass", map[string]cellFunc{
		"Name": func(o map[string]any, now time.Time) any {
			name := jsonobj.StrAt(o, "metadata", "name")
			ann := jsonobj.Map(at(o, "metadata", "annotations"))
			if jsonobj.Str(ann, "storageclass.kubernetes.io/is-default-class") == "true" ||
				jsonobj.Str(ann, "storageclass.beta.kubernetes.io/is-default-class") == "true" {
				name += " (default)"
			}
			return name
		},
		"Provisioner": str("provisioner"), "ReclaimPolicy": strOr("Delete", "reclaimPolicy"),
		"VolumeBindingMode": strOr("Immediate", "volumeBindingMode"), "AllowVolumeExpansion": boolean(false, "allowVolumeExpansion"),
	})
	register("storage.k8s.io/CSIDriver", map[string]cellFunc{
		"AttachRequired": boolean(true, "spec", "attachRequired"), "PodInfoOnMount": boolean(false, "spec", "podInfoOnMount"),
		"StorageCapacity": boolean(false, "spec", "storageCapacity"),
		"TokenRequests": func(o map[string]any, _ time.Time) any {
			trs, ok := at(o, "spec", "tokenRequests").([]any)
			if !ok {
				return "<unset>"
			}
			var aud []string
			for _, t := range trs {
				aud = append(aud, jsonobj.Str(jsonobj.Map(t), "audience"))
			}
			return strings.Join(aud, ",")
		},
		"RequiresRepublish": boolean(false, "spec", "requiresRepublish"),
		"Modes": func(o map[string]any, _ time.Time) any {
			return orNone(strings.Join(jsonobj.Strings(at(o, "spec", "volumeLifecycleModes")), ","))
		},
	})
	register("storage.k8s.io/CSINode", map[string]cellFunc{"Drivers": length("spec", "drivers")})
	register("storage.k8s.io/VolumeAttachment", map[string]cellFunc{
		"Attacher": str("spec", "attacher"), "PV": str("spec", "source", "persistentVolumeName"),
		"Node": str("spec", "nodeName"), "Attached": boolean(false, "status", "attached"),
	})
	register("storage.k8s.io/VolumeAttributesClass", map[string]cellFunc{"DriverName": str("driverName")})
}

func registerAdmission() {
	paramKind := func(o map[string]any, _ time.Time) any {
		pk := jsonobj.Map(at(o, "spec", "paramKind"))
		if pk == nil {
			return "<unset>"
		}
		return jsonobj.Str(pk, "apiVersion") + "/" + jsonobj.Str(pk, "kind")
	}
	paramRef := func(o map[string]any, _ time.Time) any {
		pr := jsonobj.Map(at(o, "spec", "paramRef"))
		switch {
		case pr == nil:
			return "<unset>"
		case jsonobj.Str(pr, "name") != "":
			ns := jsonobj.Str(pr, "namespace")
			if ns == "" {
				ns = "*"
			}
			return ns + "/" + jsonobj.Str(pr, "name")
		case pr["selector"] != nil:
			return selector.FormatLabelSelector(jsonobj.Map(pr["selector"]))
		}
		return "<unset>"
	}
	const g = "admissionregistration.k8s.io/"
	register(g+"MutatingWebhookConfiguration", map[string]cellFunc{"Webhooks": length("webhooks")})
	register(g+"ValidatingWebhookConfiguration", map[string]cellFunc{"Webhooks": length("webhooks")})
	register(g+"ValidatingAdmissionPolicy", map[string]cellFunc{"Validations": length("spec", "validations"), "ParamKind": paramKind})
	register(g+"MutatingAdmissionPolicy", map[string]cellFunc{"Mutations": length("spec", "mutations"), "ParamKind": paramKind})
	register(g+"ValidatingAdmissionPolicyBinding", map[string]cellFunc{"PolicyName": str("spec", "policyName"), "ParamRef": paramRef})
	register(g+"MutatingAdmissionPolicyBinding", map[string]cellFunc{"PolicyName": str("spec", "policyName"), "ParamRef": paramRef})
}

func registerOthers() {
	bindings := map[string]cellFunc{
		"Role": func(o map[string]any, _ time.Time) any {
			return jsonobj.StrAt(o, "roleRef", "kind") + "/" + jsonobj.StrAt(o, "roleRef", "name")
		},
		"Users":           subjects("User"),
		"Groups":          subjects("Group"),
		"ServiceAccounts": subjects("ServiceAccount"),
	}
	register("rbac.authorization.k8s.io/RoleBinding", bindings)
	register("rbac.authorization.k8s.io/ClusterRoleBinding", bindings)
	register("certificates.k8s.io/CertificateSigningRequest", map[string]cellFunc{
		"SignerName": strOr("<none>", "spec", "signerName"), "Requestor": str("spec", "username"),
		"RequestedDuration": func(o map[string]any, _ time.Time) any {
			if s := at(o, "spec", "expirationSeconds"); s != nil {
				return humanDuration(time.Duration(jsonobj.Num(s)) * time.Second)
			}
			return "<none>"
		},
		"Condition": csrCondition,
	})
	register("policy/PodDisruptionBudget", map[string]cellFunc{
		"Min Available":       intOrStringOrNA("spec", "minAvailable"),
		"Max Unavailable":     intOrStringOrNA("spec", "maxUnavailable"),
		"Allowed Disruptions": num("status", "disruptionsAllowed"),
	})
	register("scheduling.k8s.io/PriorityClass", map[string]cellFunc{
		"Value": num("value"), "Global-Default": boolean(false, "globalDefault"), "PreemptionPolicy": str("preemptionPolicy"),
	})
	register("coordination.k8s.io/Lease", map[string]cellFunc{"Holder": str("spec", "holderIdentity")})
	register("node.k8s.io/RuntimeClass", map[string]cellFunc{"Handler": str("handler")})
	register("flowcontrol.apiserver.k8s.io/FlowSchema", map[string]cellFunc{
		"PriorityLevel": str("spec", "priorityLevelConfiguration", "name"), "MatchingPrecedence": num("spec", "matchingPrecedence"),
		"DistinguisherMethod": strOr("<none>", "spec", "distinguisherMethod", "type"),
		"MissingPL": func(o map[string]any, _ time.Time) any {
			if s, _, ok := conditionStatus(jsonobj.ListAt(o, "status", "conditions"), "Dangling"); ok {
				return s
			}
			return "?"
		},
	})
	limited := func(path ...string) cellFunc {
		return func(o map[string]any, _ time.Time) any {
			if at(o, "spec", "limited") == nil {
				return "<none>"
			}
			if v := at(o, append([]string{"spec", "limited"}, path...)...); v != nil {
				return jsonobj.Num(v)
			}
			if len(path) > 1 {
				return "<none>" // no queuing
			}
			return int64(0)
		}
	}
	register("flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration", map[string]cellFunc{
		"Type": str("spec", "type"), "NominalConcurrencyShares": limited("nominalConcurrencyShares"),
		"Queues": limited("limitResponse", "queuing", "queues"), "HandSize": limited("limitResponse", "queuing", "handSize"),
		"QueueLengthLimit": limited("limitResponse", "queuing", "queueLengthLimit"),
	})
	register("resource.k8s.io/ResourceClaim", map[string]cellFunc{"State": func(o map[string]any, _ time.Time) any {
		var states []string
		deleted := at(o, "metadata", "deletionTimestamp") != nil
		if deleted {
			states = append(states, "deleted")
		}
		if at(o, "status", "allocation") == nil {
			if !deleted {
				states = append(states, "pending")
			}
		} else {
			states = append(states, "allocated")
			if len(jsonobj.ListAt(o, "status", "reservedFor")) > 0 {
				states = append(states, "reserved")
			}
		}
		return strings.Join(states, ",")
	}})
	register("resource.k8s.io/ResourceSlice", map[string]cellFunc{
		"Node": str("spec", "nodeName"), "Driver": str("spec", "driver"), "Pool": str("spec", "pool", "name"),
	})
}

func subjects(kind string) cellFunc {
	return func(o map[string]any, _ time.Time) any {
		var out []string
		for _, s := range jsonobj.ListAt(o, "subjects") {
			sm := jsonobj.Map(s)
			if jsonobj.Str(sm, "kind") != kind {
				continue
			}
			if kind == "ServiceAccount" {
				out = append(out, jsonobj.Str(sm, "namespace")+"/"+jsonobj.Str(sm, "name"))
			} else {
				out = append(out, jsonobj.Str(sm, "name"))
			}
		}
		return strings.Join(out, ", ")
	}
}

func csrCondition(o map[string]any, _ time.Time) any {
	var approved, denied, failed bool
	for _, c := range jsonobj.ListAt(o, "status", "conditions") {
		switch jsonobj.Str(jsonobj.Map(c), "type") {
		case "Approved":
			approved = true
		case "Denied":
			denied = true
		case "Failed":
			failed = true
		}
	}
	status := "Pending"
	if denied {
		status = "Denied"
	} else if approved {
		status = "Approved"
	}
	if failed {
		status += ",Failed"
	}
	if jsonobj.StrAt(o, "status", "certificate") != "" {
		status += ",Issued"
	}
	return status
}

func intOrStringOrNA(path ...string) cellFunc {
	return func(o map[string]any, _ time.Time) any {
		v := at(o, path...)
		if v == nil {
			return "N/A"
		}
		return intOrString(v)
	}
}
