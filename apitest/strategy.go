package apitest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
)

// The kube-apiserver's defaults that copy or depend on other fields (kubeschema's table
// holds only constants), and its registry strategies: what the server sets on create and
// keeps on update, per built-in kind.

// derivedDefaults are the defaults of k8s.io/kubernetes pkg/apis/*/v1 that are not
// constants.
func derivedDefaults(r *resource, obj map[string]any) {
	kind := r.typ.Group + "/" + r.typ.Kind
	if kind == "/Namespace" {
		// SetDefaults_Namespace: the name label.
		meta := jsonobj.Meta(obj)
		if name := jsonobj.Str(meta, "name"); name != "" {
			labels, _ := meta["labels"].(map[string]any)
			if labels == nil {
				labels = map[string]any{}
				meta["labels"] = labels
			}
			labels["kubernetes.io/metadata.name"] = name
		}
	}
	if kind == "/Service" {
		spec := jsonobj.Map(obj["spec"])
		for _, p := range jsonobj.ListAt(spec, "ports") {
			pm := jsonobj.Map(p)
			if tp, ok := pm["targetPort"]; !ok || tp == nil || tp == "" || tp == json.Number("0") {
				pm["targetPort"] = pm["port"]
			}
		}
		switch jsonobj.Str(spec, "sessionAffinity") {
		case "None":
			delete(spec, "sessionAffinityConfig")
		case "ClientIP":
			cfg := jsonobj.Map(spec["sessionAffinityConfig"])
			if jsonobj.Num(jsonobj.Map(cfg["clientIP"])["timeoutSeconds"]) == 0 {
				spec["sessionAffinityConfig"] = map[string]any{"clientIP": map[string]any{"timeoutSeconds": json.Number("10800")}}
			}
		}
	}
	forEachPodSpec(obj, func(spec map[string]any) {
		for _, list := range []string{"containers", "initContainers", "ephemeralContainers"} {
			for _, c := range jsonobj.ListAt(spec, list) {
				cm := jsonobj.Map(c)
				if jsonobj.Str(cm, "imagePullPolicy") == "" {
					cm["imagePullPolicy"] = pullPolicy(jsonobj.Str(cm, "image"))
				}
			}
		}
		for _, v := range jsonobj.ListAt(spec, "volumes") {
			vm := jsonobj.Map(v)
			if !hasVolumeSource(vm) {
				vm["emptyDir"] = map[string]any{}
			}
		}
	})
	if kind == "/Pod" {
		// SetDefaults_Pod: requests default to limits; with hostNetwork, hostPort to
		// containerPort.
		spec := jsonobj.Map(obj["spec"])
		hostNet, _ := spec["hostNetwork"].(bool)
		for _, list := range []string{"containers", "initContainers"} {
			for _, c := range jsonobj.ListAt(spec, list) {
				cm := jsonobj.Map(c)
				res := jsonobj.Map(cm["resources"])
				if limits := jsonobj.Map(res["limits"]); limits != nil {
					req := jsonobj.Map(res["requests"])
					if req == nil {
						req = map[string]any{}
						res["requests"] = req
					}
					for k, v := range limits {
						if _, ok := req[k]; !ok {
							req[k] = v
						}
					}
				}
				if hostNet {
					for _, p := range jsonobj.ListAt(cm, "ports") {
						pm := jsonobj.Map(p)
						if jsonobj.Num(pm["hostPort"]) == 0 {
							pm["hostPort"] = pm["containerPort"]
						}
					}
				}
			}
		}
	}
}

// forEachPodSpec calls fn with every pod spec of a built-in object (pods, pod templates,
// deployments, replica sets).
func forEachPodSpec(obj map[string]any, fn func(spec map[string]any)) {
	switch obj["kind"] {
	case "Pod":
		if spec := jsonobj.Map(obj["spec"]); spec != nil {
			fn(spec)
		}
	case "PodTemplate":
		if spec := jsonobj.Map(jsonobj.Map(obj["template"])["spec"]); spec != nil {
			fn(spec)
		}
	case "Deployment", "ReplicaSet":
		if spec := jsonobj.Map(jsonobj.Map(jsonobj.Map(obj["spec"])["template"])["spec"]); spec != nil {
			fn(spec)
		}
	}
}

// pullPolicy is SetDefaults_Container's: Always for :latest (or no tag), IfNotPresent
// otherwise (a digest counts as a tag).
func pullPolicy(image string) string {
	if strings.Contains(image, "@") {
		return "IfNotPresent"
	}
	last := image[strings.LastIndex(image, "/")+1:]
	tag := ""
	if i := strings.LastIndex(last, ":"); i >= 0 {
		tag = last[i+1:]
	}
	if tag == "" || tag == "latest" {
		return "Always"
	}
	return "IfNotPresent"
}

var volumeSources = []string{"hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs",
	"iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI", "fc",
	"azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "projected", "portworxVolume",
	"scaleIO", "storageos", "csi", "ephemeral", "image"}

func hasVolumeSource(v map[string]any) bool {
	for _, k := range volumeSources {
		if v[k] != nil {
			return true
		}
	}
	return false
}

// prepareForCreateLocked is the registry strategy's PrepareForCreate plus the default
// admission plugins' mutations (DefaultTolerationSeconds, Priority).
func (s *Server) prepareForCreateLocked(r *resource, obj map[string]any) {
	switch r.typ.Group + "/" + r.typ.Kind {
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
		s.allocateServiceLocked(obj, nil)
		obj["status"] = map[string]any{"loadBalancer": map[string]any{}}
	case "/Secret":
		mergeStringData(obj)
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

// prepareForUpdateLocked keeps what an update may not change.
func (s *Server) prepareForUpdateLocked(r *resource, obj, old map[string]any) {
	switch r.typ.Group + "/" + r.typ.Kind {
	case "/Service":
		s.allocateServiceLocked(obj, old)
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

// allocateServiceLocked gives a Service its cluster IP (from 10.0.0.0/24, as the e2e
// cluster's --service-cluster-ip-range), IP families and node ports, or keeps those of the
// stored object on update.
func (s *Server) allocateServiceLocked(obj, old map[string]any) {
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
			s.serviceIPs++
			spec["clusterIP"] = fmt.Sprintf("10.0.0.%d", 10+s.serviceIPs%240)
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
			s.nodePorts++
			pm["nodePort"] = json.Number(fmt.Sprint(30000 + s.nodePorts%2768))
		}
	}
}
