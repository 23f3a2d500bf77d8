// Package apierr builds the Status errors of apitest in the kube-apiserver's words (those
// of k8s.io/apimachinery's api/errors and validation/field), so that clients classify
// them as they classify a real server's: the HTTP code, the reason, the message and, for
// 422 Invalid, one cause per field error.
//
// The errors about one object of a resource (NotFound, AlreadyExists, Conflict) stay in
// apitest, which knows the resource's names.
package apierr

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/informerkit/informerkit/meta"
)

// New returns a Failure Status with code, reason and message.
func New(code int32, reason meta.StatusReason, msg string) *meta.Status {
	return &meta.Status{
		TypeMeta: meta.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   "Failure",
		Message:  msg,
		Reason:   reason,
		Code:     code,
	}
}

// BadRequest is a 400 BadRequest.
func BadRequest(msg string) *meta.Status {
	return New(http.StatusBadRequest, meta.StatusReasonBadRequest, msg)
}

// Internal is a 500 InternalError ("Internal error occurred: msg").
func Internal(msg string) *meta.Status {
	st := New(http.StatusInternalServerError, meta.StatusReasonInternalError, "Internal error occurred: "+msg)
	st.Details = &meta.StatusDetails{Causes: []meta.StatusCause{{Message: msg}}}
	return st
}

// Unknown is the 500 of an error the kube-apiserver's handlers do not turn into a Status:
// the error's text and no reason.
func Unknown(msg string) *meta.Status {
	return New(http.StatusInternalServerError, "", msg)
}

// Expired is a 410 Expired (a resourceVersion or continue token older than the history).
func Expired(msg string) *meta.Status {
	return New(http.StatusGone, meta.StatusReasonExpired, msg)
}

// TooLargeResourceVersion is the 504 of a request for a resourceVersion (want) newer than
// the server's (current), after waiting for it.
func TooLargeResourceVersion(want, current uint64) *meta.Status {
	st := New(http.StatusGatewayTimeout, meta.StatusReasonTimeout,
		fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", want, current))
	st.Details = &meta.StatusDetails{RetryAfterSeconds: 1,
		Causes: []meta.StatusCause{{Type: meta.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}}
	return st
}

// MethodNotAllowed is the 405 of a verb the resource does not serve.
func MethodNotAllowed() *meta.Status {
	st := New(http.StatusMethodNotAllowed, meta.StatusReasonMethodNotAllowed,
		"the server does not allow this method on the requested resource")
	st.Details = &meta.StatusDetails{}
	return st
}

// NoResource is the 404 of a path that names no served resource.
func NoResource() *meta.Status {
	st := New(http.StatusNotFound, meta.StatusReasonNotFound, "the server could not find the requested resource")
	st.Details = &meta.StatusDetails{}
	return st
}

// Unauthorized is the 401 of a request without the server's token.
func Unauthorized() *meta.Status {
	return New(http.StatusUnauthorized, meta.StatusReasonUnauthorized, "Unauthorized")
}

// NotAcceptable is the 406 of an Accept header that asks for none of types.
func NotAcceptable(types []string) *meta.Status {
	return New(http.StatusNotAcceptable, meta.StatusReasonNotAcceptable,
		"only the following media types are accepted: "+strings.Join(types, ", "))
}

// UnsupportedMediaType is the 415 of a body in none of types.
func UnsupportedMediaType(types []string) *meta.Status {
	return New(http.StatusUnsupportedMediaType, meta.StatusReasonUnsupportedMediaType,
		"the body of the request was in an unknown format - accepted media types include: "+strings.Join(types, ", "))
}

// FieldError is one validation failure of a field.
type FieldError struct {
	// Type is the cause type: FieldValueInvalid, FieldValueRequired, ...
	Type string
	// Field is the path of the field ("spec.containers[0].image").
	Field string
	// Message is the full text after the path ("Invalid value: ...: detail").
	Message string
}

// InvalidValue is field.Invalid: value is not valid for field, because of detail.
func InvalidValue(field string, value any, detail string) FieldError {
	v, _ := json.Marshal(value)
	return FieldError{Type: "FieldValueInvalid", Field: field, Message: fmt.Sprintf("Invalid value: %s: %s", v, detail)}
}

// TypeInvalid is field.TypeInvalid: field holds a value of the wrong JSON type. It reads as
// InvalidValue; only the cause's reason differs.
func TypeInvalid(field string, value any, detail string) FieldError {
	e := InvalidValue(field, value, detail)
	e.Type = "FieldValueTypeInvalid"
	return e
}

// RequiredValue is field.Required: field is missing (detail may be empty).
func RequiredValue(field, detail string) FieldError {
	msg := "Required value"
	if detail != "" {
		msg += ": " + detail
	}
	return FieldError{Type: "FieldValueRequired", Field: field, Message: msg}
}

// ForbiddenValue is field.Forbidden: field may not be set (or not so), because of detail.
func ForbiddenValue(field, detail string) FieldError {
	return FieldError{Type: "FieldValueForbidden", Field: field, Message: "Forbidden: " + detail}
}

// NotSupportedValue is field.NotSupported: value is none of supported.
func NotSupportedValue(field string, value any, supported ...string) FieldError {
	v, _ := json.Marshal(value)
	q := make([]string, len(supported))
	for i, s := range supported {
		q[i] = fmt.Sprintf("%q", s)
	}
	msg := fmt.Sprintf("Unsupported value: %s: supported values: %s", v, strings.Join(q, ", "))
	return FieldError{Type: "FieldValueNotSupported", Field: field, Message: msg}
}

// DuplicateValue is field.Duplicate: value appears twice where it must be unique.
func DuplicateValue(field string, value any) FieldError {
	v, _ := json.Marshal(value)
	return FieldError{Type: "FieldValueDuplicate", Field: field, Message: fmt.Sprintf("Duplicate value: %s", v)}
}

// Invalid is the 422 Invalid of the object kind.group/name with errs as its causes.
func Invalid(kind, group, name string, errs []FieldError) *meta.Status {
	qualified := kind
	if group != "" {
		qualified = kind + "." + group
	}
	var parts []string
	causes := make([]meta.StatusCause, 0, len(errs))
	for _, e := range errs {
		parts = append(parts, e.Field+": "+e.Message)
		causes = append(causes, meta.StatusCause{Type: e.Type, Message: e.Message, Field: e.Field})
	}
	msg := fmt.Sprintf("%s %q is invalid: ", qualified, name)
	if len(parts) == 1 {
		msg += parts[0]
	} else {
		msg += "[" + strings.Join(parts, ", ") + "]"
	}
	st := New(http.StatusUnprocessableEntity, meta.StatusReasonInvalid, msg)
	st.Details = &meta.StatusDetails{Name: name, Group: group, Kind: kind, Causes: causes}
	return st
}
