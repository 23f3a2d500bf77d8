package kubeproto

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/informerkit/informerkit/internal/kubeschema"
)

// Decode decodes a message of type t (no envelope) into its JSON form.
func Decode(t *kubeschema.Type, b []byte) (map[string]any, error) { return decodeAt(t, b, 0) }

func decodeAt(t *kubeschema.Type, b []byte, off int) (map[string]any, error) {
	if t.JSON != "" {
		return nil, newError(ErrSchema, "", -1, "%s is not an object type", t.Name)
	}
	acc, err := decodeMsg(t, b, off, 0, "", nil)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	if err := acc.object(out, ""); err != nil {
		return nil, err
	}
	return out, nil
}

// msg holds the fields of one decoded message before they become JSON (which needs to know
// which fields were present on the wire).
type msg struct {
	t    *kubeschema.Type
	vals map[*kubeschema.Field]any // scalar, []byte, *msg; []any for lists; map[string]any for maps
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func decodeMsg(t *kubeschema.Type, b []byte, off, depth int, path string, into *msg) (*msg, error) {
	if depth > maxDepth {
		return nil, newError(ErrMalformed, path, off, "messages nested deeper than %d", maxDepth)
	}
	m := into
	if m == nil {
		m = &msg{t: t, vals: map[*kubeschema.Field]any{}}
	}
	r := &reader{buf: b, off: off}
	for !r.done() {
		num, wt, err := r.tag()
		if err != nil {
			err.(*Error).Path = path
			return nil, err
		}
		f := t.FieldByNumber(num)
		if f == nil {
			if err := r.skip(wt); err != nil {
				err.(*Error).Path = path
				return nil, err
			}
			continue
		}
		fpath := path
		if !f.Inline {
			fpath = joinPath(path, f.Name)
		}
		switch {
		case f.MapKey != "":
			if wt != kubeschema.LengthDelimited {
				return nil, newError(ErrSchema, fpath, r.at(), "map entry with wire type %d", wt)
			}
			entry, eoff, err := r.bytes()
			if err != nil {
				return nil, err
			}
			k, v, err := decodeEntry(f, entry, eoff, depth+1, fpath)
			if err != nil {
				return nil, err
			}
			mm, _ := m.vals[f].(map[string]any)
			if mm == nil {
				mm = map[string]any{}
				m.vals[f] = mm
			}
			mm[k] = v
		case f.Repeated && wt == kubeschema.LengthDelimited && f.Wire() == kubeschema.Varint:
			// Packed scalars (proto2 writers may pack; Kubernetes' do not).
			packed, poff, err := r.bytes()
			if err != nil {
				return nil, err
			}
			pr := &reader{buf: packed, off: poff}
			l, _ := m.vals[f].([]any)
			for !pr.done() {
				v, err := pr.varint()
				if err != nil {
					err.(*Error).Path = fpath
					return nil, err
				}
				l = append(l, scalarOfVarint(f.Kind, v))
			}
			m.vals[f] = l
		case f.Repeated:
			v, err := decodeValue(f, wt, r, depth, fpath, nil)
			if err != nil {
				return nil, err
			}
			l, _ := m.vals[f].([]any)
			m.vals[f] = append(l, v)
		default:
			// A message field seen twice merges (protobuf semantics); a scalar's last value wins.
			prev, _ := m.vals[f].(*msg)
			v, err := decodeValue(f, wt, r, depth, fpath, prev)
			if err != nil {
				return nil, err
			}
			m.vals[f] = v
		}
	}
	return m, nil
}

func scalarOfVarint(k kubeschema.Kind, v uint64) any {
	switch k {
	case kubeschema.Bool:
		return v != 0
	case kubeschema.Int32:
		return int64(int32(v))
	}
	return int64(v)
}

// decodeValue reads one value of field f (a list element, a single value).
func decodeValue(f *kubeschema.Field, wt kubeschema.WireType, r *reader, depth int, path string, into *msg) (any, error) {
	if wt != f.Wire() {
		return nil, newError(ErrSchema, path, r.at(), "wire type %d, the field has %d", wt, f.Wire())
	}
	switch f.Kind {
	case kubeschema.String, kubeschema.Bytes, kubeschema.Message:
		v, off, err := r.bytes()
		if err != nil {
			err.(*Error).Path = path
			return nil, err
		}
		switch f.Kind {
		case kubeschema.String:
			return string(v), nil
		case kubeschema.Bytes:
			return bytes.Clone(v), nil
		}
		return decodeMsg(f.Type(), v, off, depth+1, path, into)
	case kubeschema.Bool, kubeschema.Int32, kubeschema.Int64:
		v, err := r.varint()
		if err != nil {
			err.(*Error).Path = path
			return nil, err
		}
		return scalarOfVarint(f.Kind, v), nil
	case kubeschema.Float64:
		v, err := r.fixed64()
		if err != nil {
			err.(*Error).Path = path
			return nil, err
		}
		return math.Float64frombits(v), nil
	}
	return nil, newError(ErrSchema, path, r.at(), "field kind %q", f.Kind)
}

// decodeEntry decodes a map entry: key = 1 (string), value = 2.
func decodeEntry(f *kubeschema.Field, b []byte, off, depth int, path string) (string, any, error) {
	r := &reader{buf: b, off: off}
	var key string
	var val any
	for !r.done() {
		num, wt, err := r.tag()
		if err != nil {
			err.(*Error).Path = path
			return "", nil, err
		}
		switch num {
		case 1:
			if wt != kubeschema.LengthDelimited {
				return "", nil, newError(ErrSchema, path, r.at(), "map key with wire type %d", wt)
			}
			k, _, err := r.bytes()
			if err != nil {
				return "", nil, err
			}
			key = string(k)
		case 2:
			prev, _ := val.(*msg)
			if val, err = decodeValue(f, wt, r, depth, path+"["+strconv.Quote(key)+"]", prev); err != nil {
				return "", nil, err
			}
		default:
			if err := r.skip(wt); err != nil {
				return "", nil, err
			}
		}
	}
	if val == nil && f.Kind == kubeschema.Message {
		val = &msg{t: f.Type(), vals: map[*kubeschema.Field]any{}}
	}
	return key, val, nil
}

// object writes the JSON fields of m into out, as encoding/json writes the Go struct.
func (m *msg) object(out map[string]any, path string) error {
	for _, f := range m.t.Fields {
		if f.NoJSON {
			continue
		}
		v, present := m.vals[f]
		if f.Inline {
			sub, _ := v.(*msg)
			if sub == nil {
				sub = &msg{t: f.Type(), vals: map[*kubeschema.Field]any{}}
			}
			if err := sub.object(out, path); err != nil {
				return err
			}
			continue
		}
		jv, set, err := fieldJSON(f, v, present, joinPath(path, f.Name))
		if err != nil {
			return err
		}
		if set {
			out[f.Name] = jv
		}
	}
	return nil
}

// fieldJSON returns the JSON value of field f (v, if present in the message), and whether
// encoding/json would write the field at all (omitempty and omitzero leave it out).
func fieldJSON(f *kubeschema.Field, v any, present bool, path string) (any, bool, error) {
	omittable := f.OmitEmpty || f.OmitZero
	if !present && (f.MapKey != "" || f.Repeated || f.Pointer) {
		return nil, !omittable, nil // a nil map, slice or pointer
	}
	switch {
	case f.MapKey != "":
		mm := v.(map[string]any)
		jm := make(map[string]any, len(mm))
		for k, x := range mm {
			jv, err := valueJSON(f, x, path+"["+strconv.Quote(k)+"]")
			if err != nil {
				return nil, false, err
			}
			jm[k] = jv
		}
		return jm, true, nil
	case f.Repeated:
		l := v.([]any)
		jl := make([]any, len(l))
		for i, x := range l {
			jv, err := valueJSON(f, x, path+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, false, err
			}
			jl[i] = jv
		}
		return jl, true, nil
	case f.Pointer:
		jv, err := valueJSON(f, v, path)
		return jv, err == nil, err
	case f.Kind == kubeschema.Bytes:
		b, _ := v.([]byte)
		switch {
		case !present && !omittable:
			return nil, true, nil
		case len(b) == 0 && omittable, !present:
			return nil, false, nil
		}
		return base64.StdEncoding.EncodeToString(b), true, nil
	case f.Kind == kubeschema.Message:
		sub, _ := v.(*msg)
		if sub == nil {
			if f.Type().JSON == "array" {
				// An absent named slice is nil in Go: null, or nothing with omitempty.
				return nil, !f.OmitEmpty, nil
			}
			sub = &msg{t: f.Type(), vals: map[*kubeschema.Field]any{}}
		}
		if f.OmitZero && sub.isZero() {
			return nil, false, nil
		}
		if f.OmitEmpty && f.Type().JSON == "array" && sub.isZero() {
			return nil, false, nil // a named slice type: omitempty applies
		}
		jv, err := sub.json(path)
		return jv, err == nil, err
	}
	if !present {
		v = zeroOf(f.Kind)
	}
	if omittable && isZeroScalar(v) {
		return nil, false, nil
	}
	jv, err := scalarJSON(v, path)
	return jv, err == nil, err
}

// isZero reports whether the message is its type's zero value (for omitzero and the
// omitempty of named slices).
func (m *msg) isZero() bool {
	for _, v := range m.vals {
		switch x := v.(type) {
		case *msg:
			if !x.isZero() {
				return false
			}
		case []any:
			if len(x) > 0 {
				return false
			}
		case map[string]any:
			if len(x) > 0 {
				return false
			}
		case []byte:
			if x != nil {
				return false
			}
		default:
			if !isZeroScalar(x) {
				return false
			}
		}
	}
	// A Time that was on the wire with any content is not zero even at second 0.
	if j := m.t.JSON; (j == "time" || j == "microtime") && len(m.vals) > 0 {
		return false
	}
	return true
}

func zeroOf(k kubeschema.Kind) any {
	switch k {
	case kubeschema.String:
		return ""
	case kubeschema.Bool:
		return false
	case kubeschema.Float64:
		return float64(0)
	}
	return int64(0)
}

func isZeroScalar(v any) bool {
	switch x := v.(type) {
	case string:
		return x == ""
	case bool:
		return !x
	case int64:
		return x == 0
	case float64:
		return x == 0
	case nil:
		return true
	}
	return false
}

func scalarJSON(v any, path string) (any, error) {
	switch x := v.(type) {
	case int64:
		return json.Number(strconv.FormatInt(x, 10)), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, newError(ErrSchema, path, -1, "%v has no JSON form", x)
		}
		return json.Number(strconv.FormatFloat(x, 'g', -1, 64)), nil
	}
	return v, nil
}

// valueJSON is the JSON of one value of f (a list element, a map value, a pointer's target).
func valueJSON(f *kubeschema.Field, v any, path string) (any, error) {
	switch x := v.(type) {
	case *msg:
		return x.json(path)
	case []byte:
		return base64.StdEncoding.EncodeToString(x), nil
	case nil:
		if f.Kind == kubeschema.Bytes {
			return nil, nil // a nil []byte map value is null
		}
		if f.Kind == kubeschema.Message {
			return (&msg{t: f.Type(), vals: map[*kubeschema.Field]any{}}).json(path)
		}
		return scalarJSON(zeroOf(f.Kind), path)
	}
	return scalarJSON(v, path)
}

func (m *msg) num(n int) any {
	if f := m.t.FieldByNumber(n); f != nil {
		return m.vals[f]
	}
	return nil
}

// json is the JSON of a message: an object, or the special form of its type.
func (m *msg) json(path string) (any, error) {
	switch m.t.JSON {
	case "":
		out := map[string]any{}
		if err := m.object(out, path); err != nil {
			return nil, err
		}
		return out, nil
	case "time", "microtime":
		if len(m.vals) == 0 {
			return nil, nil // the zero Time is null in JSON
		}
		sec, _ := m.num(1).(int64)
		if m.t.JSON == "time" {
			return formatTime(time.Unix(sec, 0), time.RFC3339, path)
		}
		nanos, _ := m.num(2).(int64)
		return formatTime(time.Unix(sec, int64(time.Duration(nanos).Truncate(time.Microsecond))), "2006-01-02T15:04:05.000000Z07:00", path)
	case "duration":
		d, _ := m.num(1).(int64)
		return time.Duration(d).String(), nil
	case "quantity":
		s, _ := m.num(1).(string)
		if s == "" {
			s = "0"
		}
		return s, nil
	case "int-or-string":
		typ, _ := m.num(1).(int64)
		switch typ {
		case 0:
			i, _ := m.num(2).(int64)
			return json.Number(strconv.FormatInt(i, 10)), nil
		case 1:
			s, _ := m.num(3).(string)
			return s, nil
		}
		return nil, newError(ErrSchema, path, -1, "IntOrString type %d", typ)
	case "raw":
		raw, _ := m.num(1).([]byte)
		if raw == nil {
			return nil, nil
		}
		// One JSON value and nothing else (json.Decoder alone would accept "1}").
		if !json.Valid(raw) {
			return nil, newError(ErrSchema, path, -1, "raw value is not JSON")
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, newError(ErrSchema, path, -1, "raw value is not JSON")
		}
		return v, nil
	case "array":
		// A named slice's message on the wire (or a map value, which the generated
		// decoders allocate before reading it) is a non-nil slice: [] when empty.
		l, _ := m.num(1).([]any)
		f := m.t.FieldByNumber(1)
		out := make([]any, len(l))
		for i, x := range l {
			jv, err := valueJSON(f, x, path)
			if err != nil {
				return nil, err
			}
			out[i] = jv
		}
		return out, nil
	}
	return nil, newError(ErrSchema, path, -1, "unknown JSON form %q of %s", m.t.JSON, m.t.Name)
}

func formatTime(t time.Time, layout, path string) (any, error) {
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		// encoding/json refuses such times (Time.MarshalJSON fails).
		return nil, newError(ErrSchema, path, -1, "time %d s is outside years 0-9999", t.Unix())
	}
	return t.UTC().Format(layout), nil
}
