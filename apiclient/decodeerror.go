package apiclient

import (
	"errors"
	"fmt"
)

// Sentinel errors of the watch decoder. A watch whose stream cannot be decoded delivers one
// Error event whose Err is a *DecodeError wrapping exactly one of these, then ends; test with
// errors.Is(ev.Err, ErrEventTooLarge) and so on.
var (
	// ErrEventTooLarge: one event is larger than Config.MaxEventSize. The decoder stops
	// reading instead of buffering it.
	ErrEventTooLarge = errors.New("watch event larger than the size limit")
	// ErrMalformedEvent: the stream is not a sequence of JSON objects of the form
	// {"type":...,"object":{...}}, or the object does not decode into the target type.
	ErrMalformedEvent = errors.New("malformed watch event")
	// ErrUnknownEventType: the event's type is none of ADDED, MODIFIED, DELETED, BOOKMARK, ERROR.
	ErrUnknownEventType = errors.New("unknown watch event type")
	// ErrWrongKind: an object (a watch event's, a list's or a list item's) has a kind other
	// than the one the resource serves: WithKind's, the built-in kind of the resource, or
	// the kind its first list named. A Resource's watch skips such an event (a Skipped event
	// carries the error) and goes on; a list of another kind, or with an item of another
	// kind, fails whole.
	ErrWrongKind = errors.New("object of the wrong kind")
)

// DecodeError describes a watch stream (or, from ListEach, a list response) that could not
// be decoded. Err is one of the sentinel errors above (or ErrMalformedList,
// ErrListItemTooLarge); Cause, when set, is the underlying JSON error.
type DecodeError struct {
	// Err is ErrEventTooLarge, ErrMalformedEvent, ErrUnknownEventType or ErrWrongKind for a
	// watch; ErrMalformedList or ErrListItemTooLarge for a list.
	Err error
	// Offset is the byte offset of the offending event in the stream (for WebSocket, the
	// index of the message), or of the offending part of a list response.
	Offset int64
	// Detail says what was wrong, in words.
	Detail string
	// Cause is the underlying error, if any (for example a *json.SyntaxError).
	Cause error
}

// Error returns "apiclient: <sentinel> at offset N: <detail>: <cause>".
func (e *DecodeError) Error() string {
	msg := fmt.Sprintf("apiclient: %v at offset %d", e.Err, e.Offset)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	return msg
}

// Unwrap returns the sentinel and the cause, so that errors.Is and errors.As see both.
func (e *DecodeError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}
