package kubecbor

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// FromJSON appends to dst the CBOR encoding of the JSON value js as the kube-apiserver
// writes it (see the package doc): the self-described tag first, members in the order of
// the JSON, strings as byte strings, integers as integers, other numbers as the shortest
// float that keeps their value.
func FromJSON(dst, js []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	out := append(dst, SelfDescribed...)
	out, err := encodeValue(out, dec)
	if err != nil {
		return dst, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return dst, errors.New("kubecbor: data after the JSON value")
	}
	return out, nil
}

func appendHead(b []byte, major byte, n uint64) []byte {
	m := major << 5
	switch {
	case n < 24:
		return append(b, m|byte(n))
	case n <= math.MaxUint8:
		return append(b, m|24, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, m|25), uint16(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, m|26), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, m|27), n)
}

// encodeValue encodes the next JSON value of dec (checked whole by dec first). It is the
// test server's encoder: clear rather than fast.
func encodeValue(b []byte, dec *json.Decoder) ([]byte, error) {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return b, fmt.Errorf("kubecbor: %w", err)
	}
	return appendOrdered(b, raw)
}

// appendOrdered encodes the JSON value raw keeping object members in their order.
func appendOrdered(b []byte, raw []byte) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return b, errors.New("kubecbor: empty JSON value")
	}
	switch raw[0] {
	case '{':
		var members []json.RawMessage
		d := json.NewDecoder(bytes.NewReader(raw))
		d.Token()
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return b, fmt.Errorf("kubecbor: %w", err)
			}
			var v json.RawMessage
			if err := d.Decode(&v); err != nil {
				return b, fmt.Errorf("kubecbor: %w", err)
			}
			ks, _ := json.Marshal(k)
			members = append(members, ks, v)
		}
		b = appendHead(b, 5, uint64(len(members)/2))
		var err error
		for _, m := range members {
			if b, err = appendOrdered(b, m); err != nil {
				return b, err
			}
		}
		return b, nil
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return b, fmt.Errorf("kubecbor: %w", err)
		}
		b = appendHead(b, 4, uint64(len(items)))
		var err error
		for _, it := range items {
			if b, err = appendOrdered(b, it); err != nil {
				return b, err
			}
		}
		return b, nil
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return b, fmt.Errorf("kubecbor: %w", err)
		}
		return append(appendHead(b, 2, uint64(len(s))), s...), nil
	case 't':
		return append(b, 0xf5), nil
	case 'f':
		return append(b, 0xf4), nil
	case 'n':
		return append(b, 0xf6), nil
	}
	return appendNumber(b, string(raw))
}

// appendNumber encodes a JSON number: an integer in range as an integer, anything else as
// the shortest float (16, 32 or 64 bits) equal to its float64 value.
func appendNumber(b []byte, s string) ([]byte, error) {
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return appendHead(b, 0, u), nil
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil && i < 0 {
		return appendHead(b, 1, uint64(-(i + 1))), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return b, fmt.Errorf("kubecbor: number %q: %w", s, err)
	}
	return AppendFloat(b, f), nil
}

// AppendFloat appends f in the shortest CBOR float that keeps its value.
func AppendFloat(b []byte, f float64) []byte {
	if h, ok := toFloat16(f); ok {
		return binary.BigEndian.AppendUint16(append(b, 0xf9), h)
	}
	if f32 := float32(f); float64(f32) == f {
		return binary.BigEndian.AppendUint32(append(b, 0xfa), math.Float32bits(f32))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xfb), math.Float64bits(f))
}

// toFloat16 returns the half-precision bits of f when they hold f exactly.
func toFloat16(f float64) (uint16, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	bits := math.Float64bits(f)
	sign := uint16(bits>>48) & 0x8000
	if f == 0 {
		return sign, true
	}
	frac, exp := math.Frexp(math.Abs(f)) // f = frac * 2^exp, frac in [0.5, 1)
	e := exp - 1                         // f = (2*frac) * 2^e
	var h uint16
	switch {
	case e >= -14 && e <= 15:
		m := (2*frac - 1) * 1024
		if m != math.Trunc(m) {
			return 0, false
		}
		h = sign | uint16(e+15)<<10 | uint16(m)
	case e >= -24 && e < -14:
		m := math.Abs(f) * (1 << 24)
		if m != math.Trunc(m) {
			return 0, false
		}
		h = sign | uint16(m)
	default:
		return 0, false
	}
	return h, float16(h) == f
}
