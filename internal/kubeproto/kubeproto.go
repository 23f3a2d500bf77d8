// Package kubeproto converts Kubernetes objects between their JSON form and the
// kube-apiserver's protobuf encoding (application/vnd.kubernetes.protobuf), for the types of
// the kubeschema table. The JSON form is what encoding/json gives with UseNumber:
// map[string]any, []any, string, bool, json.Number and nil.
//
// Decode gives the JSON the kube-apiserver would write for the same object: Go's
// encoding/json applied to the Go struct that k8s.io/api's protobuf unmarshalling fills,
// so zero values of fields without omitempty appear ("containers": null, "status": {}),
// zero values of fields with omitempty do not, and list items carry no apiVersion or kind
// (the messages have no such fields). Encode writes what k8s.io/api's generated marshallers
// write for the Go struct that the JSON would unmarshal into: fields in field-number order,
// non-pointer scalars and structs always (even when zero), map entries sorted by key.
// Fields the schema does not know are skipped on decode and dropped on encode, as the
// kube-apiserver drops unknown JSON fields.
//
//	b, err := kubeproto.EncodeObject(obj)          // "k8s\x00" envelope, type from apiVersion/kind
//	obj, err := kubeproto.DecodeObject(b)          // apiVersion and kind from the envelope
//
// Bad input never panics: every failure is an *Error whose Kind is ErrMalformed (the bytes
// are not protobuf: truncated, bad lengths, unsupported wire types, nesting deeper than 64)
// or ErrSchema (well-formed, but a value does not fit its field: a wire type or JSON type
// the field cannot have, an int32 out of range, an unknown kind).
//
// Quantities are carried as the strings they were given: the kube-apiserver canonicalises
// them ("0.5" becomes "500m"); kubeproto does not.
package kubeproto

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/informerkit/informerkit/internal/kubeschema"
)

// Magic is the prefix of a protobuf-encoded object (before its runtime.Unknown envelope).
var Magic = []byte("k8s\x00")

// MediaType is the protobuf media type of the Kubernetes API.
const MediaType = "application/vnd.kubernetes.protobuf"

// The kinds of errors (match with errors.Is).
var (
	// ErrMalformed: the input is not well-formed protobuf (or lacks the envelope).
	ErrMalformed = errors.New("malformed protobuf")
	// ErrSchema: a value does not fit its field in the schema, or the kind is unknown.
	ErrSchema = errors.New("value does not fit the schema")
)

// Error is a decoding or encoding failure.
type Error struct {
	// Kind is ErrMalformed or ErrSchema.
	Kind error
	// Path is the JSON path of the field ("spec.containers[0].ports"), "" at the top.
	Path string
	// Offset is the byte offset in the protobuf input (decode), -1 on encode.
	Offset int
	// Msg says what is wrong.
	Msg string
	// Field and Value, when a JSON value has the wrong type for its field (encode): the
	// field and the value, from which callers can word the error as encoding/json does.
	// Elem says the value is an element of a list or map field.
	Field *kubeschema.Field
	Value any
	Elem  bool
}

func newError(kind error, path string, off int, format string, args ...any) *Error {
	return &Error{Kind: kind, Path: path, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	s := "kubeproto: " + e.Kind.Error()
	if e.Path != "" {
		s += " at " + e.Path
	}
	if e.Offset >= 0 {
		s += fmt.Sprintf(" (byte %d)", e.Offset)
	}
	return s + ": " + e.Msg
}

// Unwrap returns Kind.
func (e *Error) Unwrap() error { return e.Kind }

// Envelope is the runtime.Unknown that wraps a protobuf object.
type Envelope struct {
	APIVersion, Kind string
	// Raw is the object's message.
	Raw                          []byte
	ContentEncoding, ContentType string
}

// Unwrap parses "k8s\x00" + runtime.Unknown. Raw aliases b.
func Unwrap(b []byte) (Envelope, error) {
	env, _, err := unwrap(b)
	return env, err
}

// unwrap is Unwrap that also returns the offset of Raw in b.
func unwrap(b []byte) (env Envelope, rawOff int, err error) {
	if !bytes.HasPrefix(b, Magic) {
		return env, 0, newError(ErrMalformed, "", 0, "missing the k8s\\x00 prefix")
	}
	r := &reader{buf: b[len(Magic):], off: len(Magic)}
	for !r.done() {
		num, wt, err := r.tag()
		if err != nil {
			return env, 0, err
		}
		if wt != kubeschema.LengthDelimited {
			if err := r.skip(wt); err != nil {
				return env, 0, err
			}
			continue
		}
		v, off, err := r.bytes()
		if err != nil {
			return env, 0, err
		}
		switch num {
		case 1:
			tr := &reader{buf: v, off: off}
			for !tr.done() {
				n, wt, err := tr.tag()
				if err != nil {
					return env, 0, err
				}
				if wt != kubeschema.LengthDelimited {
					if err := tr.skip(wt); err != nil {
						return env, 0, err
					}
					continue
				}
				s, _, err := tr.bytes()
				if err != nil {
					return env, 0, err
				}
				switch n {
				case 1:
					env.APIVersion = string(s)
				case 2:
					env.Kind = string(s)
				}
			}
		case 2:
			env.Raw, rawOff = v, off
		case 3:
			env.ContentEncoding = string(v)
		case 4:
			env.ContentType = string(v)
		}
	}
	return env, rawOff, nil
}

// Wrap returns "k8s\x00" + runtime.Unknown{apiVersion, kind, raw} as the kube-apiserver
// writes it.
func Wrap(apiVersion, kind string, raw []byte) []byte {
	var tm []byte
	tm = appendString(tm, 1, apiVersion)
	tm = appendString(tm, 2, kind)
	b := make([]byte, 0, len(Magic)+len(tm)+len(raw)+16)
	b = append(b, Magic...)
	b = appendBytes(b, 1, tm)
	if raw != nil {
		b = appendBytes(b, 2, raw)
	}
	b = appendString(b, 3, "")
	b = appendString(b, 4, "")
	return b
}

// DecodeObject decodes an enveloped object of a kind the table has, and sets apiVersion and
// kind from the envelope (as the Go decoder sets TypeMeta).
func DecodeObject(b []byte) (map[string]any, error) {
	env, rawOff, err := unwrap(b)
	if err != nil {
		return nil, err
	}
	if env.ContentEncoding != "" {
		return nil, newError(ErrSchema, "", -1, "content encoding %q is not supported", env.ContentEncoding)
	}
	t, err := typeOf(env.APIVersion, env.Kind)
	if err != nil {
		return nil, err
	}
	m, err := decodeAt(t, env.Raw, rawOff)
	if err != nil {
		return nil, err
	}
	m["apiVersion"] = env.APIVersion
	m["kind"] = env.Kind
	return m, nil
}

// EncodeObject encodes an object whose apiVersion and kind name a kind of the table, in
// its envelope.
func EncodeObject(obj map[string]any) ([]byte, error) {
	av, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	t, err := typeOf(av, kind)
	if err != nil {
		return nil, err
	}
	raw, err := Encode(t, obj)
	if err != nil {
		return nil, err
	}
	return Wrap(av, kind, raw), nil
}

// TypeOf returns the table's type for an apiVersion ("v1", "apps/v1") and kind (an object
// or a list kind).
func TypeOf(apiVersion, kind string) (*kubeschema.Type, bool) {
	t, err := typeOf(apiVersion, kind)
	return t, err == nil
}

func typeOf(apiVersion, kind string) (*kubeschema.Type, error) {
	group, version := "", apiVersion
	if i := bytes.IndexByte([]byte(apiVersion), '/'); i >= 0 {
		group, version = apiVersion[:i], apiVersion[i+1:]
	}
	k, ok := kubeschema.ForKind(group, version, kind)
	if !ok && version == "v1" {
		// meta.k8s.io kinds are registered in every group version: a Status is "v1".
		k, ok = kubeschema.ForKind("meta.k8s.io", "v1", kind)
	}
	if !ok {
		return nil, newError(ErrSchema, "", -1, "no protobuf schema for kind %q of %q", kind, apiVersion)
	}
	return k.Type, nil
}

// WatchEvent returns a meta.k8s.io/v1 WatchEvent message (no envelope: watch frames carry
// none) of an event type ("ADDED", ...) and an object already encoded with EncodeObject.
func WatchEvent(eventType string, object []byte) []byte {
	var ext []byte
	if object != nil {
		ext = appendBytes(ext, 1, object)
	}
	b := make([]byte, 0, len(eventType)+len(ext)+12)
	b = appendString(b, 1, eventType)
	b = appendBytes(b, 2, ext)
	return b
}

// ParseWatchEvent parses a WatchEvent message: the event type and the object's bytes (an
// enveloped object).
func ParseWatchEvent(b []byte) (eventType string, object []byte, err error) {
	r := &reader{buf: b}
	for !r.done() {
		num, wt, err := r.tag()
		if err != nil {
			return "", nil, err
		}
		if wt != kubeschema.LengthDelimited {
			if err := r.skip(wt); err != nil {
				return "", nil, err
			}
			continue
		}
		v, off, err := r.bytes()
		if err != nil {
			return "", nil, err
		}
		switch num {
		case 1:
			eventType = string(v)
		case 2:
			er := &reader{buf: v, off: off}
			for !er.done() {
				n, wt, err := er.tag()
				if err != nil {
					return "", nil, err
				}
				if n == 1 && wt == kubeschema.LengthDelimited {
					if object, _, err = er.bytes(); err != nil {
						return "", nil, err
					}
					continue
				}
				if err := er.skip(wt); err != nil {
					return "", nil, err
				}
			}
		}
	}
	return eventType, object, nil
}

// AppendFrame appends a length-delimited watch frame (4-byte big-endian length, then msg).
func AppendFrame(b, msg []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(msg)))
	return append(b, msg...)
}
