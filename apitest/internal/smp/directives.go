package smp

import (
	"fmt"
	"strings"

	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
)

// The directives of a patch: $retainKeys, $setElementOrder/, and removing what is left
// of them (and of nulls) from the result.

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
