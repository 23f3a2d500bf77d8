package admission

import (
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/meta"
)

// Conversion between the versions of a built-in resource served at several
// (autoscaling/v1 and v2 horizontalpodautoscalers, stored at v2), for the fields both
// versions have: v1's CPU target and utilization are v2's cpu Resource metric. What only
// v2 has (other metrics, behavior, conditions) is not carried into v1's view; the
// kube-apiserver carries it in annotations.

// Converts reports whether objects of gvk are converted to and from another version.
func Converts(gvk meta.GroupVersionKind) bool {
	return gvk.Group == "autoscaling" && gvk.Kind == "HorizontalPodAutoscaler"
}

// Convert returns obj, an object of kind gvk, at version to (obj is not modified). Kinds
// without a conversion get their apiVersion rewritten only.
func Convert(gvk meta.GroupVersionKind, obj map[string]any, to string) map[string]any {
	out := jsonobj.DeepCopy(obj)
	out["apiVersion"] = meta.GroupVersion{Group: gvk.Group, Version: to}.String()
	if !Converts(gvk) || gvk.Version == to {
		return out
	}
	spec, status := jsonobj.Map(out["spec"]), jsonobj.Map(out["status"])
	switch {
	case gvk.Version == "v1" && to == "v2":
		if spec != nil {
			if cpu, ok := spec["targetCPUUtilizationPercentage"]; ok {
				delete(spec, "targetCPUUtilizationPercentage")
				spec["metrics"] = []any{cpuMetric("target", map[string]any{"type": "Utilization", "averageUtilization": cpu})}
			}
		}
		if status != nil {
			if cpu, ok := status["currentCPUUtilizationPercentage"]; ok {
				delete(status, "currentCPUUtilizationPercentage")
				status["currentMetrics"] = []any{cpuMetric("current", map[string]any{"averageUtilization": cpu})}
			}
		}
	case gvk.Version == "v2" && to == "v1":
		if spec != nil {
			for _, m := range jsonobj.ListAt(spec, "metrics") {
				if r := cpuResource(m); r != nil && jsonobj.StrAt(r, "target", "type") == "Utilization" {
					spec["targetCPUUtilizationPercentage"] = jsonobj.Map(r["target"])["averageUtilization"]
				}
			}
			delete(spec, "metrics")
			delete(spec, "behavior")
		}
		if status != nil {
			for _, m := range jsonobj.ListAt(status, "currentMetrics") {
				if r := cpuResource(m); r != nil {
					if u, ok := jsonobj.Map(r["current"])["averageUtilization"]; ok {
						status["currentCPUUtilizationPercentage"] = u
					}
				}
			}
			delete(status, "currentMetrics")
			delete(status, "conditions")
		}
	}
	return out
}

func cpuMetric(key string, value map[string]any) any {
	return map[string]any{"type": "Resource", "resource": map[string]any{"name": "cpu", key: value}}
}

// cpuResource is a metric's resource source if it is the cpu.
func cpuResource(m any) map[string]any {
	mm := jsonobj.Map(m)
	if jsonobj.Str(mm, "type") != "Resource" {
		return nil
	}
	if r := jsonobj.Map(mm["resource"]); jsonobj.Str(r, "name") == "cpu" {
		return r
	}
	return nil
}

// Normalize returns obj, an object of the built-in kind gvk, as the kube-apiserver writes
// it in that version (Go's JSON of its type: zero values of required fields written); obj
// is returned as it is if it does not fit.
func Normalize(gvk meta.GroupVersionKind, obj map[string]any) map[string]any {
	t := schemaType(gvk)
	if t == nil {
		return obj
	}
	norm, _, st := decodeTyped(gvk, t, obj)
	if st != nil {
		return obj
	}
	return norm
}
