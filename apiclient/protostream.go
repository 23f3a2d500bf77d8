package apiclient

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// protoReader reads a protobuf stream with a bounded buffer: the length-prefixed frames of
// a watch, and the fields of a LIST response decoded item by item. It never holds more
// than one value of at most max bytes (plus the read buffer).
type protoReader struct {
	r          io.Reader
	buf        []byte
	start, end int
	base       int64 // stream offset of buf[0]
	rerr       error // sticky read error
	max        int
}

func newProtoReader(r io.Reader, max int) *protoReader {
	size := initialFrameBuffer
	if max+16 < size {
		size = max + 16
	}
	return &protoReader{r: r, buf: make([]byte, size), max: max}
}

// The tags a WatchEvent message starts with: field 1 (type) or, for an event without a type,
// field 2 (object), both length-delimited.
const (
	watchEventTypeTag   = 1<<3 | 2
	watchEventObjectTag = 2<<3 | 2
)

// errTooLarge: a value longer than the limit (the callers turn it into their *DecodeError).
var errTooLarge = errors.New("value larger than the size limit")

// offset is the stream offset of the next unread byte.
func (p *protoReader) offset() int64 { return p.base + int64(p.start) }

// ensure buffers at least n unread bytes; io.EOF if the stream ends before any of them,
// io.ErrUnexpectedEOF if it ends after some.
func (p *protoReader) ensure(n int) error {
	for p.end-p.start < n {
		if p.rerr != nil {
			if p.rerr == io.EOF && p.end > p.start {
				return io.ErrUnexpectedEOF
			}
			return p.rerr
		}
		p.fill(n)
	}
	return nil
}

// fill reads more, making room for n unread bytes first.
func (p *protoReader) fill(n int) {
	if p.start > 0 && (p.start+n > len(p.buf) || p.start >= len(p.buf)/2) {
		m := copy(p.buf, p.buf[p.start:p.end])
		p.base += int64(p.start)
		p.end, p.start = m, 0
	}
	if n > len(p.buf) {
		size := max(2*len(p.buf), n)
		nb := make([]byte, size)
		copy(nb, p.buf[:p.end])
		p.buf = nb
	}
	m, err := p.r.Read(p.buf[p.end:])
	p.end += m
	if err != nil {
		p.rerr = err
	}
}

// frame returns the next length-prefixed frame (a 4-byte big-endian length, then the
// message), valid until the next call, and its offset. io.EOF at the end between frames.
func (p *protoReader) frame() ([]byte, int64, error) {
	if err := p.ensure(4); err != nil {
		return nil, 0, err
	}
	off := p.offset()
	n := int(binary.BigEndian.Uint32(p.buf[p.start:]))
	if off == 0 && p.buf[p.start] != 0 {
		// No frame of an API server is 16 MiB long: this is not a protobuf stream.
		return nil, off, &DecodeError{Err: ErrMalformedEvent, Offset: off,
			Detail: "not a protobuf watch stream: it starts with " + describeStart(p.buf[p.start:p.end])}
	}
	if n > p.max {
		return nil, off, &DecodeError{Err: ErrEventTooLarge, Offset: off,
			Detail: fmt.Sprintf("a frame of %d bytes, more than %d", n, p.max)}
	}
	// The message's first byte, a WatchEvent's first tag, is checked before the rest of the
	// frame is waited for.
	if err := p.ensure(min(5, 4+n)); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, off, err
	}
	if n > 0 && p.buf[p.start+4] != watchEventTypeTag && p.buf[p.start+4] != watchEventObjectTag {
		return nil, off, &DecodeError{Err: ErrMalformedEvent, Offset: off,
			Detail: fmt.Sprintf("not a protobuf WatchEvent: a frame of %d bytes starting with 0x%02x", n, p.buf[p.start+4])}
	}
	if err := p.ensure(4 + n); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, off, err
	}
	f := p.buf[p.start+4 : p.start+4+n]
	p.start += 4 + n
	return f, off, nil
}

// varint reads a varint; io.EOF if the stream ends before it.
func (p *protoReader) varint() (uint64, error) {
	var v uint64
	for k := 0; k < 10; k++ {
		if err := p.ensure(1); err != nil {
			if k > 0 && err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		c := p.buf[p.start]
		p.start++
		if k == 9 && c > 1 {
			return 0, errors.New("varint overflows 64 bits")
		}
		v |= uint64(c&0x7f) << (7 * k)
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, errors.New("varint longer than 10 bytes")
}

// bytes returns the next n bytes (n at most the limit), valid until the next call.
func (p *protoReader) bytes(n uint64) ([]byte, error) {
	if n > uint64(p.max) {
		return nil, errTooLarge
	}
	if err := p.ensure(int(n)); err != nil {
		if err == io.EOF && n > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	b := p.buf[p.start : p.start+int(n)]
	p.start += int(n)
	return b, nil
}

// skip discards the next n bytes without buffering them.
func (p *protoReader) skip(n uint64) error {
	for n > 0 {
		if p.start == p.end {
			if err := p.ensure(1); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return err
			}
		}
		k := min(uint64(p.end-p.start), n)
		p.start += int(k)
		n -= k
	}
	return nil
}

// skipValue skips a value of wire type wt and returns its length on the wire.
func (p *protoReader) skipValue(wt uint64) (uint64, error) {
	before := p.offset()
	switch wt {
	case 0:
		_, err := p.varint()
		return uint64(p.offset() - before), eofInside(err)
	case 1:
		return 8, p.skip(8)
	case 5:
		return 4, p.skip(4)
	case 2:
		n, err := p.varint()
		if err != nil {
			return 0, eofInside(err)
		}
		if err := p.skip(n); err != nil {
			return 0, err
		}
		return uint64(p.offset() - before), nil
	}
	return 0, fmt.Errorf("unsupported wire type %d", wt)
}

// eofInside turns io.EOF into io.ErrUnexpectedEOF: the stream ended inside a value.
func eofInside(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
