package apitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/informerkit/informerkit/apiclient"
)

// The Status bodies below follow the kube-apiserver's wording (k8s.io/apimachinery
// api/errors) so that clients classify them the same way.

func newStatus(code int32, reason apiclient.StatusReason, msg string) *apiclient.Status {
	return &apiclient.Status{
		TypeMeta: apiclient.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   "Failure",
		Message:  msg,
		Reason:   reason,
		Code:     code,
	}
}

func details(t *ResourceType, name string) *apiclient.StatusDetails {
	return &apiclient.StatusDetails{Name: name, Group: t.Group, Kind: t.Plural}
}

func errNotFound(t *ResourceType, name string) *apiclient.Status {
	st := newStatus(http.StatusNotFound, apiclient.StatusReasonNotFound, fmt.Sprintf("%s %q not found", t.qualified(), name))
	st.Details = details(t, name)
	return st
}

func errNamespaceNotFound(ns string) *apiclient.Status {
	st := newStatus(http.StatusNotFound, apiclient.StatusReasonNotFound, fmt.Sprintf("namespaces %q not found", ns))
	st.Details = &apiclient.StatusDetails{Name: ns, Kind: "namespaces"}
	return st
}

func errAlreadyExists(t *ResourceType, name string) *apiclient.Status {
	st := newStatus(http.StatusConflict, apiclient.StatusReasonAlreadyExists, fmt.Sprintf("%s %q already exists", t.qualified(), name))
	st.Details = details(t, name)
	return st
}

func errConflict(t *ResourceType, name, why string) *apiclient.Status {
	st := newStatus(http.StatusConflict, apiclient.StatusReasonConflict,
		fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", t.qualified(), name, why))
	st.Details = details(t, name)
	return st
}

// errPrecondition is the Conflict of a failed delete precondition: it names the Kind, not
// the resource.
func errPrecondition(t *ResourceType, name, why string) *apiclient.Status {
	st := newStatus(http.StatusConflict, apiclient.StatusReasonConflict,
		fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", t.Kind, name, why))
	st.Details = &apiclient.StatusDetails{Name: name, Group: t.Group, Kind: t.Kind}
	return st
}

const conflictModified = "the object has been modified; please apply your changes to the latest version and try again"

// fieldError is one validation failure.
type fieldError struct {
	typ   string // FieldValueInvalid, FieldValueRequired, FieldValueForbidden, ...
	field string
	msg   string // the full "Invalid value: ...: detail" text
}

func invalidValue(field string, value any, detail string) fieldError {
	v, _ := json.Marshal(value)
	return fieldError{typ: "FieldValueInvalid", field: field, msg: fmt.Sprintf("Invalid value: %s: %s", v, detail)}
}

func requiredValue(field, detail string) fieldError {
	return fieldError{typ: "FieldValueRequired", field: field, msg: "Required value: " + detail}
}

func forbiddenValue(field, detail string) fieldError {
	return fieldError{typ: "FieldValueForbidden", field: field, msg: "Forbidden: " + detail}
}

func errInvalid(kind, group, name string, errs []fieldError) *apiclient.Status {
	qualified := kind
	if group != "" {
		qualified = kind + "." + group
	}
	var parts []string
	causes := make([]apiclient.StatusCause, 0, len(errs))
	for _, e := range errs {
		parts = append(parts, e.field+": "+e.msg)
		causes = append(causes, apiclient.StatusCause{Type: e.typ, Message: e.msg, Field: e.field})
	}
	msg := fmt.Sprintf("%s %q is invalid: ", qualified, name)
	if len(parts) == 1 {
		msg += parts[0]
	} else {
		msg += "[" + strings.Join(parts, ", ") + "]"
	}
	st := newStatus(http.StatusUnprocessableEntity, apiclient.StatusReasonInvalid, msg)
	st.Details = &apiclient.StatusDetails{Name: name, Group: group, Kind: kind, Causes: causes}
	return st
}

func errBadRequest(msg string) *apiclient.Status {
	return newStatus(http.StatusBadRequest, apiclient.StatusReasonBadRequest, msg)
}

func errInternal(msg string) *apiclient.Status {
	st := newStatus(http.StatusInternalServerError, apiclient.StatusReasonInternalError, "Internal error occurred: "+msg)
	st.Details = &apiclient.StatusDetails{Causes: []apiclient.StatusCause{{Message: msg}}}
	return st
}

func errExpired(msg string) *apiclient.Status {
	return newStatus(http.StatusGone, apiclient.StatusReasonExpired, msg)
}

func errTooLargeRV(want, current uint64) *apiclient.Status {
	st := newStatus(http.StatusGatewayTimeout, apiclient.StatusReasonTimeout,
		fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", want, current))
	st.Details = &apiclient.StatusDetails{RetryAfterSeconds: 1,
		Causes: []apiclient.StatusCause{{Type: apiclient.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}}
	return st
}

func errMethodNotAllowed() *apiclient.Status {
	st := newStatus(http.StatusMethodNotAllowed, apiclient.StatusReasonMethodNotAllowed,
		"the server does not allow this method on the requested resource")
	st.Details = &apiclient.StatusDetails{}
	return st
}

func errNoResource() *apiclient.Status {
	st := newStatus(http.StatusNotFound, apiclient.StatusReasonNotFound, "the server could not find the requested resource")
	st.Details = &apiclient.StatusDetails{}
	return st
}

func errUnauthorized() *apiclient.Status {
	return newStatus(http.StatusUnauthorized, apiclient.StatusReasonUnauthorized, "Unauthorized")
}

// errInjected is the body of an injected failure with the given HTTP code.
func errInjected(code int, retryAfterSeconds int32) *apiclient.Status {
	var st *apiclient.Status
	switch code {
	case http.StatusTooManyRequests:
		st = newStatus(int32(code), apiclient.StatusReasonTooManyRequests, "Too many requests, please try again later.")
	case http.StatusServiceUnavailable:
		st = newStatus(int32(code), apiclient.StatusReasonServiceUnavailable, "the server is currently unable to handle the request (injected by apitest)")
	case http.StatusInternalServerError:
		st = newStatus(int32(code), apiclient.StatusReasonInternalError, "Internal error occurred: injected by apitest")
	case http.StatusGatewayTimeout:
		st = newStatus(int32(code), apiclient.StatusReasonTimeout, "Timeout: injected by apitest")
	case http.StatusGone:
		st = newStatus(int32(code), apiclient.StatusReasonExpired, "too old resource version (injected by apitest)")
	case http.StatusUnauthorized:
		st = errUnauthorized()
	case http.StatusForbidden:
		st = newStatus(int32(code), apiclient.StatusReasonForbidden, "forbidden (injected by apitest)")
	default:
		st = newStatus(int32(code), apiclient.StatusReasonUnknown, http.StatusText(code)+" (injected by apitest)")
	}
	if retryAfterSeconds > 0 {
		st.Details = &apiclient.StatusDetails{RetryAfterSeconds: retryAfterSeconds}
	}
	return st
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(errInternal(err.Error()))
		code = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(b)
	w.Write([]byte("\n"))
}

// writeStatus writes an error in the negotiated format (JSON, YAML or protobuf), as the
// kube-apiserver does.
func writeStatus(w http.ResponseWriter, st *apiclient.Status) {
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(st.Details.RetryAfterSeconds))
	}
	out := outputOf(w)
	out.as = ""
	writeBody(w, out, int(st.Code), mustJSON(st))
}
