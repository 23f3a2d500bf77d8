package apitest

import (
	"context"
	"fmt"
	"slices"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/celrules"
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
)

// This file wires internal/celrules into the writes of custom resources and of
// CustomResourceDefinitions: the x-kubernetes-validations rules of a CRD's schema are
// checked when the CRD is written and evaluated on every create and update of its
// resources (docs/apitest.md, "CEL validation rules").

// celValidator is the resource's compiled rules (nil if its schema has none), compiled
// once per schema: serveCRDLocked resets celOnce when the CRD's spec changes.
func (r *resource) celValidator() *celrules.Validator {
	r.celOnce.Do(func() { r.cel = celrules.New(r.typ.OpenAPIV3Schema) })
	return r.cel
}

// blockingTypes are the schema errors after which the kube-apiserver does not run the
// rules (their values may not have the types the rules expect).
var blockingTypes = []string{"FieldValueNotSupported", "FieldValueRequired", "FieldValueTooLong", "FieldValueTooMany", "FieldValueTypeInvalid"}

// celLocked appends to the schema errors errs of a write of a custom resource the errors of
// its rules, as the kube-apiserver's strategy does: evaluated on the object as it will be
// stored (a /status update keeps the old spec, an update of the main resource the old
// status behind a status subresource), not at all after a blocking schema error.
func (s *Server) celLocked(r *resource, sub string, obj, old map[string]any, errs []apierr.FieldError, wo writeOptions) []apierr.FieldError {
	v := r.celValidator()
	if v == nil {
		return errs
	}
	if slices.ContainsFunc(errs, func(e apierr.FieldError) bool { return slices.Contains(blockingTypes, e.Type) }) {
		return append(errs, apierr.FieldError{Type: "FieldValueInvalid", Field: "<nil>",
			Message: "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"})
	}
	eff := obj
	if old != nil && (sub == "status" || r.typ.StatusSubresource) {
		eff = shallowCopy(obj)
		src, keep := old, "status"
		if sub == "status" {
			eff, src = shallowCopy(old), obj
		}
		if v, ok := src[keep]; ok {
			eff[keep] = v
		} else {
			delete(eff, keep)
		}
	}
	celErrs, warnings := v.Validate(context.Background(), eff, old)
	wo.warn(warnings)
	return append(errs, celErrs...)
}

func shallowCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// crdRuleErrors are the errors of the rules of every version's schema of the
// CustomResourceDefinition obj (an update of old, or a create: old nil). As the
// kube-apiserver converts a CRD whose versions share one schema to its internal form with
// that schema under spec.validation, the errors of such a CRD are at
// spec.validation.openAPIV3Schema..., else at spec.versions[i].schema.openAPIV3Schema....
func crdRuleErrors(obj, old map[string]any) []apierr.FieldError {
	schemas := func(crd map[string]any) (names []string, out []map[string]any) {
		for _, v := range jsonobj.ListAt(crd, "spec", "versions") {
			vm := jsonobj.Map(v)
			names = append(names, jsonobj.Str(vm, "name"))
			out = append(out, jsonobj.Map(jsonobj.Map(vm["schema"])["openAPIV3Schema"]))
		}
		return names, out
	}
	names, schs := schemas(obj)
	oldNames, oldSchs := schemas(old)
	unchanged := func(i int) bool {
		for j, n := range oldNames {
			if n == names[i] {
				return jsonobj.Equal(any(oldSchs[j]), any(schs[i]))
			}
		}
		return false
	}
	if len(schs) > 0 && !slices.ContainsFunc(schs[1:], func(s map[string]any) bool { return !jsonobj.Equal(any(s), any(schs[0])) }) {
		all := true
		for i := range schs {
			all = all && unchanged(i)
		}
		return celrules.Check(schs[0], "spec.validation", all)
	}
	var errs []apierr.FieldError
	for i, sch := range schs {
		if sch != nil {
			errs = append(errs, celrules.Check(sch, fmt.Sprintf("spec.versions[%d].schema", i), unchanged(i))...)
		}
	}
	return errs
}
