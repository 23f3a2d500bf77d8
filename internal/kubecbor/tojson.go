package kubecbor

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit, which the JSON written must stay within.
const maxDepth = 10000

// SelfDescribed is the encoding of tag 55799, which the kube-apiserver writes before every
// object (RFC 8949 section 3.4.6).
var SelfDescribed = []byte{0xd9, 0xd9, 0xf7}

// SyntaxError is malformed or unsupported CBOR: what was wrong and the offset of the byte
// where it was found.
type SyntaxError struct {
	Offset int64
	Msg    string
	// truncated: the input ended inside the item (errors.Is(err, ErrTruncated)).
	truncated bool
}

// Is reports whether target is ErrTruncated and the input ended inside the item.
func (e *SyntaxError) Is(target error) bool { return target == ErrTruncated && e.truncated }

func (e *SyntaxError) Error() string {
	return "kubecbor: " + e.Msg + " at offset " + strconv.FormatInt(e.Offset, 10)
}

// ErrTruncated is wrapped by the *SyntaxError of an item that the input ends inside: with
// more bytes (of a stream) it may become whole.
var ErrTruncated = errors.New("kubecbor: truncated data item")

type transcoder struct {
	src []byte
	off int
	out []byte
}

func (t *transcoder) fail(off int, format string, args ...any) error {
	return &SyntaxError{Offset: int64(off), Msg: fmt.Sprintf(format, args...)}
}

func (t *transcoder) short() error {
	return &SyntaxError{Offset: int64(len(t.src)), Msg: "data item ends early", truncated: true}
}

// ToJSON appends to dst the JSON text of the one CBOR data item that is the whole of src
// and returns the extended buffer. Map members keep their order; strings are escaped as
// encoding/json escapes them (without HTML escaping).
func ToJSON(dst, src []byte) ([]byte, error) {
	t := transcoder{src: src, out: dst}
	if err := t.value(0); err != nil {
		return dst, err
	}
	if t.off != len(src) {
		return dst, t.fail(t.off, "data after the top-level item")
	}
	return t.out, nil
}

// ItemLen returns the length of the CBOR data item at the start of b, so that a stream of
// items (a CBOR sequence) can be cut into items. An item that b ends inside is a
// *SyntaxError wrapping ErrTruncated.
func ItemLen(b []byte) (int, error) {
	t := transcoder{src: b, out: nil}
	t.out = nil
	if err := t.skip(0); err != nil {
		return 0, err
	}
	return t.off, nil
}

// head reads an item's initial byte and argument: major type, additional info, argument.
func (t *transcoder) head() (major byte, info byte, arg uint64, err error) {
	if t.off >= len(t.src) {
		return 0, 0, 0, t.short()
	}
	c := t.src[t.off]
	major, info = c>>5, c&0x1f
	start := t.off
	t.off++
	var n int
	switch {
	case info < 24:
		return major, info, uint64(info), nil
	case info == 24:
		n = 1
	case info == 25:
		n = 2
	case info == 26:
		n = 4
	case info == 27:
		n = 8
	case info == 31:
		return 0, 0, 0, t.fail(start, "indefinite-length item (the kube-apiserver writes none)")
	default:
		return 0, 0, 0, t.fail(start, "reserved additional information %d", info)
	}
	if len(t.src)-t.off < n {
		return 0, 0, 0, t.short()
	}
	b := t.src[t.off : t.off+n]
	t.off += n
	switch n {
	case 1:
		arg = uint64(b[0])
	case 2:
		arg = uint64(binary.BigEndian.Uint16(b))
	case 4:
		arg = uint64(binary.BigEndian.Uint32(b))
	default:
		arg = binary.BigEndian.Uint64(b)
	}
	return major, info, arg, nil
}

// length checks that a count of bytes (or of items, each at least one byte) fits in the
// input left.
func (t *transcoder) length(arg uint64, start int) (int, error) {
	if arg > uint64(len(t.src)-t.off) {
		if arg > math.MaxInt32 {
			return 0, t.fail(start, "length %d larger than the input", arg)
		}
		return 0, t.short()
	}
	return int(arg), nil
}

// skip checks and passes the item at t.off (ItemLen); it writes nothing.
func (t *transcoder) skip(depth int) error {
	out := t.out
	t.out = t.out[:0:0]
	err := t.value(depth)
	t.out = out
	return err
}

func (t *transcoder) value(depth int) error {
	if depth >= maxDepth {
		return t.fail(t.off, "nested deeper than %d", maxDepth)
	}
	start := t.off
	major, info, arg, err := t.head()
	if err != nil {
		return err
	}
	switch major {
	case 0:
		t.out = strconv.AppendUint(t.out, arg, 10)
	case 1:
		t.out = append(t.out, '-')
		if arg == math.MaxUint64 {
			t.out = append(t.out, "18446744073709551616"...)
		} else {
			t.out = strconv.AppendUint(t.out, arg+1, 10)
		}
	case 2, 3:
		return t.str(arg, start, false)
	case 4:
		n, err := t.length(arg, start)
		if err != nil {
			return err
		}
		t.out = append(t.out, '[')
		for i := range n {
			if i > 0 {
				t.out = append(t.out, ',')
			}
			if err := t.value(depth + 1); err != nil {
				return err
			}
		}
		t.out = append(t.out, ']')
	case 5:
		return t.object(arg, start, depth)
	case 6:
		return t.tag(arg, start, depth)
	default:
		return t.simple(info, arg, start)
	}
	return nil
}

func (t *transcoder) object(arg uint64, start, depth int) error {
	n, err := t.length(arg, start)
	if err != nil {
		return err
	}
	t.out = append(t.out, '{')
	for i := range n {
		if i > 0 {
			t.out = append(t.out, ',')
		}
		kstart := t.off
		for t.off+2 < len(t.src) && t.src[t.off] == 0xd9 && t.src[t.off+1] == 0xd9 && t.src[t.off+2] == 0xf7 {
			t.off += 3
		}
		major, _, karg, err := t.head()
		if err != nil {
			return err
		}
		if major != 2 && major != 3 {
			return t.fail(kstart, "map key of major type %d (keys must be strings)", major)
		}
		if err := t.str(karg, kstart, false); err != nil {
			return err
		}
		t.out = append(t.out, ':')
		if err := t.value(depth + 1); err != nil {
			return err
		}
	}
	t.out = append(t.out, '}')
	return nil
}

func (t *transcoder) tag(num uint64, start, depth int) error {
	switch num {
	case 55799: // self-described CBOR: no meaning of its own
		return t.value(depth)
	case 21, 22, 23: // a byte string to be written in base64url, base64, base16
		bstart := t.off
		major, _, arg, err := t.head()
		if err != nil {
			return err
		}
		if major != 2 {
			// The tag only asks something of byte strings; other items pass unchanged.
			t.off = bstart
			return t.value(depth)
		}
		n, err := t.length(arg, bstart)
		if err != nil {
			return err
		}
		b := t.src[t.off : t.off+n]
		t.off += n
		t.out = append(t.out, '"')
		switch num {
		case 21:
			t.out = base64.RawURLEncoding.AppendEncode(t.out, b)
		case 22:
			t.out = base64.StdEncoding.AppendEncode(t.out, b)
		default:
			t.out = appendHex(t.out, b)
		}
		t.out = append(t.out, '"')
		return nil
	case 0: // an RFC 3339 time, a text string
		tstart := t.off
		major, _, arg, err := t.head()
		if err != nil {
			return err
		}
		if major != 3 {
			return t.fail(tstart, "tag 0 on major type %d (it must be a text string)", major)
		}
		return t.str(arg, tstart, true)
	}
	return t.fail(start, "tag %d (not one the kube-apiserver writes)", num)
}

func appendHex(dst, b []byte) []byte {
	const digits = "0123456789abcdef"
	for _, c := range b {
		dst = append(dst, digits[c>>4], digits[c&0xf])
	}
	return dst
}

func (t *transcoder) simple(info byte, arg uint64, start int) error {
	var f float64
	switch info {
	case 20:
		t.out = append(t.out, "false"...)
		return nil
	case 21:
		t.out = append(t.out, "true"...)
		return nil
	case 22:
		t.out = append(t.out, "null"...)
		return nil
	case 25:
		f = float16(uint16(arg))
	case 26:
		f = float64(math.Float32frombits(uint32(arg)))
	case 27:
		f = math.Float64frombits(arg)
	default:
		return t.fail(start, "simple value %d (only false, true, null and floats are JSON)", arg)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return t.fail(start, "%v is not a JSON number", f)
	}
	t.out = appendFloat(t.out, f)
	return nil
}

// appendFloat writes f as encoding/json writes a float64.
func appendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	fmtc := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmtc = 'e'
	}
	b = strconv.AppendFloat(b, f, fmtc, -1, 64)
	if fmtc == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// float16 converts an IEEE 754 half-precision value.
func float16(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	mant := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(mant, -24)
	case 31:
		if mant == 0 {
			return math.Inf(int(sign))
		}
		return math.NaN()
	}
	return sign * math.Ldexp(1+mant/1024, exp-15)
}

// str writes the string of n=arg bytes at t.off as a JSON string. Both byte and text
// strings must hold UTF-8: the kube-apiserver writes Go strings as byte strings.
func (t *transcoder) str(arg uint64, start int, _ bool) error {
	n, err := t.length(arg, start)
	if err != nil {
		return err
	}
	s := t.src[t.off : t.off+n]
	t.off += n
	if !utf8.Valid(s) {
		return t.fail(start, "string is not UTF-8")
	}
	t.out = appendQuoted(t.out, s)
	return nil
}

// appendQuoted writes s as a JSON string, escaping as encoding/json does with HTML escaping
// off (control characters, quote, backslash, U+2028 and U+2029).
func appendQuoted(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	i := 0
	for j := 0; j < len(s); {
		c := s[j]
		if c >= 0x20 && c != '"' && c != '\\' && c < 0x80 {
			j++
			continue
		}
		if c < 0x80 {
			b = append(b, s[i:j]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			j++
			i = j
			continue
		}
		r, size := utf8.DecodeRune(s[j:])
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[i:j]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i = j + size
		}
		j += size
	}
	b = append(b, s[i:]...)
	return append(b, '"')
}
