package apitest

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/admission"
	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/apitest/internal/rbac"
	"github.com/informerkit/informerkit/meta"
)

// CertificateSigningRequests: the approval subresource, and what their status strategy
// does to conditions, as the kube-apiserver's certificates registry and its
// CertificateApproval admission plugin.

// csrConditionTypes are the condition types approval decides, and Failed, that no update
// may remove once set.
var (
	csrApprovalTypes = []string{"Approved", "Denied"}
	csrLastingTypes  = []string{"Approved", "Denied", "Failed"}
)

// mayApprove returns the 403 of a user who may not approve the CSR of ri: the verb
// approve on the signers resource, named by the CSR's signerName or its domain with /*.
func (s *Server) mayApprove(u UserInfo, ri *reqInfo) *meta.Status {
	if isMaster(u) && !s.hasDenyRules() {
		return nil
	}
	s.mu.Lock()
	o := ri.res.objects[objectKey("", ri.name)]
	var signer string
	if o != nil {
		signer = jsonobj.StrAt(mustDecode(o.raw), "spec", "signerName")
	}
	s.mu.Unlock()
	if o == nil {
		return nil // the update answers 404
	}
	names := []string{signer}
	if domain, _, ok := strings.Cut(signer, "/"); ok {
		names = append(names, domain+"/*")
	}
	for _, name := range names {
		attrs := rbac.Attributes{Verb: "approve", Group: "certificates.k8s.io", Resource: "signers", Name: name}
		if s.decide(u, attrs).Allowed {
			return nil
		}
	}
	st := apierr.New(http.StatusForbidden, meta.StatusReasonForbidden, fmt.Sprintf("%s %q is forbidden: user not permitted to approve requests with signerName %q",
		ri.res.typ.qualified(), ri.name, signer))
	st.Details = &meta.StatusDetails{Name: ri.name, Group: ri.res.typ.Group, Kind: ri.res.typ.Plural}
	return st
}

// approvalUpdate is the object an update of certificatesigningrequests/approval stores:
// the stored object with obj's conditions (their timestamps filled) and metadata changes,
// validated as the approval strategy validates them.
func approvalUpdate(t *ResourceType, obj, prev map[string]any, old *storedObj) (map[string]any, *meta.Status) {
	next := mustDecode(old.raw)
	conds := csrConditions(obj)
	fillConditionTimes(conds, csrConditions(prev))
	status := jsonobj.Map(next["status"])
	if status == nil {
		status = map[string]any{}
		next["status"] = status
	}
	if len(conds) > 0 {
		status["conditions"] = conds
	} else {
		delete(status, "conditions")
	}
	md, nextMeta := jsonobj.Meta(obj), jsonobj.Meta(next)
	for _, k := range append(admission.StatusMetadata(t.gvk(), false), "managedFields") {
		if v, ok := md[k]; ok {
			nextMeta[k] = v
		} else {
			delete(nextMeta, k)
		}
	}
	errs := csrConditionErrors(conds, csrConditions(prev), true)
	errs = append(errs, admission.ValidateObjectMetaUpdate(nextMeta, jsonobj.Meta(prev), old.deleting, t.names)...)
	if len(errs) > 0 {
		return nil, apierr.Invalid(t.Kind, t.Group, jsonobj.Str(nextMeta, "name"), errs)
	}
	return next, nil
}

// csrStatusUpdate applies the CSR status strategy to next, a status update's object: the
// Approved and Denied conditions stay as stored (only approval changes them), the others'
// timestamps are filled, and the conditions validated.
func csrStatusUpdate(next, prev map[string]any) []apierr.FieldError {
	conds, old := csrConditions(next), csrConditions(prev)
	for _, typ := range csrApprovalTypes {
		ni, oi := conditionIndices(conds, typ), conditionIndices(old, typ)
		if len(ni) == len(oi) {
			for i, j := range oi {
				conds[ni[i]] = old[j]
			}
		}
	}
	fillConditionTimes(conds, old)
	if status := jsonobj.Map(next["status"]); status != nil && len(conds) > 0 {
		status["conditions"] = conds
	}
	return csrConditionErrors(conds, old, false)
}

func csrConditions(obj map[string]any) []any {
	c, _ := jsonobj.Map(obj["status"])["conditions"].([]any)
	return c
}

func conditionIndices(conds []any, typ string) []int {
	var out []int
	for i, c := range conds {
		if jsonobj.Str(jsonobj.Map(c), "type") == typ {
			out = append(out, i)
		}
	}
	return out
}

// fillConditionTimes sets lastUpdateTime to now where it is unset, and lastTransitionTime
// to that of the old condition of the same type and status, else now.
func fillConditionTimes(conds, old []any) {
	now := nowString()
	for _, c := range conds {
		m := jsonobj.Map(c)
		if m == nil {
			continue
		}
		if jsonobj.Str(m, "lastUpdateTime") == "" {
			m["lastUpdateTime"] = now
		}
		if jsonobj.Str(m, "lastTransitionTime") == "" {
			m["lastTransitionTime"] = now
			for _, o := range old {
				om := jsonobj.Map(o)
				if jsonobj.Str(om, "type") == jsonobj.Str(m, "type") && jsonobj.Str(om, "status") == jsonobj.Str(m, "status") && jsonobj.Str(om, "lastTransitionTime") != "" {
					m["lastTransitionTime"] = om["lastTransitionTime"]
					break
				}
			}
		}
	}
}

// csrConditionErrors validates a CSR update's conditions against the stored ones old, as
// the kube-apiserver's certificates validation (approval: Approved and Denied may be
// added).
func csrConditionErrors(conds, old []any, approval bool) []apierr.FieldError {
	var errs []apierr.FieldError
	oldHas := func(pred func(m map[string]any) bool) bool {
		for _, o := range old {
			if pred(jsonobj.Map(o)) {
				return true
			}
		}
		return false
	}
	emptyTypeOK := oldHas(func(m map[string]any) bool { return jsonobj.Str(m, "type") == "" })
	dupOK := len(old) != countTypes(old)
	bothOK := len(conditionIndices(old, "Approved")) > 0 && len(conditionIndices(old, "Denied")) > 0
	seen := map[string]bool{}
	approved, denied := false, false
	for i, c := range conds {
		m := jsonobj.Map(c)
		typ, status := jsonobj.Str(m, "type"), jsonobj.Str(m, "status")
		at := fmt.Sprintf("status.conditions[%d]", i)
		if typ == "" && !emptyTypeOK {
			errs = append(errs, apierr.RequiredValue(at+".type", ""))
		}
		allowed := []string{"False", "True", "Unknown"}
		if contains(csrLastingTypes, typ) {
			allowed = []string{"True"}
		}
		switch {
		case status == "":
			errs = append(errs, apierr.RequiredValue(at+".status", ""))
		case !contains(allowed, status):
			errs = append(errs, apierr.NotSupportedValue(at+".status", status, allowed...))
		}
		if !bothOK {
			switch typ {
			case "Approved":
				approved = true
				if denied {
					errs = append(errs, apierr.InvalidValue("status.conditions", typ, "Approved and Denied conditions are mutually exclusive"))
				}
			case "Denied":
				denied = true
				if approved {
					errs = append(errs, apierr.InvalidValue("status.conditions", typ, "Approved and Denied conditions are mutually exclusive"))
				}
			}
		}
		if seen[typ] && !dupOK {
			errs = append(errs, apierr.DuplicateValue(at+".type", typ))
		}
		seen[typ] = true
	}
	for _, typ := range csrLastingTypes {
		if len(conditionIndices(conds, typ)) < len(conditionIndices(old, typ)) {
			errs = append(errs, apierr.ForbiddenValue("status.conditions", fmt.Sprintf("updates may not remove a condition of type %q", typ)))
		}
	}
	if !approval {
		for _, typ := range csrApprovalTypes {
			if len(conditionIndices(conds, typ)) > len(conditionIndices(old, typ)) {
				errs = append(errs, apierr.ForbiddenValue("status.conditions", fmt.Sprintf("updates may not add a condition of type %q", typ)))
			}
		}
	}
	return errs
}

// countTypes is the number of distinct condition types.
func countTypes(conds []any) int {
	seen := map[string]bool{}
	for _, c := range conds {
		seen[jsonobj.Str(jsonobj.Map(c), "type")] = true
	}
	return len(seen)
}
