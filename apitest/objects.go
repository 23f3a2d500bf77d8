package apitest

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/meta"
)

// Object is a Kubernetes object as JSON (what the server stores and returns). The Go
// helpers of Server return it; Into decodes it into a typed struct.
type Object map[string]any

func (o Object) meta() map[string]any {
	m, _ := o["metadata"].(map[string]any)
	return m
}

// Name returns metadata.name.
func (o Object) Name() string { return jsonobj.Str(o.meta(), "name") }

// Namespace returns metadata.namespace.
func (o Object) Namespace() string { return jsonobj.Str(o.meta(), "namespace") }

// UID returns metadata.uid.
func (o Object) UID() string { return jsonobj.Str(o.meta(), "uid") }

// ResourceVersion returns metadata.resourceVersion.
func (o Object) ResourceVersion() string { return jsonobj.Str(o.meta(), "resourceVersion") }

// Labels returns metadata.labels (nil if none).
func (o Object) Labels() map[string]string {
	l, _ := o.meta()["labels"].(map[string]any)
	if l == nil {
		return nil
	}
	out := make(map[string]string, len(l))
	for k, v := range l {
		out[k], _ = v.(string)
	}
	return out
}

// Generation returns metadata.generation (0 if unset).
func (o Object) Generation() int64 {
	n, _ := strconv.ParseInt(fmt.Sprint(o.meta()["generation"]), 10, 64)
	return n
}

// Into decodes the object into v (a pointer to a struct embedding meta.TypeMeta and
// ObjectMeta, for example).
func (o Object) Into(v any) error {
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func toObject(raw []byte) Object { return Object(mustDecode(raw)) }

// toMap turns any JSON-marshallable value (a struct, a map, Object, []byte or
// json.RawMessage holding JSON) into a fresh map.
func toMap(v any) (map[string]any, error) {
	var b []byte
	switch x := v.(type) {
	case []byte:
		b = x
	case json.RawMessage:
		b = x
	case string:
		b = []byte(x)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("apitest: object does not encode: %w", err)
		}
	}
	m, err := jsonobj.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("apitest: object is not JSON: %w", err)
	}
	if m == nil {
		return nil, fmt.Errorf("apitest: object is null")
	}
	return m, nil
}

func (s *Server) resolve(resource string) (*resource, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookupLocked(resource)
	if err == nil && r == nil {
		err = fmt.Errorf("apitest: a resource name is required")
	}
	return r, err
}

func statusErr(st *meta.Status) error {
	if st == nil {
		return nil
	}
	return st
}

// Create stores obj as a new object of resource ("configmaps", "cm", "deployments.apps",
// "widgets.example.com"), exactly as a POST would: the server sets uid, creationTimestamp,
// resourceVersion (and generation), and watchers see an ADDED event. The namespace comes
// from metadata.namespace ("default" if unset, as kubectl would send it). Errors are
// *meta.Status values as the API returns them.
func (s *Server) Create(resource string, obj any) (Object, error) {
	r, err := s.resolve(resource)
	if err != nil {
		return nil, err
	}
	m, err := toMap(obj)
	if err != nil {
		return nil, err
	}
	ns := ""
	if r.typ.Namespaced && jsonobj.Str(jsonobj.Meta(m), "namespace") == "" {
		ns = "default"
	}
	s.mu.Lock()
	o, st := s.createLocked(r, ns, m, goWrite())
	s.mu.Unlock()
	if st != nil {
		return nil, st
	}
	return toObject(o.raw), nil
}

// Get returns the object namespace/name of resource (namespace "" for cluster-scoped).
func (s *Server) Get(resource, namespace, name string) (Object, error) {
	r, err := s.resolve(resource)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	o := r.objects[objectKey(namespace, name)]
	s.mu.Unlock()
	if o == nil {
		return nil, errNotFound(&r.typ, name)
	}
	return toObject(o.raw), nil
}

// List returns the objects of resource in namespace ("" for all), sorted by namespace and
// name, and the resourceVersion of that state.
func (s *Server) List(resource, namespace string) ([]Object, string, error) {
	r, err := s.resolve(resource)
	if err != nil {
		return nil, "", err
	}
	s.mu.Lock()
	objs := r.snapshot(s.rv)
	rv := s.rv
	s.mu.Unlock()
	var out []Object
	for _, o := range objs {
		if namespace == "" || o.namespace == namespace {
			out = append(out, toObject(o.raw))
		}
	}
	return out, strconv.FormatUint(rv, 10), nil
}

// Update replaces an object as a PUT would (metadata.resourceVersion, if set, must be
// current: otherwise a 409 Conflict). With a status subresource the status is kept.
func (s *Server) Update(resource string, obj any) (Object, error) {
	return s.update(resource, obj, updateMain)
}

// UpdateStatus replaces the status of an object as a PUT of /status would.
func (s *Server) UpdateStatus(resource string, obj any) (Object, error) {
	return s.update(resource, obj, updateStatus)
}

func (s *Server) update(resource string, obj any, mode updateMode) (Object, error) {
	r, err := s.resolve(resource)
	if err != nil {
		return nil, err
	}
	m, err := toMap(obj)
	if err != nil {
		return nil, err
	}
	meta := jsonobj.Meta(m)
	s.mu.Lock()
	o, _, st := s.updateLocked(r, jsonobj.Str(meta, "namespace"), jsonobj.Str(meta, "name"), m, mode, goWrite())
	s.mu.Unlock()
	if st != nil {
		return nil, st
	}
	return toObject(o.raw), nil
}

// Mutate reads the object, lets fn change it and writes it back under the server's lock, so
// no conflict is possible. With a status subresource a changed status is written by a second
// update of /status (two events). fn must not call the Server.
func (s *Server) Mutate(resource, namespace, name string, fn func(Object)) (Object, error) {
	r, err := s.resolve(resource)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := r.objects[objectKey(namespace, name)]
	if cur == nil {
		return nil, errNotFound(&r.typ, name)
	}
	obj := toObject(cur.raw)
	fn(obj)
	// The update of the main resource keeps the stored status (and may rewrite obj), so the
	// status fn wants is taken first.
	want, err := toMap(map[string]any(obj))
	if err != nil {
		return nil, err
	}
	o, _, st := s.updateLocked(r, namespace, name, map[string]any(obj), updateMain, goWrite())
	if st != nil {
		return nil, st
	}
	if _, stillThere := r.objects[objectKey(namespace, name)]; !stillThere {
		// The update removed the last finalizer of an object being deleted, which is now
		// gone: its last state is the answer, as for the PUT that did it; there is no status
		// left to write.
		return toObject(o.raw), nil
	}
	if status, ok := want["status"]; ok && r.typ.StatusSubresource {
		next := toObject(o.raw)
		next["status"] = status
		o2, _, st := s.updateLocked(r, namespace, name, next, updateStatus, goWrite())
		if st != nil {
			return nil, st
		}
		o = o2
	}
	return toObject(o.raw), nil
}

// Patch applies a patch as a PATCH request would.
func (s *Server) Patch(resource, namespace, name string, pt apiclient.PatchType, patch []byte) (Object, error) {
	r, err := s.resolve(resource)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	o, _, st := s.patchLocked(r, namespace, name, pt, patch, updateMain, goWrite())
	s.mu.Unlock()
	if st != nil {
		return nil, st
	}
	return toObject(o.raw), nil
}

// Delete deletes an object as a DELETE would: an object with finalizers only gets its
// deletionTimestamp (and is removed when its last finalizer is removed). With simulated
// nodes (StartNodes), so does a Pod bound to a node that has not finished, for its
// terminationGracePeriodSeconds (default 30 s), as the kube-apiserver's pod strategy: its
// kubelet deletes it once its containers have stopped. Without simulated nodes there is no
// kubelet to finish it, so a Pod is deleted at once.
func (s *Server) Delete(resource, namespace, name string) error {
	return s.DeleteWithOptions(resource, namespace, name, apiclient.DeleteOptions{})
}

// DeleteWithOptions is Delete with a DELETE's options, as the kube-apiserver honours them:
// GracePeriodSeconds overrides a bound Pod's terminationGracePeriodSeconds (0 deletes it
// at once; a shorter period brings an earlier graceful deletion closer, never later),
// Preconditions must hold (else a 409 Conflict), and DryRun deletes nothing.
func (s *Server) DeleteWithOptions(resource, namespace, name string, opts apiclient.DeleteOptions) error {
	r, err := s.resolve(resource)
	if err != nil {
		return err
	}
	do := deleteOptions{GracePeriodSeconds: opts.GracePeriodSeconds, DryRun: opts.DryRun}
	if p := opts.Preconditions; p != nil {
		do.Preconditions = &struct {
			UID             *string `json:"uid"`
			ResourceVersion *string `json:"resourceVersion"`
		}{p.UID, p.ResourceVersion}
	}
	if pp := opts.PropagationPolicy; pp != nil {
		v := string(*pp)
		do.PropagationPolicy = &v
	}
	s.mu.Lock()
	_, _, st := s.deleteLocked(r, namespace, name, do, len(opts.DryRun) > 0)
	s.mu.Unlock()
	return statusErr(st)
}

// ResourceVersion returns the server's current resourceVersion.
func (s *Server) ResourceVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strconv.FormatUint(s.rv, 10)
}
