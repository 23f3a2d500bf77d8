package meta

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// StatusReason is the machine-readable reason of a failed request.
type StatusReason string

// The reasons the API server uses.
const (
	StatusReasonUnknown               StatusReason = ""
	StatusReasonUnauthorized          StatusReason = "Unauthorized"
	StatusReasonForbidden             StatusReason = "Forbidden"
	StatusReasonNotFound              StatusReason = "NotFound"
	StatusReasonAlreadyExists         StatusReason = "AlreadyExists"
	StatusReasonConflict              StatusReason = "Conflict"
	StatusReasonGone                  StatusReason = "Gone"
	StatusReasonInvalid               StatusReason = "Invalid"
	StatusReasonServerTimeout         StatusReason = "ServerTimeout"
	StatusReasonStoreReadError        StatusReason = "StorageReadError"
	StatusReasonTimeout               StatusReason = "Timeout"
	StatusReasonTooManyRequests       StatusReason = "TooManyRequests"
	StatusReasonBadRequest            StatusReason = "BadRequest"
	StatusReasonMethodNotAllowed      StatusReason = "MethodNotAllowed"
	StatusReasonNotAcceptable         StatusReason = "NotAcceptable"
	StatusReasonRequestEntityTooLarge StatusReason = "RequestEntityTooLarge"
	StatusReasonUnsupportedMediaType  StatusReason = "UnsupportedMediaType"
	StatusReasonInternalError         StatusReason = "InternalError"
	StatusReasonExpired               StatusReason = "Expired"
	StatusReasonServiceUnavailable    StatusReason = "ServiceUnavailable"
)

// Status is the API server's answer to a failed request (and the object of an ERROR watch
// event). It is an error.
type Status struct {
	TypeMeta
	ListMeta `json:"metadata"`
	// Status is "Success" or "Failure".
	Status  string         `json:"status,omitempty"`
	Message string         `json:"message,omitempty"`
	Reason  StatusReason   `json:"reason,omitempty"`
	Details *StatusDetails `json:"details,omitempty"`
	Code    int32          `json:"code,omitempty"`
}

// StatusDetails names the object a Status is about and, for Invalid, the failing fields.
type StatusDetails struct {
	Name              string        `json:"name,omitempty"`
	Group             string        `json:"group,omitempty"`
	Kind              string        `json:"kind,omitempty"`
	UID               string        `json:"uid,omitempty"`
	Causes            []StatusCause `json:"causes,omitempty"`
	RetryAfterSeconds int32         `json:"retryAfterSeconds,omitempty"`
}

// StatusCause is one reason, often a field, for an Invalid request.
type StatusCause struct {
	Type    string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Field   string `json:"field,omitempty"`
}

// Error returns the server's message, prefixed by the reason and code.
func (s *Status) Error() string {
	reason := string(s.Reason)
	if reason == "" {
		reason = http.StatusText(int(s.Code))
	}
	if s.Message == "" {
		return fmt.Sprintf("%s (%d)", reason, s.Code)
	}
	return fmt.Sprintf("%s (%d): %s", reason, s.Code, s.Message)
}

// RetryAfter returns the delay the server asked for, if any.
func (s *Status) RetryAfter() (time.Duration, bool) {
	if s.Details == nil || s.Details.RetryAfterSeconds <= 0 {
		return 0, false
	}
	return time.Duration(s.Details.RetryAfterSeconds) * time.Second, true
}

// AsStatus returns the *Status in err's chain, if there is one.
func AsStatus(err error) (*Status, bool) {
	var s *Status
	if errors.As(err, &s) {
		return s, true
	}
	return nil, false
}

// ReasonForError returns the reason of the *Status in err's chain, or StatusReasonUnknown.
func ReasonForError(err error) StatusReason {
	if s, ok := AsStatus(err); ok {
		return s.Reason
	}
	return StatusReasonUnknown
}

func hasReasonOrCode(err error, reason StatusReason, code int32) bool {
	s, ok := AsStatus(err)
	if !ok {
		return false
	}
	if s.Reason != StatusReasonUnknown {
		return s.Reason == reason
	}
	return s.Code == code
}

// IsNotFound reports whether err says the object does not exist (404).
func IsNotFound(err error) bool {
	return hasReasonOrCode(err, StatusReasonNotFound, http.StatusNotFound)
}

// IsAlreadyExists reports whether err says the object already exists.
func IsAlreadyExists(err error) bool {
	return hasReasonOrCode(err, StatusReasonAlreadyExists, http.StatusConflict)
}

// IsConflict reports whether err is a 409 Conflict, typically a stale resourceVersion.
func IsConflict(err error) bool {
	return hasReasonOrCode(err, StatusReasonConflict, http.StatusConflict)
}

// IsInvalid reports whether err says the object failed validation (422).
func IsInvalid(err error) bool {
	return hasReasonOrCode(err, StatusReasonInvalid, http.StatusUnprocessableEntity)
}

// IsGone reports whether err is a 410 Gone.
func IsGone(err error) bool {
	return hasReasonOrCode(err, StatusReasonGone, http.StatusGone)
}

// IsResourceExpired reports whether err says a resourceVersion or continue token is too old
// (410 with reason Expired, or Gone): the caller must list again from scratch.
func IsResourceExpired(err error) bool {
	s, ok := AsStatus(err)
	if !ok {
		return false
	}
	return s.Reason == StatusReasonExpired || s.Reason == StatusReasonGone ||
		(s.Reason == StatusReasonUnknown && s.Code == http.StatusGone)
}

// IsTooManyRequests reports whether err is a 429: the caller should back off and retry.
func IsTooManyRequests(err error) bool {
	return hasReasonOrCode(err, StatusReasonTooManyRequests, http.StatusTooManyRequests)
}

// IsUnauthorized reports whether err is a 401.
func IsUnauthorized(err error) bool {
	return hasReasonOrCode(err, StatusReasonUnauthorized, http.StatusUnauthorized)
}

// IsForbidden reports whether err is a 403.
func IsForbidden(err error) bool {
	return hasReasonOrCode(err, StatusReasonForbidden, http.StatusForbidden)
}

// IsBadRequest reports whether err is a 400.
func IsBadRequest(err error) bool {
	return hasReasonOrCode(err, StatusReasonBadRequest, http.StatusBadRequest)
}

// IsMethodNotAllowed reports whether err is a 405.
func IsMethodNotAllowed(err error) bool {
	return hasReasonOrCode(err, StatusReasonMethodNotAllowed, http.StatusMethodNotAllowed)
}

// IsServerTimeout reports whether the server could not finish the request in time.
func IsServerTimeout(err error) bool {
	return hasReasonOrCode(err, StatusReasonServerTimeout, http.StatusInternalServerError)
}

// IsTimeout reports whether err is a 504 Timeout.
func IsTimeout(err error) bool {
	return hasReasonOrCode(err, StatusReasonTimeout, http.StatusGatewayTimeout)
}

// IsInternalError reports whether err is a 500 InternalError.
func IsInternalError(err error) bool {
	return hasReasonOrCode(err, StatusReasonInternalError, http.StatusInternalServerError)
}

// IsServiceUnavailable reports whether err is a 503.
func IsServiceUnavailable(err error) bool {
	return hasReasonOrCode(err, StatusReasonServiceUnavailable, http.StatusServiceUnavailable)
}

// IsTooLargeResourceVersion reports whether err says the requested resourceVersion is newer
// than the server has seen: the reflector then lists again with resourceVersion "". It
// recognises the three forms kube-apiservers have answered with, as client-go does:
//
//   - since 1.18.6: a Status with a cause of type ResourceVersionTooLarge (any code; it is a
//     504 Timeout);
//   - 1.17.0 to 1.18.5: a 504 Timeout with a cause whose message is "Too large resource
//     version" and no type;
//   - before 1.17: a 504 Timeout whose message contains "Too large resource version".
func IsTooLargeResourceVersion(err error) bool {
	s, ok := AsStatus(err)
	if !ok {
		return false
	}
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			if c.Type == CauseTypeResourceVersionTooLarge {
				return true
			}
		}
	}
	if !IsTimeout(err) {
		return false
	}
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			if c.Message == tooLargeResourceVersionMessage {
				return true
			}
		}
	}
	return strings.Contains(s.Message, tooLargeResourceVersionMessage)
}

// CauseTypeResourceVersionTooLarge is the StatusCause type of a request for a resourceVersion
// newer than the server has seen (kube-apiserver 1.18.6 and later).
const CauseTypeResourceVersionTooLarge = "ResourceVersionTooLarge"

// tooLargeResourceVersionMessage is how every kube-apiserver version words that error: the
// cause message since 1.17, the start of the Status message in all of them.
const tooLargeResourceVersionMessage = "Too large resource version"

// RetryAfter returns the delay the server asked for in err's *Status, if any.
func RetryAfter(err error) (time.Duration, bool) {
	if s, ok := AsStatus(err); ok {
		return s.RetryAfter()
	}
	return 0, false
}
