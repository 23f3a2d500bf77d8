package apiclient

import (
	"bytes"
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/internal/protodec"
	"github.com/informerkit/informerkit/meta"
)

// Decoding of protobuf bodies and watch events: objects in the "k8s\x00" + runtime.Unknown
// envelope, decoded by internal/protodec straight into the caller's Go type.

// envelopeType returns the schema type of an envelope: the resource's own kind (or list
// kind) without a lookup, any other kind of the table through it.
func envelopeType(pk *protoKind, env protodec.Envelope, list bool) (*kubeschema.Type, error) {
	if pk != nil && string(env.APIVersion) == pk.apiVersion {
		if !list && string(env.Kind) == pk.kind {
			return pk.obj, nil
		}
		if list && string(env.Kind) == pk.listKind {
			return pk.list, nil
		}
	}
	st, ok := env.Type()
	if !ok {
		return nil, fmt.Errorf("no protobuf schema for kind %q of %q", truncate(string(env.Kind), 64), truncate(string(env.APIVersion), 64))
	}
	return st, nil
}

// decodeProto decodes an enveloped object (a GET, a write's answer, or with list a LIST
// page) into a T.
func decodeProto[T any](d *objectDecoder, pk *protoKind, body []byte, list bool) (T, error) {
	var out T
	env, err := protodec.ParseEnvelope(body)
	if err != nil {
		return out, err
	}
	st, err := envelopeType(pk, env, list)
	if err != nil {
		return out, err
	}
	if err := d.plan(reflect.TypeFor[T](), st).Decode(d.proto(), env.Raw, unsafe.Pointer(&out), env.APIVersion, env.Kind); err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}

var statusType = sync.OnceValue(func() *kubeschema.Type {
	k, _ := kubeschema.ForKind("meta.k8s.io", "v1", "Status")
	return k.Type
})

// protoStatus decodes an enveloped Status (an error response or an ERROR event's object).
// An ERROR event's object of another kind is decoded into a Status field by field, as the
// JSON path decodes it (an error response must be a Status: statusKind).
func protoStatus(pd *protodec.Decoder, obj []byte, statusKind bool) (*meta.Status, error) {
	env, err := protodec.ParseEnvelope(obj)
	if err != nil {
		return nil, err
	}
	t := statusType()
	if string(env.Kind) != "Status" {
		if statusKind {
			return nil, fmt.Errorf("the object is a %q, not a Status", truncate(string(env.Kind), 64))
		}
		if t, err = envelopeType(nil, env, false); err != nil {
			return nil, err
		}
	}
	st := &meta.Status{}
	plan := protodec.PlanFor(reflect.TypeFor[meta.Status](), t, false)
	if err := plan.Decode(pd, env.Raw, unsafe.Pointer(st), env.APIVersion, env.Kind); err != nil {
		return nil, err
	}
	return st, nil
}

// decodeProtoEvent decodes one protobuf watch event, a meta.k8s.io WatchEvent message, into
// an Event[T], as decodeEvent does a JSON one: kind, if not "", is the kind the object
// must have; an ERROR event decodes to Event{Type: Error, Err: *Status}; a frame that
// cannot be decoded returns a *DecodeError.
func decodeProtoEvent[T any](d *objectDecoder, pk *protoKind, frame []byte, kind string, offset int64) (Event[T], error) {
	malformed := func(detail string, cause error) (Event[T], error) {
		return Event[T]{}, &DecodeError{Err: ErrMalformedEvent, Offset: offset, Detail: detail, Cause: cause}
	}
	typ, obj, err := protodec.ParseWatchEvent(frame)
	if err != nil {
		return malformed("event is not a WatchEvent message", err)
	}
	et := eventType(typ)
	switch et {
	case Added, Modified, Deleted, Bookmark:
	case Error:
		if len(obj) == 0 {
			return malformed("ERROR event without an object", nil)
		}
		st, err := protoStatus(d.proto(), obj, false)
		if err != nil {
			return malformed("ERROR event object is not a Status", err)
		}
		return errorEvent[T](st), nil
	default:
		// An absent type is protobuf's empty string: an unknown type, as JSON's "".
		return Event[T]{}, &DecodeError{Err: ErrUnknownEventType, Offset: offset, Detail: fmt.Sprintf("type %q", truncate(string(typ), 64))}
	}
	if len(obj) == 0 {
		return malformed(fmt.Sprintf("%s event without an object", et), nil)
	}
	env, err := protodec.ParseEnvelope(obj)
	if err != nil {
		return malformed(fmt.Sprintf("%s event object", et), err)
	}
	if kind != "" && string(env.Kind) != kind {
		return Event[T]{}, &DecodeError{Err: ErrWrongKind, Offset: offset, Detail: fmt.Sprintf("want kind %q, got %q", kind, truncate(string(env.Kind), 64))}
	}
	st, err := envelopeType(pk, env, false)
	if err != nil {
		return malformed(fmt.Sprintf("%s event object", et), err)
	}
	var out T
	if err := d.plan(reflect.TypeFor[T](), st).Decode(d.proto(), env.Raw, unsafe.Pointer(&out), env.APIVersion, env.Kind); err != nil {
		return malformed(fmt.Sprintf("%s event object", et), err)
	}
	return Event[T]{Type: et, Object: out}, nil
}

// isProtobufBody reports whether a body is an enveloped protobuf object.
func isProtobufBody(b []byte) bool { return bytes.HasPrefix(b, protodec.Magic) }
