package admission

import (
	"encoding/json"
	"fmt"
	"net"
	"reflect"
	"strings"
	"time"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
)

// The defaults, strategies and default admission plugins of the kinds beyond pods,
// services and workloads whose effects a create shows (each measured on the
// kube-apiserver by the recording in testdata/kube-apiserver).

// kindDefaults are SetDefaults_* of kinds whose defaults depend on other fields.
func kindDefaults(gk string, obj map[string]any) {
	switch gk {
	case "resource.k8s.io/DeviceTaintRule":
		// SetDefaults_DeviceTaint (1.37): the taint's timeAdded is now, in seconds.
		taint := jsonobj.Map(jsonobj.Map(obj["spec"])["taint"])
		if taint != nil && taint["timeAdded"] == nil {
			taint["timeAdded"] = time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
		}
	case "/ReplicationController":
		// The selector and the labels default to the template's labels.
		spec := jsonobj.Map(obj["spec"])
		tl := jsonobj.Map(jsonobj.Map(jsonobj.Map(spec["template"])["metadata"])["labels"])
		if len(tl) > 0 {
			if len(jsonobj.Map(spec["selector"])) == 0 {
				spec["selector"] = copyMap(tl)
			}
			labelsFromTemplate(obj, tl)
		}
	case "batch/Job":
		spec := jsonobj.Map(obj["spec"])
		labelsFromTemplate(obj, jsonobj.Map(jsonobj.Map(jsonobj.Map(spec["template"])["metadata"])["labels"]))
		if spec != nil && jsonobj.Str(spec, "podReplacementPolicy") == "" {
			spec["podReplacementPolicy"] = "TerminatingOrFailed"
			if spec["podFailurePolicy"] != nil {
				spec["podReplacementPolicy"] = "Failed"
			}
		}
	case "networking.k8s.io/NetworkPolicy":
		spec := jsonobj.Map(obj["spec"])
		if spec != nil && len(jsonobj.ListAt(spec, "policyTypes")) == 0 {
			types := []any{"Ingress"}
			if len(jsonobj.ListAt(spec, "egress")) > 0 {
				types = append(types, "Egress")
			}
			spec["policyTypes"] = types
		}
	case "autoscaling/HorizontalPodAutoscaler":
		hpaBehaviorDefaults(jsonobj.Map(jsonobj.Map(obj["spec"])["behavior"]))
	case "apps/DaemonSet":
		// The template generation (internal to the kube-apiserver, written in this
		// annotation): 1 on create; an update keeps and counts it (prepareKindUpdate). The
		// field manager sees it, as on the kube-apiserver.
		if jsonobj.Str(jsonobj.Map(jsonobj.Meta(obj)["annotations"]), daemonSetGeneration) == "" {
			setAnnotation(obj, daemonSetGeneration, "1")
		}
	}
}

const daemonSetGeneration = "deprecated.daemonset.template.generation"

// labelsFromTemplate gives obj its template's labels when it has none.
func labelsFromTemplate(obj, templateLabels map[string]any) {
	md := jsonobj.Meta(obj)
	if md != nil && len(templateLabels) > 0 && len(jsonobj.Map(md["labels"])) == 0 {
		md["labels"] = copyMap(templateLabels)
	}
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// hpaBehaviorDefaults fills an autoscaling/v2 behavior's rules: scale up at once by 4 pods
// or 100% per 15 s, scale down after 300 s by 100% per 15 s, the Max policy.
func hpaBehaviorDefaults(b map[string]any) {
	if b == nil {
		return
	}
	rules := func(key string, window int, policies []any) {
		r := jsonobj.Map(b[key])
		if r == nil {
			r = map[string]any{}
			b[key] = r
		}
		if r["stabilizationWindowSeconds"] == nil {
			r["stabilizationWindowSeconds"] = json.Number(jsonobj.NumString(json.Number(itoa(window))))
		}
		if jsonobj.Str(r, "selectPolicy") == "" {
			r["selectPolicy"] = "Max"
		}
		if r["policies"] == nil {
			r["policies"] = policies
		}
	}
	policy := func(typ string, value int) any {
		return map[string]any{"type": typ, "value": json.Number(itoa(value)), "periodSeconds": json.Number("15")}
	}
	rules("scaleUp", 0, []any{policy("Pods", 4), policy("Percent", 100)})
	rules("scaleDown", 300, []any{policy("Percent", 100)})
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// prepareKind is the strategies' PrepareForCreate and the default admission plugins of
// the kinds beyond pods, workloads and services.
func prepareKind(gk string, obj map[string]any) {
	switch gk {
	case "/Node":
		// TaintNodesByCondition: a new node is not ready until its kubelet says so.
		spec := jsonobj.Map(obj["spec"])
		if spec == nil {
			spec = map[string]any{}
			obj["spec"] = spec
		}
		taints := jsonobj.ListAt(spec, "taints")
		for _, t := range taints {
			if tm := jsonobj.Map(t); jsonobj.Str(tm, "key") == "node.kubernetes.io/not-ready" && jsonobj.Str(tm, "effect") == "NoSchedule" {
				return
			}
		}
		spec["taints"] = append(taints, map[string]any{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"})
	case "/PersistentVolumeClaim":
		addFinalizer(obj, "kubernetes.io/pvc-protection") // StorageObjectInUseProtection
	case "/PersistentVolume":
		addFinalizer(obj, "kubernetes.io/pv-protection")
		st := jsonobj.Map(obj["status"])
		if st == nil {
			st = map[string]any{}
			obj["status"] = st
		}
		st["phase"] = "Pending"
		st["lastPhaseTransitionTime"] = time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
	case "storage.k8s.io/VolumeAttributesClass":
		addFinalizer(obj, "kubernetes.io/vac-protection")
	case "apiregistration.k8s.io/APIService":
		if jsonobj.Map(obj["spec"])["service"] == nil {
			obj["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": "True",
				"reason": "Local", "message": "Local APIServices are always available",
				"lastTransitionTime": time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)}}}
		}
	}
}

// prepareKindUpdate is the strategies' PrepareForUpdate of those kinds.
func prepareKindUpdate(gk string, obj, old map[string]any) {
	if gk == "apps/DaemonSet" {
		// The template generation counts the template's changes.
		gen := jsonobj.Str(jsonobj.Map(jsonobj.Meta(old)["annotations"]), daemonSetGeneration)
		if gen == "" {
			gen = "1"
		}
		if !reflect.DeepEqual(jsonobj.Map(obj["spec"])["template"], jsonobj.Map(old["spec"])["template"]) {
			n, _ := json.Number(gen).Int64()
			gen = itoa(int(n) + 1)
		}
		setAnnotation(obj, daemonSetGeneration, gen)
	}
}

func addFinalizer(obj map[string]any, f string) {
	md := jsonobj.Meta(obj)
	fs := jsonobj.Strings(md["finalizers"])
	for _, x := range fs {
		if x == f {
			return
		}
	}
	list := make([]any, 0, len(fs)+1)
	for _, x := range fs {
		list = append(list, x)
	}
	md["finalizers"] = append(list, f)
}

func setAnnotation(obj map[string]any, k, v string) {
	md := jsonobj.Meta(obj)
	a := jsonobj.Map(md["annotations"])
	if a == nil {
		a = map[string]any{}
		md["annotations"] = a
	}
	a[k] = v
}

// validateImmutable is the rule of configmaps and secrets marked immutable, and of a
// secret's type: what may not change on update.
func validateImmutable(gk string, obj, old map[string]any) []apierr.FieldError {
	if old == nil || (gk != "/ConfigMap" && gk != "/Secret") {
		return nil
	}
	var errs []apierr.FieldError
	if gk == "/Secret" && jsonobj.Str(obj, "type") != jsonobj.Str(old, "type") {
		errs = append(errs, apierr.InvalidValue("type", obj["type"], "field is immutable"))
	}
	if b, _ := old["immutable"].(bool); b {
		for _, k := range []string{"data", "binaryData"} {
			if !reflect.DeepEqual(obj[k], old[k]) {
				errs = append(errs, apierr.ForbiddenValue(k, "field is immutable when `immutable` is set"))
			}
		}
		if v, _ := obj["immutable"].(bool); !v {
			errs = append(errs, apierr.ForbiddenValue("immutable", "field is immutable when `immutable` is set"))
		}
	}
	return errs
}

// validateKindName checks the names whose rule is a kind's own (kubeschema.Resource.Names
// empty): an APIService is named version.group, an IPAddress by its address.
func validateKindName(gk string, obj map[string]any) []apierr.FieldError {
	name := jsonobj.StrAt(obj, "metadata", "name")
	switch gk {
	case "apiregistration.k8s.io/APIService":
		spec := jsonobj.Map(obj["spec"])
		want := jsonobj.Str(spec, "version") + "." + jsonobj.Str(spec, "group")
		if name != want {
			return []apierr.FieldError{apierr.InvalidValue("metadata.name", name, fmt.Sprintf("must be `spec.version+\".\"+spec.group`: %q", want))}
		}
	case "certificates.k8s.io/ClusterTrustBundle":
		// ValidateClusterTrustBundleName (1.37): a bundle of a signer is named after it.
		signer := jsonobj.StrAt(obj, "spec", "signerName")
		if signer == "" {
			if strings.Contains(name, ":") {
				return []apierr.FieldError{apierr.InvalidValue("metadata.name", name, `ClusterTrustBundle without signer name must not have ":" in its name`)}
			}
			return nameErrors(name, NamesSubdomain)
		}
		prefix := strings.ReplaceAll(signer, "/", ":") + ":"
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			return []apierr.FieldError{apierr.InvalidValue("metadata.name", name, fmt.Sprintf("ClusterTrustBundle for signerName %s must be named with prefix %s", signer, prefix))}
		}
		var errs []apierr.FieldError
		if len(rest) > 253 {
			errs = append(errs, apierr.InvalidValue("metadata.name", name, "must be no more than 253 characters"))
		}
		if !subdomainRE.MatchString(rest) {
			errs = append(errs, apierr.InvalidValue("metadata.name", name, subdomainMsg))
		}
		return errs
	case "networking.k8s.io/IPAddress":
		if ip := net.ParseIP(name); ip == nil || ip.String() != name {
			return []apierr.FieldError{apierr.InvalidValue("metadata.name", name, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")}
		}
	}
	return nil
}
