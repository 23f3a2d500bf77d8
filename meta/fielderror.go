package meta

import (
	"fmt"
	"reflect"
	"strings"
)

// FieldErrorType is the kind of a FieldError: the reason of the StatusCause the
// kube-apiserver sends for it.
type FieldErrorType string

// The field error types the object model's validations return.
const (
	FieldValueRequired  FieldErrorType = "FieldValueRequired"
	FieldValueInvalid   FieldErrorType = "FieldValueInvalid"
	FieldValueForbidden FieldErrorType = "FieldValueForbidden"
)

// String is the type as a message writes it: "Required value", "Invalid value", "Forbidden".
func (t FieldErrorType) String() string {
	switch t {
	case FieldValueRequired:
		return "Required value"
	case FieldValueInvalid:
		return "Invalid value"
	case FieldValueForbidden:
		return "Forbidden"
	}
	return string(t)
}

// FieldError is one invalid field of an object, worded as the kube-apiserver words it in a
// 422 answer (apimachinery's field.Error):
//
//	spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'
type FieldError struct {
	Type FieldErrorType
	// Field is the field's path: "spec.selector.matchLabels", "items[2].key".
	Field string
	// BadValue is the value an Invalid error refers to (quoted when a string).
	BadValue any
	// Detail says what is wrong.
	Detail string
}

// Error reads "<field>: <type>[: <value>]: <detail>".
func (e *FieldError) Error() string {
	body := e.Type.String()
	if e.Type == FieldValueInvalid {
		v := reflect.ValueOf(e.BadValue)
		if v.Kind() == reflect.String {
			body += fmt.Sprintf(": %q", v.String())
		} else {
			body += fmt.Sprintf(": %v", e.BadValue)
		}
	}
	if e.Detail != "" {
		body += ": " + e.Detail
	}
	return e.Field + ": " + body
}

// FieldErrors are the invalid fields of one object. As an error it reads as the
// kube-apiserver's list: the one error alone, or several in brackets, comma-separated.
type FieldErrors []*FieldError

// Error joins the errors.
func (l FieldErrors) Error() string {
	if len(l) == 1 {
		return l[0].Error()
	}
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.Error()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Causes returns the errors as the causes of an Invalid Status, as the kube-apiserver
// lists them.
func (l FieldErrors) Causes() []StatusCause {
	out := make([]StatusCause, len(l))
	for i, e := range l {
		msg := e.Error()
		out[i] = StatusCause{Type: string(e.Type), Field: e.Field, Message: strings.TrimPrefix(msg, e.Field+": ")}
	}
	return out
}

// OrNil returns l as an error, or nil when l is empty (a nil FieldErrors in an error
// variable is not a nil error).
func (l FieldErrors) OrNil() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// fieldPath joins a path and a child: "" and "a" give "a", "a" and "b" give "a.b".
func fieldPath(parent, child string) string {
	if parent == "" {
		return child
	}
	return parent + "." + child
}
