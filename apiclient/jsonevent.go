package apiclient

import (
	"encoding/json"
	"fmt"

	"github.com/informerkit/informerkit/internal/jsondec"
	"github.com/informerkit/informerkit/meta"
)

// decodeEvent decodes one watch event, {"type":...,"object":{...}}, into an Event[T]: the
// function the watch stream applies to every frame (offset is the frame's position in the
// stream, for errors). kind, if not "", is the kind the object must have. An ERROR event
// decodes to Event{Type: Error, Err: *Status}; a frame that cannot be decoded returns a
// *DecodeError.
func decodeEvent[T any](d *objectDecoder, frame []byte, kind string, offset int64) (Event[T], error) {
	if d.standard {
		return decodeEventStandard[T](frame, kind, offset)
	}
	return decodeEventCompiled[T](d.dec, frame, kind, offset)
}

// eventType returns the type of an event as a constant (no allocation for the known ones).
func eventType(t []byte) EventType {
	switch EventType(t) {
	case Added:
		return Added
	case Modified:
		return Modified
	case Deleted:
		return Deleted
	case Bookmark:
		return Bookmark
	case Error:
		return Error
	}
	return EventType(t)
}

// decodeEventCompiled decodes the envelope and the object in one pass over the frame: the
// object is decoded where it lies (servers write the type first; an object that comes
// before its type is skipped and decoded once the type is known).
func decodeEventCompiled[T any](dec *jsondec.Decoder, frame []byte, kind string, offset int64) (Event[T], error) {
	malformed := func(detail string, cause error) (Event[T], error) {
		return Event[T]{}, &DecodeError{Err: ErrMalformedEvent, Offset: offset, Detail: detail, Cause: cause}
	}
	c, i, ok := jsondec.Next(frame, 0)
	if !ok || c != '{' {
		return malformed("event is not a JSON object", nil)
	}
	i++
	var (
		et       EventType
		haveType bool
		objAt    = -1 // where the object is, when it was not decoded on the way
		objNull  bool
		out      T
		decoded  bool
	)
	for first := true; ; first = false {
		c, i, ok = jsondec.Next(frame, i)
		if ok && c == '}' && first {
			return malformed("empty event object", nil)
		}
		if !ok || c != '"' {
			return malformed(fmt.Sprintf("bad key at byte %d", i), nil)
		}
		key, end, err := jsondec.String(dec, frame, i)
		if err != nil {
			return malformed(fmt.Sprintf("bad key at byte %d", i), err)
		}
		isType, isObject := string(key) == "type", string(key) == "object"
		if c, i, ok = jsondec.Next(frame, end); !ok || c != ':' {
			return malformed(fmt.Sprintf("missing ':' at byte %d", i), nil)
		}
		i++
		if c, i, ok = jsondec.Next(frame, i); !ok {
			return malformed(fmt.Sprintf("missing value at byte %d", i), nil)
		}
		switch {
		case isType:
			t, end, err := jsondec.String(dec, frame, i)
			if err != nil {
				return malformed(`"type" is not a string`, err)
			}
			et, haveType, i = eventType(t), true, end
		case isObject && haveType && c == '{' && isObjectEvent(et):
			if kind != "" {
				if got, ok := topLevelString(frame[i:], "kind"); ok && got != kind {
					return Event[T]{}, &DecodeError{Err: ErrWrongKind, Offset: offset, Detail: fmt.Sprintf("want kind %q, got %q", kind, truncate(got, 64))}
				}
			}
			var zero T
			out = zero
			end, err := jsondec.Decode(dec, frame, i, &out)
			if err != nil {
				return malformed(fmt.Sprintf("%s event object", et), err)
			}
			i, decoded, objAt, objNull = end, true, -1, false
		default:
			end, err := jsondec.Skip(dec, frame, i)
			if err != nil {
				return malformed(fmt.Sprintf("bad value at byte %d", i), err)
			}
			if isObject {
				objAt, objNull, decoded = i, c == 'n', false
			}
			i = end
		}
		c, i, ok = jsondec.Next(frame, i)
		if ok && c == ',' {
			i++
			continue
		}
		if ok && c == '}' {
			i++
			break
		}
		return malformed(fmt.Sprintf("expected ',' or '}' at byte %d", i), nil)
	}
	if _, j, ok := jsondec.Next(frame, i); ok {
		return malformed(fmt.Sprintf("trailing data at byte %d", j), nil)
	}
	if !haveType {
		return malformed(`event without "type"`, nil)
	}
	if decoded && isObjectEvent(et) {
		return Event[T]{Type: et, Object: out}, nil
	}
	return finishEvent[T](dec, frame, et, objAt, objNull, kind, offset)
}

// finishEvent decodes an event whose object was not decoded on the way: an ERROR event's
// Status, or an object that came before the event's type.
func finishEvent[T any](dec *jsondec.Decoder, frame []byte, et EventType, objAt int, objNull bool, kind string, offset int64) (Event[T], error) {
	malformed := func(detail string, cause error) (Event[T], error) {
		return Event[T]{}, &DecodeError{Err: ErrMalformedEvent, Offset: offset, Detail: detail, Cause: cause}
	}
	var out T
	switch et {
	case Added, Modified, Deleted, Bookmark:
	case Error:
		if objAt < 0 || objNull {
			return malformed("ERROR event without an object", nil)
		}
		st := &meta.Status{}
		if _, err := jsondec.Decode(dec, frame, objAt, st); err != nil {
			return malformed("ERROR event object is not a Status", err)
		}
		return errorEvent[T](st), nil
	default:
		return Event[T]{}, &DecodeError{Err: ErrUnknownEventType, Offset: offset, Detail: fmt.Sprintf("type %q", truncate(string(et), 64))}
	}
	if objAt < 0 || objNull || frame[objAt] != '{' {
		return malformed(fmt.Sprintf("%s event without an object", et), nil)
	}
	// The object came before the type.
	if kind != "" {
		if got, ok := topLevelString(frame[objAt:], "kind"); ok && got != kind {
			return Event[T]{}, &DecodeError{Err: ErrWrongKind, Offset: offset, Detail: fmt.Sprintf("want kind %q, got %q", kind, truncate(got, 64))}
		}
	}
	if _, err := jsondec.Decode(dec, frame, objAt, &out); err != nil {
		return malformed(fmt.Sprintf("%s event object", et), err)
	}
	return Event[T]{Type: et, Object: out}, nil
}

func isObjectEvent(et EventType) bool {
	return et == Added || et == Modified || et == Deleted || et == Bookmark
}

// errorEvent is the event of an ERROR frame's Status (an empty Status becomes a 500).
func errorEvent[T any](st *meta.Status) Event[T] {
	if st.Code == 0 && st.Reason == "" && st.Message == "" {
		st.Code = 500
		st.Reason = meta.StatusReasonInternalError
		st.Message = "the server sent an ERROR watch event with an empty status"
	}
	return Event[T]{Type: Error, Err: st}
}

// decodeEventStandard is decodeEvent with encoding/json (Config.JSONDecoder JSONStandard):
// the envelope is split first, then the object is unmarshalled.
func decodeEventStandard[T any](frame []byte, kind string, offset int64) (Event[T], error) {
	// The envelope scanner matches brackets without validating what it skips: check the
	// whole frame first, so that both decoders refuse the same frames.
	if !json.Valid(frame) {
		return Event[T]{}, &DecodeError{Err: ErrMalformedEvent, Offset: offset, Detail: "event is not valid JSON"}
	}
	typ, obj, err := parseEnvelope(frame)
	if err != nil {
		return Event[T]{}, &DecodeError{Err: ErrMalformedEvent, Offset: offset, Detail: err.Error()}
	}
	et := EventType(typ)
	switch et {
	case Added, Modified, Deleted, Bookmark:
	case Error:
		if obj == nil {
			return Event[T]{}, &DecodeError{Err: ErrMalformedEvent, Offset: offset, Detail: "ERROR event without an object"}
		}
		st := &meta.Status{}
		if err := json.Unmarshal(obj, st); err != nil {
			return Event[T]{}, &DecodeError{Err: ErrMalformedEvent, Offset: offset, Detail: "ERROR event object is not a Status", Cause: err}
		}
		return errorEvent[T](st), nil
	default:
		return Event[T]{}, &DecodeError{Err: ErrUnknownEventType, Offset: offset, Detail: fmt.Sprintf("type %q", truncate(typ, 64))}
	}
	if obj == nil || obj[0] != '{' {
		return Event[T]{}, &DecodeError{Err: ErrMalformedEvent, Offset: offset, Detail: fmt.Sprintf("%s event without an object", et)}
	}
	if kind != "" {
		got, ok := topLevelString(obj, "kind")
		if ok && got != kind {
			return Event[T]{}, &DecodeError{Err: ErrWrongKind, Offset: offset, Detail: fmt.Sprintf("want kind %q, got %q", kind, truncate(got, 64))}
		}
	}
	var out T
	if err := json.Unmarshal(obj, &out); err != nil {
		return Event[T]{}, &DecodeError{Err: ErrMalformedEvent, Offset: offset, Detail: fmt.Sprintf("%s event object", et), Cause: err}
	}
	return Event[T]{Type: et, Object: out}, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
