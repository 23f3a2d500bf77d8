package apitest

import (
	"fmt"
	"net/http"
	"unicode"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/fieldpath"
	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
	"github.com/informerkit/informerkit/apitest/internal/ssa"
	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/meta"
)

// This file keeps metadata.managedFields as the kube-apiserver's field manager does
// (internal/ssa): creates, updates and patches record their manager's fields with
// operation Update, server-side apply (apply.go) records operation Apply.

// goManager is the field manager of the Go helpers' writes (Create, Update, Mutate,
// Patch): as if a client whose user agent is "apitest" had sent them.
const goManager = "apitest"

// mergeType is the merge engines' description of the resource's objects: kubeschema's
// type for a built-in kind, the registered OpenAPI schema (or none) for others.
func (r *resource) mergeType() mergeschema.Type {
	r.mergeOnce.Do(func() {
		if t := r.schemaType(); t != nil {
			r.merge = mergeschema.ForKubeType(t)
			return
		}
		r.merge = mergeschema.FromOpenAPI(r.typ.OpenAPIV3Schema)
	})
	return r.merge
}

// resetFields are the fields a write through sub ("" or "status") does not change,
// because the registry strategy resets them: nobody owns them there.
func (r *resource) resetFields(sub string) *fieldpath.Set {
	t := &r.typ
	switch sub {
	case "":
		if t.StatusSubresource {
			return fieldpath.NewSet(fieldpath.MakePath("status"))
		}
	case "status":
		if t.custom {
			return fieldpath.NewSet(fieldpath.MakePath("metadata"), fieldpath.MakePath("spec"))
		}
		s := fieldpath.NewSet(fieldpath.MakePath("spec"))
		switch t.kindKey() {
		case "v1/Pod":
			s.Insert(fieldpath.MakePath("metadata", "deletionTimestamp"))
			s.Insert(fieldpath.MakePath("metadata", "ownerReferences"))
		case "apps/v1/Deployment":
			s.Insert(fieldpath.MakePath("metadata", "labels"))
		}
		return s
	case "approval": // the CSR approval strategy's
		return fieldpath.NewSet(fieldpath.MakePath("spec"), fieldpath.MakePath("status", "certificate"))
	}
	return nil
}

// fieldManager returns the field manager of the resource's endpoint sub. s.mu is held.
func (r *resource) fieldManager(sub string) *ssa.FieldManager {
	if fm := r.managers[sub]; fm != nil {
		return fm
	}
	t := &r.typ
	fm := &ssa.FieldManager{
		Schema:      r.mergeType(),
		APIVersion:  t.GroupVersion().String(),
		Kind:        t.Kind,
		Subresource: sub,
		Reset:       r.resetFields(sub),
		Empty:       r.emptyObject,
	}
	if r.managers == nil {
		r.managers = map[string]*ssa.FieldManager{}
	}
	r.managers[sub] = fm
	return fm
}

// emptyObject is the object a create starts from, as the kube-apiserver's field manager
// sees it: the Go type's zero value (its non-omitempty fields present), or apiVersion and
// kind for a custom resource.
func (r *resource) emptyObject() map[string]any {
	out := map[string]any{"apiVersion": r.typ.GroupVersion().String(), "kind": r.typ.Kind}
	if t := r.schemaType(); t != nil {
		if m, err := kubeproto.Decode(t, nil); err == nil {
			for k, v := range m {
				out[k] = v
			}
		}
	}
	return out
}

func subOf(mode updateMode) string {
	switch mode {
	case updateStatus:
		return "status"
	case updateApproval:
		return "approval"
	}
	return ""
}

// trackLocked records the write of obj (live nil: a create) by wo's manager in obj's
// metadata.managedFields. Writes that are not tracked (the server's own: bindings, scale)
// keep the managedFields obj carries; applies have computed theirs.
func (s *Server) trackLocked(r *resource, sub string, live, obj map[string]any, wo writeOptions) {
	if !wo.track || wo.applied {
		return
	}
	r.fieldManager(sub).Update(live, obj, wo.manager)
}

// goWrite are the options of the Go helpers' writes.
func goWrite() writeOptions {
	return writeOptions{track: true, manager: goManager, fieldManagerParam: goManager}
}

// requestManager reads the fieldManager parameter (validated as the kube-apiserver does:
// at most 128 bytes, all printable) into wo; without one the manager is the user agent's
// product.
func requestManager(r *http.Request, wo *writeOptions, optionsKind string) *meta.Status {
	fm := r.URL.Query().Get("fieldManager")
	var errs []apierr.FieldError
	if len(fm) > 128 {
		errs = append(errs, apierr.FieldError{Type: "FieldValueTooLong", Field: "fieldManager", Message: "Too long: may not be more than 128 bytes"})
	}
	for i, c := range fm {
		if !unicode.IsPrint(c) {
			errs = append(errs, apierr.InvalidValue("fieldManager", fm, fmt.Sprintf("invalid character %#U (at position %d)", c, i)))
		}
	}
	if len(errs) > 0 {
		return apierr.Invalid(optionsKind, "meta.k8s.io", "", errs)
	}
	wo.track = true
	wo.fieldManagerParam = fm
	wo.manager = fm
	if fm == "" {
		wo.manager = ssa.ManagerFromUserAgent(r.UserAgent())
	}
	return nil
}
