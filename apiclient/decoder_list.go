package apiclient

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/informerkit/informerkit/meta"
)

// Sentinel errors of the streaming list decoder (Resource.ListEach), wrapped in a
// *DecodeError whose Offset is the byte offset in the response body.
var (
	// ErrMalformedList: the body is not a JSON object of the form
	// {"metadata":{...},"items":[{...},...]} (members in any order, others ignored), or an item
	// does not decode into the target type.
	ErrMalformedList = errors.New("malformed list response")
	// ErrListItemTooLarge: one item (or another member of the list object) is larger than
	// Config.MaxEventSize. The decoder stops reading instead of buffering it.
	ErrListItemTooLarge = errors.New("list item larger than the size limit")
)

// decodeListStream reads a LIST response body from r and calls fn with each item of its
// "items" array as soon as the item is decoded, holding one item (at most max bytes of it)
// and the read buffer in memory, never the whole body or the whole list. "metadata" may come
// before or after "items". It returns the list's metadata.
//
// Errors: fn's error is returned as is (decoding stops); a body that is not a well-formed
// list, or an item that does not decode into T, is a *DecodeError wrapping ErrMalformedList
// (or ErrListItemTooLarge); the reader's own errors (other than io.EOF) are returned as is.
// Items handed to fn before an error stay handed over: the caller decides what they mean.
func decodeListStream[T any](r io.Reader, max int, fn func(T) error) (meta.ListMeta, error) {
	od := newObjectDecoder(decoding{})
	defer od.release()
	return decodeListStreamWith(r, max, od, nil, fn)
}

// decodeListStreamWith is decodeListStream with the given decoder and kind check (nil: none):
// a list, or an item, of another kind than kc.want is a *DecodeError wrapping ErrWrongKind,
// and kc.got is the list's kind.
func decodeListStreamWith[T any](r io.Reader, max int, od *objectDecoder, kc *kindCheck, fn func(T) error) (meta.ListMeta, error) {
	d := listDecoder{fr: newFrameReader(r, max), kc: kc}
	var lm meta.ListMeta
	if err := d.expect('{', "the response is not a JSON object"); err != nil {
		return lm, err
	}
	first := true
	for {
		c, err := d.peek()
		if err != nil {
			return lm, err
		}
		if c == '}' && first {
			d.fr.start++
			break
		}
		first = false
		if c != '"' {
			return lm, d.malformed(fmt.Sprintf("expected a member name, found %q", c), nil)
		}
		keyOff := d.offset()
		raw, err := d.value("a member name")
		if err != nil {
			return lm, err
		}
		key, ok := unquote(raw[1 : len(raw)-1])
		if !ok {
			return lm, d.malformedAt(keyOff, "a member name is not a valid JSON string", nil)
		}
		if err := d.expect(':', fmt.Sprintf("expected ':' after %q", truncate(key, 64))); err != nil {
			return lm, err
		}
		// Member names match as encoding/json matches them to List's fields (exactly, or
		// else case-insensitively), so that ListEach and List agree on every body.
		switch {
		case strings.EqualFold(key, "metadata"):
			off := d.offset()
			v, err := d.value("metadata")
			if err != nil {
				return lm, err
			}
			if err := decodeInto(od, v, &lm); err != nil {
				return lm, d.malformedAt(off, "metadata", err)
			}
		case strings.EqualFold(key, "items"):
			if err := decodeItems(&d, od, fn); err != nil {
				return lm, err
			}
		case strings.EqualFold(key, "kind") && kc != nil:
			off := d.offset()
			v, err := d.value("kind")
			if err != nil {
				return lm, err
			}
			kind, ok := "", len(v) >= 2 && v[0] == '"'
			if ok {
				kind, ok = unquote(v[1 : len(v)-1])
			}
			if !ok {
				return lm, d.malformedAt(off, "kind is not a string", nil)
			}
			if err := kc.listKind(kind, off); err != nil {
				return lm, err
			}
		default:
			if _, err := d.value(fmt.Sprintf("member %q", truncate(key, 64))); err != nil {
				return lm, err
			}
		}
		c, err = d.peek()
		if err != nil {
			return lm, err
		}
		d.fr.start++
		if c == '}' {
			break
		}
		if c != ',' {
			return lm, d.malformedAt(d.offset()-1, fmt.Sprintf("expected ',' or '}', found %q", c), nil)
		}
	}
	switch c, err := d.fr.peek(); {
	case err == io.EOF:
		return lm, nil
	case err != nil:
		return lm, err
	default:
		return lm, d.malformed(fmt.Sprintf("trailing data after the list object (%q)", c), nil)
	}
}

// listDecoder walks the top level of a list object over a frameReader.
type listDecoder struct {
	fr    *frameReader
	items int        // items decoded so far
	kc    *kindCheck // nil: kinds are not checked
}

func (d *listDecoder) offset() int64 { return d.fr.base + int64(d.fr.start) }

func (d *listDecoder) malformed(detail string, cause error) error {
	return d.malformedAt(d.offset(), detail, cause)
}

func (d *listDecoder) malformedAt(off int64, detail string, cause error) error {
	return &DecodeError{Err: ErrMalformedList, Offset: off, Detail: detail, Cause: cause}
}

// peek returns the next byte after whitespace without consuming it. The end of the body
// here is an error: the list object is not complete.
func (d *listDecoder) peek() (byte, error) {
	c, err := d.fr.peek()
	if err == io.EOF {
		return 0, d.malformed("the response ends before the end of the list", io.ErrUnexpectedEOF)
	}
	return c, err
}

// expect consumes the byte c, or fails with detail.
func (d *listDecoder) expect(c byte, detail string) error {
	got, err := d.peek()
	if err != nil {
		return err
	}
	if got != c {
		if !jsonOutside[got] {
			detail = notJSON(d.fr, d.fr.start)
		}
		return d.malformed(fmt.Sprintf("%s (found %q)", detail, got), nil)
	}
	d.fr.start++
	return nil
}

// value returns the next JSON value; what names it in errors.
func (d *listDecoder) value(what string) ([]byte, error) {
	off := d.offset()
	v, err := d.fr.value()
	if err != nil {
		return nil, d.valueError(off, what, err)
	}
	return v, nil
}

// valueError turns an error of frameReader.value for the value at off into the decoder's.
func (d *listDecoder) valueError(off int64, what string, err error) error {
	var nj *notJSONError
	switch {
	case errors.As(err, &nj):
		return d.malformedAt(nj.at, what+": "+nj.detail, nil)
	case errors.Is(err, errValueTooLarge):
		return &DecodeError{Err: ErrListItemTooLarge, Offset: off,
			Detail: fmt.Sprintf("%s: more than %d bytes", what, d.fr.max)}
	case errors.Is(err, errBadValue):
		return d.malformedAt(off, what+": not a JSON value", nil)
	case err == io.ErrUnexpectedEOF || err == io.EOF:
		return d.malformedAt(off, what+": the response ends inside it", io.ErrUnexpectedEOF)
	}
	return err
}

// decodeItems reads the value of "items", null or an array of objects, and hands each item
// to fn as soon as it is decoded. From the first item worth it (parallel.go), large items
// are decoded by a pool of goroutines and handed to fn in order from this one.
func decodeItems[T any](d *listDecoder, od *objectDecoder, fn func(T) error) error {
	c, err := d.peek()
	if err != nil {
		return err
	}
	if c != '[' {
		off := d.offset()
		v, err := d.value("items")
		if err != nil {
			return err
		}
		if string(v) != "null" {
			return d.malformedAt(off, "items is not an array", nil)
		}
		return nil
	}
	d.fr.start++
	if c, err = d.peek(); err != nil {
		return err
	}
	if c == ']' {
		d.fr.start++
		return nil
	}
	var par *inOrder[T] // nil until an item is worth decoding in parallel
	defer func() { par.close() }()
	// read counts the items read; d.items those handed over (the same without par).
	read, fail := d.items, par.failAfter
	decodeItem := func(od *objectDecoder, j *pjob[T]) { j.err = decodeInto(od, *j.buf, &j.res) }
	hand := func(j *pjob[T]) error {
		if j.err != nil {
			return d.malformedAt(j.off, fmt.Sprintf("items[%d]", j.idx), j.err)
		}
		d.items++
		return fn(j.res)
	}
	for {
		// (Names for errors are built only on failure: this loop runs once per item.)
		if c != '{' {
			return fail(d.malformed(fmt.Sprintf("items[%d] is not an object (found %q)", read, c), nil))
		}
		off := d.offset()
		v, err := d.fr.value()
		if err != nil {
			return fail(d.valueError(off, fmt.Sprintf("items[%d]", read), err))
		}
		if err := d.kc.itemKind(v, read, off); err != nil {
			return fail(err)
		}
		if par == nil && od.dc.parallel() && wantsParallel(len(v), false) {
			par = newInOrder(od, decodeItem, hand)
			fail = par.failAfter
		}
		if par != nil {
			j := &pjob[T]{off: off, idx: read}
			if err := par.add(j, v, func(j *pjob[T]) { j.err = decodeInto(od, v, &j.res) }); err != nil {
				return err
			}
		} else {
			var item T
			if err := decodeInto(od, v, &item); err != nil {
				return d.malformedAt(off, fmt.Sprintf("items[%d]", read), err)
			}
			d.items++
			if err := fn(item); err != nil {
				return err
			}
		}
		read++
		if c, err = d.peek(); err != nil {
			return fail(err)
		}
		d.fr.start++
		if c == ']' {
			return fail(nil)
		}
		if c != ',' {
			return fail(d.malformedAt(d.offset()-1, fmt.Sprintf("expected ',' or ']' after items[%d], found %q", read-1, c), nil))
		}
		if c, err = d.peek(); err != nil {
			return fail(err)
		}
	}
}
