package patchgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/informerkit/informerkit/internal/kubeschema"
)

// ErrNoStrategicPatch: the two objects differ in a way a strategic merge patch cannot
// say (a merge list whose items lack their merge key or repeat one, a scalar repeated in a
// merge list of scalars, a key starting with "$"). A JSON merge patch can.
var ErrNoStrategicPatch = errors.New("patchgen: no strategic merge patch says this change")

// The directives of strategic merge patch.
const (
	directive          = "$patch"
	setElementOrder    = "$setElementOrder/"
	deleteFromPrimList = "$deleteFromPrimitiveList/"
)

// shape is what a strategic merge patch needs to know of a value: an object's fields, a
// list's strategy and merge key, a map's values. A nil shape is a value without schema:
// objects are merged field by field, lists replaced.
type shape struct {
	obj      *kubeschema.Type // an object of this type
	scalar   bool             // replaced whole: a scalar, or a type with a JSON form of its own
	replace  bool             // patchStrategy replace
	list     bool
	merge    bool // a list merged (patchStrategy merge)
	mergeKey string
	isMap    bool
	elem     *shape // of a list's items and a map's values
}

func typeShape(t *kubeschema.Type) *shape {
	if t == nil {
		return nil
	}
	if t.JSON != "" {
		return &shape{scalar: true}
	}
	return &shape{obj: t}
}

func fieldShape(f *kubeschema.Field) *shape {
	if f == nil {
		return nil
	}
	elem := &shape{scalar: true}
	if f.Kind == kubeschema.Message {
		elem = typeShape(f.Type())
	}
	replace := strings.Contains(f.PatchStrategy, "replace")
	switch {
	case f.Repeated:
		return &shape{list: true, replace: replace, merge: strings.Contains(f.PatchStrategy, "merge"), mergeKey: f.PatchMergeKey, elem: elem}
	case f.MapKey != "":
		return &shape{isMap: true, replace: replace, elem: elem}
	}
	if replace && elem != nil {
		cp := *elem
		cp.replace = true
		return &cp
	}
	return elem
}

// field is the shape of an object's field name.
func (s *shape) field(name string) *shape {
	switch {
	case s == nil:
		return nil
	case s.isMap:
		return s.elem
	case s.obj != nil:
		return fieldShape(s.obj.Field(name))
	}
	return nil
}

// Strategic returns the strategic merge patch that turns from into to, for an object of
// the built-in type t (kubeschema.ForKind): objects diffed field by field, null for what
// to removes; lists of patchStrategy merge diffed item by item (by merge key for objects,
// "$patch": "delete" for the items to removes, "$deleteFromPrimitiveList" for scalars,
// "$setElementOrder" for the order); other values replaced. A change it cannot say is
// ErrNoStrategicPatch.
func Strategic(from, to map[string]any, t *kubeschema.Type) (map[string]any, error) {
	from, _ = Normalize(from).(map[string]any)
	to, _ = Normalize(to).(map[string]any)
	return smpObject(from, to, typeShape(t))
}

func smpObject(a, b map[string]any, s *shape) (map[string]any, error) {
	p := map[string]any{}
	for k := range a {
		if _, ok := b[k]; !ok {
			p[k] = nil
		}
	}
	for k, bv := range b {
		if strings.HasPrefix(k, "$") {
			return nil, fmt.Errorf("%w: the key %q", ErrNoStrategicPatch, k)
		}
		av, ok := a[k]
		if !ok {
			p[k] = bv
			continue
		}
		if Equal(av, bv) {
			continue
		}
		fs := s.field(k)
		am, aObj := av.(map[string]any)
		bm, bObj := bv.(map[string]any)
		al, aList := av.([]any)
		bl, bList := bv.([]any)
		switch {
		case aObj && bObj && (fs == nil || (!fs.scalar && !fs.replace)):
			d, err := smpObject(am, bm, fs)
			if err != nil {
				return nil, err
			}
			p[k] = d
		case aList && bList && fs != nil && fs.list && fs.merge && !fs.replace:
			if err := smpList(p, k, al, bl, fs); err != nil {
				return nil, err
			}
		default:
			p[k] = bv
		}
	}
	return p, nil
}

// smpList adds to p the patch of the merge list k from a to b.
func smpList(p map[string]any, k string, a, b []any, s *shape) error {
	if s.mergeKey == "" {
		return smpScalars(p, k, a, b)
	}
	ai, err := byMergeKey(a, s.mergeKey)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrNoStrategicPatch, k, err)
	}
	bi, err := byMergeKey(b, s.mergeKey)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrNoStrategicPatch, k, err)
	}
	var items []any
	order := make([]any, 0, len(b))
	for _, v := range b {
		item := v.(map[string]any)
		key := item[s.mergeKey]
		order = append(order, map[string]any{s.mergeKey: key})
		old, ok := ai[hashKey(key)]
		switch {
		case !ok:
			items = append(items, item)
		case !Equal(old, item):
			d, err := smpObject(old, item, s.elem)
			if err != nil {
				return err
			}
			d[s.mergeKey] = key
			items = append(items, d)
		}
	}
	for _, v := range a {
		item := v.(map[string]any)
		if _, ok := bi[hashKey(item[s.mergeKey])]; !ok {
			items = append(items, map[string]any{s.mergeKey: item[s.mergeKey], directive: "delete"})
		}
	}
	if len(items) > 0 {
		p[k] = items
	}
	p[setElementOrder+k] = order
	return nil
}

// smpScalars adds to p the patch of a merge list of scalars from a to b: the values added,
// those removed, the order.
func smpScalars(p map[string]any, k string, a, b []any) error {
	ai, err := setOf(a)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrNoStrategicPatch, k, err)
	}
	bi, err := setOf(b)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrNoStrategicPatch, k, err)
	}
	var added, removed []any
	for _, v := range b {
		if !ai[hashKey(v)] {
			added = append(added, v)
		}
	}
	for _, v := range a {
		if !bi[hashKey(v)] {
			removed = append(removed, v)
		}
	}
	if len(added) > 0 {
		p[k] = added
	}
	if len(removed) > 0 {
		p[deleteFromPrimList+k] = removed
	}
	p[setElementOrder+k] = b
	return nil
}

func byMergeKey(l []any, key string) (map[string]map[string]any, error) {
	out := make(map[string]map[string]any, len(l))
	for _, v := range l {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("an item is not an object: %v", v)
		}
		kv, ok := m[key]
		if !ok {
			return nil, fmt.Errorf("an item has no merge key %q", key)
		}
		h := hashKey(kv)
		if _, dup := out[h]; dup {
			return nil, fmt.Errorf("two items have the merge key %s=%v", key, kv)
		}
		out[h] = m
	}
	return out, nil
}

func setOf(l []any) (map[string]bool, error) {
	out := make(map[string]bool, len(l))
	for _, v := range l {
		switch v.(type) {
		case map[string]any, []any:
			return nil, fmt.Errorf("an item is not a scalar: %v", v)
		}
		h := hashKey(v)
		if out[h] {
			return nil, fmt.Errorf("the value %v is there twice", v)
		}
		out[h] = true
	}
	return out, nil
}

// hashKey identifies a scalar: its JSON text (numbers canonical).
func hashKey(v any) string {
	if n, ok := number(v); ok {
		return "n" + n
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// ErrNoSchema: the kind is not a built-in one, so it has no patch strategies; the
// kube-apiserver refuses strategic merge patches of custom resources (415).
var ErrNoSchema = errors.New("patchgen: strategic merge patch needs a built-in kind")

// StrategicForKind is Strategic for the built-in kind group/version/kind; another kind is
// ErrNoSchema.
func StrategicForKind(group, version, kind string, from, to map[string]any) (map[string]any, error) {
	k, ok := kubeschema.ForKind(group, version, kind)
	if !ok || k.Type == nil {
		return nil, fmt.Errorf("%w: %s is not one", ErrNoSchema, strings.TrimPrefix(group+"/"+version+" "+kind, "/"))
	}
	return Strategic(from, to, k.Type)
}
