package admission

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/apitest/internal/selector"
	"github.com/informerkit/informerkit/internal/kubeschema"
)

// Validation of the built-in kinds' specs: the fields the OpenAPI schema marks required
// (kubeschema.Field.Required), and the rules of k8s.io/kubernetes pkg/apis/*/validation that
// controllers and kubectl users meet most, with the kube-apiserver's paths and messages.

// specRoots are the parts of each kind that hold the user's intent (validated); metadata is
// validated elsewhere and status is not validated on create.
var specRoots = map[string][]string{
	"/Pod":                      {"spec"},
	"/PodTemplate":              {"template"},
	"/Service":                  {"spec"},
	"apps/Deployment":           {"spec"},
	"apps/ReplicaSet":           {"spec"},
	"coordination.k8s.io/Lease": {"spec"},
}

// validate validates a defaulted object of a built-in kind (old: the stored object on
// update, nil on create).
func validate(gk string, t *kubeschema.Type, obj, old map[string]any) []apierr.FieldError {
	kind := gk
	var errs []apierr.FieldError
	for _, root := range specRoots[kind] {
		if f := t.Field(root); f != nil && f.Kind == kubeschema.Message {
			errs = append(errs, requiredFields(f.Type(), jsonobj.Map(obj[root]), root)...)
		}
	}
	errs = append(errs, validateImmutable(kind, obj, old)...)
	errs = append(errs, validateKindName(kind, obj)...)
	switch kind {
	case "/Pod":
		errs = append(errs, validatePodSpec(jsonobj.Map(obj["spec"]), "spec")...)
	case "/PodTemplate":
		errs = append(errs, validatePodSpec(jsonobj.Map(jsonobj.Map(obj["template"])["spec"]), "template.spec")...)
	case "apps/Deployment", "apps/ReplicaSet":
		errs = append(errs, validateWorkload(jsonobj.Map(obj["spec"]))...)
	case "/Service":
		errs = append(errs, validateService(jsonobj.Map(obj["spec"]))...)
	case "/ConfigMap":
		errs = append(errs, validateKeys(obj, "data", "binaryData")...)
	case "/Secret":
		errs = append(errs, validateKeys(obj, "data", "stringData")...)
	case "/Event":
		errs = append(errs, validateEvent(obj, true)...)
	case "events.k8s.io/Event":
		if old == nil {
			errs = append(errs, validateEvent(obj, false)...)
		}
	}
	return errs
}

// requiredFields reports required fields that are unset, in obj of type t and below.
func requiredFields(t *kubeschema.Type, obj map[string]any, path string) []apierr.FieldError {
	if t.JSON != "" || obj == nil {
		return nil
	}
	var errs []apierr.FieldError
	for _, f := range t.JSONFields() {
		v := obj[f.Name]
		p := joinField(path, f.Name)
		if f.Required && isUnsetValue(v) {
			errs = append(errs, apierr.RequiredValue(p, ""))
			continue
		}
		if f.Kind != kubeschema.Message || f.Type().JSON != "" {
			continue
		}
		switch x := v.(type) {
		case []any:
			for i, e := range x {
				errs = append(errs, requiredFields(f.Type(), jsonobj.Map(e), fmt.Sprintf("%s[%d]", p, i))...)
			}
		case map[string]any:
			if f.MapKey != "" {
				keys := make([]string, 0, len(x))
				for k := range x {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					errs = append(errs, requiredFields(f.Type(), jsonobj.Map(x[k]), p+"["+k+"]")...)
				}
				continue
			}
			errs = append(errs, requiredFields(f.Type(), x, p)...)
		}
	}
	return errs
}

func isUnsetValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return false
	case json.Number:
		return x == "0"
	}
	return false
}

// validatePodSpec checks the containers of a pod spec: at least one, each with an image and
// a DNS-label name, names unique across containers and init containers.
func validatePodSpec(spec map[string]any, path string) []apierr.FieldError {
	var errs []apierr.FieldError
	seen := map[string]bool{}
	for _, list := range []string{"initContainers", "containers"} {
		for i, c := range jsonobj.ListAt(spec, list) {
			cm := jsonobj.Map(c)
			p := fmt.Sprintf("%s.%s[%d]", path, list, i)
			name := jsonobj.Str(cm, "name")
			switch {
			case name == "":
				// requiredFields reported it.
			case len(name) > 63 || !labelRE.MatchString(name):
				errs = append(errs, apierr.InvalidValue(p+".name", name, labelMsg))
			case seen[name]:
				errs = append(errs, apierr.DuplicateValue(p+".name", name))
			}
			seen[name] = true
			if jsonobj.Str(cm, "image") == "" {
				errs = append(errs, apierr.RequiredValue(p+".image", ""))
			}
		}
	}
	if rp := jsonobj.Str(spec, "restartPolicy"); rp != "" && rp != "Always" && rp != "OnFailure" && rp != "Never" {
		errs = append(errs, apierr.NotSupportedValue(path+".restartPolicy", rp, "Always", "Never", "OnFailure"))
	}
	return errs
}

// validateWorkload checks a Deployment's or ReplicaSet's spec: selector present and
// matching the template's labels, restartPolicy Always, replicas not negative.
func validateWorkload(spec map[string]any) []apierr.FieldError {
	var errs []apierr.FieldError
	if r, ok := spec["replicas"]; ok && jsonobj.Num(r) < 0 {
		errs = append(errs, apierr.InvalidValue("spec.replicas", jsonobj.Num(r), "must be greater than or equal to 0"))
	}
	tmpl := jsonobj.Map(spec["template"])
	sel := jsonobj.Map(spec["selector"])
	labels := jsonobj.Map(jsonobj.Meta(tmpl)["labels"])
	switch {
	case sel == nil:
		// requiredFields reported the selector; no selector matches the labels either.
		errs = append(errs, apierr.InvalidValue("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
	case len(jsonobj.Map(sel["matchLabels"])) == 0 && len(jsonobj.ListAt(sel, "matchExpressions")) == 0:
		errs = append(errs, apierr.InvalidValue("spec.selector", sel, "empty selector is invalid for deployment"))
	case !selector.LabelSelectorMatches(sel, labels):
		errs = append(errs, apierr.InvalidValue("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
	}
	podSpec := jsonobj.Map(tmpl["spec"])
	errs = append(errs, validatePodSpec(podSpec, "spec.template.spec")...)
	if rp := jsonobj.Str(podSpec, "restartPolicy"); rp != "" && rp != "Always" {
		errs = append(errs, apierr.NotSupportedValue("spec.template.spec.restartPolicy", rp, "Always"))
	}
	return errs
}

func validateService(spec map[string]any) []apierr.FieldError {
	var errs []apierr.FieldError
	typ := jsonobj.Str(spec, "type")
	switch typ {
	case "ClusterIP", "NodePort", "LoadBalancer", "ExternalName":
	default:
		errs = append(errs, apierr.NotSupportedValue("spec.type", typ, "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"))
	}
	ports := jsonobj.ListAt(spec, "ports")
	if typ == "ExternalName" {
		if jsonobj.Str(spec, "externalName") == "" {
			errs = append(errs, apierr.RequiredValue("spec.externalName", ""))
		}
	} else if len(ports) == 0 && jsonobj.Str(spec, "clusterIP") != "None" {
		errs = append(errs, apierr.RequiredValue("spec.ports", ""))
	}
	for i, p := range ports {
		pm := jsonobj.Map(p)
		if port := jsonobj.Num(pm["port"]); port < 1 || port > 65535 {
			errs = append(errs, apierr.InvalidValue(fmt.Sprintf("spec.ports[%d].port", i), port, "must be between 1 and 65535, inclusive"))
		}
		if len(ports) > 1 && jsonobj.Str(pm, "name") == "" {
			errs = append(errs, apierr.RequiredValue(fmt.Sprintf("spec.ports[%d].name", i), ""))
		}
	}
	return errs
}

var configKeyRE = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

const configKeyMsg = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"

func validateKeys(obj map[string]any, fields ...string) []apierr.FieldError {
	var errs []apierr.FieldError
	for _, f := range fields {
		m := jsonobj.Map(obj[f])
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if len(k) > 253 || !configKeyRE.MatchString(k) {
				errs = append(errs, apierr.InvalidValue(f+"["+k+"]", k, configKeyMsg))
			}
		}
	}
	return errs
}

// validateEvent is the kube-apiserver's event validation (core/v1 and events.k8s.io/v1,
// whose fields it names by the internal type's names: involvedObject, reportingController).
func validateEvent(obj map[string]any, legacy bool) []apierr.FieldError {
	get := func(core, v1 string) any {
		if legacy {
			return obj[core]
		}
		return obj[v1]
	}
	ns := jsonobj.Str(jsonobj.Meta(obj), "namespace")
	ref := jsonobj.Map(get("involvedObject", "regarding"))
	refNS := jsonobj.Str(ref, "namespace")
	reason, _ := get("reason", "reason").(string)
	action, _ := obj["action"].(string)
	controller, _ := get("reportingComponent", "reportingController").(string)
	instance, _ := obj["reportingInstance"].(string)
	eventTime := obj["eventTime"]
	mismatch := func() apierr.FieldError {
		return apierr.InvalidValue("involvedObject.namespace", refNS, "does not match event.namespace")
	}
	var errs []apierr.FieldError
	if eventTime == nil || eventTime == "" {
		if refNS == "" {
			if ns != "" && ns != "default" {
				errs = append(errs, mismatch())
			}
		} else if ns != refNS {
			errs = append(errs, mismatch())
		}
	} else {
		if refNS == "" && ns != "default" && ns != "kube-system" {
			errs = append(errs, mismatch())
		}
		ctlField := "reportingController"
		if legacy {
			ctlField = "reportingComponent"
		}
		if controller == "" {
			errs = append(errs, apierr.RequiredValue(ctlField, ""))
		}
		if instance == "" {
			errs = append(errs, apierr.RequiredValue("reportingInstance", ""))
		}
		if action == "" {
			errs = append(errs, apierr.RequiredValue("action", ""))
		}
		if reason == "" {
			errs = append(errs, apierr.RequiredValue("reason", ""))
		}
	}
	if !legacy {
		if eventTime == nil || eventTime == "" {
			errs = append(errs, apierr.RequiredValue("eventTime", ""))
		}
		if t, _ := obj["type"].(string); t != "Normal" && t != "Warning" {
			errs = append(errs, apierr.InvalidValue("type", "", "has invalid value: "+t))
		}
	}
	return errs
}
