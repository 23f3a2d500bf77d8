package apitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/apitest/internal/negotiation"
	"github.com/informerkit/informerkit/apitest/internal/selector"
	"github.com/informerkit/informerkit/apitest/internal/ssa"
	"github.com/informerkit/informerkit/meta"
)

// Subresources (deployments/scale, replicasets/scale, pods/binding, pods/eviction) and the
// create-only resources (bindings, selfsubjectaccessreviews, selfsubjectrulesreviews), with
// the verbs the kube-apiserver's discovery lists for each.

var allVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// subresource is one subresource of a ResourceType, as discovery lists it.
type subresource struct {
	name                 string
	group, version, kind string // "" : the parent's
	verbs                []string
}

// resourceVerbs are the verbs of the resource (discovery, and 405 for the others).
func (t *ResourceType) resourceVerbs() []string {
	if t.verbs != nil {
		return t.verbs
	}
	return allVerbs
}

func (t *ResourceType) allows(v Verb) bool {
	for _, x := range t.resourceVerbs() {
		if Verb(x) == v {
			return true
		}
	}
	return false
}

// subresources lists the resource's subresources (status from StatusSubresource).
func (t *ResourceType) subresources() []subresource {
	var out []subresource
	if t.StatusSubresource {
		out = append(out, subresource{name: "status", verbs: []string{"get", "patch", "update"}})
	}
	out = append(out, t.subs...)
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func (t *ResourceType) subresource(name string) (subresource, bool) {
	for _, s := range t.subresources() {
		if s.name == name {
			return s, true
		}
	}
	return subresource{}, false
}

var (
	scaleSub = subresource{name: "scale", group: "autoscaling", version: "v1", kind: "Scale", verbs: []string{"get", "patch", "update"}}
	createV  = []string{"create"}
)

// handleSubresource serves the subresources other than status.
func (s *Server) handleSubresource(w http.ResponseWriter, r *http.Request, ri *reqInfo) {
	switch ri.sub {
	case "scale":
		s.handleScale(w, r, ri)
	case "binding":
		obj, st := readObject(r, &resource{typ: ResourceType{Version: "v1", Kind: "Binding"}})
		if st == nil {
			st = s.bind(ri.namespace, ri.name, obj)
		}
		writeCreated(w, st)
	case "eviction":
		s.handleEviction(w, r, ri)
	case "token":
		s.createToken(w, r, ri)
	default:
		writeStatus(w, apierr.NoResource())
	}
}

// writeCreated answers a create-style subresource: the Status of success (201) or failure.
func writeCreated(w http.ResponseWriter, st *meta.Status) {
	if st != nil {
		writeStatus(w, st)
		return
	}
	writeBody(w, outputOf(w), http.StatusCreated, []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}`))
}

// ---- scale ----

func scaleOf(o *storedObj) map[string]any {
	obj := mustDecode(o.raw)
	meta := jsonobj.Meta(obj)
	spec, status := jsonobj.Map(obj["spec"]), jsonobj.Map(obj["status"])
	sel := selector.FormatLabelSelector(jsonobj.Map(spec["selector"]))
	if sel == "<none>" {
		sel = ""
	}
	scaleMeta := map[string]any{}
	for _, k := range []string{"name", "namespace", "uid", "resourceVersion", "creationTimestamp"} {
		if v, ok := meta[k]; ok {
			scaleMeta[k] = v
		}
	}
	replicas := spec["replicas"]
	if replicas == nil {
		replicas = json.Number("0")
	}
	statusReplicas := status["replicas"]
	if statusReplicas == nil {
		statusReplicas = json.Number("0")
	}
	return map[string]any{"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scaleMeta,
		"spec":   map[string]any{"replicas": replicas},
		"status": map[string]any{"replicas": statusReplicas, "selector": sel}}
}

func (s *Server) handleScale(w http.ResponseWriter, r *http.Request, ri *reqInfo) {
	out := outputOf(w)
	scaleRes := &resource{typ: ResourceType{Group: "autoscaling", Version: "v1", Kind: "Scale"}}
	switch ri.verb {
	case VerbGet:
		s.mu.Lock()
		o := ri.res.objects[objectKey(ri.namespace, ri.name)]
		s.mu.Unlock()
		if o == nil {
			writeStatus(w, errNotFound(&ri.res.typ, ri.name))
			return
		}
		writeBody(w, out, http.StatusOK, mustJSON(scaleOf(o)))
		return
	case VerbUpdate, VerbPatch:
	default:
		writeStatus(w, apierr.MethodNotAllowed())
		return
	}
	var scale map[string]any
	var patch []byte
	var st *meta.Status
	if ri.verb == VerbUpdate {
		scale, st = readObject(r, scaleRes)
	} else {
		patch, st = readBody(r)
	}
	if st != nil {
		writeStatus(w, st)
		return
	}
	wo, st := requestWriteOptions(r)
	if st != nil {
		writeStatus(w, st)
		return
	}
	s.mu.Lock()
	o := ri.res.objects[objectKey(ri.namespace, ri.name)]
	if o == nil {
		s.mu.Unlock()
		writeStatus(w, errNotFound(&ri.res.typ, ri.name))
		return
	}
	var apply *scaleApply
	if patch != nil {
		pt := apiclient.PatchType(strings.TrimSpace(strings.Split(r.Header.Get("Content-Type"), ";")[0]))
		st = validatePatchOptions(pt, wo)
		switch {
		case st != nil:
		case pt == apiclient.ApplyPatchType:
			scale, apply, st = applyScale(scaleOf(o), patch, wo.force)
		case pt == apiclient.StrategicMergePatchType:
			scale, st = strategicPatch(scaleRes, scaleOf(o), patch)
		default:
			var err error
			if scale, err = applyPatch(scaleOf(o), pt, patch); err != nil {
				st = apierr.BadRequest(err.Error())
			}
		}
		if st != nil {
			s.mu.Unlock()
			writeStatus(w, st)
			return
		}
	}
	o2, st := s.scaleLocked(ri.res, o, scale, dryRun(r), wo.manager, apply)
	s.mu.Unlock()
	if st != nil {
		writeStatus(w, st)
		return
	}
	s.notifyChange()
	writeBody(w, out, http.StatusOK, mustJSON(scaleOf(o2)))
}

// scaleApply is an apply to the scale subresource: whether its configuration sets
// spec.replicas, and its force parameter.
type scaleApply struct{ replicas, force bool }

// applyScale is the Scale an apply of the configuration body makes of scale.
func applyScale(scale map[string]any, body []byte, force bool) (map[string]any, *scaleApply, *meta.Status) {
	config, err := negotiation.DecodeYAML(body)
	if err != nil {
		return nil, nil, apierr.BadRequest(fmt.Sprintf("error decoding YAML: error converting YAML to JSON: %v", err))
	}
	if k := jsonobj.Str(config, "kind"); k != "" && k != "Scale" {
		return nil, nil, apierr.BadRequest(fmt.Sprintf("the kind of the applied configuration (%s) is not Scale", k))
	}
	a := &scaleApply{force: force}
	if n, ok := jsonobj.Map(config["spec"])["replicas"]; ok && n != nil {
		a.replicas = true
		jsonobj.Map(scale["spec"])["replicas"] = n
	}
	if name := jsonobj.Str(jsonobj.Meta(config), "name"); name != "" {
		jsonobj.Meta(scale)["name"] = name // checked against the URL's as any write's
	}
	delete(jsonobj.Meta(scale), "resourceVersion") // an apply has no precondition unless it sets one
	if rv := jsonobj.Str(jsonobj.Meta(config), "resourceVersion"); rv != "" {
		jsonobj.Meta(scale)["resourceVersion"] = rv
	}
	return scale, a, nil
}

// scaleLocked writes scale.spec.replicas into the object o (deployment or replica set) for
// manager, who then owns spec.replicas through the scale subresource (apply: an apply's,
// which may conflict with the other owners).
func (s *Server) scaleLocked(res *resource, o *storedObj, scale map[string]any, dryRun bool, manager string, apply *scaleApply) (*storedObj, *meta.Status) {
	meta := jsonobj.Meta(scale)
	if name := jsonobj.Str(meta, "name"); name != "" && name != o.name {
		return nil, apierr.BadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", name, o.name))
	}
	if rv := jsonobj.Str(meta, "resourceVersion"); rv != "" && rv != strconv.FormatUint(o.rv, 10) {
		return nil, errConflict(&res.typ, o.name, conflictModified)
	}
	replicas := jsonobj.Map(scale["spec"])["replicas"]
	if replicas == nil {
		replicas = json.Number("0")
	}
	if n, err := intOfJSON(replicas); err != nil || n < 0 {
		return nil, apierr.Invalid("Scale", "autoscaling", o.name, []apierr.FieldError{apierr.InvalidValue("spec.replicas", replicas, "must be greater than or equal to 0")})
	}
	obj := mustDecode(o.raw)
	spec := jsonobj.Map(obj["spec"])
	if spec == nil {
		spec = map[string]any{}
		obj["spec"] = spec
	}
	changed := !jsonobj.Equal(spec["replicas"], replicas)
	if apply != nil {
		mf, err := ssa.ScaleApply(jsonobj.Meta(obj)["managedFields"], res.typ.GroupVersion().String(), manager, apply.replicas, changed, apply.force)
		if err != nil {
			return nil, applyStatus(err)
		}
		if mf != nil {
			jsonobj.Meta(obj)["managedFields"] = mf
		} else {
			delete(jsonobj.Meta(obj), "managedFields")
		}
	} else if changed {
		if mf, err := ssa.ScaleReplicas(jsonobj.Meta(obj)["managedFields"], res.typ.GroupVersion().String(), manager); err == nil {
			if mf != nil {
				jsonobj.Meta(obj)["managedFields"] = mf
			} else {
				delete(jsonobj.Meta(obj), "managedFields")
			}
		}
	}
	spec["replicas"] = replicas
	o2, _, st := s.updateLocked(res, o.namespace, o.name, obj, updateMain, writeOptions{dryRun: dryRun})
	return o2, st
}

func intOfJSON(v any) (int64, error) {
	switch x := v.(type) {
	case json.Number:
		return x.Int64()
	case float64:
		return int64(x), nil
	case int64:
		return x, nil
	}
	return 0, fmt.Errorf("not a number")
}

// ---- binding ----

// bind assigns the pod ns/name to the node of binding.target, as the scheduler's POST of
// pods/binding (or bindings) does: spec.nodeName and the PodScheduled condition.
func (s *Server) bind(ns, name string, binding map[string]any) *meta.Status {
	if n := jsonobj.Str(jsonobj.Meta(binding), "name"); name == "" {
		name = n
	}
	target := jsonobj.Map(binding["target"])
	node := jsonobj.Str(target, "name")
	bindingType := &ResourceType{Plural: "pods/binding"}
	s.mu.Lock()
	defer s.mu.Unlock()
	pods := s.resources["pods"]
	o := pods.objects[objectKey(ns, name)]
	if o == nil {
		return errNotFound(&pods.typ, name)
	}
	if node == "" {
		return apierr.Invalid("Binding", "", name, []apierr.FieldError{apierr.RequiredValue("target.name", "")})
	}
	obj := mustDecode(o.raw)
	spec, status := jsonobj.Map(obj["spec"]), jsonobj.Map(obj["status"])
	if cur := jsonobj.Str(spec, "nodeName"); cur != "" {
		return errConflict(bindingType, name, fmt.Sprintf("pod %s is already assigned to node %q", name, cur))
	}
	if o.deleting {
		return errConflict(bindingType, name, fmt.Sprintf("pod %s is being deleted, cannot be assigned to a host", name))
	}
	spec["nodeName"] = node
	if status == nil {
		status = map[string]any{}
		obj["status"] = status
	}
	var conds []any
	for _, c := range jsonobj.ListAt(status, "conditions") {
		if jsonobj.Str(jsonobj.Map(c), "type") != "PodScheduled" {
			conds = append(conds, c)
		}
	}
	status["conditions"] = append(conds, map[string]any{"type": "PodScheduled", "status": "True", "lastProbeTime": nil,
		"lastTransitionTime": time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)})
	_, _, st := s.updateLocked(pods, ns, name, obj, updateSystem, writeOptions{})
	return st
}

func (s *Server) createBinding(w http.ResponseWriter, r *http.Request, ri *reqInfo, obj map[string]any) {
	writeCreated(w, s.bind(ri.namespace, "", obj))
}

// ---- eviction ----

func (s *Server) handleEviction(w http.ResponseWriter, r *http.Request, ri *reqInfo) {
	ev, st := readObject(r, &resource{typ: ResourceType{Group: "policy", Version: "v1", Kind: "Eviction"}})
	if st != nil {
		writeStatus(w, st)
		return
	}
	var opts deleteOptions
	if d := jsonobj.Map(ev["deleteOptions"]); d != nil {
		b, _ := json.Marshal(d)
		json.Unmarshal(b, &opts)
	}
	// No PodDisruptionBudgets are served: every eviction is allowed.
	s.mu.Lock()
	_, _, st = s.deleteLocked(ri.res, ri.namespace, ri.name, opts, dryRun(r) || contains(opts.DryRun, "All"))
	s.mu.Unlock()
	if st == nil {
		s.notifyChange()
	}
	writeCreated(w, st)
}

func (s *Server) createRulesReview(w http.ResponseWriter, r *http.Request, ri *reqInfo, obj map[string]any) {
	star := []any{"*"}
	obj["status"] = map[string]any{
		"resourceRules": []any{
			map[string]any{"verbs": star, "apiGroups": star, "resources": star},
		},
		"nonResourceRules": []any{map[string]any{"verbs": star, "nonResourceURLs": star}},
		"incomplete":       false,
	}
	if obj["metadata"] == nil {
		obj["metadata"] = map[string]any{}
	}
	if obj["spec"] == nil {
		obj["spec"] = map[string]any{}
	}
	writeBody(w, outputOf(w), http.StatusCreated, mustJSON(obj))
}

// handleCreateOnly serves a create-only resource.
func (s *Server) handleCreateOnly(w http.ResponseWriter, r *http.Request, ri *reqInfo) {
	if ri.verb != VerbCreate {
		writeStatus(w, apierr.MethodNotAllowed())
		return
	}
	obj, st := readObject(r, ri.res)
	if st != nil {
		writeStatus(w, st)
		return
	}
	if st := checkType(&ri.res.typ, obj); st != nil {
		writeStatus(w, st)
		return
	}
	ri.res.typ.createOnly(s, w, r, ri, obj)
}

// reviewEcho answers a create of a review apitest has no answer of its own for (token and
// subject access reviews): what was sent, with empty metadata and status if it had none.
func (s *Server) reviewEcho(w http.ResponseWriter, r *http.Request, ri *reqInfo, obj map[string]any) {
	for _, k := range []string{"metadata", "status"} {
		if obj[k] == nil {
			obj[k] = map[string]any{}
		}
	}
	writeBody(w, outputOf(w), http.StatusCreated, mustJSON(obj))
}
