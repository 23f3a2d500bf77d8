package admission

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
)

// The registry strategies (what the server sets on create and keeps on update, per
// built-in kind) and the default admission plugins' mutations of pods.

// prepareForCreate is the registry strategy's PrepareForCreate plus the default
// admission plugins' mutations (DefaultTolerationSeconds, Priority).
func (c *Chain) prepareForCreate(gk string, obj map[string]any) {
	prepareKind(gk, obj)
	switch gk {
	case "/Pod":
		obj["status"] = map[string]any{"phase": "Pending", "qosClass": qosClass(jsonobj.Map(obj["spec"]))}
		spec := jsonobj.Map(obj["spec"])
		addDefaultTolerations(spec)
		if spec["priority"] == nil && jsonobj.Str(spec, "priorityClassName") == "" {
			spec["priority"] = json.Number("0")
		}
		if jsonobj.Str(spec, "preemptionPolicy") == "" {
			spec["preemptionPolicy"] = "PreemptLowerPriority"
		}
	case "apps/Deployment", "apps/ReplicaSet":
		obj["status"] = map[string]any{}
	case "/Service":
		c.allocateService(obj, nil)
		obj["status"] = map[string]any{"loadBalancer": map[string]any{}}
	case "/Secret":
		mergeStringData(obj)
	case "/Namespace":
		// The namespace lifecycle: the kubernetes finalizer (the namespace controller's)
		// and the Active phase.
		spec, _ := obj["spec"].(map[string]any)
		if spec == nil {
			spec = map[string]any{}
			obj["spec"] = spec
		}
		if spec["finalizers"] == nil {
			spec["finalizers"] = []any{"kubernetes"}
		}
		obj["status"] = map[string]any{"phase": "Active"}
	}
}

// mergeStringData moves a Secret's stringData into data (base64), as the secret strategy
// does on create and update.
func mergeStringData(obj map[string]any) {
	sd := jsonobj.Map(obj["stringData"])
	if len(sd) == 0 {
		delete(obj, "stringData")
		return
	}
	data := jsonobj.Map(obj["data"])
	if data == nil {
		data = map[string]any{}
		obj["data"] = data
	}
	for k, v := range sd {
		s, _ := v.(string)
		data[k] = base64.StdEncoding.EncodeToString([]byte(s))
	}
	delete(obj, "stringData")
}

// prepareForUpdate keeps what an update may not change.
func (c *Chain) prepareForUpdate(gk string, obj, old map[string]any) {
	prepareKindUpdate(gk, obj, old)
	switch gk {
	case "/Service":
		c.allocateService(obj, old)
	case "/Secret":
		mergeStringData(obj)
	case "/Pod":
		// Admission fills these on create only, and the update may not drop them.
		spec, oldSpec := jsonobj.Map(obj["spec"]), jsonobj.Map(old["spec"])
		for _, k := range []string{"priority", "preemptionPolicy", "tolerations"} {
			if spec != nil && spec[k] == nil && oldSpec[k] != nil {
				spec[k] = oldSpec[k]
			}
		}
	}
}

// addDefaultTolerations is the DefaultTolerationSeconds admission plugin: pods tolerate
// not-ready and unreachable nodes for 300 s unless they say otherwise.
func addDefaultTolerations(spec map[string]any) {
	tols := jsonobj.ListAt(spec, "tolerations")
	has := func(key string) bool {
		for _, t := range tols {
			tm := jsonobj.Map(t)
			if (jsonobj.Str(tm, "key") == key || (jsonobj.Str(tm, "key") == "" && jsonobj.Str(tm, "operator") == "Exists")) &&
				(jsonobj.Str(tm, "effect") == "NoExecute" || jsonobj.Str(tm, "effect") == "") {
				return true
			}
		}
		return false
	}
	for _, key := range []string{"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"} {
		if !has(key) {
			tols = append(tols, map[string]any{"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": json.Number("300")})
		}
	}
	spec["tolerations"] = tols
}

// qosClass is the pod's QoS class from its containers' requests and limits.
func qosClass(spec map[string]any) string {
	requests, limits := map[string]bool{}, map[string]bool{}
	guaranteed := true
	any := false
	for _, list := range []string{"initContainers", "containers"} {
		for _, c := range jsonobj.ListAt(spec, list) {
			res := jsonobj.Map(jsonobj.Map(c)["resources"])
			req, lim := jsonobj.Map(res["requests"]), jsonobj.Map(res["limits"])
			for k, v := range req {
				if k == "cpu" || k == "memory" {
					any = true
					requests[k] = true
					if lv, ok := lim[k]; !ok || fmt.Sprint(lv) != fmt.Sprint(v) {
						guaranteed = false
					}
				}
			}
			for k := range lim {
				if k == "cpu" || k == "memory" {
					any = true
					limits[k] = true
				}
			}
			if lim["cpu"] == nil || lim["memory"] == nil {
				guaranteed = false
			}
		}
	}
	switch {
	case !any:
		return "BestEffort"
	case guaranteed && limits["cpu"] && limits["memory"]:
		return "Guaranteed"
	}
	return "Burstable"
}

// allocateService gives a Service its cluster IP (from 10.0.0.0/24, as the e2e
// cluster's --service-cluster-ip-range), IP families and node ports, or keeps those of the
// stored object on update.
func (c *Chain) allocateService(obj, old map[string]any) {
	spec := jsonobj.Map(obj["spec"])
	if spec == nil {
		spec = map[string]any{}
		obj["spec"] = spec
	}
	typ := jsonobj.Str(spec, "type")
	if old != nil {
		oldSpec := jsonobj.Map(old["spec"])
		for _, k := range []string{"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"} {
			if spec[k] == nil || spec[k] == "" {
				if v, ok := oldSpec[k]; ok {
					spec[k] = v
				}
			}
		}
	}
	if typ != "ExternalName" {
		if jsonobj.Str(spec, "clusterIP") == "" {
			c.serviceIPs++
			spec["clusterIP"] = fmt.Sprintf("10.0.0.%d", 10+c.serviceIPs%240)
		}
		if spec["clusterIPs"] == nil {
			spec["clusterIPs"] = []any{spec["clusterIP"]}
		}
		if spec["ipFamilies"] == nil && jsonobj.Str(spec, "clusterIP") != "None" {
			spec["ipFamilies"] = []any{"IPv4"}
		}
		if spec["ipFamilyPolicy"] == nil {
			spec["ipFamilyPolicy"] = "SingleStack"
		}
	}
	if typ == "NodePort" || typ == "LoadBalancer" {
		oldPorts := map[string]any{}
		if old != nil {
			for _, p := range jsonobj.ListAt(jsonobj.Map(old["spec"]), "ports") {
				pm := jsonobj.Map(p)
				oldPorts[jsonobj.NumString(pm["port"])+"/"+jsonobj.Str(pm, "protocol")] = pm["nodePort"]
			}
		}
		for _, p := range jsonobj.ListAt(spec, "ports") {
			pm := jsonobj.Map(p)
			if jsonobj.Num(pm["nodePort"]) != 0 {
				continue
			}
			if np := oldPorts[jsonobj.NumString(pm["port"])+"/"+jsonobj.Str(pm, "protocol")]; np != nil {
				pm["nodePort"] = np
				continue
			}
			c.nodePorts++
			pm["nodePort"] = json.Number(fmt.Sprint(30000 + c.nodePorts%2768))
		}
	}
}
