package ssa

import (
	"fmt"
	"sort"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/fieldpath"
	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
)

// This file holds the walks over JSON values that apply is made of: the set of fields a
// value sets (FieldSet), what changed between two values (Compare), a configuration merged
// into an object (Merge), fields removed from an object (RemoveFields) and the checks of
// an applied configuration (Validate). Values are what encoding/json decodes into an
// interface{} (maps, lists, strings, json.Number or float64, bools, nil).

// shape is how a walk treats one value.
type shape uint8

const (
	shapeScalar shape = iota
	shapeMap          // a Struct or a Map
	shapeList
	shapeNull // a null in a Deduced place: takes the other side's shape
)

// shapeOf returns how t (nil: deduced from v) makes the walks treat v.
func shapeOf(t mergeschema.Type, v any) shape {
	switch mergeschema.KindOf(t) {
	case mergeschema.Struct, mergeschema.Map:
		return shapeMap
	case mergeschema.List:
		return shapeList
	case mergeschema.Scalar:
		return shapeScalar
	}
	switch v.(type) {
	case map[string]any:
		return shapeMap
	case []any:
		return shapeList
	case nil:
		return shapeNull
	}
	return shapeScalar
}

// atomic reports whether t, a map or list of the given shape, is one value. A Deduced list
// is atomic; a Deduced map is granular.
func atomic(t mergeschema.Type, s shape) bool {
	if t == nil || t.Kind() == mergeschema.Deduced {
		return s == shapeList
	}
	return t.Atomic()
}

// fieldType is the type of the member key of a map-shaped value of type t, and whether it
// is a declared field of a Struct (whose own path is implied by its children's).
func fieldType(t mergeschema.Type, key string) (mergeschema.Type, bool) {
	switch mergeschema.KindOf(t) {
	case mergeschema.Struct:
		if f, ok := t.Field(key); ok {
			return f.Type, true
		}
		return t.Elem(), false
	case mergeschema.Map:
		return t.Elem(), false
	}
	return nil, false
}

func elemType(t mergeschema.Type) mergeschema.Type {
	if mergeschema.KindOf(t) == mergeschema.List {
		return t.Elem()
	}
	return nil
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
func asList(v any) []any         { l, _ := v.([]any); return l }

// itemElement returns the path element of an item of a granular list: its key fields
// for a list-map (a missing key takes its schema default), its value for a set.
func itemElement(t mergeschema.Type, item any) (fieldpath.PathElement, error) {
	keys := t.ListKeys()
	if len(keys) == 0 {
		switch item.(type) {
		case map[string]any:
			return fieldpath.PathElement{}, fmt.Errorf("associative list without keys has an element that's a map type")
		case []any:
			return fieldpath.PathElement{}, fmt.Errorf("not supported: associative list with lists as elements")
		case nil:
			return fieldpath.PathElement{}, fmt.Errorf("associative list without keys has an element that's an explicit null")
		}
		return fieldpath.ValueOf(item), nil
	}
	if item == nil {
		return fieldpath.PathElement{}, fmt.Errorf("associative list with keys may not have a null element")
	}
	m, ok := item.(map[string]any)
	if !ok {
		return fieldpath.PathElement{}, fmt.Errorf("associative list with keys may not have non-map elements")
	}
	var fields []fieldpath.KeyField
	for _, k := range keys {
		if v, ok := m[k]; ok {
			fields = append(fields, fieldpath.KeyField{Name: k, Value: v})
			continue
		}
		if f, ok := fieldOf(t.Elem(), k); ok && f.Default != nil {
			fields = append(fields, fieldpath.KeyField{Name: k, Value: f.Default})
		}
	}
	if len(fields) == 0 {
		return fieldpath.PathElement{}, fmt.Errorf("associative list with keys has an element that omits all key fields %q (and doesn't have default values for any key fields)", keys)
	}
	return fieldpath.KeyOf(fields...), nil
}

func fieldOf(t mergeschema.Type, name string) (mergeschema.Field, bool) {
	if mergeschema.KindOf(t) != mergeschema.Struct {
		return mergeschema.Field{}, false
	}
	return t.Field(name)
}

// sortedKeys returns a map's keys in order: the walks are deterministic.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// appendPath extends a path for a recursive step. The walks never keep a path (sets copy
// the elements they insert), so siblings may share the backing array: append reuses it.
func appendPath(p fieldpath.Path, pe fieldpath.PathElement) fieldpath.Path {
	return append(p, pe)
}

// ---- FieldSet ----

// FieldSet returns the fields v sets: every scalar, every atomic map, struct and list,
// every item of a granular list and every key of a granular map; a declared field of a
// struct is implied by its children unless it is null or an empty object. Items whose key
// repeats are members once, without their fields.
func FieldSet(v any, t mergeschema.Type) *fieldpath.Set {
	s := fieldpath.NewSet()
	fieldSet(v, t, nil, s)
	return s
}

func fieldSet(v any, t mergeschema.Type, path fieldpath.Path, set *fieldpath.Set) {
	sh := shapeOf(t, v)
	switch sh {
	case shapeScalar:
		set.Insert(path)
	case shapeList:
		if atomic(t, sh) {
			set.Insert(path)
			return
		}
		items := asList(v)
		seen := map[string]int{}
		pes := make([]fieldpath.PathElement, len(items))
		for i, it := range items {
			pe, err := itemElement(t, it)
			if err != nil {
				continue
			}
			pes[i] = pe
			seen[fieldpath.SerializeElement(pe)]++
		}
		dup := map[string]bool{}
		for i, it := range items {
			k := fieldpath.SerializeElement(pes[i])
			if _, err := itemElement(t, it); err != nil {
				continue
			}
			p := appendPath(path, pes[i])
			if seen[k] > 1 {
				if !dup[k] {
					set.Insert(p)
					dup[k] = true
				}
				continue
			}
			fieldSet(it, elemType(t), p, set)
			set.Insert(p)
		}
	case shapeMap:
		if atomic(t, sh) {
			set.Insert(path)
			return
		}
		m := asMap(v)
		for _, k := range sortedKeys(m) {
			val := m[k]
			ft, declared := fieldType(t, k)
			p := appendPath(path, fieldpath.Field(k))
			fieldSet(val, ft, p, set)
			if val == nil || (isMap(val) && len(asMap(val)) == 0) || !declared {
				set.Insert(p)
			}
		}
	}
}

func isMap(v any) bool { _, ok := v.(map[string]any); return ok }

// ---- Compare ----

// Comparison is what changed from one value to another.
type Comparison struct {
	// Added are the fields the new value sets and the old did not.
	Added *fieldpath.Set
	// Modified are the scalars and atomic values that both set, differently.
	Modified *fieldpath.Set
	// Removed are the fields the old value set and the new does not.
	Removed *fieldpath.Set
}

// Compare returns what changed from lhs to rhs.
func Compare(lhs, rhs any, t mergeschema.Type) *Comparison {
	c := &Comparison{Added: fieldpath.NewSet(), Modified: fieldpath.NewSet(), Removed: fieldpath.NewSet()}
	c.compare(lhs, true, rhs, true, t, nil)
	return c
}

// bothShape is the shape a pair of values is walked with: a null in a deduced place
// takes the other side's shape; ok is false when the sides disagree.
func bothShape(t mergeschema.Type, l any, lok bool, r any, rok bool) (shape, bool) {
	ls, rs := shapeOf(t, l), shapeOf(t, r)
	switch {
	case !lok:
		ls = rs
	case !rok:
		rs = ls
	}
	if ls == shapeNull {
		ls = rs
	}
	if rs == shapeNull {
		rs = ls
	}
	if ls == shapeNull {
		return shapeScalar, true
	}
	return ls, ls == rs
}

func (c *Comparison) compare(l any, lok bool, r any, rok bool, t mergeschema.Type, path fieldpath.Path) {
	sh, same := bothShape(t, l, lok, r, rok)
	leaf := !same || sh == shapeScalar
	switch {
	case leaf:
	case sh == shapeList:
		ll, rl := asList(l), asList(r)
		if atomic(t, sh) || (len(ll) == 0 && len(rl) == 0) {
			leaf = true
			break
		}
		c.compareItems(ll, rl, t, path)
	case sh == shapeMap:
		lm, rm := asMap(l), asMap(r)
		if atomic(t, sh) || (len(lm) == 0 && len(rm) == 0) {
			leaf = true
			break
		}
		keys := sortedKeys(lm)
		for _, k := range sortedKeys(rm) {
			if _, ok := lm[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			lv, lk := lm[k]
			rv, rk := rm[k]
			ft, _ := fieldType(t, k)
			c.compare(lv, lk, rv, rk, ft, appendPath(path, fieldpath.Field(k)))
		}
	}
	if leaf {
		switch {
		case !lok:
			c.Added.Insert(path)
		case !rok:
			c.Removed.Insert(path)
		case !Equal(l, r):
			c.Modified.Insert(path)
		}
		return
	}
	switch {
	case !lok:
		c.Added.Insert(path)
	case !rok:
		c.Removed.Insert(path)
	}
}

// indexed is a granular list's items grouped by path element, in first-seen order.
type indexed struct {
	order []fieldpath.PathElement
	items map[string][]any
}

func indexItems(t mergeschema.Type, list []any) indexed {
	ix := indexed{items: map[string][]any{}}
	for _, it := range list {
		pe, err := itemElement(t, it)
		if err != nil {
			continue
		}
		k := fieldpath.SerializeElement(pe)
		if _, ok := ix.items[k]; !ok {
			ix.order = append(ix.order, pe)
		}
		ix.items[k] = append(ix.items[k], it)
	}
	return ix
}

func (c *Comparison) compareItems(ll, rl []any, t mergeschema.Type, path fieldpath.Path) {
	li, ri := indexItems(t, ll), indexItems(t, rl)
	all := append([]fieldpath.PathElement(nil), li.order...)
	for _, pe := range ri.order {
		if _, ok := li.items[fieldpath.SerializeElement(pe)]; !ok {
			all = append(all, pe)
		}
	}
	for _, pe := range all {
		k := fieldpath.SerializeElement(pe)
		lv, rv := li.items[k], ri.items[k]
		p := appendPath(path, pe)
		switch {
		case len(lv) <= 1 && len(rv) <= 1:
			var l, r any
			if len(lv) == 1 {
				l = lv[0]
			}
			if len(rv) == 1 {
				r = rv[0]
			}
			c.compare(l, len(lv) == 1, r, len(rv) == 1, elemType(t), p)
		case len(lv) >= 2 && len(rv) >= 2:
			if !Equal(lv, rv) {
				c.Modified.Insert(p)
			}
		case len(lv) >= 2:
			if len(rv) == 1 {
				c.compare(nil, false, rv[0], true, elemType(t), p)
			}
			c.Removed.Insert(p)
		default:
			if len(lv) == 1 {
				c.compare(lv[0], true, nil, false, elemType(t), p)
			}
			c.Added.Insert(p)
		}
	}
}

// Equal reports whether two JSON values are equal (numbers by value).
func Equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !Equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if _, ok := b.(map[string]any); ok {
		return false
	}
	if _, ok := b.([]any); ok {
		return false
	}
	return fieldpath.CompareValues(fieldpath.Normalize(a), fieldpath.Normalize(b)) == 0
}

// ---- Merge ----

// Merge returns the configuration rhs merged into the object lhs: rhs's scalars and
// atomic values win, maps merge key by key and granular lists item by item (items keep
// lhs's order around the ones rhs places). Neither argument is modified; the result may
// share parts with both.
func Merge(lhs, rhs any, t mergeschema.Type) any {
	out, _ := merge(lhs, true, rhs, true, t)
	return out
}

func merge(l any, lok bool, r any, rok bool, t mergeschema.Type) (any, bool) {
	sh, same := bothShape(t, l, lok, r, rok)
	leaf := func() (any, bool) {
		if rok {
			return r, true
		}
		return l, lok
	}
	if !same || sh == shapeScalar {
		return leaf()
	}
	switch sh {
	case shapeList:
		ll, rl := asList(l), asList(r)
		if atomic(t, sh) || (len(ll) == 0 && len(rl) == 0) {
			return leaf()
		}
		out := mergeItems(ll, rl, t)
		if len(out) == 0 {
			return nil, false
		}
		return out, true
	case shapeMap:
		lm, rm := asMap(l), asMap(r)
		if atomic(t, sh) || (len(lm) == 0 && len(rm) == 0) {
			return leaf()
		}
		out := make(map[string]any, len(lm)+len(rm))
		for k, lv := range lm {
			rv, rk := rm[k]
			ft, _ := fieldType(t, k)
			if v, ok := merge(lv, true, rv, rk, ft); ok {
				out[k] = v
			}
		}
		for k, rv := range rm {
			if _, ok := lm[k]; ok {
				continue
			}
			ft, _ := fieldType(t, k)
			if v, ok := merge(nil, false, rv, true, ft); ok {
				out[k] = v
			}
		}
		if len(out) == 0 {
			return nil, false
		}
		return out, true
	}
	return leaf()
}

// mergeItems merges the items of two granular lists. Items only in lhs keep their place;
// rhs's items come in rhs's order, each shared item where rhs puts it relative to the
// other shared ones.
func mergeItems(ll, rl []any, t mergeschema.Type) []any {
	type item struct {
		pe  fieldpath.PathElement
		key string
		v   any
	}
	list := func(l []any) ([]item, map[string]any, map[string]int) {
		items := make([]item, 0, len(l))
		byKey := map[string]any{}
		count := map[string]int{}
		for _, v := range l {
			pe, err := itemElement(t, v)
			if err != nil {
				continue
			}
			k := fieldpath.SerializeElement(pe)
			items = append(items, item{pe, k, v})
			if count[k] == 0 {
				byKey[k] = v
			} else {
				byKey[k] = nil // a repeated key merges from nothing
			}
			count[k]++
		}
		return items, byKey, count
	}
	lhs, lByKey, lCount := list(ll)
	rhs, rByKey, _ := list(rl)
	var shared []string
	for _, it := range rhs {
		if lCount[it.key] > 0 {
			shared = append(shared, it.key)
		}
	}
	next := func() string {
		if len(shared) == 0 {
			return ""
		}
		k := shared[0]
		shared = shared[1:]
		return k
	}
	nextShared := next()
	done := map[string]bool{}
	var out []any
	emit := func(l any, lok bool, r any, rok bool) {
		if v, ok := merge(l, lok, r, rok, elemType(t)); ok {
			out = append(out, v)
		}
	}
	li, ri := 0, 0
	for li < len(lhs) || ri < len(rhs) {
		if li < len(lhs) && ri < len(rhs) {
			cur := lhs[li]
			if cur.key == rhs[ri].key {
				done[cur.key] = true
				emit(lByKey[cur.key], lCount[cur.key] == 1, rByKey[cur.key], true)
				li++
				ri++
				nextShared = next()
				continue
			}
			if _, inR := rByKey[cur.key]; inR && nextShared != "" && nextShared != cur.key {
				// A shared item rhs places later: it comes when rhs reaches it.
				li++
				continue
			}
		}
		if li < len(lhs) {
			cur := lhs[li]
			if _, inR := rByKey[cur.key]; !inR {
				emit(cur.v, true, nil, false)
				li++
				continue
			}
			if done[cur.key] {
				li++
			}
		}
		if ri < len(rhs) {
			cur := rhs[ri]
			done[cur.key] = true
			emit(lByKey[cur.key], lCount[cur.key] == 1, rByKey[cur.key], true)
			ri++
			if nextShared == cur.key {
				nextShared = next()
			}
		}
	}
	return out
}

// ---- RemoveFields ----

// RemoveFields returns v without the fields in set (and everything under them). A map or
// list left empty becomes null, as apply leaves it.
func RemoveFields(v any, set *fieldpath.Set, t mergeschema.Type) any {
	if set.Empty() {
		return v
	}
	sh := shapeOf(t, v)
	switch sh {
	case shapeList:
		l := asList(v)
		if l == nil {
			return nil
		}
		if len(l) == 0 || atomic(t, sh) {
			return nil
		}
		var out []any
		for _, it := range l {
			pe, err := itemElement(t, it)
			if err != nil {
				out = append(out, it)
				continue
			}
			if set.Has(fieldpath.Path{pe}) {
				continue
			}
			if sub := set.WithPrefix(pe); !sub.Empty() {
				it = RemoveFields(it, sub, elemType(t))
			}
			out = append(out, it)
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case shapeMap:
		m := asMap(v)
		if m == nil {
			return nil
		}
		if len(m) == 0 || atomic(t, sh) {
			return nil
		}
		out := make(map[string]any, len(m))
		for k, val := range m {
			pe := fieldpath.Field(k)
			if set.Has(fieldpath.Path{pe}) {
				continue
			}
			if sub := set.WithPrefix(pe); !sub.Empty() {
				ft, _ := fieldType(t, k)
				val = RemoveFields(val, sub, ft)
			}
			out[k] = val
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	return v
}

// ---- EnsureNamedFields ----

// withNamedFields returns set plus, as members, the declared struct fields that have
// members under them (owning "spec.replicas" implies owning "spec", not a map key).
func withNamedFields(set *fieldpath.Set, t mergeschema.Type) *fieldpath.Set {
	out := fieldpath.NewSet()
	var walk func(s *fieldpath.Set, t mergeschema.Type, path fieldpath.Path)
	walk = func(s *fieldpath.Set, t mergeschema.Type, path fieldpath.Path) {
		for _, m := range s.Members() {
			out.Insert(appendPath(path, m))
		}
		s.Children(func(pe fieldpath.PathElement, sub *fieldpath.Set) {
			var ct mergeschema.Type
			switch pe.Kind {
			case fieldpath.FieldName:
				if mergeschema.KindOf(t) == mergeschema.Struct {
					if f, ok := t.Field(pe.Name); ok {
						ct = f.Type
						if !sub.Empty() {
							out.Insert(appendPath(path, pe))
						}
					} else {
						ct = t.Elem()
					}
				} else if mergeschema.KindOf(t) == mergeschema.Map {
					ct = t.Elem()
				}
			default:
				ct = elemType(t)
			}
			walk(sub, ct, appendPath(path, pe))
		})
	}
	walk(set, t, nil)
	return out
}

// ---- Validate ----

// ValidationError is what is wrong with an applied configuration, worded as the
// kube-apiserver words it.
type ValidationError struct {
	Path    string
	Message string
}

// ValidationErrors are the errors of one configuration.
type ValidationErrors []ValidationError

// Error renders the errors as the kube-apiserver does ("errors:" and one per line when
// there are several).
func (e ValidationErrors) Error() string {
	line := func(v ValidationError) string {
		if v.Path == "" {
			return v.Message
		}
		return v.Path + ": " + v.Message
	}
	if len(e) == 1 {
		return line(e[0])
	}
	parts := []string{"errors:"}
	for _, v := range e {
		parts = append(parts, "  "+line(v))
	}
	return strings.Join(parts, "\n")
}

// Validate checks an applied configuration against t: declared fields only (where the
// schema takes no others), scalars of the declared JSON types, list items with their keys
// and without repeats.
func Validate(v any, t mergeschema.Type) ValidationErrors {
	var errs ValidationErrors
	validate(v, t, "", &errs)
	return errs
}

func validate(v any, t mergeschema.Type, path string, errs *ValidationErrors) {
	add := func(msg string) { *errs = append(*errs, ValidationError{Path: path, Message: msg}) }
	if v == nil {
		return
	}
	switch mergeschema.KindOf(t) {
	case mergeschema.Deduced:
		switch x := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(x) {
				validate(x[k], nil, path+"."+k, errs)
			}
		}
		return
	case mergeschema.Scalar:
		switch t.ScalarKind() {
		case mergeschema.String:
			if _, ok := v.(string); !ok {
				add(fmt.Sprintf("expected string, got &value.valueUnstructured{Value:%#v}", goValue(v)))
			}
		case mergeschema.Numeric:
			if !isNumber(v) {
				add(fmt.Sprintf("expected numeric (int or float), got %T", goValue(v)))
			}
		case mergeschema.Boolean:
			if _, ok := v.(bool); !ok {
				add(fmt.Sprintf("expected boolean, got &{%v}", goValue(v)))
			}
		default:
			switch v.(type) {
			case map[string]any, []any:
				add(fmt.Sprintf("expected any scalar, got &{%v}", goValue(v)))
			}
		}
		return
	case mergeschema.List:
		l, ok := v.([]any)
		if !ok {
			add(fmt.Sprintf("expected list, got &{%v}", goValue(v)))
			return
		}
		seen := map[string]bool{}
		for i, it := range l {
			name := fmt.Sprintf("[%d]", i)
			if !t.Atomic() {
				pe, err := itemElement(t, it)
				if err != nil {
					add(fmt.Sprintf("element %d: %v", i, err))
					return
				}
				k := fieldpath.SerializeElement(pe)
				if seen[k] {
					add("duplicate entries for key " + pe.String())
				}
				seen[k] = true
				name = pe.String()
			}
			validate(it, t.Elem(), path+name, errs)
		}
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		add(fmt.Sprintf("expected map, got &{%v}", goValue(v)))
		return
	}
	for _, k := range sortedKeys(m) {
		ft, declared := fieldType(t, k)
		if !declared && mergeschema.KindOf(t) == mergeschema.Struct && t.Elem() == nil {
			*errs = append(*errs, ValidationError{Path: path + "." + k, Message: "field not declared in schema"})
			return
		}
		validate(m[k], ft, path+"."+k, errs)
	}
}

func isNumber(v any) bool {
	switch fieldpath.Normalize(v).(type) {
	case int64, float64:
		return true
	}
	return false
}

// goValue is v as Go's %#v shows what the kube-apiserver decoded (int64, float64,
// string, bool, map[string]interface {}, []interface {}).
func goValue(v any) any { return fieldpath.Normalize(v) }
