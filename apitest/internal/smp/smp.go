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
