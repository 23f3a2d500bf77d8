package ssa

import (
	"github.com/informerkit/informerkit/apitest/internal/fieldpath"
	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
)

// Comparing two values field by field: what a write added, changed and removed.

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
