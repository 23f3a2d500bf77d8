package apitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/informerkit/informerkit/meta"
)

// The Status bodies below follow the kube-apiserver's wording (k8s.io/apimachinery
// api/errors) so that clients classify them the same way.

func newStatus(code int32, reason meta.StatusReason, msg string) *meta.Status {
	return &meta.Status{
		TypeMeta: meta.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   "Failure",
		Message:  msg,
		Reason:   reason,
		Code:     code,
	}
}

func details(t *ResourceType, name string) *meta.StatusDetails {
	return &meta.StatusDetails{Name: name, Group: t.Group, Kind: t.Plural}
}

func errNotFound(t *ResourceType, name string) *meta.Status {
	st := newStatus(http.StatusNotFound, meta.StatusReasonNotFound, fmt.Sprintf("%s %q not found", t.qualified(), name))
	st.Details = details(t, name)
	return st
}

func errNamespaceNotFound(ns string) *meta.Status {
	st := newStatus(http.StatusNotFound, meta.StatusReasonNotFound, fmt.Sprintf("namespaces %q not found", ns))
	st.Details = &meta.StatusDetails{Name: ns, Kind: "namespaces"}
	return st
}

func errAlreadyExists(t *ResourceType, name string) *meta.Status {
	st := newStatus(http.StatusConflict, meta.StatusReasonAlreadyExists, fmt.Sprintf("%s %q already exists", t.qualified(), name))
	st.Details = details(t, name)
	return st
}

func errConflict(t *ResourceType, name, why string) *meta.Status {
	st := newStatus(http.StatusConflict, meta.StatusReasonConflict,
		fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", t.qualified(), name, why))
	st.Details = details(t, name)
	return st
}

// errPrecondition is the Conflict of a failed delete precondition: it names the Kind, not
// the resource.
func errPrecondition(t *ResourceType, name, why string) *meta.Status {
	st := newStatus(http.StatusConflict, meta.StatusReasonConflict,
		fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", t.Kind, name, why))
	st.Details = &meta.StatusDetails{Name: name, Group: t.Group, Kind: t.Kind}
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

func errInvalid(kind, group, name string, errs []fieldError) *meta.Status {
	qualified := kind
	if group != "" {
		qualified = kind + "." + group
	}
	var parts []string
	causes := make([]meta.StatusCause, 0, len(errs))
	for _, e := range errs {
		parts = append(parts, e.field+": "+e.msg)
		causes = append(causes, meta.StatusCause{Type: e.typ, Message: e.msg, Field: e.field})
	}
	msg := fmt.Sprintf("%s %q is invalid: ", qualified, name)
	if len(parts) == 1 {
		msg += parts[0]
	} else {
		msg += "[" + strings.Join(parts, ", ") + "]"
	}
	st := newStatus(http.StatusUnprocessableEntity, meta.StatusReasonInvalid, msg)
	st.Details = &meta.StatusDetails{Name: name, Group: group, Kind: kind, Causes: causes}
	return st
}

func errBadRequest(msg string) *meta.Status {
	return newStatus(http.StatusBadRequest, meta.StatusReasonBadRequest, msg)
}

func errInternal(msg string) *meta.Status {
	st := newStatus(http.StatusInternalServerError, meta.StatusReasonInternalError, "Internal error occurred: "+msg)
	st.Details = &meta.StatusDetails{Causes: []meta.StatusCause{{Message: msg}}}
	return st
}

func errExpired(msg string) *meta.Status {
	return newStatus(http.StatusGone, meta.StatusReasonExpired, msg)
}

func errTooLargeRV(want, current uint64) *meta.Status {
	st := newStatus(http.StatusGatewayTimeout, meta.StatusReasonTimeout,
		fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", want, current))
	st.Details = &meta.StatusDetails{RetryAfterSeconds: 1,
		Causes: []meta.StatusCause{{Type: meta.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}}
	return st
}

func errMethodNotAllowed() *meta.Status {
	st := newStatus(http.StatusMethodNotAllowed, meta.StatusReasonMethodNotAllowed,
		"the server does not allow this method on the requested resource")
	st.Details = &meta.StatusDetails{}
	return st
}

func errNoResource() *meta.Status {
	st := newStatus(http.StatusNotFound, meta.StatusReasonNotFound, "the server could not find the requested resource")
	st.Details = &meta.StatusDetails{}
	return st
}

func errUnauthorized() *meta.Status {
	return newStatus(http.StatusUnauthorized, meta.StatusReasonUnauthorized, "Unauthorized")
}

// errInjected is the body of an injected failure with the given HTTP code.
func errInjected(code int, retryAfterSeconds int32) *meta.Status {
	var st *meta.Status
	switch code {
	case http.StatusTooManyRequests:
		st = newStatus(int32(code), meta.StatusReasonTooManyRequests, "Too many requests, please try again later.")
	case http.StatusServiceUnavailable:
		st = newStatus(int32(code), meta.StatusReasonServiceUnavailable, "the server is currently unable to handle the request (injected by apitest)")
	case http.StatusInternalServerError:
		st = newStatus(int32(code), meta.StatusReasonInternalError, "Internal error occurred: injected by apitest")
	case http.StatusGatewayTimeout:
		st = newStatus(int32(code), meta.StatusReasonTimeout, "Timeout: injected by apitest")
	case http.StatusGone:
		st = newStatus(int32(code), meta.StatusReasonExpired, "too old resource version (injected by apitest)")
	case http.StatusUnauthorized:
		st = errUnauthorized()
	case http.StatusForbidden:
		st = newStatus(int32(code), meta.StatusReasonForbidden, "forbidden (injected by apitest)")
	default:
		st = newStatus(int32(code), meta.StatusReasonUnknown, http.StatusText(code)+" (injected by apitest)")
	}
	if retryAfterSeconds > 0 {
		st.Details = &meta.StatusDetails{RetryAfterSeconds: retryAfterSeconds}
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
func writeStatus(w http.ResponseWriter, st *meta.Status) {
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(st.Details.RetryAfterSeconds))
	}
	out := outputOf(w)
	out.as = ""
	writeBody(w, out, int(st.Code), mustJSON(st))
}
