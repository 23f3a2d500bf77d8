package apitest

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/jsonpatch"
	"github.com/informerkit/informerkit/apitest/internal/negotiation"
	"github.com/informerkit/informerkit/meta"
)

// PATCH, in its four media types: JSON patch and JSON merge patch (internal/jsonpatch),
// strategic merge patch (smp.go) and server-side apply (apply.go).

// patchLocked patches the object ns/name of r through mode's endpoint. created reports
// that the patch (an apply) created the object.
func (s *Server) patchLocked(r *resource, ns, name string, pt apiclient.PatchType, patch []byte, mode updateMode, wo writeOptions) (*storedObj, bool, *meta.Status) {
	switch pt {
	case apiclient.JSONPatchType, apiclient.MergePatchType, apiclient.ApplyPatchType:
	case apiclient.StrategicMergePatchType:
		if !r.builtin() {
			return nil, false, errPatchType(r)
		}
	default:
		return nil, false, errPatchType(r)
	}
	if st := validatePatchOptions(pt, wo); st != nil {
		return nil, false, st
	}
	if s.rel.checksPatchBodies() {
		if st := validatePatchBody(pt, patch); st != nil {
			return nil, false, st
		}
	}
	if pt == apiclient.ApplyPatchType {
		return s.applyLocked(r, ns, name, patch, mode, wo)
	}
	old := r.objects[objectKey(ns, name)]
	if old == nil {
		return nil, false, errNotFound(&r.typ, name)
	}
	var doc map[string]any
	if pt == apiclient.StrategicMergePatchType {
		var st *meta.Status
		if doc, st = strategicPatch(r, mustDecode(old.raw), patch); st != nil {
			return nil, false, st
		}
	} else {
		var err error
		if doc, err = applyPatch(mustDecode(old.raw), pt, patch); err != nil {
			var failed *jsonpatch.TestFailedError
			if errors.As(err, &failed) {
				return nil, false, apierr.Invalid(r.typ.Kind, r.typ.Group, name, []apierr.FieldError{{Type: "FieldValueInvalid", Message: err.Error()}})
			}
			return nil, false, apierr.BadRequest(err.Error())
		}
	}
	o, _, st := s.updateLocked(r, ns, name, doc, mode, wo)
	return o, false, st
}

// applyPatch applies a JSON patch or a JSON merge patch (pt) to the JSON document doc.
func applyPatch(doc map[string]any, pt apiclient.PatchType, patch []byte) (map[string]any, error) {
	switch pt {
	case apiclient.MergePatchType:
		return jsonpatch.Merge(doc, patch)
	case apiclient.JSONPatchType:
		return jsonpatch.Apply(doc, patch)
	}
	return nil, fmt.Errorf("unsupported patch type %q", pt)
}

// validatePatchBody is kube-apiserver 1.37's check of a patch body, before the object is
// read (the server records every patch in its audit log as JSON): an apply must be YAML, any
// other patch JSON. 1.36 finds the same errors later, with the decoders' own messages.
func validatePatchBody(pt apiclient.PatchType, patch []byte) *meta.Status {
	if pt == apiclient.ApplyPatchType {
		if err := negotiation.CheckYAML(patch); err != nil {
			return apierr.BadRequest("error encoding patch: " + err.Error())
		}
		return nil
	}
	if !json.Valid(patch) {
		return apierr.BadRequest("invalid JSON patch")
	}
	return nil
}

// validatePatchOptions checks the PatchOptions of a patch of type pt.
func validatePatchOptions(pt apiclient.PatchType, wo writeOptions) *meta.Status {
	var errs []apierr.FieldError
	if pt == apiclient.ApplyPatchType {
		if wo.fieldManagerParam == "" {
			errs = append(errs, apierr.RequiredValue("fieldManager", "is required for apply patch"))
		}
	} else if wo.forceSet {
		errs = append(errs, apierr.ForbiddenValue("force", "may not be specified for non-apply patch"))
	}
	if len(errs) > 0 {
		return apierr.Invalid("PatchOptions", "meta.k8s.io", "", errs)
	}
	return nil
}
