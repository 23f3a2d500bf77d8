package apiclient

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// frameReader splits a byte stream into top-level JSON objects without decoding them. It
// keeps at most about max bytes buffered: an object longer than max is an error, found as
// soon as max bytes of it have been read.
type frameReader struct {
	r     io.Reader
	buf   []byte
	start int // first unconsumed byte
	end   int // end of valid data
	max   int

	// State of the frame being scanned (valid while inFrame).
	inFrame  bool
	scan     int // next byte to scan
	depth    int
	inString bool

	base   int64 // stream offset of buf[0]
	rerr   error // sticky read error
	frames int64
}

const initialFrameBuffer = 32 << 10

func newFrameReader(r io.Reader, max int) *frameReader {
	size := initialFrameBuffer
	if max+1 < size {
		size = max + 1
	}
	return &frameReader{r: r, buf: make([]byte, size), max: max}
}

// reset makes f read the stream r from its start, keeping its buffer (and its count of
// frames, so that only the first stream's start is described in errors).
func (f *frameReader) reset(r io.Reader) {
	f.r, f.start, f.end, f.base, f.rerr = r, 0, 0, 0, nil
	f.inFrame, f.scan, f.depth, f.inString = false, 0, 0, false
}

// next returns the next top-level JSON object; the slice is valid until the following call.
// It returns io.EOF when the stream ends between objects, io.ErrUnexpectedEOF when it ends
// inside one, a *DecodeError for a too large or non-object frame, and the reader's error
// otherwise.
func (f *frameReader) next() ([]byte, error) {
	for {
		if !f.inFrame {
			for f.start < f.end && isSpace(f.buf[f.start]) {
				f.start++
			}
			if f.start < f.end {
				if f.buf[f.start] != '{' {
					detail := fmt.Sprintf("expected '{', found %q", f.buf[f.start])
					if !jsonOutside[f.buf[f.start]] || f.frames == 0 {
						detail = notJSON(f, f.start)
					}
					return nil, &DecodeError{Err: ErrMalformedEvent, Offset: f.base + int64(f.start), Detail: detail}
				}
				f.inFrame, f.scan, f.depth, f.inString = true, f.start+1, 1, false
			}
		}
		if f.inFrame {
			end, ok, bad := f.scanFrame()
			if bad {
				f.inFrame = false
				return nil, &DecodeError{Err: ErrMalformedEvent, Offset: f.base + int64(f.scan), Detail: notJSON(f, f.scan)}
			}
			if ok {
				frame := f.buf[f.start:end]
				f.start = end
				f.inFrame = false
				f.frames++
				return frame, nil
			}
			if f.scan-f.start > f.max {
				return nil, &DecodeError{Err: ErrEventTooLarge, Offset: f.base + int64(f.start),
					Detail: fmt.Sprintf("more than %d bytes without the end of the event", f.max)}
			}
		}
		if f.rerr != nil {
			if f.rerr == io.EOF && f.inFrame {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, f.rerr
		}
		f.fill()
	}
}

// Errors of frameReader.value; the list decoder turns them into *DecodeError.
var (
	errValueTooLarge = errors.New("value larger than the size limit")
	errBadValue      = errors.New("not a JSON value")
)

// peek skips whitespace and returns the next byte without consuming it; io.EOF at the end of
// the stream, the reader's error otherwise. It is not used while a frame is half read.
func (f *frameReader) peek() (byte, error) {
	for {
		for f.start < f.end && isSpace(f.buf[f.start]) {
			f.start++
		}
		if f.start < f.end {
			return f.buf[f.start], nil
		}
		if f.rerr != nil {
			return 0, f.rerr
		}
		f.fill()
	}
}

// value returns the next JSON value (after whitespace) and consumes it: an object or array by
// bracket matching (its content is not validated: the JSON decoder does that), a string, or
// a literal (true, false, null, a number). The slice is valid until the next call. A value
// longer than max is errValueTooLarge, found as soon as max bytes of it have been read; a
// stream that ends inside the value is io.ErrUnexpectedEOF (io.EOF before it starts).
func (f *frameReader) value() ([]byte, error) {
	c, err := f.peek()
	if err != nil {
		return nil, err
	}
	switch {
	case c == '{' || c == '[':
		f.inFrame, f.scan, f.depth, f.inString = true, f.start+1, 1, false
		for {
			end, ok, bad := f.scanFrame()
			if bad {
				f.inFrame = false
				return nil, &notJSONError{at: f.base + int64(f.scan), detail: notJSON(f, f.scan)}
			}
			if ok {
				return f.take(end), nil
			}
			if err := f.more(); err != nil {
				return nil, err
			}
		}
	case c == '"':
		f.inFrame, f.scan = true, f.start+1
		for {
			if j := bytes.IndexByte(f.buf[f.scan:f.end], '"'); j >= 0 {
				f.scan += j
				if !escaped(f.buf, f.scan) {
					return f.take(f.scan + 1), nil
				}
				f.scan++
				continue
			}
			f.scan = f.end
			if err := f.more(); err != nil {
				return nil, err
			}
		}
	case c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'):
		f.inFrame, f.scan = true, f.start
		for {
			for f.scan < f.end {
				switch f.buf[f.scan] {
				case ',', '}', ']', ':', '"', '{', '[', ' ', '\t', '\r', '\n':
					if v := f.take(f.scan); validLiteral(v) {
						return v, nil
					}
					return nil, errBadValue
				}
				f.scan++
			}
			if f.rerr == io.EOF {
				if v := f.take(f.scan); validLiteral(v) {
					return v, nil
				}
				return nil, errBadValue
			}
			if err := f.more(); err != nil {
				return nil, err
			}
		}
	}
	return nil, errBadValue
}

// take ends the value being scanned at end and returns it.
func (f *frameReader) take(end int) []byte {
	v := f.buf[f.start:end]
	f.start = end
	f.inFrame = false
	return v
}

// more reads more of a value being scanned, or says why it cannot.
func (f *frameReader) more() error {
	if f.scan-f.start > f.max {
		f.inFrame = false
		return errValueTooLarge
	}
	if f.rerr != nil {
		f.inFrame = false
		if f.rerr == io.EOF {
			return io.ErrUnexpectedEOF
		}
		return f.rerr
	}
	f.fill()
	return nil
}

// offset returns the stream offset of the frame returned last (or being read).
func (f *frameReader) offset(frameLen int) int64 { return f.base + int64(f.start-frameLen) }

func (f *frameReader) fill() {
	if f.start > 0 && (f.end == len(f.buf) || f.start >= len(f.buf)/2) {
		n := copy(f.buf, f.buf[f.start:f.end])
		f.base += int64(f.start)
		f.scan -= f.start
		f.end = n
		f.start = 0
	}
	if f.end == len(f.buf) {
		size := 2 * len(f.buf)
		if limit := f.max + initialFrameBuffer; size > limit {
			size = limit
		}
		if size <= len(f.buf) {
			size = len(f.buf) + initialFrameBuffer
		}
		nb := make([]byte, size)
		copy(nb, f.buf[:f.end])
		f.buf = nb
	}
	n, err := f.r.Read(f.buf[f.end:])
	f.end += n
	if err != nil {
		f.rerr = err
	}
}

// scanFrame advances the scan of the current frame over the buffered bytes and reports the
// end of the frame once its outermost brace closes, or bad (f.scan at the byte) at a byte
// that cannot appear in JSON outside a string: garbage is recognised within bytes of its
// start, not once the size limit's worth of it is buffered. (Bytes inside strings are not
// checked: a quote comes about every 256 bytes of garbage, and the bytes after it are.)
func (f *frameReader) scanFrame() (end int, ok, bad bool) {
	b := f.buf[:f.end]
	i, depth, inString := f.scan, f.depth, f.inString
	for i < len(b) {
		if inString {
			j := bytes.IndexByte(b[i:], '"')
			if j < 0 {
				i = len(b)
				break
			}
			i += j
			if escaped(b, i) {
				i++
				continue
			}
			inString = false
			i++
			continue
		}
		switch c := b[i]; c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				f.scan, f.depth, f.inString = i+1, 0, false
				return i + 1, true, false
			}
		default:
			if !jsonOutside[c] {
				f.scan, f.depth, f.inString = i, depth, false
				return 0, false, true
			}
		}
		i++
	}
	f.scan, f.depth, f.inString = i, depth, inString
	return 0, false, false
}

// notJSONError is frameReader.value's error for a value that is not JSON; the list
// decoder turns it into its *DecodeError.
type notJSONError struct {
	at     int64
	detail string
}

func (e *notJSONError) Error() string { return e.detail }

// escaped reports whether the quote at b[i] is preceded by an odd number of backslashes.
// The string's opening quote bounds the look-back.
func escaped(b []byte, i int) bool {
	k := i - 1
	for k >= 0 && b[k] == '\\' {
		k--
	}
	return (i-1-k)%2 == 1
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }
