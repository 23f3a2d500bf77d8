package kubeproto

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/informerkit/informerkit/internal/kubeschema"
)

// Encode encodes obj (JSON form) as a message of type t (no envelope).
func Encode(t *kubeschema.Type, obj map[string]any) ([]byte, error) {
	if t.JSON != "" {
		return nil, newError(ErrSchema, "", -1, "%s is not an object type", t.Name)
	}
	return encodeMsg(nil, t, obj, 0, "")
}

var byNumber sync.Map // *kubeschema.Type → []*kubeschema.Field sorted by number

func fieldsByNumber(t *kubeschema.Type) []*kubeschema.Field {
	if v, ok := byNumber.Load(t); ok {
		return v.([]*kubeschema.Field)
	}
	fs := make([]*kubeschema.Field, 0, len(t.Fields))
	for _, f := range t.Fields {
		if f.Number != 0 && !f.NoJSON {
			fs = append(fs, f)
		}
	}
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Number < fs[j].Number })
	byNumber.Store(t, fs)
	return fs
}

func encErr(path, format string, args ...any) *Error {
	return newError(ErrSchema, path, -1, format, args...)
}

// typeErr is a JSON value of the wrong type for field f (elem: for one element of it).
func typeErr(path string, f *kubeschema.Field, v any, elem bool, format string, args ...any) *Error {
	e := newError(ErrSchema, path, -1, format, args...)
	e.Field, e.Value, e.Elem = f, v, elem
	return e
}

func encodeMsg(b []byte, t *kubeschema.Type, obj map[string]any, depth int, path string) ([]byte, error) {
	if depth > maxDepth {
		return nil, encErr(path, "messages nested deeper than %d", maxDepth)
	}
	for _, f := range fieldsByNumber(t) {
		var err error
		if f.Inline {
			sub, err := encodeMsg(nil, f.Type(), obj, depth+1, path)
			if err != nil {
				return nil, err
			}
			b = appendBytes(b, f.Number, sub)
			continue
		}
		v := obj[f.Name]
		present := v != nil // JSON null unmarshals as absent
		fpath := joinPath(path, f.Name)
		switch {
		case f.MapKey != "":
			if !present {
				continue
			}
			m, ok := v.(map[string]any)
			if !ok {
				return nil, typeErr(fpath, f, v, false, "want an object, got %s", jsonType(v))
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				entry := appendString(nil, 1, k)
				if f.Kind == kubeschema.Bytes && m[k] == nil {
					// A nil []byte value is not written (it decodes as null again).
					b = appendBytes(b, f.Number, entry)
					continue
				}
				if entry, err = encodeValue(entry, 2, f, m[k], true, depth, fpath+"["+strconv.Quote(k)+"]"); err != nil {
					return nil, err
				}
				b = appendBytes(b, f.Number, entry)
			}
		case f.Repeated:
			if !present {
				continue
			}
			l, ok := v.([]any)
			if !ok {
				return nil, typeErr(fpath, f, v, false, "want an array, got %s", jsonType(v))
			}
			for i, x := range l {
				if b, err = encodeValue(b, f.Number, f, x, true, depth, fpath+"["+strconv.Itoa(i)+"]"); err != nil {
					return nil, err
				}
			}
		case f.Pointer && !present:
		case f.Kind == kubeschema.Bytes && !present:
			// A nil []byte is not written.
		default:
			if b, err = encodeValue(b, f.Number, f, v, present, depth, fpath); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// encodeValue appends one value of f as field num. present=false encodes the zero value.
func encodeValue(b []byte, num int, f *kubeschema.Field, v any, present bool, depth int, path string) ([]byte, error) {
	if v == nil {
		present = false
	}
	elem := f.Repeated || f.MapKey != ""
	switch f.Kind {
	case kubeschema.String:
		s := ""
		if present {
			var ok bool
			if s, ok = v.(string); !ok {
				return nil, typeErr(path, f, v, elem, "want a string, got %s", jsonType(v))
			}
		}
		return appendString(b, num, s), nil
	case kubeschema.Bytes:
		var raw []byte
		if present {
			s, ok := v.(string)
			if !ok {
				return nil, typeErr(path, f, v, elem, "want a base64 string, got %s", jsonType(v))
			}
			var err error
			if raw, err = base64.StdEncoding.DecodeString(s); err != nil {
				return nil, encErr(path, "not base64: %v", err)
			}
		}
		return appendBytes(b, num, raw), nil
	case kubeschema.Bool:
		x := false
		if present {
			var ok bool
			if x, ok = v.(bool); !ok {
				return nil, typeErr(path, f, v, elem, "want a boolean, got %s", jsonType(v))
			}
		}
		b = appendTag(b, num, kubeschema.Varint)
		if x {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	case kubeschema.Int32, kubeschema.Int64:
		var n int64
		if present {
			var err error
			if n, err = intOf(v, f.Kind == kubeschema.Int32); err != nil {
				return nil, typeErr(path, f, v, elem, "%v", err)
			}
		}
		b = appendTag(b, num, kubeschema.Varint)
		return appendVarint(b, uint64(n)), nil
	case kubeschema.Float64:
		var x float64
		if present {
			var err error
			if x, err = floatOf(v); err != nil {
				return nil, encErr(path, "%v", err)
			}
		}
		b = appendTag(b, num, kubeschema.Fixed64)
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(x)), nil
	case kubeschema.Message:
		sub, err := encodeMessageValue(f.Type(), v, present, depth+1, path)
		if err != nil {
			if e, ok := err.(*Error); ok && e.Field == nil && e.Path == path {
				e.Field, e.Value, e.Elem = f, v, elem
			}
			return nil, err
		}
		return appendBytes(b, num, sub), nil
	}
	return nil, encErr(path, "field kind %q", f.Kind)
}

// encodeMessageValue encodes the message of a Message value (an object or a special form).
func encodeMessageValue(t *kubeschema.Type, v any, present bool, depth int, path string) ([]byte, error) {
	switch t.JSON {
	case "":
		var obj map[string]any
		if present {
			var ok bool
			if obj, ok = v.(map[string]any); !ok {
				return nil, encErr(path, "want an object, got %s", jsonType(v))
			}
		}
		return encodeMsg(nil, t, obj, depth, path)
	case "time", "microtime":
		return encodeTime(v, present, t.JSON == "microtime", path)
	case "duration":
		var d time.Duration
		if present {
			s, ok := v.(string)
			if !ok {
				return nil, encErr(path, "want a duration string, got %s", jsonType(v))
			}
			var err error
			if d, err = time.ParseDuration(s); err != nil {
				return nil, encErr(path, "%v", err)
			}
		}
		b := appendTag(nil, 1, kubeschema.Varint)
		return appendVarint(b, uint64(d)), nil
	case "quantity":
		return encodeQuantity(v, present, path)
	case "int-or-string":
		var typ, n int64
		var s string
		if present {
			if str, ok := v.(string); ok {
				typ, s = 1, str
			} else {
				var err error
				if n, err = intOf(v, true); err != nil {
					return nil, encErr(path, "want an integer or a string: %v", err)
				}
			}
		}
		b := appendTag(nil, 1, kubeschema.Varint)
		b = appendVarint(b, uint64(typ))
		b = appendTag(b, 2, kubeschema.Varint)
		b = appendVarint(b, uint64(n))
		return appendString(b, 3, s), nil
	case "raw":
		if !present {
			return nil, nil
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, encErr(path, "%v", err)
		}
		return appendBytes(nil, 1, raw), nil
	case "array":
		if !present {
			return nil, nil
		}
		l, ok := v.([]any)
		if !ok {
			return nil, encErr(path, "want an array, got %s", jsonType(v))
		}
		f := t.FieldByNumber(1)
		var b []byte
		for i, x := range l {
			var err error
			if b, err = encodeValue(b, 1, f, x, true, depth, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	return nil, encErr(path, "unknown JSON form %q of %s", t.JSON, t.Name)
}

// encodeTime encodes a metav1.Time (or MicroTime, whose nanoseconds are kept to the
// microsecond) from its RFC 3339 string; the zero time encodes to nothing.
func encodeTime(v any, present, micro bool, path string) ([]byte, error) {
	if !present {
		return nil, nil // the zero Time marshals to nothing
	}
	s, ok := v.(string)
	if !ok {
		return nil, encErr(path, "want a time string, got %s", jsonType(v))
	}
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, encErr(path, "%v", err)
	}
	if tm.IsZero() {
		return nil, nil
	}
	var nanos int64
	if micro {
		nanos = int64(time.Duration(tm.Nanosecond()).Truncate(time.Microsecond))
	}
	b := appendTag(nil, 1, kubeschema.Varint)
	b = appendVarint(b, uint64(tm.Unix()))
	b = appendTag(b, 2, kubeschema.Varint)
	return appendVarint(b, uint64(nanos)), nil
}

// encodeQuantity encodes a resource.Quantity from its JSON string or number.
func encodeQuantity(v any, present bool, path string) ([]byte, error) {
	s := "0"
	if present {
		switch x := v.(type) {
		case string:
			s = x
		case json.Number:
			s = x.String()
		case float64:
			s = strconv.FormatFloat(x, 'f', -1, 64)
		default:
			return nil, encErr(path, "want a quantity, got %s", jsonType(v))
		}
		if !quantityRE.MatchString(s) {
			return nil, encErr(path, "quantities must match the regular expression '%s'", quantityRE.String())
		}
	}
	return appendString(nil, 1, s), nil
}

// quantityRE is resource.Quantity's grammar, loosely: a signed decimal with an optional
// suffix (binary SI, decimal SI or exponent).
var quantityRE = regexp.MustCompile(`^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$`)

func intOf(v any, is32 bool) (int64, error) {
	var n int64
	switch x := v.(type) {
	case json.Number:
		var err error
		if n, err = strconv.ParseInt(string(x), 10, 64); err != nil {
			return 0, errorf("%s is not an integer", x)
		}
	case float64:
		if x != math.Trunc(x) || x < math.MinInt64 || x >= math.MaxInt64 {
			return 0, errorf("%v is not an integer", x)
		}
		n = int64(x)
	case int:
		n = int64(x)
	case int64:
		n = x
	case int32:
		n = int64(x)
	default:
		return 0, errorf("want a number, got %s", jsonType(v))
	}
	if is32 && (n < math.MinInt32 || n > math.MaxInt32) {
		return 0, errorf("%d overflows int32", n)
	}
	return n, nil
}

func floatOf(v any) (float64, error) {
	switch x := v.(type) {
	case json.Number:
		return x.Float64()
	case float64:
		return x, nil
	case int:
		return float64(x), nil
	case int64:
		return float64(x), nil
	}
	return 0, errorf("want a number, got %s", jsonType(v))
}

type simpleError string

func (e simpleError) Error() string { return string(e) }

func errorf(format string, args ...any) error {
	return simpleError(fmt.Sprintf(format, args...))
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64, int, int64, int32:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}
