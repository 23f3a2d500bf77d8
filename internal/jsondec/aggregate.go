package jsondec

import (
	"encoding/json"
	"strconv"
	"unsafe"
)

func parseFloat(item []byte, bits int) (float64, bool) {
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(item), len(item)), bits)
	return f, err == nil
}

// open consumes the '{' or '[' at d.off and the whitespace after it, and returns the next
// byte.
func (d *decodeState) open() (byte, error) {
	if d.depth >= maxDepth {
		return 0, d.syntaxErr(d.off, "exceeded max depth")
	}
	d.depth++
	d.off++
	return d.ws()
}

// more consumes what follows a member or element: ',' (then whitespace; more is true) or
// the closing byte (more is false).
func (d *decodeState) more(close byte) (bool, error) {
	c, err := d.ws()
	if err != nil {
		return false, err
	}
	d.off++
	if c == ',' {
		_, err := d.ws()
		return true, err
	}
	if c == close {
		d.depth--
		return false, nil
	}
	d.off--
	if close == '}' {
		return false, d.badByte(d.off, "after object key:value pair")
	}
	return false, d.badByte(d.off, "after array element")
}

// key reads the object key at d.off and the ':' after it; the text is the input itself or
// d.buf.
func (d *decodeState) key() ([]byte, error) {
	if d.data[d.off] != '"' {
		return nil, d.badByte(d.off, "looking for beginning of object key string")
	}
	start, end, flags, err := d.scanString()
	if err != nil {
		return nil, err
	}
	k := d.stringContent(start, end, flags)
	return k, d.colon()
}

// elements decodes the elements of the array whose '[' open consumed, c being the byte
// after it: it calls elem with the index of each element in turn, elem decoding the element
// at d.off, and consumes the separators and the closing ']'. It returns the number of
// elements decoded.
func (d *decodeState) elements(c byte, elem func(i int) error) (int, error) {
	if c == ']' {
		d.off++
		d.depth--
		return 0, nil
	}
	for i := 0; ; {
		if err := elem(i); err != nil {
			return i, err
		}
		i++
		more, err := d.more(']')
		if err != nil || !more {
			return i, err
		}
	}
}

// omitValue handles the value of a member on the Omit path at the current depth: the last
// name of the path is skipped, an earlier one is decoded by decode with the next depth on
// the path.
func (d *decodeState) omitValue(decode func() error) error {
	if d.depth == len(d.omit) {
		return d.skip()
	}
	saved := d.omitted
	d.omitted = d.depth
	err := decode()
	d.omitted = saved
	return err
}

// fallback decodes the value at d.off with encoding/json into v (a pointer), for the rare
// shapes whose semantics are its own: an interface that already holds a pointer.
func (d *decodeState) fallback(v any) error {
	raw, err := d.raw()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		d.saveError(err)
	}
	return nil
}
