package apitest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"

	"github.com/informerkit/informerkit/internal/kubeschema"
)

// Validation of the built-in kinds' specs: the fields the OpenAPI schema marks required
// (kubeschema.Field.Required), and the rules of k8s.io/kubernetes pkg/apis/*/validation that
// controllers and kubectl users meet most, with the kube-apiserver's paths and messages.

// requiredErr is field.Required(path, "").
func requiredErr(path string) fieldError {
	return fieldError{typ: "FieldValueRequired", field: path, msg: "Required value"}
}

func notSupported(path string, value any, supported ...string) fieldError {
	v, _ := json.Marshal(value)
	q := make([]string, len(supported))
	for i, s := range supported {
		q[i] = fmt.Sprintf("%q", s)
	}
	msg := fmt.Sprintf("Unsupported value: %s: supported values: %s", v, joinComma(q))
	return fieldError{typ: "FieldValueNotSupported", field: path, msg: msg}
}

func duplicateErr(path string, value any) fieldError {
	v, _ := json.Marshal(value)
	return fieldError{typ: "FieldValueDuplicate", field: path, msg: fmt.Sprintf("Duplicate value: %s", v)}
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}

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

// validateBuiltin validates a defaulted object of a built-in kind (old: the stored object on
// update, nil on create).
func validateBuiltin(r *resource, obj, old map[string]any) []fieldError {
	t := r.schemaType()
	kind := r.typ.Group + "/" + r.typ.Kind
	var errs []fieldError
	for _, root := range specRoots[kind] {
		if f := t.Field(root); f != nil && f.Kind == kubeschema.Message {
			errs = append(errs, requiredFields(f.Type(), asMap(obj[root]), root)...)
		}
	}
	switch kind {
	case "/Pod":
		errs = append(errs, validatePodSpec(asMap(obj["spec"]), "spec")...)
	case "/PodTemplate":
		errs = append(errs, validatePodSpec(asMap(asMap(obj["template"])["spec"]), "template.spec")...)
	case "apps/Deployment", "apps/ReplicaSet":
		errs = append(errs, validateWorkload(asMap(obj["spec"]))...)
	case "/Service":
		errs = append(errs, validateService(asMap(obj["spec"]))...)
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
func requiredFields(t *kubeschema.Type, obj map[string]any, path string) []fieldError {
	if t.JSON != "" || obj == nil {
		return nil
	}
	var errs []fieldError
	for _, f := range t.JSONFields() {
		v := obj[f.Name]
		p := joinField(path, f.Name)
		if f.Required && isUnsetValue(v) {
			errs = append(errs, requiredErr(p))
			continue
		}
		if f.Kind != kubeschema.Message || f.Type().JSON != "" {
			continue
		}
		switch x := v.(type) {
		case []any:
			for i, e := range x {
				errs = append(errs, requiredFields(f.Type(), asMap(e), fmt.Sprintf("%s[%d]", p, i))...)
			}
		case map[string]any:
			if f.MapKey != "" {
				keys := make([]string, 0, len(x))
				for k := range x {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					errs = append(errs, requiredFields(f.Type(), asMap(x[k]), p+"["+k+"]")...)
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
func validatePodSpec(spec map[string]any, path string) []fieldError {
	var errs []fieldError
	seen := map[string]bool{}
	for _, list := range []string{"initContainers", "containers"} {
		for i, c := range listAt(spec, list) {
			cm := asMap(c)
			p := fmt.Sprintf("%s.%s[%d]", path, list, i)
			name := str(cm, "name")
			switch {
			case name == "":
				// requiredFields reported it.
			case len(name) > 63 || !labelRE.MatchString(name):
				errs = append(errs, invalidValue(p+".name", name, labelMsg))
			case seen[name]:
				errs = append(errs, duplicateErr(p+".name", name))
			}
			seen[name] = true
			if str(cm, "image") == "" {
				errs = append(errs, requiredErr(p+".image"))
			}
		}
	}
	if rp := str(spec, "restartPolicy"); rp != "" && rp != "Always" && rp != "OnFailure" && rp != "Never" {
		errs = append(errs, notSupported(path+".restartPolicy", rp, "Always", "Never", "OnFailure"))
	}
	return errs
}

// validateWorkload checks a Deployment's or ReplicaSet's spec: selector present and
// matching the template's labels, restartPolicy Always, replicas not negative.
func validateWorkload(spec map[string]any) []fieldError {
	var errs []fieldError
	if r, ok := spec["replicas"]; ok && num(r) < 0 {
		errs = append(errs, invalidValue("spec.replicas", num(r), "must be greater than or equal to 0"))
	}
	tmpl := asMap(spec["template"])
	sel := asMap(spec["selector"])
	labels := asMap(metaOf(tmpl)["labels"])
	switch {
	case sel == nil:
		// requiredFields reported the selector; no selector matches the labels either.
		errs = append(errs, invalidValue("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
	case len(asMap(sel["matchLabels"])) == 0 && len(listAt(sel, "matchExpressions")) == 0:
		errs = append(errs, invalidValue("spec.selector", sel, "empty selector is invalid for deployment"))
	case !selectorMatches(sel, labels):
		errs = append(errs, invalidValue("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
	}
	podSpec := asMap(tmpl["spec"])
	errs = append(errs, validatePodSpec(podSpec, "spec.template.spec")...)
	if rp := str(podSpec, "restartPolicy"); rp != "" && rp != "Always" {
		errs = append(errs, notSupported("spec.template.spec.restartPolicy", rp, "Always"))
	}
	return errs
}

// selectorMatches evaluates a LabelSelector on labels.
func selectorMatches(sel, labels map[string]any) bool {
	for k, v := range asMap(sel["matchLabels"]) {
		if labels[k] != v {
			return false
		}
	}
	for _, e := range listAt(sel, "matchExpressions") {
		em := asMap(e)
		val, has := labels[str(em, "key")]
		in := false
		for _, x := range stringList(em["values"]) {
			in = in || val == x
		}
		switch str(em, "operator") {
		case "In":
			if !has || !in {
				return false
			}
		case "NotIn":
			if has && in {
				return false
			}
		case "Exists":
			if !has {
				return false
			}
		case "DoesNotExist":
			if has {
				return false
			}
		}
	}
	return true
}

func validateService(spec map[string]any) []fieldError {
	var errs []fieldError
	typ := str(spec, "type")
	switch typ {
	case "ClusterIP", "NodePort", "LoadBalancer", "ExternalName":
	default:
		errs = append(errs, notSupported("spec.type", typ, "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"))
	}
	ports := listAt(spec, "ports")
	if typ == "ExternalName" {
		if str(spec, "externalName") == "" {
			errs = append(errs, requiredErr("spec.externalName"))
		}
	} else if len(ports) == 0 && str(spec, "clusterIP") != "None" {
		errs = append(errs, requiredErr("spec.ports"))
	}
	for i, p := range ports {
		pm := asMap(p)
		if port := num(pm["port"]); port < 1 || port > 65535 {
			errs = append(errs, invalidValue(fmt.Sprintf("spec.ports[%d].port", i), port, "must be between 1 and 65535, inclusive"))
		}
		if len(ports) > 1 && str(pm, "name") == "" {
			errs = append(errs, requiredErr(fmt.Sprintf("spec.ports[%d].name", i)))
		}
	}
	return errs
}

var configKeyRE = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

const configKeyMsg = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"

func validateKeys(obj map[string]any, fields ...string) []fieldError {
	var errs []fieldError
	for _, f := range fields {
		m := asMap(obj[f])
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if len(k) > 253 || !configKeyRE.MatchString(k) {
				errs = append(errs, invalidValue(f+"["+k+"]", k, configKeyMsg))
			}
		}
	}
	return errs
}

// validateEvent is the kube-apiserver's event validation (core/v1 and events.k8s.io/v1,
// whose fields it names by the internal type's names: involvedObject, reportingController).
func validateEvent(obj map[string]any, legacy bool) []fieldError {
	get := func(core, v1 string) any {
		if legacy {
			return obj[core]
		}
		return obj[v1]
	}
	ns := str(metaOf(obj), "namespace")
	ref := asMap(get("involvedObject", "regarding"))
	refNS := str(ref, "namespace")
	reason, _ := get("reason", "reason").(string)
	action, _ := obj["action"].(string)
	controller, _ := get("reportingComponent", "reportingController").(string)
	instance, _ := obj["reportingInstance"].(string)
	eventTime := obj["eventTime"]
	mismatch := func() fieldError {
		return invalidValue("involvedObject.namespace", refNS, "does not match event.namespace")
	}
	var errs []fieldError
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
			errs = append(errs, requiredErr(ctlField))
		}
		if instance == "" {
			errs = append(errs, requiredErr("reportingInstance"))
		}
		if action == "" {
			errs = append(errs, requiredErr("action"))
		}
		if reason == "" {
			errs = append(errs, requiredErr("reason"))
		}
	}
	if !legacy {
		if eventTime == nil || eventTime == "" {
			errs = append(errs, requiredErr("eventTime"))
		}
		if t, _ := obj["type"].(string); t != "Normal" && t != "Warning" {
			errs = append(errs, invalidValue("type", "", "has invalid value: "+t))
		}
	}
	return errs
}
