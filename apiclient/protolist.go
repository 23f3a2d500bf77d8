package apiclient

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"unsafe"

	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/internal/protodec"
	"github.com/informerkit/informerkit/meta"
)

// protoList is the state of a protobuf LIST response decoded item by item.
type protoList[T any] struct {
	p     *protoReader
	od    *objectDecoder
	pk    *protoKind
	kc    *kindCheck // nil: kinds are not checked
	fn    func(T) error
	list  *kubeschema.Type // the list message's type
	items int              // items decoded so far
	lm    meta.ListMeta
}

// decodeProtoListStream reads a protobuf LIST response ("k8s\x00", then a runtime.Unknown
// whose raw field is the list message) and calls fn with each item of the list as soon as
// it is decoded, as decodeListStream does with JSON: at most one item (of at most max
// bytes) and the read buffer are held, never the whole body. Errors are those of
// decodeListStream.
func decodeProtoListStream[T any](r io.Reader, max int, od *objectDecoder, pk *protoKind, kc *kindCheck, fn func(T) error) (meta.ListMeta, error) {
	l := &protoList[T]{p: newProtoReader(r, max), od: od, pk: pk, kc: kc, fn: fn}
	if pk != nil {
		l.list = pk.list
	}
	magic, err := l.p.bytes(uint64(len(protodec.Magic)))
	if err != nil || !bytes.Equal(magic, protodec.Magic) {
		return l.lm, l.readErr(0, "the response does not start with the protobuf prefix k8s\\x00", err)
	}
	for {
		off := l.p.offset()
		key, err := l.p.varint()
		if err == io.EOF {
			if l.list == nil {
				return l.lm, l.malformed(off, "the response has no list", nil)
			}
			return l.lm, nil
		}
		if err != nil {
			return l.lm, l.readErr(off, "a field of the envelope", err)
		}
		num, wt := key>>3, key&7
		if num == 0 {
			return l.lm, l.malformed(off, "field number 0 in the envelope", nil)
		}
		if wt != 2 {
			if _, err := l.p.skipValue(wt); err != nil {
				return l.lm, l.readErr(off, "a field of the envelope", err)
			}
			continue
		}
		n, err := l.p.varint()
		if err != nil {
			return l.lm, l.readErr(off, "a field of the envelope", eofInside(err))
		}
		switch num {
		case 1:
			err = l.typeMeta(off, n)
		case 2:
			if l.list == nil {
				return l.lm, l.malformed(off, "the list comes before its kind", nil)
			}
			err = l.message(n)
		default:
			if err = l.p.skip(n); err != nil {
				err = l.readErr(off, "a field of the envelope", err)
			}
		}
		if err != nil {
			return l.lm, err
		}
	}
}

// typeMeta reads the envelope's apiVersion and kind: the list's type.
func (l *protoList[T]) typeMeta(off int64, n uint64) error {
	b, err := l.p.bytes(n)
	if err != nil {
		return l.readErr(off, "the envelope's kind", err)
	}
	apiVersion, kind, err := protodec.ParseTypeMeta(b)
	if err != nil {
		return l.malformed(off, "the envelope's kind", err)
	}
	if err := l.kc.listKind(string(kind), off); err != nil {
		return err
	}
	st, err := envelopeType(l.pk, protodec.Envelope{APIVersion: apiVersion, Kind: kind}, true)
	if err != nil {
		return l.malformed(off, "the envelope's kind", err)
	}
	if st.Field("items") == nil || st.Field("metadata") == nil {
		return l.malformed(off, fmt.Sprintf("%q is not a list kind", truncate(string(kind), 64)), nil)
	}
	l.list = st
	return nil
}

// message reads the list message of n bytes: its metadata and its items, one at a time.
// From the first item worth it (parallel.go), large items are decoded by a pool of
// goroutines and handed to fn in order from this one; all are handed over when it returns.
func (l *protoList[T]) message(n uint64) error {
	end := l.p.offset() + int64(n)
	pd := l.od.proto()
	items, md := l.list.Field("items"), l.list.Field("metadata")
	itemPlan := protodec.PlanFor(reflect.TypeFor[T](), items.Type(), pd.Options().OmitManagedFields)
	metaPlan := protodec.PlanFor(reflect.TypeFor[meta.ListMeta](), md.Type(), false)
	var par *inOrder[T] // nil until an item is worth decoding in parallel
	defer func() { par.close() }()
	fail := par.failAfter
	read := l.items // items read; l.items counts those handed over
	hand := func(j *pjob[T]) error {
		if j.err != nil {
			return l.malformed(j.off, fmt.Sprintf("items[%d]", j.idx), j.err)
		}
		l.items++
		return l.fn(j.res)
	}
	for l.p.offset() < end {
		off := l.p.offset()
		key, err := l.p.varint()
		if err != nil {
			return fail(l.readErr(off, "a field of the list", eofInside(err)))
		}
		num, wt := int(key>>3), key&7
		if wt != 2 || (num != items.Number && num != md.Number) {
			if num == 0 {
				return fail(l.malformed(off, "field number 0 in the list", nil))
			}
			if _, err := l.p.skipValue(wt); err != nil {
				return fail(l.readErr(off, "a field of the list", err))
			}
			continue
		}
		size, err := l.p.varint()
		if err != nil {
			return fail(l.readErr(off, "a field of the list", eofInside(err)))
		}
		what := "metadata"
		if num == items.Number {
			what = fmt.Sprintf("items[%d]", read)
		}
		b, err := l.p.bytes(size)
		if err != nil {
			return fail(l.readErr(off, what, err))
		}
		if num == md.Number {
			if err := metaPlan.Decode(pd, b, unsafe.Pointer(&l.lm), nil, nil); err != nil {
				return fail(l.malformed(off, what, err))
			}
			continue
		}
		if par == nil && l.od.dc.parallel() && wantsParallel(len(b), true) {
			par = newInOrder(l.od, func(d *objectDecoder, j *pjob[T]) {
				j.err = itemPlan.Decode(d.proto(), *j.buf, unsafe.Pointer(&j.res), nil, nil)
			}, hand)
			fail = par.failAfter
		}
		if par != nil {
			j := &pjob[T]{off: off, idx: read, proto: true}
			if err := par.add(j, b, func(j *pjob[T]) { j.err = itemPlan.Decode(pd, b, unsafe.Pointer(&j.res), nil, nil) }); err != nil {
				return err
			}
			read++
			continue
		}
		var item T
		if err := itemPlan.Decode(pd, b, unsafe.Pointer(&item), nil, nil); err != nil {
			return l.malformed(off, what, err)
		}
		l.items++
		read++
		if err := l.fn(item); err != nil {
			return err
		}
	}
	if l.p.offset() != end {
		return fail(l.malformed(end, "a field of the list runs past its end", nil))
	}
	return fail(nil)
}

func (l *protoList[T]) malformed(off int64, detail string, cause error) error {
	return &DecodeError{Err: ErrMalformedList, Offset: off, Detail: detail, Cause: cause}
}

// readErr turns an error of the reader for the value at off into the decoder's.
func (l *protoList[T]) readErr(off int64, what string, err error) error {
	var re *readError
	switch {
	case errors.As(err, &re):
		return err
	case errors.Is(err, errTooLarge):
		return &DecodeError{Err: ErrListItemTooLarge, Offset: off, Detail: fmt.Sprintf("%s: more than %d bytes", what, l.p.max)}
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return l.malformed(off, what+": the response ends inside it", io.ErrUnexpectedEOF)
	case err == nil:
		return l.malformed(off, what, nil)
	}
	return l.malformed(off, what, err)
}
