package protodec

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/bits"
	"reflect"
	"unicode/utf8"
	"unsafe"

	"github.com/informerkit/informerkit/internal/jsondec"
)

// errDuplicate: a message field occurs twice in one message (never from a real server).
// Plan.Decode then merges the occurrences (normalize) and decodes again.
var errDuplicate = errors.New("protodec: message field repeated")

// decode decodes message b into the struct at p.
func (c *msgCodec) decode(d *Decoder, b []byte, p unsafe.Pointer, depth int) error {
	if depth > maxDepth {
		return malformed("messages nested deeper than %d", maxDepth)
	}
	if c.whole {
		js, err := d.objectJSON(c.schema, b, nil, nil)
		if err != nil {
			return err
		}
		return d.intoJSON(js, c.into, p)
	}
	var seen uint64
	var seenMore map[int]bool
	for i := 0; i < len(b); {
		var num, n int
		var wt uint8
		if k := b[i]; k >= 8 && k < 0x80 {
			num, wt, n = int(k>>3), k&7, i+1 // a one-byte key: fields 1 to 15
		} else {
			var err error
			if num, wt, n, err = tag(b, i); err != nil {
				return err
			}
		}
		var err error
		var v uint64
		var sub []byte
		switch wt {
		case 0:
			if n < len(b) && b[n] < 0x80 {
				v, i = uint64(b[n]), n+1
			} else if v, i, err = varint(b, n); err != nil {
				return err
			}
		case 2:
			l, j, err := varint(b, n)
			if err != nil {
				return err
			}
			if l > uint64(len(b)-j) {
				return malformed("length %d exceeds the %d bytes left at byte %d", l, len(b)-j, j)
			}
			sub, i = b[j:j+int(l)], j+int(l)
		default:
			var raw []byte
			if raw, i, err = value(b, n, wt); err != nil {
				return err
			}
			if wt == 1 {
				v = fixed64(raw)
			} else {
				v = uint64(raw[0]) | uint64(raw[1])<<8 | uint64(raw[2])<<16 | uint64(raw[3])<<24
			}
		}
		if num >= len(c.byNum) || c.byNum[num] == nil {
			continue
		}
		fc := c.byNum[num]
		var again bool // the field was in this message already
		if num < 64 {
			again = seen&(1<<num) != 0
			seen |= 1 << num
		} else {
			again = seenMore[num]
			if seenMore == nil {
				seenMore = map[int]bool{}
			}
			seenMore[num] = true
		}
		if again && fc.single {
			return errDuplicate
		}
		if fc.sliceType != nil && wt == 2 {
			if q := fieldAt(fc, p); (*sliceHeader)(q).data == nil {
				presize(fc.slicePtr, q, 1+count(b[i:], num))
			}
		} else if fc.mapType != nil && wt == 2 {
			if q := fieldAt(fc, p); *(*unsafe.Pointer)(q) == nil {
				presizeMap(fc.mapType, q, 1+count(b[i:], num), fc.mapPtr)
			}
		}
		if err := c.field(d, fc, p, wt, v, sub, depth, again); err != nil {
			return err
		}
	}
	if len(c.absent) == 0 && len(c.viaJSON) == 0 {
		return nil
	}
	return c.finish(d, b, p, depth, seen, seenMore)
}

// field decodes one occurrence of a declared field.
// again: the field was in this message already (else its Go field is still zero: the
// message is decoded into a zero value).
func (c *msgCodec) field(d *Decoder, fc *fieldCodec, p unsafe.Pointer, wt uint8, v uint64, sub []byte, depth int, again bool) error {
	if wt != fc.wire {
		if fc.packed && wt == 2 {
			return c.packed(d, fc, p, sub, depth)
		}
		return schemaErr("%s: wire type %d, the field has %d", fc.f.Name, wt, fc.wire)
	}
	if fc.inline != nil {
		return fc.inline.decode(d, sub, p, depth+1)
	}
	if fc.set == nil {
		return nil // decoded through its JSON text at the end of the message
	}
	if fc.clearZero && isZeroValue(fc, v, sub) {
		if again {
			clearField(fc, p)
		}
		return nil
	}
	return fc.set(d, fieldAt(fc, p), v, sub, depth+1)
}

// packed decodes the packed values of a repeated varint field.
func (c *msgCodec) packed(d *Decoder, fc *fieldCodec, p unsafe.Pointer, b []byte, depth int) error {
	if fc.set == nil {
		return nil
	}
	q := fieldAt(fc, p)
	if len(b) == 0 {
		// An empty packed list is present: the JSON has [], a non-nil empty slice.
		if (*sliceHeader)(q).data == nil {
			return d.intoJSON([]byte("[]"), fc.into, q)
		}
		return nil
	}
	for i := 0; i < len(b); {
		v, j, err := varint(b, i)
		if err != nil {
			return err
		}
		i = j
		if err := fc.set(d, q, v, nil, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func isZeroValue(fc *fieldCodec, v uint64, b []byte) bool {
	switch fc.wire {
	case 2:
		return len(b) == 0
	case 1:
		return math.Float64frombits(v) == 0
	}
	return v == 0
}

// fieldAt returns the address of fc's Go field in the struct at p, allocating embedded
// pointers on the way.
func fieldAt(fc *fieldCodec, p unsafe.Pointer) unsafe.Pointer {
	for _, h := range fc.hops {
		pp := (*unsafe.Pointer)(unsafe.Add(p, h.off))
		if *pp == nil {
			*pp = reflect.New(h.elem).UnsafePointer()
		}
		p = *pp
	}
	return unsafe.Add(p, fc.off)
}

// clearField puts fc's Go field back to its zero value (nothing is allocated). A field that
// is zero already (in a new object, every one but a field merged twice) is left alone.
func clearField(fc *fieldCodec, p unsafe.Pointer) {
	for _, h := range fc.hops {
		pp := (*unsafe.Pointer)(unsafe.Add(p, h.off))
		if *pp == nil {
			return
		}
		p = *pp
	}
	q := unsafe.Add(p, fc.off)
	for _, c := range unsafe.Slice((*byte)(q), fc.goType.Size()) {
		if c != 0 {
			reflect.ValueOf(fc.ptr.at(q)).Elem().SetZero()
			return
		}
	}
}

// finish applies what the absence of fields means and decodes the fields that go through
// their JSON text.
func (c *msgCodec) finish(d *Decoder, b []byte, p unsafe.Pointer, depth int, seen uint64, seenMore map[int]bool) error {
	was := func(num int) bool {
		if num < 64 {
			return seen&(1<<num) != 0
		}
		return seenMore[num]
	}
	for _, fc := range c.absent {
		if was(fc.num) {
			continue
		}
		switch {
		case fc.inline != nil:
			if err := fc.inline.decode(d, nil, p, depth+1); err != nil {
				return err
			}
		case fc.absent == absentZero:
			if err := fc.set(d, fieldAt(fc, p), 0, nil, depth+1); err != nil {
				return err
			}
		case fc.absent == absentNull:
			if err := d.intoJSON([]byte("null"), fc.into, fieldAt(fc, p)); err != nil {
				return err
			}
		}
	}
	for _, fc := range c.viaJSON {
		js, err := d.listJSON(fc, b, was(fc.num))
		if err != nil {
			return err
		}
		if js == nil {
			continue
		}
		if err := d.intoJSON(js, fc.into, fieldAt(fc, p)); err != nil {
			return err
		}
	}
	return nil
}

// intoJSON hands the JSON text js to jsondec for the value at p; a type error is kept for
// the end, as jsondec keeps it.
func (d *Decoder) intoJSON(js []byte, in jsondec.Into, p unsafe.Pointer) error {
	err := in.Decode(d.json(), js, p)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if d.err == nil {
			d.err = err
		}
		return nil
	}
	return err
}

// str returns the Go string of a protobuf string, as the JSON path would have it: invalid
// UTF-8 becomes U+FFFD per byte (encoding/json's rule), and the caller's Strings function
// supplies the string if it is set.
func (d *Decoder) str(b []byte) string {
	if !utf8.Valid(b) {
		b = validUTF8(b)
	}
	if d.opts.Strings == nil || len(b) == 0 {
		return string(b)
	}
	// The strings of a stream repeat from object to object (namespaces, label keys and
	// values, images, environment): a small cache of the last ones Strings returned answers
	// most of them without its lookup.
	h := quickHash(b)
	e := &d.cache[h%uint64(len(d.cache))]
	if e.h == h && e.s == string(b) {
		return e.s
	}
	s := d.opts.Strings(b)
	e.h, e.s = h, s
	return s
}

// setString sets a TypeMeta member from an envelope; last caches the string.
func (fc *fieldCodec) setString(d *Decoder, target unsafe.Pointer, b []byte, last *string) error {
	q := fieldAt(fc, target)
	if fc.set == nil {
		js, err := json.Marshal(string(b))
		if err != nil {
			return err
		}
		return d.intoJSON(js, fc.into, q)
	}
	if *last != string(b) {
		*last = d.str(b)
	}
	*(*string)(q) = *last
	return nil
}

// validUTF8 replaces each byte of an invalid UTF-8 sequence with U+FFFD, as encoding/json
// does when it writes a string.
func validUTF8(b []byte) []byte {
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// count returns the number of length-delimited occurrences of field num at the start of b
// (0 if b is malformed: the decode loop reports that). Encoders write the elements of a
// list one after the other; elements that come later grow the slice.
func count(b []byte, num int) int {
	n := 0
	for i := 0; i < len(b); {
		k, wt, j, err := tag(b, i)
		if err != nil || k != num || wt != 2 {
			return n
		}
		l, j, err := varint(b, j)
		if err != nil || l > uint64(len(b)-j) {
			return n
		}
		i = j + int(l)
		n++
	}
	return n
}

// quickHash is a cheap hash of a string for the decoder's cache: its length and its first
// and last eight bytes. Collisions cost a comparison and a lookup, nothing else.
func quickHash(b []byte) uint64 {
	n := len(b)
	var head, last uint64
	if n >= 8 {
		head = binary.LittleEndian.Uint64(b)
		last = binary.LittleEndian.Uint64(b[n-8:])
	} else {
		for i, c := range b {
			head |= uint64(c) << (8 * i)
		}
	}
	h := (head ^ uint64(n)*0x9E3779B97F4A7C15) * 0xBF58476D1CE4E5B9
	h ^= bits.RotateLeft64(last*0x94D049BB133111EB, 31)
	return h ^ h>>29
}
