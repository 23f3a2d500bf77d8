// Package smp implements Kubernetes strategic merge patch
// (application/strategic-merge-patch+json) as the kube-apiserver applies it: a JSON merge
// patch whose lists merge by the patch strategy and merge key of their field
// (mergeschema.Field.PatchStrategy, PatchMergeKey) instead of being replaced, with the
// directives kubectl sends:
//
//   - "$patch": "replace" in an object replaces the object; "delete" removes it (an item of
//     a merged list: the item with its merge key); "$patch": "replace" as an item of a
//     merged list replaces the whole list.
//   - "$retainKeys": [...] in an object clears the original's keys not listed.
//   - "$deleteFromPrimitiveList/<field>": [...] removes values from a merged list of scalars.
//   - "$setElementOrder/<field>": [...] orders a merged list (items by merge key).
//
// Apply applies a patch; Diff computes one (a two-way patch from one object to another,
// using those directives), which the fuzz targets use to check Apply.
package smp

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/fieldpath"
	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
)

const (
	directive          = "$patch"
	retainKeys         = "$retainKeys"
	deletePrimitive    = "$deleteFromPrimitiveList"
	setElementOrder    = "$setElementOrder"
	strategyMerge      = "merge"
	strategyReplace    = "replace"
	strategyRetainKeys = "retainKeys"
)

// The errors of malformed patches, worded as the kube-apiserver words them. The HTTP layer
// answers the first five with 400 and ErrNoListOfLists and ErrPatchContentNotMatchRetainKeys
// with 422.
var (
	ErrBadJSONDoc                           = errors.New("invalid JSON document")
	ErrNoListOfLists                        = errors.New("lists of lists are not supported")
	ErrBadPatchFormatForPrimitiveList       = errors.New("invalid patch format of primitive list")
	ErrBadPatchFormatForRetainKeys          = errors.New("invalid patch format of retainKeys")
	ErrBadPatchFormatForSetElementOrderList = errors.New("invalid patch format of setElementOrder list")
	ErrPatchContentNotMatchRetainKeys       = errors.New("patch content doesn't match retainKeys list")
	ErrUnsupported                          = errors.New("strategic merge patch format is not supported")
)

func errNoMergeKey(m map[string]any, k string) error {
	return fmt.Errorf("map: %v does not contain declared merge key: %s", m, k)
}

func errBadArgType(expected, actual any) error {
	return fmt.Errorf("expected a %s, but received a %s", reflect.TypeOf(expected), reflect.TypeOf(actual))
}

func errBadPatchType(t any, m map[string]any) error {
	return fmt.Errorf("unknown patch type: %s in map: %v", t, m)
}

// Apply returns original with patch applied. Neither argument is modified; numbers in the
// result are int64 or float64 (fieldpath.Normalize).
func Apply(original, patch map[string]any, t mergeschema.Type) (map[string]any, error) {
	o, _ := fieldpath.Normalize(original).(map[string]any)
	p, _ := fieldpath.Normalize(patch).(map[string]any)
	if o == nil {
		o = map[string]any{}
	}
	if p == nil {
		p = map[string]any{}
	}
	return mergeMap(o, p, t)
}

// sortedKeys returns the keys in order: "$" directives first, then fields, so that a patch
// applies the same way every time.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// lookup returns the type of the field key of an object of type t, its patch strategy
// (without retainKeys) and merge key. An object without a schema merges as JSON merge
// patch does.
func lookup(t mergeschema.Type, key string) (mergeschema.Type, string, string, error) {
	switch mergeschema.KindOf(t) {
	case mergeschema.Struct:
		f, ok := t.Field(key)
		if !ok {
			if e := t.Elem(); e != nil {
				return e, "", "", nil
			}
			return nil, "", "", fmt.Errorf("unable to find api field in struct for the json field %q", key)
		}
		strategy, err := mainStrategy(f.PatchStrategy)
		return f.Type, strategy, f.PatchMergeKey, err
	case mergeschema.Map:
		return t.Elem(), "", "", nil
	case mergeschema.Deduced:
		return nil, "", "", nil
	}
	return nil, "", "", fmt.Errorf("merging an object in json but data type is not struct, instead is: %s", mergeschema.KindOf(t))
}

// mainStrategy is the strategy of a field other than retainKeys ("merge,retainKeys" is
// "merge").
func mainStrategy(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	parts := strings.Split(s, ",")
	switch len(parts) {
	case 1:
		if parts[0] == strategyRetainKeys {
			return "", nil
		}
		return parts[0], nil
	case 2:
		switch {
		case parts[0] == strategyRetainKeys:
			return parts[1], nil
		case parts[1] == strategyRetainKeys:
			return parts[0], nil
		}
	}
	return "", fmt.Errorf("unexpected patch strategy: %v", parts)
}

func elemOf(t mergeschema.Type) mergeschema.Type {
	if mergeschema.KindOf(t) == mergeschema.List {
		return t.Elem()
	}
	return nil
}

func mergeMap(original, patch map[string]any, t mergeschema.Type) (map[string]any, error) {
	if d, ok := patch[directive]; ok {
		switch d {
		case strategyReplace:
			delete(patch, directive)
			return patch, nil
		case "delete":
			return map[string]any{}, nil
		}
		return nil, errBadPatchType(d, patch)
	}
	if original == nil {
		original = map[string]any{}
	}
	if err := applyRetainKeys(original, patch); err != nil {
		return nil, err
	}
	if err := applyElementOrders(original, patch, t); err != nil {
		return nil, err
	}
	for _, k := range sortedKeys(patch) {
		pv, present := patch[k]
		if !present {
			continue // an ordered list already merged
		}
		deleteList := false
		if strings.HasPrefix(k, deletePrimitive) {
			key, err := cutPrefix(k, deletePrimitive)
			if err != nil {
				return nil, err
			}
			k, deleteList = key, true
		}
		if pv == nil {
			delete(original, k)
			continue
		}
		ov, ok := original[k]
		if !ok || reflect.TypeOf(ov) != reflect.TypeOf(pv) {
			if !deleteList {
				discardNulls(pv)
				if v, keep := removeDirectives(pv); keep {
					original[k] = v
				} else {
					delete(original, k)
				}
			}
			continue
		}
		switch o := ov.(type) {
		case map[string]any:
			sub, strategy, _, err := lookup(t, k)
			if err != nil {
				return nil, err
			}
			if strategy == strategyReplace {
				original[k] = pv
				continue
			}
			merged, err := mergeMap(o, pv.(map[string]any), sub)
			if err != nil {
				return nil, err
			}
			original[k] = merged
		case []any:
			sub, strategy, key, err := lookup(t, k)
			if err != nil {
				return nil, err
			}
			if strategy != strategyMerge && !deleteList {
				original[k] = pv
				continue
			}
			merged, err := mergeSlice(o, pv.([]any), elemOf(sub), key, deleteList)
			if err != nil {
				return nil, err
			}
			original[k] = merged
		default:
			if v, keep := removeDirectives(pv); keep {
				original[k] = v
			} else {
				delete(original, k)
			}
		}
	}
	return original, nil
}

func cutPrefix(s, prefix string) (string, error) {
	head, rest, ok := strings.Cut(s, "/")
	if !ok || head != prefix {
		if prefix == deletePrimitive {
			return "", ErrBadPatchFormatForPrimitiveList
		}
		return "", ErrBadPatchFormatForSetElementOrderList
	}
	return rest, nil
}

// applyRetainKeys handles "$retainKeys": every field the patch sets must be listed, and
// the original's fields not listed are cleared.
func applyRetainKeys(original, patch map[string]any) error {
	v, ok := patch[retainKeys]
	if !ok {
		return nil
	}
	delete(patch, retainKeys)
	list, ok := v.([]any)
	if !ok {
		return ErrBadPatchFormatForRetainKeys
	}
	keep := map[any]bool{}
	for _, x := range list {
		keep[hkey(x)] = true
	}
	for k, pv := range patch {
		if pv == nil || strings.HasPrefix(k, deletePrimitive) || strings.HasPrefix(k, setElementOrder) {
			continue
		}
		if !keep[k] {
			return ErrBadPatchFormatForRetainKeys
		}
	}
	for k := range original {
		if !keep[k] {
			delete(original, k)
		}
	}
	return nil
}

// applyElementOrders merges the lists that have a "$setElementOrder/<field>" and orders
// them: the listed items in the listed order, the original's other items kept where they
// were relative to them.
func applyElementOrders(original, patch map[string]any, t mergeschema.Type) error {
	for _, k := range sortedKeys(patch) {
		if !strings.HasPrefix(k, setElementOrder) {
			continue
		}
		raw := patch[k]
		order, ok := raw.([]any)
		delete(patch, k)
		if !ok {
			return errBadArgType([]any(nil), raw)
		}
		field, err := cutPrefix(k, setElementOrder)
		if err != nil {
			return err
		}
		ov, inOriginal := original[field]
		pv, inPatch := patch[field]
		var ol, pl []any
		if inOriginal {
			if ol, ok = ov.([]any); !ok {
				return errBadArgType([]any(nil), ov)
			}
		}
		if inPatch {
			if pl, ok = pv.([]any); !ok {
				return errBadArgType([]any(nil), pv)
			}
		}
		sub, strategy, key, err := lookup(t, field)
		if err != nil {
			return err
		}
		if err := checkOrder(pl, order, key); err != nil {
			return err
		}
		var merged []any
		switch {
		case inOriginal && !inPatch:
			merged = ol
		case !inOriginal && inPatch:
			v, _ := removeDirectives(pl)
			merged, _ = v.([]any)
		case inOriginal && inPatch:
			if strategy == strategyMerge {
				if merged, err = mergeSlice(ol, pl, elemOf(sub), key, false); err != nil {
					return err
				}
			} else {
				merged = pl
			}
		default:
			continue
		}
		var listed, others []any
		if key == "" {
			listed, others = partitionScalars(merged, order)
		} else if listed, others, err = partitionMaps(merged, order, key); err != nil {
			return err
		}
		isMap, err := elementsAreMaps(ol, pl)
		if err != nil {
			return err
		}
		if original[field], err = arrange(listed, others, order, ol, key, isMap); err != nil {
			return err
		}
		delete(patch, field)
	}
	return nil
}

// checkOrder verifies that the patch's items (deletions aside) appear in the
// $setElementOrder list, in its order.
func checkOrder(patchList, order []any, key string) error {
	if len(order) == 0 || len(patchList) == 0 {
		return nil
	}
	items := patchList
	if key != "" {
		var err error
		if items, _, err = splitDeletions(patchList); err != nil {
			return err
		}
	}
	pi, oi := 0, 0
	for pi < len(items) && oi < len(order) {
		if hasDirective(items[pi]) {
			pi++
			continue
		}
		eq, err := sameKey(items[pi], order[oi], key)
		if err != nil {
			return err
		}
		if eq {
			pi++
		}
		oi++
	}
	if pi < len(items) && oi >= len(order) {
		return fmt.Errorf("The order in patch list:\n%v\n doesn't match %s list:\n%v\n", patchList, setElementOrder, order)
	}
	return nil
}

func hasDirective(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, ok = m[directive]
	return ok
}

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

// discardNulls removes null fields from a value set where the original had nothing.
func discardNulls(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
			} else {
				discardNulls(e)
			}
		}
	case []any:
		for _, e := range x {
			discardNulls(e)
		}
	}
}

// removeDirectives drops the directives from a value set as data; keep is false when the
// value itself is a directive object.
func removeDirectives(v any) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x[directive]; ok {
			return nil, false
		}
		for k, e := range x {
			if nv, keep := removeDirectives(e); keep {
				x[k] = nv
			} else {
				delete(x, k)
			}
		}
		return x, true
	case []any:
		out := []any{}
		for _, e := range x {
			if nv, keep := removeDirectives(e); keep {
				out = append(out, nv)
			}
		}
		return out, true
	}
	return v, true
}
