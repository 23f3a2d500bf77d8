package fieldpath

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ErrFieldsV1 wraps the errors of FromFieldsV1.
var ErrFieldsV1 = errors.New("invalid fieldsV1")

// FieldsV1 returns the set in the kube-apiserver's FieldsV1 JSON form. Elements at one
// level are written in their sort order (members and children merged), "." first for a
// member that also has children.
func (s *Set) FieldsV1() []byte {
	var b bytes.Buffer
	s.writeFields(&b, false)
	return b.Bytes()
}

// MarshalJSON implements json.Marshaler with FieldsV1.
func (s *Set) MarshalJSON() ([]byte, error) { return s.FieldsV1(), nil }

func (s *Set) writeFields(b *bytes.Buffer, self bool) {
	b.WriteByte('{')
	first := true
	sep := func() {
		if !first {
			b.WriteByte(',')
		}
		first = false
	}
	if s == nil {
		b.WriteByte('}')
		return
	}
	if self && (len(s.members) > 0 || len(s.children) > 0) {
		sep()
		b.WriteString(`".":{}`)
	}
	i, j := 0, 0
	for i < len(s.members) || j < len(s.children) {
		sep()
		switch {
		case j >= len(s.children) || (i < len(s.members) && s.members[i].Compare(s.children[j].pe) < 0):
			writeKey(b, s.members[i])
			b.WriteString("{}")
			i++
		case i >= len(s.members) || s.members[i].Compare(s.children[j].pe) > 0:
			writeKey(b, s.children[j].pe)
			s.children[j].set.writeFields(b, false)
			j++
		default:
			writeKey(b, s.children[j].pe)
			s.children[j].set.writeFields(b, true)
			i++
			j++
		}
	}
	b.WriteByte('}')
}

func writeKey(b *bytes.Buffer, pe PathElement) {
	writeString(b, SerializeElement(pe))
	b.WriteByte(':')
}

// writeString writes s as a JSON string, as encoding/json (and the kube-apiserver's
// HTML-escaping writer) does; the common case of plain names is written as it is.
func writeString(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			k, _ := json.Marshal(s)
			b.Write(k)
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}

// SerializeElement returns the element as a FieldsV1 key: "f:name", `k:{"name":"c"}`,
// `v:"x"`, "i:0".
func SerializeElement(pe PathElement) string {
	switch pe.Kind {
	case FieldName:
		return "f:" + pe.Name
	case Key:
		var b strings.Builder
		b.WriteString("k:{")
		for i, f := range pe.Key {
			if i > 0 {
				b.WriteByte(',')
			}
			n, _ := json.Marshal(f.Name)
			b.Write(n)
			b.WriteByte(':')
			b.Write(marshalValue(f.Value))
		}
		b.WriteByte('}')
		return b.String()
	case Value:
		return "v:" + string(marshalValue(pe.Value))
	}
	return "i:" + strconv.Itoa(pe.Index)
}

func marshalValue(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("null")
	}
	return b
}

// DeserializeElement parses a FieldsV1 key.
func DeserializeElement(s string) (PathElement, error) {
	if len(s) < 2 || s[1] != ':' {
		return PathElement{}, fmt.Errorf("%w: key %q is not a path element", ErrFieldsV1, s)
	}
	body := s[2:]
	switch s[0] {
	case 'f':
		return Field(body), nil
	case 'v':
		v, err := decodeValue(body)
		if err != nil {
			return PathElement{}, fmt.Errorf("%w: %q: %v", ErrFieldsV1, s, err)
		}
		return ValueOf(v), nil
	case 'k':
		v, err := decodeValue(body)
		m, ok := v.(map[string]any)
		if err != nil || !ok {
			return PathElement{}, fmt.Errorf("%w: %q is not a key object", ErrFieldsV1, s)
		}
		fields := make([]KeyField, 0, len(m))
		for k, x := range m {
			fields = append(fields, KeyField{Name: k, Value: x})
		}
		return KeyOf(fields...), nil
	case 'i':
		i, err := strconv.Atoi(body)
		if err != nil {
			return PathElement{}, fmt.Errorf("%w: %q: %v", ErrFieldsV1, s, err)
		}
		return IndexOf(i), nil
	}
	return PathElement{}, fmt.Errorf("%w: unknown path element type in %q", ErrFieldsV1, s)
}

func decodeValue(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("trailing data")
	}
	return Normalize(v), nil
}

// FromFieldsV1 parses the FieldsV1 form. Keys of an unknown element type are skipped, as
// the kube-apiserver skips them.
func FromFieldsV1(data []byte) (*Set, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var raw any
	if err := d.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFieldsV1, err)
	}
	m, ok := raw.(map[string]any)
	if !ok {
		if raw == nil {
			return &Set{}, nil
		}
		return nil, fmt.Errorf("%w: not a JSON object", ErrFieldsV1)
	}
	s, _, err := fromMap(m)
	if err != nil {
		return nil, err
	}
	if s == nil {
		s = &Set{}
	}
	return s, nil
}

// fromMap returns the children of one level and whether the level is itself a member
// (it holds "." or nothing).
func fromMap(m map[string]any) (*Set, bool, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out *Set
	self := false
	for _, k := range keys {
		if k == "." {
			self = true
			continue
		}
		pe, err := DeserializeElement(k)
		if err != nil {
			if len(k) >= 2 && k[1] == ':' && !strings.ContainsRune("fvki", rune(k[0])) {
				continue
			}
			return nil, false, err
		}
		sub, _ := m[k].(map[string]any)
		if m[k] != nil && sub == nil {
			return nil, false, fmt.Errorf("%w: the value of %q is not an object", ErrFieldsV1, k)
		}
		grand, member, err := fromMap(sub)
		if err != nil {
			return nil, false, err
		}
		if out == nil {
			out = &Set{}
		}
		if member {
			out.addMember(pe)
		}
		if grand != nil {
			*out.descend(pe) = *grand
		}
	}
	if out == nil {
		self = true
	}
	return out, self, nil
}
