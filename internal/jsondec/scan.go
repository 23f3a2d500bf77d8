package jsondec

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit: its scanner rejects a document whose arrays
// and objects nest deeper, and so does this decoder (the same inputs fail).
const maxDepth = 10000

// Flags of a scanned string's content.
const (
	strEscaped  = 1 << iota // holds a backslash escape
	strNonASCII             // holds a byte ≥ 0x80 (possibly invalid UTF-8)
)

// SyntaxError is malformed JSON. Offset is the position of the offending byte (len(data)
// when the input ends too early).
type SyntaxError struct {
	Offset int64
	msg    string
}

// Error returns "jsondec: <what> at offset N".
func (e *SyntaxError) Error() string {
	return "jsondec: " + e.msg + " at offset " + strconv.FormatInt(e.Offset, 10)
}

func (d *decodeState) syntaxErr(off int, format string, args ...any) error {
	return &SyntaxError{Offset: int64(off), msg: fmt.Sprintf(format, args...)}
}

func (d *decodeState) eof() error {
	return &SyntaxError{Offset: int64(len(d.data)), msg: "unexpected end of JSON input"}
}

// badByte reports the byte at off (or the end of the input) as unexpected.
func (d *decodeState) badByte(off int, context string) error {
	if off >= len(d.data) {
		return d.eof()
	}
	return d.syntaxErr(off, "invalid character %s %s", quoteChar(d.data[off]), context)
}

func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// ws skips whitespace and returns the next byte, or an error at the end of the input.
func (d *decodeState) ws() (byte, error) {
	data, i := d.data, d.off
	for i < len(data) {
		c := data[i]
		if c > ' ' || !isSpace(c) {
			d.off = i
			return c, nil
		}
		i++
	}
	d.off = i
	return 0, d.eof()
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special returns the high bit of each of the 8 bytes of w (little-endian) that is a quote,
// a backslash or a control character. Bits above the lowest one may be false alarms (a
// borrow carries into the next byte), so only the lowest is used: it is exact.
func special(w uint64) uint64 {
	q := w ^ (lsb * '"')
	b := w ^ (lsb * '\\')
	return ((q-lsb)&^q | (b-lsb)&^b | (w-lsb*0x20)&^w) & msb
}

// nextSpecial returns the position of the first quote, backslash or control character at
// or after i (len(data) if none) and whether a byte ≥ 0x80 comes before it.
func nextSpecial(data []byte, i int) (int, bool) {
	var high uint64
	for i+8 <= len(data) {
		w := binary.LittleEndian.Uint64(data[i:])
		if m := special(w); m != 0 {
			k := bits.TrailingZeros64(m) >> 3
			// Only the bytes before the special one count for the high-bit test.
			high |= w & (1<<(8*k) - 1)
			return i + k, high&msb != 0
		}
		high |= w
		i += 8
	}
	for ; i < len(data); i++ {
		c := data[i]
		if c == '"' || c == '\\' || c < 0x20 {
			break
		}
		high |= uint64(c)
	}
	return i, high&msb != 0 || high&0x80 != 0
}

// scanString scans the string whose opening quote is at d.off, validating it as
// encoding/json's scanner does (escapes, no control characters; any other byte, valid UTF-8
// or not, is accepted), and returns the bounds of its content and its flags. d.off moves
// past the closing quote.
func (d *decodeState) scanString() (start, end int, flags uint8, err error) {
	data := d.data
	i := d.off + 1
	start = i
	for {
		j, high := nextSpecial(data, i)
		if high {
			flags |= strNonASCII
		}
		i = j
		if i >= len(data) {
			return 0, 0, 0, d.eof()
		}
		switch c := data[i]; {
		case c == '"':
			d.off = i + 1
			return start, i, flags, nil
		case c == '\\':
			flags |= strEscaped
			if i+1 >= len(data) {
				return 0, 0, 0, d.eof()
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for j := i + 2; j < i+6; j++ {
					if j >= len(data) {
						return 0, 0, 0, d.eof()
					}
					if !isHex(data[j]) {
						return 0, 0, 0, d.badByte(j, "in \\u hexadecimal character escape")
					}
				}
				i += 6
			default:
				return 0, 0, 0, d.badByte(i+1, "in string escape code")
			}
		default: // a control character
			return 0, 0, 0, d.badByte(i, "in string literal")
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// stringContent returns the text of a scanned string as bytes: the input itself when it
// needs no change, otherwise a copy in d.buf (valid until the next call) with escapes
// decoded and invalid UTF-8 replaced by U+FFFD, as encoding/json does.
func (d *decodeState) stringContent(start, end int, flags uint8) []byte {
	raw := d.data[start:end]
	if flags == 0 || flags == strNonASCII && utf8.Valid(raw) {
		return raw
	}
	d.buf = unescape(d.buf[:0], raw)
	return d.buf
}

// unescape appends the text of a validated string's content to b.
func unescape(b, s []byte) []byte {
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			switch s[r+1] {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := hex4(s[r+2:])
				r += 6
				if utf16.IsSurrogate(rr) {
					// A valid pair makes one rune; anything else is a replacement character
					// and the second escape (if any) is decoded on its own.
					if r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, hex4(s[r+2:])); dec != unicode.ReplacementChar {
							b = utf8.AppendRune(b, dec)
							r += 6
							continue
						}
					}
					rr = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, rr)
				continue
			default: // '"', '\\', '/'
				b = append(b, s[r+1])
			}
			r += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			b = utf8.AppendRune(b, rr)
			r += size
		}
	}
	return b
}

func hex4(s []byte) rune {
	var r rune
	for _, c := range s[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// scanNumber scans the number at d.off (its first byte is '-' or a digit) by JSON's
// grammar and returns its end; d.off moves there. What follows is the caller's to check.
func (d *decodeState) scanNumber() (int, error) {
	data, i := d.data, d.off
	if data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return 0, d.eof()
	case data[i] == '0':
		i++
	case '1' <= data[i] && data[i] <= '9':
		i++
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	default:
		return 0, d.badByte(i, "in numeric literal")
	}
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) {
			return 0, d.eof()
		}
		if !isDigit(data[i]) {
			return 0, d.badByte(i, "after decimal point in numeric literal")
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) {
			return 0, d.eof()
		}
		if !isDigit(data[i]) {
			return 0, d.badByte(i, "in exponent of numeric literal")
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	d.off = i
	return i, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// literal consumes lit (true, false or null), whose first byte is at d.off.
func (d *decodeState) literal(lit string) error {
	data, i := d.data, d.off
	for j := 1; j < len(lit); j++ {
		if i+j >= len(data) {
			return d.eof()
		}
		if data[i+j] != lit[j] {
			return d.badByte(i+j, "in literal "+lit+" (expecting "+quoteChar(lit[j])+")")
		}
	}
	d.off = i + len(lit)
	return nil
}

// skip consumes the value at d.off (its first byte, not whitespace), checking it is
// well-formed JSON as encoding/json would, without decoding anything: strings are scanned
// eight bytes at a time, containers are tracked on a stack of their closing bytes. It
// allocates nothing unless the value nests deeper than the stack's first 64 levels. The
// fast path works on local copies of the input and position; any error is found again by
// the detailed scanners, which word it.
//
// Kept whole (about 100 lines): one state machine whose state (input, position, stack) lives
// in locals on the decoder's hottest path; split, it would pass that state through calls.
func (d *decodeState) skip() error {
	data := d.data
	i := d.off
	stack := d.stack[:0]
	defer func() { d.stack = stack[:0] }()
	for {
		// A value starts at i.
		if i >= len(data) {
			return d.eof()
		}
		switch c := data[i]; c {
		case '"':
			if i = skipString(data, i); i < 0 {
				return d.skipError(c, -i-1)
			}
		case '{', '[':
			if d.depth+len(stack) >= maxDepth {
				return d.syntaxErr(i, "exceeded max depth")
			}
			close := c + 2 // '}' and ']' are 2 after '{' and '['
			i++
			for i < len(data) && isSpace(data[i]) {
				i++
			}
			if i >= len(data) {
				return d.eof()
			}
			if data[i] == close {
				i++
				break
			}
			stack = append(stack, close)
			if c == '{' {
				var err error
				if i, err = d.skipKeyAt(i); err != nil {
					return err
				}
			}
			continue
		case 't', 'f', 'n':
			lit := "null"
			if c == 't' {
				lit = "true"
			} else if c == 'f' {
				lit = "false"
			}
			if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
				d.off = i
				return d.literal(lit)
			}
			i += len(lit)
		default:
			j := skipNumber(data, i)
			if j < 0 {
				d.off = i
				if c != '-' && !isDigit(c) {
					return d.badByte(i, "looking for beginning of value")
				}
				_, err := d.scanNumber()
				return err
			}
			i = j
		}
		// A value ended at i: close containers until one continues.
		for {
			if len(stack) == 0 {
				d.off = i
				return nil
			}
			for i < len(data) && isSpace(data[i]) {
				i++
			}
			if i >= len(data) {
				return d.eof()
			}
			c, top := data[i], stack[len(stack)-1]
			if c == top {
				i++
				stack = stack[:len(stack)-1]
				continue
			}
			if c != ',' {
				if top == '}' {
					return d.badByte(i, "after object key:value pair")
				}
				return d.badByte(i, "after array element")
			}
			i++
			for i < len(data) && isSpace(data[i]) {
				i++
			}
			if top == '}' {
				var err error
				if i, err = d.skipKeyAt(i); err != nil {
					return err
				}
			}
			break
		}
	}
}

// skipKeyAt consumes `"key" :` and the whitespace after it from i and returns where the
// value starts.
func (d *decodeState) skipKeyAt(i int) (int, error) {
	data := d.data
	if i >= len(data) {
		return 0, d.eof()
	}
	if data[i] != '"' {
		return 0, d.badByte(i, "looking for beginning of object key string")
	}
	if i = skipString(data, i); i < 0 {
		return 0, d.skipError('"', -i-1)
	}
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	if i >= len(data) {
		return 0, d.eof()
	}
	if data[i] != ':' {
		return 0, d.badByte(i, "after object key")
	}
	i++
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i, nil
}

// skipError words the error of a string that skipString refused (start is its quote).
func (d *decodeState) skipError(c byte, start int) error {
	d.off = start
	_, _, _, err := d.scanString()
	return err
}

// skipString returns the position after the string whose quote is at i, or -i-1 if the
// string is malformed or unterminated.
func skipString(data []byte, i int) int {
	start := i
	i++
	for {
		i = skipPlain(data, i)
		if i >= len(data) {
			return -start - 1
		}
		c := data[i]
		switch {
		case c == '"':
			return i + 1
		case c == '\\':
			if i+1 >= len(data) {
				return -start - 1
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) || !isHex(data[i+2]) || !isHex(data[i+3]) || !isHex(data[i+4]) || !isHex(data[i+5]) {
					return -start - 1
				}
				i += 6
			default:
				return -start - 1
			}
		default:
			return -start - 1
		}
	}
}

// skipPlain returns the position of the first quote, backslash or control character at or
// after i (len(data) if none).
func skipPlain(data []byte, i int) int {
	for i+8 <= len(data) {
		if m := special(binary.LittleEndian.Uint64(data[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for ; i < len(data); i++ {
		if c := data[i]; c == '"' || c == '\\' || c < 0x20 {
			break
		}
	}
	return i
}

// skipNumber returns the position after the number at i, or -1 if there is none.
func skipNumber(data []byte, i int) int {
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return -1
	case data[i] == '0':
		i++
	case '1' <= data[i] && data[i] <= '9':
		i++
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	default:
		return -1
	}
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) || !isDigit(data[i]) {
			return -1
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || !isDigit(data[i]) {
			return -1
		}
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	}
	return i
}

// colon consumes the ':' after an object key and the whitespace after it.
func (d *decodeState) colon() error {
	c, err := d.ws()
	if err != nil {
		return err
	}
	if c != ':' {
		return d.badByte(d.off, "after object key")
	}
	d.off++
	_, err = d.ws()
	return err
}

// valueKind names the JSON kind of the value starting with c, for type errors.
func valueKind(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}
