package kubeproto

import (
	"encoding/binary"
	"math"

	"github.com/informerkit/informerkit/internal/kubeschema"
)

// Low-level protobuf wire reading and writing (https://protobuf.dev/programming-guides/encoding/).

// maxDepth bounds message nesting on decode and encode: the deepest built-in type is far
// shallower, and arbitrary input must not exhaust the stack.
const maxDepth = 64

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendTag(b []byte, num int, wt kubeschema.WireType) []byte {
	return appendVarint(b, uint64(num)<<3|uint64(wt))
}

func appendBytes(b []byte, num int, v []byte) []byte {
	b = appendTag(b, num, kubeschema.LengthDelimited)
	b = appendVarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendString(b []byte, num int, v string) []byte {
	b = appendTag(b, num, kubeschema.LengthDelimited)
	b = appendVarint(b, uint64(len(v)))
	return append(b, v...)
}

// reader consumes a protobuf message; off is the offset of buf[0] in the outermost input
// (for error messages).
type reader struct {
	buf []byte
	pos int
	off int
}

func (r *reader) done() bool { return r.pos >= len(r.buf) }

func (r *reader) at() int { return r.off + r.pos }

func (r *reader) varint() (uint64, error) {
	var v uint64
	for i := 0; i < 10; i++ {
		if r.pos >= len(r.buf) {
			return 0, r.errf(ErrMalformed, "truncated varint")
		}
		c := r.buf[r.pos]
		r.pos++
		if i == 9 && c > 1 {
			return 0, r.errf(ErrMalformed, "varint overflows 64 bits")
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, r.errf(ErrMalformed, "varint longer than 10 bytes")
}

func (r *reader) fixed64() (uint64, error) {
	if len(r.buf)-r.pos < 8 {
		return 0, r.errf(ErrMalformed, "truncated fixed64")
	}
	v := binary.LittleEndian.Uint64(r.buf[r.pos:])
	r.pos += 8
	return v, nil
}

func (r *reader) fixed32() (uint32, error) {
	if len(r.buf)-r.pos < 4 {
		return 0, r.errf(ErrMalformed, "truncated fixed32")
	}
	v := binary.LittleEndian.Uint32(r.buf[r.pos:])
	r.pos += 4
	return v, nil
}

// bytes returns the next length-delimited value and the offset where it starts.
func (r *reader) bytes() ([]byte, int, error) {
	n, err := r.varint()
	if err != nil {
		return nil, 0, err
	}
	if n > uint64(len(r.buf)-r.pos) {
		return nil, 0, r.errf(ErrMalformed, "length %d exceeds the %d bytes left", n, len(r.buf)-r.pos)
	}
	start := r.pos
	r.pos += int(n)
	return r.buf[start:r.pos], r.off + start, nil
}

// tag reads a field key.
func (r *reader) tag() (int, kubeschema.WireType, error) {
	start := r.pos
	k, err := r.varint()
	if err != nil {
		return 0, 0, err
	}
	num, wt := k>>3, kubeschema.WireType(k&7)
	if num == 0 || num > math.MaxInt32>>2 {
		r.pos = start
		return 0, 0, r.errf(ErrMalformed, "invalid field number %d", num)
	}
	switch wt {
	case kubeschema.Varint, kubeschema.Fixed64, kubeschema.LengthDelimited, kubeschema.Fixed32:
	default:
		r.pos = start
		return 0, 0, r.errf(ErrMalformed, "unsupported wire type %d (field %d)", wt, num)
	}
	return int(num), wt, nil
}

// skip consumes a value of wire type wt (a field the schema does not know).
func (r *reader) skip(wt kubeschema.WireType) error {
	var err error
	switch wt {
	case kubeschema.Varint:
		_, err = r.varint()
	case kubeschema.Fixed64:
		_, err = r.fixed64()
	case kubeschema.Fixed32:
		_, err = r.fixed32()
	case kubeschema.LengthDelimited:
		_, _, err = r.bytes()
	}
	return err
}

func (r *reader) errf(kind error, format string, args ...any) *Error {
	return newError(kind, "", r.at(), format, args...)
}
