package apitest

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest/internal/admission"
	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/crschema"
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/meta"
)

// This file holds the write path shared by HTTP requests and the Go helpers: every change
// goes through commitLocked, which assigns the resourceVersion and records the event.

// commitLocked stores a new state of one object and appends the event. prev is the state
// before (nil for Added). For Deleted the object is removed and obj is the last state the
// event carries (nil: prev's content).
func (s *Server) commitLocked(r *resource, typ apiclient.EventType, obj map[string]any, prev *storedObj) (*storedObj, error) {
	rv := s.rv + 1
	var o *storedObj
	var err error
	if obj == nil && prev != nil {
		o, err = newStored(mustDecode(prev.raw), rv)
	} else {
		o, err = newStored(obj, rv)
	}
	if err != nil {
		return nil, err
	}
	s.rv = rv
	switch typ {
	case apiclient.Added:
		r.objects[o.key] = o
		r.sorted = nil
	case apiclient.Modified:
		r.objects[o.key] = o
	case apiclient.Deleted:
		delete(r.objects, o.key)
		r.sorted = nil
	}
	r.append(&event{typ: typ, rv: rv, obj: o, prev: prev, frame: frameFor(typ, o.raw)})
	s.notifyChangeLocked()
	switch {
	case r == s.crdRes:
		s.crdCommittedLocked(typ, o)
	case r.terminating && typ == apiclient.Deleted:
		s.maybeFinishCRDLocked(r)
	}
	return o, nil
}

func newUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func randomSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	var b [5]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:])
}

func nowString() string {
	return time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
}

// checkTypeLocked fills in or checks apiVersion and kind.
func checkType(t *ResourceType, obj map[string]any) *meta.Status {
	gv := t.GroupVersion().String()
	av, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if (av != "" && av != gv) || (kind != "" && kind != t.Kind) {
		return apierr.BadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s) or the kind (%s) is not %s", av, gv, kind, t.Kind))
	}
	obj["apiVersion"] = gv
	obj["kind"] = t.Kind
	return nil
}

// checkNamespace reconciles metadata.namespace with the request's namespace.
func checkNamespace(t *ResourceType, meta map[string]any, ns string) *meta.Status {
	if !t.Namespaced {
		delete(meta, "namespace")
		return nil
	}
	got := jsonobj.Str(meta, "namespace")
	if got == "" {
		if ns == "" {
			return apierr.BadRequest("the namespace of the object is empty and no namespace was sent on the request")
		}
		meta["namespace"] = ns
		return nil
	}
	if ns != "" && got != ns {
		return apierr.BadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// admitLocked runs the admission of a create (old nil) or update of obj through the
// endpoint sub ("" or "status"): decoding and defaults, the field manager's record of the
// write, then the strategy and validation (internal/admission). Custom resources are
// pruned, defaulted and validated by their CRD's schema (internal/crschema) and its CEL
// rules (celrules.go), then recorded. It returns the object to store; the warnings go to wo.
func (s *Server) admitLocked(r *resource, sub string, obj, old map[string]any, wo writeOptions) (map[string]any, *meta.Status) {
	if r == s.crdRes && sub == "" {
		if st := admitCRD(obj, old); st != nil {
			return nil, st
		}
	}
	if !r.builtin() {
		if schema := r.typ.OpenAPIV3Schema; r.typ.custom && schema != nil {
			// As the apiextensions server: prune, default, then validate.
			if st := unknownFields(r, obj, crschema.Prune(obj, schema), wo); st != nil {
				return nil, st
			}
			crschema.Default(obj, schema)
			errs := s.celLocked(r, sub, obj, old, crschema.Validate(obj, schema), wo)
			if len(errs) > 0 {
				return nil, apierr.Invalid(r.typ.Kind, r.typ.Group, jsonobj.StrAt(obj, "metadata", "name"), errs)
			}
		}
		s.trackLocked(r, sub, old, obj, wo)
		return obj, nil
	}
	obj, warnings, st := admission.Decode(r.typ.gvk(), obj, wo.fieldValidation)
	if st != nil {
		return nil, st
	}
	s.trackLocked(r, sub, old, obj, wo)
	if obj, st = s.admission.Admit(r.typ.gvk(), obj, old); st != nil {
		return nil, st
	}
	wo.warn(warnings)
	return obj, nil
}

// unknownFields applies fieldValidation to the fields pruning removed from a custom
// resource, as the kube-apiserver's decoder does: a 400 with Strict, warnings with Warn
// (the default), nothing with Ignore.
func unknownFields(r *resource, obj map[string]any, pruned []string, wo writeOptions) *meta.Status {
	if len(pruned) == 0 || wo.fieldValidation == "Ignore" {
		return nil
	}
	msgs := make([]string, len(pruned))
	for i, p := range pruned {
		msgs[i] = fmt.Sprintf("unknown field %q", p)
	}
	if wo.fieldValidation == "Strict" {
		apiVersion := jsonobj.Str(obj, "apiVersion")
		version := apiVersion[strings.LastIndex(apiVersion, "/")+1:]
		return apierr.BadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: strict decoding error: %s",
			r.typ.Kind, version, r.typ.Kind, strings.Join(msgs, ", ")))
	}
	wo.warn(msgs)
	return nil
}

// createLocked validates obj and stores it as a new object.
func (s *Server) createLocked(r *resource, ns string, obj map[string]any, wo writeOptions) (*storedObj, *meta.Status) {
	t := &r.typ
	if r.removed {
		return nil, apierr.NoResource() // its CRD went while the request was on its way
	}
	if st := checkType(t, obj); st != nil {
		return nil, st
	}
	md := jsonobj.Meta(obj)
	if st := checkNamespace(t, md, ns); st != nil {
		return nil, st
	}
	ns = jsonobj.Str(md, "namespace")
	clientRV := jsonobj.Str(md, "resourceVersion")
	if jsonobj.Str(md, "name") == "" {
		if gen := jsonobj.Str(md, "generateName"); gen != "" {
			md["name"] = gen + randomSuffix()
		} else {
			return nil, apierr.Invalid(t.Kind, t.Group, "", []apierr.FieldError{apierr.RequiredValue("metadata.name", "name or generateName is required")})
		}
	}
	name := jsonobj.Str(md, "name")
	if r.terminating {
		return nil, refuseTerminatingCreate(r, name)
	}
	if errs := admission.ValidateObjectMeta(md, t.names); len(errs) > 0 {
		return nil, apierr.Invalid(t.Kind, t.Group, name, errs)
	}

	obj, st := s.admitLocked(r, "", obj, nil, wo)
	if st != nil {
		return nil, st
	}
	md = jsonobj.Meta(obj)
	if t.Namespaced {
		if _, ok := s.resources["namespaces"].objects[ns]; !ok {
			return nil, errNamespaceNotFound(ns)
		}
	}
	// As the kube-apiserver's storage: a resourceVersion set by the client is refused (500)
	// only by etcd's create, after validation, and a dry run never gets there.
	if clientRV != "" && !wo.dryRun {
		return nil, apierr.New(http.StatusInternalServerError, meta.StatusReasonUnknown, "resourceVersion should not be set on objects to be created")
	}
	if _, exists := r.objects[objectKey(ns, name)]; exists {
		return nil, errAlreadyExists(t, name)
	}
	md["uid"] = newUID()
	md["creationTimestamp"] = nowString()
	delete(md, "deletionTimestamp")
	delete(md, "deletionGracePeriodSeconds")
	if t.generation {
		md["generation"] = json.Number("1")
	} else {
		delete(md, "generation")
	}
	if wo.dryRun {
		o, err := newStored(obj, s.rv)
		if err != nil {
			return nil, apierr.Internal(err.Error())
		}
		o.raw = withRV(o.raw, clientRV) // the object as it would be stored, the client's resourceVersion kept
		return o, nil
	}
	o, err := s.commitLocked(r, apiclient.Added, obj, nil)
	if err != nil {
		return nil, apierr.Internal(err.Error())
	}
	return o, nil
}

// withRV returns raw with its resourceVersion set to rv (removed if rv is empty).
func withRV(raw []byte, rv string) []byte {
	m := mustDecode(raw)
	if rv == "" {
		delete(jsonobj.Meta(m), "resourceVersion")
	} else {
		jsonobj.Meta(m)["resourceVersion"] = rv
	}
	b, _ := json.Marshal(m)
	return b
}

// updateMode says which part of an object an update may change.
type updateMode int

const (
	updateMain     updateMode = iota // PUT/PATCH of the object: status is kept with a status subresource
	updateStatus                     // PUT/PATCH of /status: only status changes
	updateSystem                     // a write of the server's own (pods/binding): spec and status, no new generation
	updateApproval                   // PUT/PATCH of certificatesigningrequests/approval: the conditions (approval.go)
)

// updateLocked replaces the object ns/name with obj (after checks and the system fields).
func (s *Server) updateLocked(r *resource, ns, name string, obj map[string]any, mode updateMode, wo writeOptions) (*storedObj, bool, *meta.Status) {
	t := &r.typ
	if st := checkType(t, obj); st != nil {
		return nil, false, st
	}
	meta := jsonobj.Meta(obj)
	if st := checkNamespace(t, meta, ns); st != nil {
		return nil, false, st
	}
	ns = jsonobj.Str(meta, "namespace")
	if got := jsonobj.Str(meta, "name"); got != name {
		return nil, false, apierr.BadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", got, name))
	}
	old, exists := r.objects[objectKey(ns, name)]
	if !exists {
		if t.allowCreateOnUpdate && mode == updateMain {
			delete(meta, "resourceVersion")
			o, st := s.createLocked(r, ns, obj, wo)
			return o, true, st
		}
		return nil, false, errNotFound(t, name)
	}
	if rv := jsonobj.Str(meta, "resourceVersion"); rv != "" && rv != strconv.FormatUint(old.rv, 10) {
		return nil, false, errConflict(t, name, conflictModified)
	}
	if uid := jsonobj.Str(meta, "uid"); uid != "" && uid != old.uid {
		return nil, false, errConflict(t, name, fmt.Sprintf("Precondition failed: UID in precondition: %s, UID in object meta: %s", uid, old.uid))
	}
	prev := mustDecode(old.raw)
	obj, st := s.admitLocked(r, subOf(mode), obj, prev, wo)
	if st != nil {
		return nil, false, st
	}
	if mode == updateStatus {
		if obj, st = statusUpdate(t, obj, prev, old); st != nil {
			return nil, false, st
		}
	} else if mode == updateApproval {
		if obj, st = approvalUpdate(t, obj, prev, old); st != nil {
			return nil, false, st
		}
	} else if st := keepSystemFields(t, obj, prev, mode, old.deleting); st != nil {
		return nil, false, st
	}
	meta = jsonobj.Meta(obj)
	meta["resourceVersion"] = strconv.FormatUint(old.rv, 10)
	if b, err := json.Marshal(obj); err == nil && bytes.Equal(b, old.raw) {
		return old, false, nil // nothing changed: no new resourceVersion, no event
	}
	if wo.dryRun {
		o, err := newStored(obj, old.rv)
		if err != nil {
			return nil, false, apierr.Internal(err.Error())
		}
		return o, false, nil
	}
	if old.deleting && len(jsonobj.Strings(meta["finalizers"])) == 0 {
		// The last finalizer is gone: as the kube-apiserver, remove the object at once. The
		// DELETED event carries the stored state (still with its finalizers) at a new
		// resourceVersion; the response is the updated object at the old one.
		if _, err := s.commitLocked(r, apiclient.Deleted, nil, old); err != nil {
			return nil, false, apierr.Internal(err.Error())
		}
		o, err := newStored(obj, old.rv)
		if err != nil {
			return nil, false, apierr.Internal(err.Error())
		}
		return o, false, nil
	}
	o, err := s.commitLocked(r, apiclient.Modified, obj, old)
	if err != nil {
		return nil, false, apierr.Internal(err.Error())
	}
	return o, false, nil
}

// statusUpdate is the object an update of /status stores: the stored object old (prev
// decoded) with obj's status and managedFields (the registry strategies keep them), the
// metadata changes the kind's status strategy keeps (admission.StatusMetadata: most
// built-in kinds keep label and annotation changes), and what the status strategy keeps
// of prev.
func statusUpdate(t *ResourceType, obj, prev map[string]any, old *storedObj) (map[string]any, *meta.Status) {
	next := mustDecode(old.raw)
	if st, ok := obj["status"]; ok {
		next["status"] = st
	} else {
		delete(next, "status")
	}
	admission.PrepareForStatusUpdate(t.gvk(), next, prev)
	md, nextMeta := jsonobj.Meta(obj), jsonobj.Meta(next)
	for _, k := range append(admission.StatusMetadata(t.gvk(), t.custom), "managedFields") {
		if v, ok := md[k]; ok {
			nextMeta[k] = v
		} else {
			delete(nextMeta, k)
		}
	}
	var errs []apierr.FieldError
	if t.kindKey() == "certificates.k8s.io/v1/CertificateSigningRequest" {
		errs = csrStatusUpdate(next, prev)
	}
	errs = append(errs, admission.ValidateObjectMetaUpdate(nextMeta, jsonobj.Meta(prev), old.deleting, t.names)...)
	if len(errs) > 0 {
		return nil, apierr.Invalid(t.Kind, t.Group, jsonobj.Str(nextMeta, "name"), errs)
	}
	return next, nil
}

// keepSystemFields sets in obj, an update of the main resource (or the server's own write,
// updateSystem), what only the server changes: the system metadata, the status behind a
// status subresource, and the next generation when the object's intent changed. It
// validates the metadata of the update.
func keepSystemFields(t *ResourceType, obj, prev map[string]any, mode updateMode, deleting bool) *meta.Status {
	md, prevMeta := jsonobj.Meta(obj), jsonobj.Meta(prev)
	for _, k := range []string{"uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"} {
		if v, ok := prevMeta[k]; ok {
			md[k] = v
		} else {
			delete(md, k)
		}
	}
	if t.StatusSubresource && mode != updateSystem {
		if st, ok := prev["status"]; ok {
			obj["status"] = st
		} else {
			delete(obj, "status")
		}
	}
	if errs := admission.ValidateObjectMetaUpdate(md, prevMeta, deleting, t.names); len(errs) > 0 {
		return apierr.Invalid(t.Kind, t.Group, jsonobj.Str(md, "name"), errs)
	}
	// The deployment strategy also counts annotations: they are copied to the
	// deployment's replica sets.
	annotated := t.kindKey() == "apps/v1/Deployment" && !jsonobj.Equal(prevMeta["annotations"], md["annotations"])
	if t.generation && mode != updateSystem && (annotated || specChanged(prev, obj, t.StatusSubresource)) {
		g, _ := strconv.ParseInt(fmt.Sprint(prevMeta["generation"]), 10, 64)
		md["generation"] = json.Number(strconv.FormatInt(g+1, 10))
	}
	return nil
}

// specChanged reports whether a and b differ outside metadata (and status, withStatus).
func specChanged(a, b map[string]any, withStatus bool) bool {
	strip := func(m map[string]any) []byte {
		c := make(map[string]any, len(m))
		for k, v := range m {
			if k == "metadata" || k == "apiVersion" || k == "kind" || (withStatus && k == "status") {
				continue
			}
			c[k] = v
		}
		b, _ := json.Marshal(c)
		return b
	}
	return !bytes.Equal(strip(a), strip(b))
}

// deleteOptions is the part of DeleteOptions the server honours.
type deleteOptions struct {
	Preconditions *struct {
		UID             *string `json:"uid"`
		ResourceVersion *string `json:"resourceVersion"`
	} `json:"preconditions"`
	GracePeriodSeconds *int64   `json:"gracePeriodSeconds"`
	PropagationPolicy  *string  `json:"propagationPolicy"`
	OrphanDependents   *bool    `json:"orphanDependents"`
	DryRun             []string `json:"dryRun"`
}

// deleteLocked deletes ns/name: with finalizers it only sets deletionTimestamp (deleted
// false), as for a Pod deleted gracefully on a simulated node (podGraceLocked); otherwise
// the object is removed (deleted true).
func (s *Server) deleteLocked(r *resource, ns, name string, opts deleteOptions, dryRun bool) (*storedObj, bool, *meta.Status) {
	t := &r.typ
	if _, st := deleteFinalizers(nil, opts); st != nil {
		return nil, false, st // an invalid propagation policy (gc.go), before the lookup
	}
	old, ok := r.objects[objectKey(ns, name)]
	if !ok {
		return nil, false, errNotFound(t, name)
	}
	if p := opts.Preconditions; p != nil {
		if p.UID != nil && *p.UID != old.uid {
			return nil, false, errPrecondition(t, name, fmt.Sprintf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, old.uid))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != strconv.FormatUint(old.rv, 10) {
			return nil, false, errPrecondition(t, name, fmt.Sprintf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%d). The object might have been modified", *p.ResourceVersion, old.rv))
		}
	}
	if grace, ok := s.podGraceLocked(r, old, opts); ok {
		if dryRun {
			return old, false, nil
		}
		return s.deleteGracefullyLocked(r, old, grace)
	}
	if dryRun {
		return old, old.finalizers == 0 && r != s.crdRes, nil
	}
	if r == s.crdRes && !old.deleting {
		o, st := s.crdBeforeDeleteLocked(old)
		return o, false, st
	}
	if o, handled, deleted, st := s.propagationLocked(r, old, opts); handled {
		return o, deleted, st // the finalizers of garbage collection (gc.go)
	}
	if old.finalizers > 0 {
		if old.deleting {
			return old, false, nil
		}
		obj := mustDecode(old.raw)
		meta := jsonobj.Meta(obj)
		meta["deletionTimestamp"] = nowString()
		meta["deletionGracePeriodSeconds"] = json.Number("0")
		if g := jsonobj.Num(meta["generation"]); g > 0 {
			// As the registry's BeforeDelete: setting deletionTimestamp is a change of
			// intent, so objects that have a generation get the next one.
			meta["generation"] = json.Number(strconv.FormatInt(g+1, 10))
		}
		o, err := s.commitLocked(r, apiclient.Modified, obj, old)
		if err != nil {
			return nil, false, apierr.Internal(err.Error())
		}
		return o, false, nil
	}
	if t.Group == "" && t.Plural == "namespaces" {
		// No namespace controller: the namespace's objects go at once, then the namespace.
		for _, other := range s.order {
			if !other.typ.Namespaced {
				continue
			}
			for _, k := range other.sortedKeys() {
				if o := other.objects[k]; o != nil && o.namespace == name {
					s.commitLocked(other, apiclient.Deleted, nil, o)
				}
			}
		}
	}
	o, err := s.commitLocked(r, apiclient.Deleted, nil, old)
	if err != nil {
		return nil, false, apierr.Internal(err.Error())
	}
	return o, true, nil
}

// podGraceLocked returns the grace period of the deletion of a Pod that must be graceful:
// with simulated nodes (StartNodes), a Pod bound to a node and not terminal gets the
// deletion's gracePeriodSeconds, else its spec's terminationGracePeriodSeconds, as the
// kube-apiserver's pod strategy; 0 (or no nodes) deletes it at once.
func (s *Server) podGraceLocked(r *resource, old *storedObj, opts deleteOptions) (int64, bool) {
	if s.nodes == nil || r.typ.Group != "" || r.typ.Plural != "pods" {
		return 0, false
	}
	obj := mustDecode(old.raw)
	spec := jsonobj.Map(obj["spec"])
	if phase := jsonobj.StrAt(obj, "status", "phase"); jsonobj.Str(spec, "nodeName") == "" || phase == "Failed" || phase == "Succeeded" {
		return 0, false
	}
	grace := int64(30)
	if v, ok := spec["terminationGracePeriodSeconds"]; ok {
		grace = jsonobj.Num(v)
	}
	if opts.GracePeriodSeconds != nil {
		grace = *opts.GracePeriodSeconds
	}
	return grace, grace > 0
}

// deleteGracefullyLocked sets a Pod's deletionTimestamp grace seconds ahead (or brings an
// earlier deletion's closer, never later); its kubelet deletes it once it has stopped.
func (s *Server) deleteGracefullyLocked(r *resource, old *storedObj, grace int64) (*storedObj, bool, *meta.Status) {
	obj := mustDecode(old.raw)
	md := jsonobj.Meta(obj)
	deadline := time.Now().Add(time.Duration(grace) * time.Second).UTC().Truncate(time.Second)
	if cur, err := time.Parse(time.RFC3339, jsonobj.Str(md, "deletionTimestamp")); err == nil && !deadline.Before(cur) {
		return old, false, nil
	}
	md["deletionTimestamp"] = deadline.Format(time.RFC3339)
	md["deletionGracePeriodSeconds"] = json.Number(strconv.FormatInt(grace, 10))
	if g := jsonobj.Num(md["generation"]); g > 0 {
		md["generation"] = json.Number(strconv.FormatInt(g+1, 10))
	}
	o, err := s.commitLocked(r, apiclient.Modified, obj, old)
	if err != nil {
		return nil, false, apierr.Internal(err.Error())
	}
	return o, false, nil
}
