package apiclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/informerkit/informerkit/internal/jsondec"
	"github.com/informerkit/informerkit/meta"
)

// Sentinel errors of the watch decoder. A watch whose stream cannot be decoded delivers one
// Error event whose Err is a *DecodeError wrapping exactly one of these, then ends; test with
// errors.Is(ev.Err, ErrEventTooLarge) and so on.
var (
	// ErrEventTooLarge: one event is larger than Config.MaxEventSize. The decoder stops
	// reading instead of buffering it.
	ErrEventTooLarge = errors.New("watch event larger than the size limit")
	// ErrMalformedEvent: the stream is not a sequence of JSON objects of the form
	// {"type":...,"object":{...}}, or the object does not decode into the target type.
	ErrMalformedEvent = errors.New("malformed watch event")
	// ErrUnknownEventType: the event's type is none of ADDED, MODIFIED, DELETED, BOOKMARK, ERROR.
	ErrUnknownEventType = errors.New("unknown watch event type")
	// ErrWrongKind: the event's object has a kind other than the one the resource serves
	// (checked only when the kind is known: Resource.WithKind or discovery).
	ErrWrongKind = errors.New("watch event object of the wrong kind")
)

// DecodeError describes a watch stream (or, from ListEach, a list response) that could not
// be decoded. Err is one of the sentinel errors above (or ErrMalformedList,
// ErrListItemTooLarge); Cause, when set, is the underlying JSON error.
type DecodeError struct {
	// Err is ErrEventTooLarge, ErrMalformedEvent, ErrUnknownEventType or ErrWrongKind for a
	// watch; ErrMalformedList or ErrListItemTooLarge for a list.
	Err error
	// Offset is the byte offset of the offending event in the stream (for WebSocket, the
	// index of the message), or of the offending part of a list response.
	Offset int64
	// Detail says what was wrong, in words.
	Detail string
	// Cause is the underlying error, if any (for example a *json.SyntaxError).
	Cause error
}

// Error returns "apiclient: <sentinel> at offset N: <detail>: <cause>".
func (e *DecodeError) Error() string {
	msg := fmt.Sprintf("apiclient: %v at offset %d", e.Err, e.Offset)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	return msg
}

// Unwrap returns the sentinel and the cause, so that errors.Is and errors.As see both.
func (e *DecodeError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

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
	if decoded {
		return Event[T]{Type: et, Object: out}, nil
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
					return nil, &DecodeError{Err: ErrMalformedEvent, Offset: f.base + int64(f.start),
						Detail: fmt.Sprintf("expected '{', found %q", f.buf[f.start])}
				}
				f.inFrame, f.scan, f.depth, f.inString = true, f.start+1, 1, false
			}
		}
		if f.inFrame {
			if end, ok := f.scanFrame(); ok {
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
			if end, ok := f.scanFrame(); ok {
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
// end of the frame once its outermost brace closes.
func (f *frameReader) scanFrame() (int, bool) {
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
		switch b[i] {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				f.scan, f.depth, f.inString = i+1, 0, false
				return i + 1, true
			}
		}
		i++
	}
	f.scan, f.depth, f.inString = i, depth, inString
	return 0, false
}

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

// parseEnvelope reads {"type":"...","object":{...}} (keys in any order, other keys ignored)
// and returns the type and the raw object. The object is a sub-slice of frame.
func parseEnvelope(frame []byte) (typ string, obj []byte, err error) {
	p := scanner{b: frame}
	p.ws()
	if !p.consume('{') {
		return "", nil, errors.New("event is not a JSON object")
	}
	p.ws()
	if p.consume('}') {
		return "", nil, errors.New("empty event object")
	}
	haveType := false
	for {
		p.ws()
		key, ok := p.str()
		if !ok {
			return "", nil, fmt.Errorf("bad key at byte %d", p.i)
		}
		p.ws()
		if !p.consume(':') {
			return "", nil, fmt.Errorf("missing ':' at byte %d", p.i)
		}
		p.ws()
		switch string(key) {
		case "type":
			v, ok := p.str()
			if !ok {
				return "", nil, errors.New(`"type" is not a string`)
			}
			if typ, ok = unquote(v); !ok {
				return "", nil, errors.New(`"type" is not a valid JSON string`)
			}
			haveType = true
		case "object":
			start := p.i
			if !p.value() {
				return "", nil, fmt.Errorf(`bad "object" value at byte %d`, start)
			}
			obj = frame[start:p.i]
			if string(obj) == "null" {
				obj = nil
			}
		default:
			if !p.value() {
				return "", nil, fmt.Errorf("bad value at byte %d", p.i)
			}
		}
		p.ws()
		if p.consume(',') {
			continue
		}
		if p.consume('}') {
			break
		}
		return "", nil, fmt.Errorf("expected ',' or '}' at byte %d", p.i)
	}
	p.ws()
	if p.i != len(frame) {
		return "", nil, fmt.Errorf("trailing data at byte %d", p.i)
	}
	if !haveType {
		return "", nil, errors.New(`event without "type"`)
	}
	return typ, obj, nil
}

// topLevelString returns the value of a top-level string member of a JSON object, stopping
// at the first match (the API server writes kind first).
func topLevelString(obj []byte, name string) (string, bool) {
	p := scanner{b: obj}
	p.ws()
	if !p.consume('{') {
		return "", false
	}
	for {
		p.ws()
		key, ok := p.str()
		if !ok {
			return "", false
		}
		p.ws()
		if !p.consume(':') {
			return "", false
		}
		p.ws()
		if string(key) == name {
			v, ok := p.str()
			if !ok {
				return "", false
			}
			return unquote(v)
		}
		if !p.value() {
			return "", false
		}
		p.ws()
		if !p.consume(',') {
			return "", false
		}
	}
}

// unquote turns the inside of a JSON string into Go text.
func unquote(inner []byte) (string, bool) {
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), true
	}
	var s string
	q := make([]byte, 0, len(inner)+2)
	q = append(append(append(q, '"'), inner...), '"')
	if err := json.Unmarshal(q, &s); err != nil {
		return "", false
	}
	return s, true
}

// scanner is a minimal JSON reader used for event envelopes: it finds value boundaries and
// leaves real decoding (and full validation of objects) to the JSON decoder.
type scanner struct {
	b []byte
	i int
}

func (p *scanner) ws() {
	for p.i < len(p.b) && isSpace(p.b[p.i]) {
		p.i++
	}
}

func (p *scanner) consume(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string and returns its raw inside (escapes not processed).
func (p *scanner) str() ([]byte, bool) {
	if !p.consume('"') {
		return nil, false
	}
	start := p.i
	for {
		j := bytes.IndexByte(p.b[p.i:], '"')
		if j < 0 {
			return nil, false
		}
		p.i += j
		if escaped(p.b, p.i) {
			p.i++
			continue
		}
		s := p.b[start:p.i]
		p.i++
		return s, true
	}
}

// value skips one JSON value: objects and arrays by bracket matching, strings, and literals.
func (p *scanner) value() bool {
	if p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; c {
	case '"':
		_, ok := p.str()
		return ok
	case '{', '[':
		depth := 0
		for p.i < len(p.b) {
			switch p.b[p.i] {
			case '"':
				if _, ok := p.str(); !ok {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					p.i++
					return true
				}
			}
			p.i++
		}
		return false
	default:
		start := p.i
		for p.i < len(p.b) {
			switch p.b[p.i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return p.i > start && validLiteral(p.b[start:p.i])
			}
			p.i++
		}
		return p.i > start && validLiteral(p.b[start:p.i])
	}
}

func validLiteral(b []byte) bool {
	switch string(b) {
	case "true", "false", "null":
		return true
	}
	c := b[0]
	return c == '-' || (c >= '0' && c <= '9')
}

// EventDecoder reads the watch events of a JSON stream, the body of a chunked watch
// response: {"type":...,"object":{...}} objects one after the other (newlines optional).
// It is what every chunked watch runs; it is exported for tools and benchmarks that replay
// recorded streams. It holds one event in memory at a time (at most maxEventSize bytes).
type EventDecoder[T any] struct {
	fr   *frameReader
	kind string
	dec  *objectDecoder
}

// NewEventDecoder returns a decoder of the events in r. maxEventSize 0 means
// DefaultMaxEventSize; kind, if not "", is the kind every object must have.
func NewEventDecoder[T any](r io.Reader, maxEventSize int, kind string) *EventDecoder[T] {
	if maxEventSize <= 0 {
		maxEventSize = DefaultMaxEventSize
	}
	return &EventDecoder[T]{fr: newFrameReader(r, maxEventSize), kind: kind, dec: &objectDecoder{dec: jsondec.NewDecoder(jsondec.Options{})}}
}

// Next returns the next event. It returns io.EOF when the stream ends between events,
// io.ErrUnexpectedEOF when it ends inside one, a *DecodeError for a stream that cannot be
// decoded, and the reader's error otherwise. An ERROR event is returned as an event
// (Type Error, Err the server's *Status), not as an error.
func (d *EventDecoder[T]) Next() (Event[T], error) {
	frame, err := d.fr.next()
	if err != nil {
		return Event[T]{}, err
	}
	return decodeEvent[T](d.dec, frame, d.kind, d.fr.offset(len(frame)))
}

// DecodeList decodes the body of a LIST response as Resource.List does.
func DecodeList[T any](data []byte) (*meta.List[T], error) {
	return decodeObject[*meta.List[T]](decoding{}, data)
}
