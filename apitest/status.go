package apitest

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/meta"
)

// The Status bodies below follow the kube-apiserver's wording (k8s.io/apimachinery
// api/errors) so that clients classify them the same way.

func details(t *ResourceType, name string) *meta.StatusDetails {
	return &meta.StatusDetails{Name: name, Group: t.Group, Kind: t.Plural}
}

func errNotFound(t *ResourceType, name string) *meta.Status {
	st := apierr.New(http.StatusNotFound, meta.StatusReasonNotFound, fmt.Sprintf("%s %q not found", t.qualified(), name))
	st.Details = details(t, name)
	return st
}

func errNamespaceNotFound(ns string) *meta.Status {
	st := apierr.New(http.StatusNotFound, meta.StatusReasonNotFound, fmt.Sprintf("namespaces %q not found", ns))
	st.Details = &meta.StatusDetails{Name: ns, Kind: "namespaces"}
	return st
}

func errAlreadyExists(t *ResourceType, name string) *meta.Status {
	st := apierr.New(http.StatusConflict, meta.StatusReasonAlreadyExists, fmt.Sprintf("%s %q already exists", t.qualified(), name))
	st.Details = details(t, name)
	return st
}

func errConflict(t *ResourceType, name, why string) *meta.Status {
	st := apierr.New(http.StatusConflict, meta.StatusReasonConflict,
		fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", t.qualified(), name, why))
	st.Details = details(t, name)
	return st
}

// errPrecondition is the Conflict of a failed delete precondition: it names the Kind, not
// the resource.
func errPrecondition(t *ResourceType, name, why string) *meta.Status {
	st := apierr.New(http.StatusConflict, meta.StatusReasonConflict,
		fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", t.Kind, name, why))
	st.Details = &meta.StatusDetails{Name: name, Group: t.Group, Kind: t.Kind}
	return st
}

const conflictModified = "the object has been modified; please apply your changes to the latest version and try again"

// errInjected is the body of an injected failure with the given HTTP code.
func errInjected(code int, retryAfterSeconds int32) *meta.Status {
	var st *meta.Status
	switch code {
	case http.StatusTooManyRequests:
		st = apierr.New(int32(code), meta.StatusReasonTooManyRequests, "Too many requests, please try again later.")
	case http.StatusServiceUnavailable:
		st = apierr.New(int32(code), meta.StatusReasonServiceUnavailable, "the server is currently unable to handle the request (injected by apitest)")
	case http.StatusInternalServerError:
		st = apierr.New(int32(code), meta.StatusReasonInternalError, "Internal error occurred: injected by apitest")
	case http.StatusGatewayTimeout:
		st = apierr.New(int32(code), meta.StatusReasonTimeout, "Timeout: injected by apitest")
	case http.StatusGone:
		st = apierr.New(int32(code), meta.StatusReasonExpired, "too old resource version (injected by apitest)")
	case http.StatusUnauthorized:
		st = apierr.Unauthorized()
	case http.StatusForbidden:
		st = apierr.New(int32(code), meta.StatusReasonForbidden, "forbidden (injected by apitest)")
	default:
		st = apierr.New(int32(code), meta.StatusReasonUnknown, http.StatusText(code)+" (injected by apitest)")
	}
	if retryAfterSeconds > 0 {
		st.Details = &meta.StatusDetails{RetryAfterSeconds: retryAfterSeconds}
	}
	return st
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(apierr.Internal(err.Error()))
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
	out.As = ""
	writeBody(w, out, int(st.Code), mustJSON(st))
}
