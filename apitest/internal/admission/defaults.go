package admission

import (
	"encoding/json"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/internal/kubeschema"
)

// Defaulting: kubeschema's table of constant defaults, and the defaults of
// k8s.io/kubernetes pkg/apis/*/v1 that copy or depend on other fields.

// applyDefaults sets the table's defaults on obj (of type t) and in everything it holds,
// for an object of kind (kindKey).
func applyDefaults(t *kubeschema.Type, obj map[string]any, kind string) {
	if t.JSON != "" || obj == nil {
		return
	}
	fields := t.JSONFields()
	// Unconditional defaults first: conditions look at sibling values (a Service's
	// internalTrafficPolicy depends on its defaulted type).
	for pass := 0; pass < 2; pass++ {
		for _, f := range fields {
			if f.Default == nil || (f.DefaultWhen != "") != (pass == 1) || !unset(f, obj[f.Name]) {
				continue
			}
			if f.AppliesDefault(kind, obj) {
				var v any
				d := json.NewDecoder(strings.NewReader(string(f.Default)))
				d.UseNumber()
				d.Decode(&v)
				obj[f.Name] = v
			}
		}
	}
	for _, f := range fields {
		if f.Kind != kubeschema.Message || f.Type().JSON != "" {
			continue
		}
		switch v := obj[f.Name].(type) {
		case map[string]any:
			if f.MapKey != "" {
				for _, e := range v {
					if m, ok := e.(map[string]any); ok {
						applyDefaults(f.Type(), m, kind)
					}
				}
				continue
			}
			applyDefaults(f.Type(), v, kind)
		case []any:
			for _, e := range v {
				if m, ok := e.(map[string]any); ok {
					applyDefaults(f.Type(), m, kind)
				}
			}
		}
	}
}

// unset reports whether a field counts as not set for defaulting: absent or null, or, for a
// non-pointer scalar, its zero value (Go's defaulting tests == "" and == 0).
func unset(f *kubeschema.Field, v any) bool {
	if v == nil {
		return true
	}
	if f.Pointer || f.Repeated || f.MapKey != "" {
		return false
	}
	switch x := v.(type) {
	case string:
		return x == "" && f.Kind == kubeschema.String
	case json.Number:
		return x == "0"
	case bool:
		return !x
	}
	return false
}

// derivedDefaults are the defaults of k8s.io/kubernetes pkg/apis/*/v1 that are not
// constants.
func derivedDefaults(gk string, t *kubeschema.Type, obj map[string]any) {
	kind := gk
	kindDefaults(gk, obj)
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
	forEachPodSpec(t, obj, func(spec map[string]any) {
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

// podSpecType is the type of every pod spec, wherever a kind holds one.
const podSpecType = "io.k8s.api.core.v1.PodSpec"

// forEachPodSpec calls fn with every pod spec of obj, an object of type t: a pod's, a
// template's, a cron job's job template's. The schema says where they are.
func forEachPodSpec(t *kubeschema.Type, obj map[string]any, fn func(spec map[string]any)) {
	if t == nil || obj == nil || t.JSON != "" {
		return
	}
	if t.Name == podSpecType {
		fn(obj)
		return
	}
	for _, f := range t.JSONFields() {
		if f.Kind != kubeschema.Message || f.Repeated || f.MapKey != "" {
			continue
		}
		if m, ok := obj[f.Name].(map[string]any); ok {
			forEachPodSpec(f.Type(), m, fn)
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

// volumeSources are the fields of a Volume that say where it comes from; a volume
// without one gets an emptyDir.
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
