package protodec

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/informerkit/informerkit/internal/kubeproto"
	"github.com/informerkit/informerkit/internal/kubeschema"
)

// The JSON text of values that are not decoded field by field: the special forms (Type.JSON)
// and values whose Go type differs from their kind. Each is what kubeproto's JSON form
// holds, so that jsondec gives the Go value the JSON path gives.

// form holds the fields of a special-form message (numbers 1 to 3; last value wins).
type form struct {
	any   bool // a field of the schema was on the wire
	has   [4]bool
	u     [4]uint64
	s     [4][]byte
	items [][]byte // the repeated field of the "array" form
}

// parseForm reads a special-form message, checking its fields as kubeproto does.
func parseForm(st *kubeschema.Type, b []byte) (form, error) {
	var fm form
	for i := 0; i < len(b); {
		num, wt, n, err := tag(b, i)
		if err != nil {
			return fm, err
		}
		v, next, err := value(b, n, wt)
		if err != nil {
			return fm, err
		}
		i = next
		var f *kubeschema.Field
		for _, x := range st.Fields {
			if x.Number == num {
				f = x
			}
		}
		if f == nil || num > 3 {
			continue
		}
		fm.any, fm.has[num] = true, true
		if f.Repeated && wt == 2 && f.Wire() == kubeschema.Varint {
			continue // packed scalars: no form has repeated varints
		}
		if wt != uint8(f.Wire()) {
			return fm, schemaErr("%s.%s: wire type %d, the field has %d", st.Name, f.Name, wt, f.Wire())
		}
		switch {
		case f.Repeated:
			fm.items = append(fm.items, v)
		case wt == 0:
			fm.u[num], _, _ = varint(v, 0)
		case wt == 2:
			fm.s[num] = v
		}
	}
	return fm, nil
}

// formJSON returns the JSON of a special-form message of type st.
func (d *Decoder) formJSON(st *kubeschema.Type, b []byte) ([]byte, error) {
	fm, err := parseForm(st, b)
	if err != nil {
		return nil, err
	}
	buf := d.buf[:0]
	switch st.JSON {
	case "time", "microtime":
		if !fm.any {
			return append(buf, "null"...), nil
		}
		layout, t := time.RFC3339, time.Unix(int64(fm.u[1]), 0)
		if st.JSON == "microtime" {
			layout = "2006-01-02T15:04:05.000000Z07:00"
			nanos := int64(int32(fm.u[2]))
			t = time.Unix(int64(fm.u[1]), int64(time.Duration(nanos).Truncate(time.Microsecond)))
		}
		if y := t.UTC().Year(); y < 0 || y > 9999 {
			return nil, schemaErr("time %d s is outside years 0-9999", t.Unix())
		}
		return strconv.AppendQuote(buf, t.UTC().Format(layout)), nil
	case "duration":
		return strconv.AppendQuote(buf, time.Duration(int64(fm.u[1])).String()), nil
	case "quantity":
		if len(fm.s[1]) == 0 {
			return append(buf, `"0"`...), nil
		}
		return json.Marshal(string(fm.s[1]))
	case "int-or-string":
		switch int64(fm.u[1]) {
		case 0:
			return appendInt(buf, int64(int32(fm.u[2]))), nil
		case 1:
			return json.Marshal(string(fm.s[3]))
		}
		return nil, schemaErr("IntOrString type %d", int64(fm.u[1]))
	case "raw":
		if !fm.has[1] {
			return append(buf, "null"...), nil
		}
		return canonicalJSON(fm.s[1])
	case "array":
		if fm.items == nil {
			return append(buf, "null"...), nil
		}
		items := make([]string, len(fm.items))
		for i, it := range fm.items {
			items[i] = string(it)
		}
		return json.Marshal(items)
	}
	return nil, schemaErr("unknown JSON form %q of %s", st.JSON, st.Name)
}

// canonicalJSON is raw JSON as kubeproto's JSON form carries it: decoded (numbers kept as
// written) and encoded again.
func canonicalJSON(raw []byte) ([]byte, error) {
	if !json.Valid(raw) {
		return nil, schemaErr("raw value is not JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, schemaErr("raw value is not JSON")
	}
	return json.Marshal(v)
}

// objectJSON returns the JSON of an object message of type st, with apiVersion and kind
// if they are given.
func (d *Decoder) objectJSON(st *kubeschema.Type, b, apiVersion, kind []byte) ([]byte, error) {
	if st.JSON != "" {
		return d.formJSON(st, b)
	}
	m, err := kubeproto.Decode(st, b)
	if err != nil {
		return nil, err
	}
	if apiVersion != nil {
		m["apiVersion"] = string(apiVersion)
	}
	if kind != nil {
		m["kind"] = string(kind)
	}
	return json.Marshal(m)
}

// valueJSON returns the JSON of one value of field f: v for varint and fixed wire types,
// b for length-delimited ones.
func (d *Decoder) valueJSON(f *kubeschema.Field, v uint64, b []byte) ([]byte, error) {
	buf := d.buf[:0]
	switch f.Kind {
	case kubeschema.String:
		return json.Marshal(string(b))
	case kubeschema.Bool:
		return strconv.AppendBool(buf, v != 0), nil
	case kubeschema.Int32:
		return appendInt(buf, int64(int32(v))), nil
	case kubeschema.Int64:
		return appendInt(buf, int64(v)), nil
	case kubeschema.Float64:
		x, err := float(v)
		if err != nil {
			return nil, err
		}
		return strconv.AppendFloat(buf, x, 'g', -1, 64), nil
	case kubeschema.Bytes:
		if b == nil {
			return append(buf, "null"...), nil
		}
		buf = append(buf, '"')
		buf = base64.StdEncoding.AppendEncode(buf, b)
		return append(buf, '"'), nil
	case kubeschema.Message:
		return d.objectJSON(f.Type(), b, nil, nil)
	}
	return nil, schemaErr("field kind %q", f.Kind)
}

// float checks a double as the JSON form does: NaN and infinities have none.
func float(v uint64) (float64, error) {
	x := math.Float64frombits(v)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, schemaErr("%v has no JSON form", x)
	}
	return x, nil
}

func appendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

// listJSON returns the JSON of a list or map field decoded through its JSON text: its
// occurrences in message b, or null when it is absent and the JSON writes it (nil when the
// JSON omits it).
func (d *Decoder) listJSON(fc *fieldCodec, b []byte, present bool) ([]byte, error) {
	f := fc.f
	if !present {
		if f.OmitEmpty || f.OmitZero {
			return nil, nil
		}
		return []byte("null"), nil
	}
	open, closing := byte('['), byte(']')
	if f.MapKey != "" {
		open, closing = '{', '}'
	}
	out := []byte{open}
	first := true
	add := func(js []byte) {
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, js...)
	}
	for i := 0; i < len(b); {
		num, wt, n, err := tag(b, i)
		if err != nil {
			return nil, err
		}
		raw, next, err := value(b, n, wt)
		if err != nil {
			return nil, err
		}
		i = next
		if num != fc.num {
			continue
		}
		if err := d.appendOccurrence(f, wt, raw, add); err != nil {
			return nil, err
		}
	}
	return append(out, closing), nil
}

// appendOccurrence adds the JSON of one occurrence of a list or map field.
func (d *Decoder) appendOccurrence(f *kubeschema.Field, wt uint8, raw []byte, add func([]byte)) error {
	switch {
	case f.MapKey != "":
		k, vb, vv, err := entry(f, raw)
		if err != nil {
			return err
		}
		kj, err := json.Marshal(string(k))
		if err != nil {
			return err
		}
		vj, err := d.valueJSON(f, vv, vb)
		if err != nil {
			return err
		}
		add(append(append(kj, ':'), vj...))
	case wt == 2 && f.Wire() == kubeschema.Varint:
		for j := 0; j < len(raw); {
			v, next, err := varint(raw, j)
			if err != nil {
				return err
			}
			j = next
			js, err := d.valueJSON(f, v, nil)
			if err != nil {
				return err
			}
			add(bytes.Clone(js))
		}
	default:
		v := scalarOf(wt, raw)
		js, err := d.valueJSON(f, v, raw)
		if err != nil {
			return err
		}
		add(bytes.Clone(js))
	}
	return nil
}

// scalarOf is the value of a varint or fixed field read by value().
func scalarOf(wt uint8, raw []byte) uint64 {
	switch wt {
	case 0:
		v, _, _ := varint(raw, 0)
		return v
	case 1:
		return fixed64(raw)
	case 5:
		return uint64(raw[0]) | uint64(raw[1])<<8 | uint64(raw[2])<<16 | uint64(raw[3])<<24
	}
	return 0
}

// entry splits a map entry (key = 1, value = 2) as kubeproto does: the key's bytes, and the
// value's bytes (length-delimited kinds; nil when absent) or its varint or fixed value.
func entry(f *kubeschema.Field, b []byte) (key, vb []byte, vv uint64, err error) {
	seenMsg := false
	for i := 0; i < len(b); {
		num, wt, n, err := tag(b, i)
		if err != nil {
			return nil, nil, 0, err
		}
		raw, next, err := value(b, n, wt)
		if err != nil {
			return nil, nil, 0, err
		}
		i = next
		switch num {
		case 1:
			if wt != 2 {
				return nil, nil, 0, schemaErr("map key with wire type %d", wt)
			}
			key = raw
		case 2:
			if wt != uint8(f.Wire()) {
				return nil, nil, 0, schemaErr("%s: map value with wire type %d, the field has %d", f.Name, wt, f.Wire())
			}
			if f.Kind == kubeschema.Message {
				if seenMsg {
					return nil, nil, 0, errDuplicate
				}
				seenMsg = true
			}
			if wt == 2 {
				vb = raw
			} else {
				vv = scalarOf(wt, raw)
			}
		}
	}
	if key == nil {
		key = []byte{}
	}
	return key, vb, vv, nil
}
