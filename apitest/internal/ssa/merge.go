package ssa

import (
	"github.com/informerkit/informerkit/apitest/internal/fieldpath"
	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
)

// Merging an applied configuration into the live object.

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
