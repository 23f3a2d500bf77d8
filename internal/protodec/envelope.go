package protodec

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/informerkit/informerkit/internal/kubeschema"
)

// Magic is the prefix of a protobuf-encoded object, before its runtime.Unknown envelope.
var Magic = []byte("k8s\x00")

// Envelope is the runtime.Unknown that wraps an object. Its slices alias the input.
type Envelope struct {
	APIVersion, Kind []byte
	// Raw is the object's message.
	Raw                          []byte
	ContentEncoding, ContentType []byte
}

// Type returns the schema type of the envelope's kind (object or list kind).
func (e Envelope) Type() (*kubeschema.Type, bool) {
	return TypeOf(e.APIVersion, e.Kind)
}

// TypeOf returns the schema type of an apiVersion ("v1", "apps/v1") and a kind (object or
// list kind); meta.k8s.io kinds (Status) are found under any version "v1", as the
// kube-apiserver registers them in every group.
func TypeOf(apiVersion, kind []byte) (*kubeschema.Type, bool) {
	group, version := "", string(apiVersion)
	if i := bytes.IndexByte(apiVersion, '/'); i >= 0 {
		group, version = string(apiVersion[:i]), string(apiVersion[i+1:])
	}
	k, ok := kubeschema.ForKind(group, version, string(kind))
	if !ok && version == "v1" {
		k, ok = kubeschema.ForKind("meta.k8s.io", "v1", string(kind))
	}
	return k.Type, ok
}

// ParseEnvelope parses "k8s\x00" + runtime.Unknown without allocating. An envelope whose
// content encoding is set (the kube-apiserver never sets one) is refused.
func ParseEnvelope(b []byte) (Envelope, error) {
	var env Envelope
	if !bytes.HasPrefix(b, Magic) {
		return env, malformed("missing the k8s\\x00 prefix")
	}
	err := eachBytesField(b[len(Magic):], func(num int, v []byte) error {
		switch num {
		case 1:
			return eachBytesField(v, func(n int, s []byte) error {
				switch n {
				case 1:
					env.APIVersion = s
				case 2:
					env.Kind = s
				}
				return nil
			})
		case 2:
			env.Raw = v
		case 3:
			env.ContentEncoding = v
		case 4:
			env.ContentType = v
		}
		return nil
	})
	if err != nil {
		return env, err
	}
	if len(env.ContentEncoding) > 0 {
		return env, schemaErr("content encoding %q is not supported", truncate(env.ContentEncoding))
	}
	return env, nil
}

// ParseWatchEvent parses a meta.k8s.io WatchEvent message (type = 1, object = 2, a
// RawExtension whose raw = 1 is the enveloped object) without allocating.
func ParseWatchEvent(b []byte) (eventType, object []byte, err error) {
	err = eachBytesField(b, func(num int, v []byte) error {
		switch num {
		case 1:
			eventType = v
		case 2:
			return eachBytesField(v, func(n int, raw []byte) error {
				if n == 1 {
					object = raw
				}
				return nil
			})
		}
		return nil
	})
	return eventType, object, err
}

// eachBytesField calls fn with every length-delimited field of a message and checks the
// others; fn's slices alias b.
func eachBytesField(b []byte, fn func(num int, v []byte) error) error {
	for i := 0; i < len(b); {
		num, wt, n, err := tag(b, i)
		if err != nil {
			return err
		}
		v, next, err := value(b, n, wt)
		if err != nil {
			return err
		}
		i = next
		if wt == 2 {
			if err := fn(num, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// varint reads a varint at b[i:] and returns it and the index after it.
func varint(b []byte, i int) (uint64, int, error) {
	if i < len(b) && b[i] < 0x80 {
		return uint64(b[i]), i + 1, nil
	}
	var v uint64
	for k := 0; k < 10; k++ {
		if i >= len(b) {
			return 0, 0, malformed("truncated varint at byte %d", i)
		}
		c := b[i]
		i++
		if k == 9 && c > 1 {
			return 0, 0, malformed("varint overflows 64 bits at byte %d", i-1)
		}
		v |= uint64(c&0x7f) << (7 * k)
		if c < 0x80 {
			return v, i, nil
		}
	}
	return 0, 0, malformed("varint longer than 10 bytes at byte %d", i)
}

// tag reads a field key: the field number, the wire type and the index after the key.
func tag(b []byte, i int) (num int, wt uint8, next int, err error) {
	k, next, err := varint(b, i)
	if err != nil {
		return 0, 0, 0, err
	}
	n, w := k>>3, uint8(k&7)
	if n == 0 || n > math.MaxInt32>>2 {
		return 0, 0, 0, malformed("invalid field number %d at byte %d", n, i)
	}
	return int(n), w, next, nil
}

// value reads the value of wire type wt at b[i:]: a varint or fixed value (returned as
// bytes of b) or a length-delimited value (its content).
func value(b []byte, i int, wt uint8) (v []byte, next int, err error) {
	switch wt {
	case 0:
		_, next, err = varint(b, i)
		if err != nil {
			return nil, 0, err
		}
		return b[i:next], next, nil
	case 1:
		if len(b)-i < 8 {
			return nil, 0, malformed("truncated fixed64 at byte %d", i)
		}
		return b[i : i+8], i + 8, nil
	case 2:
		l, j, err := varint(b, i)
		if err != nil {
			return nil, 0, err
		}
		if l > uint64(len(b)-j) {
			return nil, 0, malformed("length %d exceeds the %d bytes left at byte %d", l, len(b)-j, j)
		}
		return b[j : j+int(l)], j + int(l), nil
	case 5:
		if len(b)-i < 4 {
			return nil, 0, malformed("truncated fixed32 at byte %d", i)
		}
		return b[i : i+4], i + 4, nil
	}
	return nil, 0, malformed("unsupported wire type %d at byte %d", wt, i)
}

func fixed64(v []byte) uint64 { return binary.LittleEndian.Uint64(v) }

func truncate(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}

// ParseTypeMeta parses a runtime.TypeMeta message (apiVersion = 1, kind = 2), the first
// field of the envelope, without allocating.
func ParseTypeMeta(b []byte) (apiVersion, kind []byte, err error) {
	err = eachBytesField(b, func(n int, s []byte) error {
		switch n {
		case 1:
			apiVersion = s
		case 2:
			kind = s
		}
		return nil
	})
	return apiVersion, kind, err
}
