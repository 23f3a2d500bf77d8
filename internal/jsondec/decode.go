package jsondec

import (
	"encoding/json"
	"reflect"
	"sync"
	"unsafe"
)

// Options are the settings of a Decoder. The zero value decodes as encoding/json does.
type Options struct {
	// Strings, if set, is asked for the text of every string value and map key decoded into a
	// Go string (not into interfaces, []byte or Unmarshalers) instead of allocating it, so
	// that a caller can hand back a copy it already holds. It must return a string equal to
	// b and must not keep b, which is only valid during the call. Default: allocate.
	Strings func(b []byte) string
	// Omit is a path of member names from the top-level value (for example "metadata",
	// "managedFields"; "[]" stands for every element of an array, as in "items", "[]",
	// "metadata", "managedFields"): the member at its end is checked and skipped instead of
	// decoded, whatever the Go type declares. It applies to objects decoded into structs and
	// into maps with string keys, and to arrays decoded into slices and []any. Default:
	// decode everything.
	Omit []string
}

// Decoder decodes JSON into Go values with the decoders compiled per type. It keeps scratch
// space between calls, so reusing one saves allocations; it is not safe for concurrent use.
type Decoder struct {
	st decodeState
}

// NewDecoder returns a Decoder with the given options.
func NewDecoder(opts Options) *Decoder {
	d := &Decoder{}
	d.st.strings = opts.Strings
	d.st.omit = opts.Omit
	return d
}

// decodeState is one decoding in progress.
type decodeState struct {
	data    []byte
	off     int
	depth   int   // open arrays and objects being decoded (the skipper adds its own)
	err     error // first type error (encoding/json reports it after decoding the rest)
	buf     []byte
	stack   []byte
	strings func([]byte) string
	// omit is Options.Omit; omitted is how many of its names the objects open at depths
	// 1..omitted matched (a member at depth omitted+1 named omit[omitted] is on the path).
	omit    []string
	omitted int
	stack0  [64]byte
}

func (d *decodeState) reset(data []byte, off int) {
	d.data, d.off, d.depth, d.err, d.omitted = data, off, 0, nil, 0
	if d.stack == nil {
		d.stack = d.stack0[:0]
	}
}

// saveError records the first type error; decoding goes on, as encoding/json's does.
func (d *decodeState) saveError(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *decodeState) typeError(value string, t reflect.Type, off int) {
	d.saveError(&json.UnmarshalTypeError{Value: value, Type: t, Offset: int64(off)})
}

// mismatch skips the value at d.off, which cannot be stored in a t, and records a type
// error (a malformed value is a syntax error instead).
func (d *decodeState) mismatch(t reflect.Type) error {
	off := d.off
	if err := d.skip(); err != nil {
		return err
	}
	d.typeError(valueKind(d.data[off]), t, off)
	return nil
}

// finish checks that nothing but whitespace follows the value and returns the saved error.
func (d *decodeState) finish() error {
	for d.off < len(d.data) {
		if !isSpace(d.data[d.off]) {
			return d.badByte(d.off, "after top-level value")
		}
		d.off++
	}
	return d.err
}

var statePool = sync.Pool{New: func() any { return new(Decoder) }}

// Unmarshal decodes the JSON value in data into v, which must be a non-nil pointer, with the
// same result as encoding/json.Unmarshal for every input that both accept. Malformed input
// is a *SyntaxError with the offset of the offending byte; a value of the wrong JSON type
// for its Go destination is a *json.UnmarshalTypeError, reported after the rest of the
// input was decoded (as encoding/json does). On a syntax error v may be partly written:
// unlike encoding/json, the input is not validated in a separate pass first.
func Unmarshal(data []byte, v any) error {
	dec := statePool.Get().(*Decoder)
	err := dec.Unmarshal(data, v)
	dec.st.data = nil
	statePool.Put(dec)
	return err
}

// Unmarshal is the package's Unmarshal with this decoder's options and scratch space.
func (dec *Decoder) Unmarshal(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &json.InvalidUnmarshalError{Type: reflect.TypeOf(v)}
	}
	c := topCodecFor(rv.Type())
	d := &dec.st
	d.reset(data, 0)
	if _, err := d.ws(); err != nil {
		return err
	}
	if err := c.dec(d, rv.UnsafePointer()); err != nil {
		return err
	}
	return d.finish()
}

// Decode decodes the JSON value that starts at data[off:] (after optional whitespace) into
// *out, as Unmarshal would, and returns the offset just past the value: what follows is
// the caller's. It is the entry point for callers that walk a larger document (a watch
// event envelope, a list) and decode one member of it.
func Decode[T any](dec *Decoder, data []byte, off int, out *T) (end int, err error) {
	c := topCodecFor(reflect.TypeFor[*T]())
	d := &dec.st
	d.reset(data, off)
	if _, err := d.ws(); err != nil {
		return d.off, err
	}
	if err := c.dec(d, unsafe.Pointer(out)); err != nil {
		return d.off, err
	}
	end = d.off
	d.data = nil
	return end, d.err
}

// Skip checks the JSON value that starts at data[off:] (after optional whitespace) and
// returns the offset just past it, without decoding it and without allocating.
func Skip(dec *Decoder, data []byte, off int) (end int, err error) {
	d := &dec.st
	d.reset(data, off)
	if _, err := d.ws(); err != nil {
		return d.off, err
	}
	err = d.skip()
	end = d.off
	d.data = nil
	return end, err
}

// String reads the JSON string that starts at data[off:] (after optional whitespace) and
// returns its text (aliasing data when it has no escapes, else in scratch space valid until
// the next call on dec) and the offset just past it.
func String(dec *Decoder, data []byte, off int) (text []byte, end int, err error) {
	d := &dec.st
	d.reset(data, off)
	c, err := d.ws()
	if err != nil {
		return nil, d.off, err
	}
	if c != '"' {
		return nil, d.off, d.badByte(d.off, "looking for beginning of string")
	}
	start, stop, flags, err := d.scanString()
	if err != nil {
		return nil, d.off, err
	}
	text = d.stringContent(start, stop, flags)
	end = d.off
	d.data = nil
	return text, end, nil
}

// Next skips whitespace from data[off:] and returns the next byte and its offset; ok is
// false at the end of data.
func Next(data []byte, off int) (c byte, at int, ok bool) {
	for off < len(data) && isSpace(data[off]) {
		off++
	}
	if off >= len(data) {
		return 0, off, false
	}
	return data[off], off, true
}
