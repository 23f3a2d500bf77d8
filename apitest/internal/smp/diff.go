package smp

import (
	"sort"

	"github.com/informerkit/informerkit/apitest/internal/fieldpath"
	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
)

// Diff returns a strategic merge patch that turns original into modified when applied:
// removed fields are null, objects are diffed field by field (with "$retainKeys" where the
// field's strategy has retainKeys), merge-strategy lists of objects are diffed item by item
// by merge key (removed items as "$patch": "delete", the order as "$setElementOrder"),
// merge-strategy lists of scalars get the added values, a "$deleteFromPrimitiveList" of the
// removed ones and a "$setElementOrder", and other values are replaced.
//
// Some documents have no strategic merge patch: nulls inside values (a patch deletes where
// it finds a null), keys starting with "$", lists of lists, lists whose items differ in
// type or repeat a merge key or a scalar of a merge-strategy list. Diff's result is then
// not exact.
func Diff(original, modified map[string]any, t mergeschema.Type) map[string]any {
	o, _ := fieldpath.Normalize(original).(map[string]any)
	m, _ := fieldpath.Normalize(modified).(map[string]any)
	return diffMaps(o, m, t, false)
}

func diffMaps(o, m map[string]any, t mergeschema.Type, retain bool) map[string]any {
	patch := map[string]any{}
	for k := range o {
		if _, ok := m[k]; !ok {
			patch[k] = nil
		}
	}
	for k, mv := range m {
		ov, ok := o[k]
		if !ok {
			patch[k] = mv
			continue
		}
		sub, strategy, key, err := lookupField(t, k)
		if err != nil {
			patch[k] = mv
			continue
		}
		switch mx := mv.(type) {
		case map[string]any:
			ox, ok := ov.(map[string]any)
			if !ok || strategy.main == strategyReplace {
				if !equalJSON(ov, mv) {
					patch[k] = mv
				}
				continue
			}
			if d := diffMaps(ox, mx, sub, strategy.retain); len(d) > 0 {
				patch[k] = d
			}
		case []any:
			ox, ok := ov.([]any)
			if !ok || strategy.main != strategyMerge {
				if !equalJSON(ov, mv) {
					patch[k] = mv
				}
				continue
			}
			if equalJSON(ox, mx) {
				continue
			}
			diffList(patch, k, ox, mx, elemOf(sub), key)
		default:
			if !equalJSON(ov, mv) {
				patch[k] = mv
			}
		}
	}
	if retain && len(patch) > 0 {
		keys := make([]any, 0, len(m))
		for k, v := range m {
			if v != nil {
				keys = append(keys, k)
			}
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i].(string) < keys[j].(string) })
		patch[retainKeys] = keys
	}
	return patch
}

type strategies struct {
	main   string
	retain bool
}

func lookupField(t mergeschema.Type, key string) (mergeschema.Type, strategies, string, error) {
	sub, main, mk, err := lookup(t, key)
	if err != nil {
		return nil, strategies{}, "", err
	}
	st := strategies{main: main}
	if mergeschema.KindOf(t) == mergeschema.Struct {
		if f, ok := t.Field(key); ok {
			for _, p := range splitComma(f.PatchStrategy) {
				st.retain = st.retain || p == strategyRetainKeys
			}
		}
	}
	return sub, st, mk, nil
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}

// diffList writes the patch of a merge-strategy list into patch.
func diffList(patch map[string]any, k string, o, m []any, t mergeschema.Type, key string) {
	isMap := false
	for _, v := range append(append([]any(nil), o...), m...) {
		_, isMap = v.(map[string]any)
		break
	}
	if !isMap {
		var added, removed []any
		inO, inM := map[any]bool{}, map[any]bool{}
		for _, v := range o {
			inO[hkey(v)] = true
		}
		for _, v := range m {
			inM[hkey(v)] = true
			if !inO[hkey(v)] {
				added = append(added, v)
			}
		}
		for _, v := range o {
			if !inM[hkey(v)] {
				removed = append(removed, v)
			}
		}
		if added == nil {
			added = []any{}
		}
		patch[k] = added
		if len(removed) > 0 {
			patch[deletePrimitive+"/"+k] = removed
		}
		patch[setElementOrder+"/"+k] = append([]any{}, m...)
		return
	}
	if key == "" {
		patch[k] = m
		return
	}
	byKey := func(l []any) map[any]map[string]any {
		out := map[any]map[string]any{}
		for _, v := range l {
			if x, ok := v.(map[string]any); ok {
				out[hkey(x[key])] = x
			}
		}
		return out
	}
	om, mm := byKey(o), byKey(m)
	items := []any{}
	order := []any{}
	for _, v := range m {
		x, _ := v.(map[string]any)
		kv := x[key]
		order = append(order, map[string]any{key: kv})
		ox, ok := om[hkey(kv)]
		if !ok {
			items = append(items, x)
			continue
		}
		if d := diffMaps(ox, x, t, false); len(d) > 0 {
			d[key] = kv
			items = append(items, d)
		}
	}
	for _, v := range o {
		x, _ := v.(map[string]any)
		if _, ok := mm[hkey(x[key])]; !ok {
			items = append(items, map[string]any{key: x[key], directive: "delete"})
		}
	}
	patch[k] = items
	patch[setElementOrder+"/"+k] = order
}

func equalJSON(a, b any) bool { return hkey(a) == hkey(b) }
