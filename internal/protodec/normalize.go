package protodec

import (
	"github.com/informerkit/informerkit/internal/kubeschema"
)

// normalize returns message b of type st with the occurrences of every non-repeated
// message field merged into one, at every depth: protobuf merges them (a message field
// that occurs twice is the concatenation of its occurrences), and so does kubeproto's JSON
// form. Real servers never repeat a field; the decoder meets this only in crafted input,
// and then decodes the normalized message from the start.
func normalize(st *kubeschema.Type, b []byte, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, malformed("messages nested deeper than %d", maxDepth)
	}
	type merged struct {
		f        *kubeschema.Field
		payloads [][]byte
	}
	var order []*merged
	byNum := map[int]*merged{}
	var out []byte
	for i := 0; i < len(b); {
		start := i
		num, wt, n, err := tag(b, i)
		if err != nil {
			return nil, err
		}
		v, next, err := value(b, n, wt)
		if err != nil {
			return nil, err
		}
		i = next
		f := st.FieldByNumber(num)
		if f == nil || f.Kind != kubeschema.Message || wt != 2 {
			out = append(out, b[start:next]...)
			continue
		}
		switch {
		case f.MapKey != "":
			e, err := normalizeEntry(f, v, depth+1)
			if err != nil {
				return nil, err
			}
			out = appendField(out, num, e)
		case f.Repeated:
			e, err := normalize(f.Type(), v, depth+1)
			if err != nil {
				return nil, err
			}
			out = appendField(out, num, e)
		default:
			m := byNum[num]
			if m == nil {
				m = &merged{f: f}
				byNum[num] = m
				order = append(order, m)
			}
			m.payloads = append(m.payloads, v)
		}
	}
	for _, m := range order {
		var cat []byte
		for _, p := range m.payloads {
			cat = append(cat, p...)
		}
		e, err := normalize(m.f.Type(), cat, depth+1)
		if err != nil {
			return nil, err
		}
		out = appendField(out, m.f.Number, e)
	}
	return out, nil
}

// normalizeEntry normalizes a map entry whose value is a message: its value occurrences
// merged into one.
func normalizeEntry(f *kubeschema.Field, b []byte, depth int) ([]byte, error) {
	var out, val []byte
	hasVal := false
	for i := 0; i < len(b); {
		start := i
		num, wt, n, err := tag(b, i)
		if err != nil {
			return nil, err
		}
		v, next, err := value(b, n, wt)
		if err != nil {
			return nil, err
		}
		i = next
		if num == 2 && wt == 2 {
			val, hasVal = append(val, v...), true
			continue
		}
		out = append(out, b[start:next]...)
	}
	if !hasVal {
		return out, nil
	}
	e, err := normalize(f.Type(), val, depth+1)
	if err != nil {
		return nil, err
	}
	return appendField(out, 2, e), nil
}

func appendField(b []byte, num int, v []byte) []byte {
	b = appendVarint(b, uint64(num)<<3|2)
	b = appendVarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}
