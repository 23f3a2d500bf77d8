package smp

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
)

// Merging lists: by merge key (maps), as sets (scalars), with $patch items, in the order
// the patch and the original give.

func sameKey(a, b any, key string) (bool, error) {
	if key == "" {
		return hkey(a) == hkey(b), nil
	}
	am, ok := a.(map[string]any)
	if !ok {
		return false, errBadArgType(map[string]any(nil), a)
	}
	bm, ok := b.(map[string]any)
	if !ok {
		return false, errBadArgType(map[string]any(nil), b)
	}
	av, ok := am[key]
	if !ok {
		return false, errNoMergeKey(am, key)
	}
	bv, ok := bm[key]
	if !ok {
		return false, errNoMergeKey(bm, key)
	}
	return hkey(av) == hkey(bv), nil
}

// splitDeletions separates a list's "$patch": "delete" items.
func splitDeletions(l []any) (kept, deleted []any, err error) {
	for _, v := range l {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, nil, errBadArgType(map[string]any(nil), v)
		}
		if d, ok := m[directive]; ok && d == "delete" {
			deleted = append(deleted, v)
		} else {
			kept = append(kept, v)
		}
	}
	return kept, deleted, nil
}

// elementsAreMaps reports whether the lists hold objects, checking that their items are
// all of one type and not lists.
func elementsAreMaps(lists ...[]any) (bool, error) {
	var first reflect.Type
	for _, l := range lists {
		for _, v := range l {
			t := reflect.TypeOf(v)
			if first == nil {
				first = t
				if t != nil && t.Kind() == reflect.Slice {
					return false, ErrNoListOfLists
				}
				continue
			}
			if t != first {
				return false, fmt.Errorf("list element types are not identical: %v", fmt.Sprint(lists))
			}
		}
	}
	if first == nil {
		return false, fmt.Errorf("no elements in any of the given slices")
	}
	return first.Kind() == reflect.Map, nil
}

// mergeSlice merges a patch list into an original list of a merge-strategy field: objects
// by merge key (with "$patch" items deleting one or replacing the list), scalars as a set;
// a deletion list removes scalars. The result has the patch's items in the patch's order
// and the original's others where they were.
func mergeSlice(original, patch []any, t mergeschema.Type, key string, deleteList bool) ([]any, error) {
	if len(original) == 0 && len(patch) == 0 {
		return original, nil
	}
	isMap, err := elementsAreMaps(original, patch)
	if err != nil {
		return nil, err
	}
	var merged []any
	if !isMap {
		if deleteList {
			return removeScalars(original, patch), nil
		}
		merged = dedupScalars(append(append([]any(nil), original...), patch...))
	} else {
		if key == "" {
			return nil, fmt.Errorf("cannot merge lists without merge key for %s", kindName(t))
		}
		if original, patch, err = specialItems(original, patch, key); err != nil {
			return nil, err
		}
		if merged, err = mergeItems(original, patch, t, key); err != nil {
			return nil, err
		}
	}
	var listed, others []any
	if key == "" {
		listed, others = partitionScalars(merged, patch)
	} else if listed, others, err = partitionMaps(merged, patch, key); err != nil {
		return nil, err
	}
	return arrange(listed, others, patch, original, key, isMap)
}

func kindName(t mergeschema.Type) string {
	if mergeschema.KindOf(t) == mergeschema.Struct {
		return "struct"
	}
	return "interface"
}

// specialItems handles the "$patch" items of a patch list of objects: "delete" removes the
// original's items with that merge key, "replace" makes the patch's other items the list.
func specialItems(original, patch []any, key string) ([]any, []any, error) {
	var plain []any
	replace := false
	for _, v := range patch {
		m := v.(map[string]any)
		d, ok := m[directive]
		if !ok {
			plain = append(plain, v)
			continue
		}
		switch d {
		case "delete":
			kv, ok := m[key]
			if !ok {
				return nil, nil, errNoMergeKey(m, key)
			}
			var kept []any
			for _, o := range original {
				om, ok := o.(map[string]any)
				if !ok {
					return nil, nil, fmt.Errorf("value for key %v is not a map", len(kept))
				}
				if ov, ok := om[key]; ok && hkey(ov) == hkey(kv) {
					continue
				}
				kept = append(kept, o)
			}
			original = kept
		case strategyReplace:
			replace = true
		case strategyMerge:
			return nil, nil, fmt.Errorf("merging lists cannot yet be specified in the patch")
		default:
			return nil, nil, errBadPatchType(d, m)
		}
	}
	if replace {
		return plain, nil, nil
	}
	if plain == nil {
		plain = []any{}
	}
	return original, plain, nil
}

// mergeItems merges each patch object into the original item with its merge key, or
// appends it.
func mergeItems(original, patch []any, t mergeschema.Type, key string) ([]any, error) {
	for _, v := range patch {
		m := v.(map[string]any)
		kv, ok := m[key]
		if !ok {
			return nil, errNoMergeKey(m, key)
		}
		i, err := findByKey(original, key, kv)
		if err != nil {
			return nil, err
		}
		if i < 0 {
			original = append(original, v)
			continue
		}
		merged, err := mergeMap(original[i].(map[string]any), m, t)
		if err != nil {
			return nil, err
		}
		original[i] = merged
	}
	return original, nil
}

func findByKey(l []any, key string, v any) (int, error) {
	for i, x := range l {
		m, ok := x.(map[string]any)
		if !ok {
			return -1, fmt.Errorf("value for key %v is not a map", i)
		}
		if mv, ok := m[key]; ok && hkey(mv) == hkey(v) {
			return i, nil
		}
	}
	return -1, nil
}

func removeScalars(current, remove []any) []any {
	drop := map[any]bool{}
	for _, v := range remove {
		drop[hkey(v)] = true
	}
	out := make([]any, 0, len(current))
	for _, v := range current {
		if !drop[hkey(v)] {
			out = append(out, v)
		}
	}
	return out
}

func dedupScalars(l []any) []any {
	seen := map[any]bool{}
	out := l[:0]
	for _, v := range l {
		if !seen[hkey(v)] {
			seen[hkey(v)] = true
			out = append(out, v)
		}
	}
	return out
}

func partitionScalars(l, by []any) (in, out []any) {
	set := map[any]bool{}
	for _, v := range by {
		set[hkey(v)] = true
	}
	for _, v := range l {
		if set[hkey(v)] {
			in = append(in, v)
		} else {
			out = append(out, v)
		}
	}
	return in, out
}

func partitionMaps(l, by []any, key string) (in, out []any, err error) {
	for _, v := range l {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, nil, errBadArgType(map[string]any(nil), v)
		}
		kv, ok := m[key]
		if !ok {
			return nil, nil, errNoMergeKey(m, key)
		}
		i, err := findByKey(by, key, kv)
		if err != nil {
			return nil, nil, err
		}
		if i >= 0 {
			in = append(in, v)
		} else {
			out = append(out, v)
		}
	}
	return in, out, nil
}

// identity is what orders an item: its merge key's value, or itself.
func identity(v any, key string, isMap bool) any {
	if !isMap {
		return hkey(v)
	}
	m, _ := v.(map[string]any)
	return hkey(m[key])
}

// hkey is v as a map key: v itself for a scalar, its JSON text for an object or a list
// (which Go cannot compare), so that values are matched by content and never panic.
func hkey(v any) any {
	switch v.(type) {
	case map[string]any, []any:
		b, _ := json.Marshal(v)
		return "\x00" + string(b)
	}
	return v
}

func indexIn(l []any, v any, key string, isMap bool) int {
	id := identity(v, key, isMap)
	for i, x := range l {
		if identity(x, key, isMap) == id {
			return i
		}
	}
	return -1
}

// arrange orders the patch's items (listed) by patchOrder and the others by serverOrder,
// then interleaves them: each other item goes before the first listed item that follows
// it in serverOrder.
func arrange(listed, others, patchOrder, serverOrder []any, key string, isMap bool) ([]any, error) {
	var err error
	if listed, err = sortBy(listed, patchOrder, key, isMap); err != nil {
		return nil, err
	}
	if others, err = sortBy(others, serverOrder, key, isMap); err != nil {
		return nil, err
	}
	out := make([]any, 0, len(listed)+len(others))
	i, j := 0, 0
	for i < len(others) || j < len(listed) {
		switch {
		case i >= len(others):
			out = append(out, listed[j])
			j++
		case j >= len(listed):
			out = append(out, others[i])
			i++
		default:
			li, ri := indexIn(serverOrder, others[i], key, isMap), indexIn(serverOrder, listed[j], key, isMap)
			if li >= 0 && ri >= 0 && li < ri {
				out = append(out, others[i])
				i++
			} else {
				out = append(out, listed[j])
				j++
			}
		}
	}
	return out, nil
}

// sortBy orders items by their position in order (a stable sort; deletions last).
func sortBy(items, order []any, key string, isMap bool) ([]any, error) {
	var deleted []any
	if isMap {
		for _, l := range [][]any{items, order} {
			for _, v := range l {
				m, ok := v.(map[string]any)
				if !ok {
					return nil, errBadArgType(map[string]any(nil), v)
				}
				if _, ok := m[key]; !ok {
					return nil, errNoMergeKey(m, key)
				}
			}
		}
		var err error
		if items, deleted, err = splitDeletions(items); err != nil {
			return nil, err
		}
	}
	// The kube-apiserver's comparison puts an item it cannot place before the others;
	// sort.SliceStable with the same comparison keeps its result.
	sort.SliceStable(items, func(a, b int) bool {
		if ia := indexIn(order, items[a], key, isMap); ia >= 0 {
			if ib := indexIn(order, items[b], key, isMap); ib >= 0 {
				return ia < ib
			}
		}
		return true
	})
	return append(items, deleted...), nil
}
