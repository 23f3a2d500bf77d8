package celrules

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// listVal is a JSON array under its items schema. Its list type decides equality and +:
// an atomic list compares in order and concatenates; a set compares as a set and adds only
// the elements it lacks; a map list compares by its keys and merges entries of equal keys
// in place, appending the others.
type listVal struct {
	elems []any
	items schema
	set   bool
	keys  []string // x-kubernetes-list-map-keys of a map list
}

var _ traits.Lister = (*listVal)(nil)

func (l *listVal) isMap() bool { return len(l.keys) > 0 }

func (l *listVal) ConvertToNative(t reflect.Type) (any, error) {
	if t.Kind() == reflect.Slice {
		if l.items.typ() == "string" {
			out := make([]string, 0, len(l.elems))
			for _, e := range l.elems {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("expected all elements to be of type string, but got %T", e)
				}
				out = append(out, s)
			}
			return out, nil
		}
		return l.elems, nil
	}
	return nil, fmt.Errorf("type conversion error from '%s' to '%s'", l.Type(), t)
}

func (l *listVal) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case types.ListType:
		return l
	case types.TypeType:
		return types.ListType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", l.Type(), t.TypeName())
}

func (l *listVal) Type() ref.Type { return types.ListType }
func (l *listVal) Value() any     { return l.elems }
func (l *listVal) Size() ref.Val  { return types.Int(len(l.elems)) }

func (l *listVal) Get(idx ref.Val) ref.Val {
	i, ok := idx.(types.Int)
	if !ok {
		return types.ValOrErr(idx, "unsupported index: %v", idx)
	}
	if i < 0 || int(i) >= len(l.elems) {
		return types.NewErr("index out of bounds: %v", idx)
	}
	return toVal(l.elems[i], l.items)
}

func (l *listVal) Iterator() traits.Iterator {
	vals := make([]ref.Val, len(l.elems))
	for i, e := range l.elems {
		vals[i] = toVal(e, l.items)
	}
	return &sliceIter{vals: vals}
}

func (l *listVal) Contains(v ref.Val) ref.Val {
	if types.IsUnknownOrError(v) {
		return v
	}
	var err ref.Val
	for _, e := range l.elems {
		eq := toVal(e, l.items).Equal(v)
		if eq == types.True {
			return types.True
		}
		if _, ok := eq.(types.Bool); !ok && err == nil {
			err = types.MaybeNoSuchOverloadErr(eq)
		}
	}
	if err != nil {
		return err
	}
	return types.False
}

// mapKey identifies an element of a map list by its key fields.
func (l *listVal) mapKey(e any) string {
	m, _ := e.(map[string]any)
	key := make([]any, len(l.keys))
	for i, k := range l.keys {
		key[i] = m[k]
	}
	b, _ := json.Marshal(key)
	return string(b)
}

func scalarKey(e any) string {
	b, _ := json.Marshal(e)
	return string(b)
}

func (l *listVal) Equal(other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	if types.Int(len(l.elems)) != o.Size() {
		return types.False
	}
	switch {
	case l.isMap():
		byKey := make(map[string]any, len(l.elems))
		for _, e := range l.elems {
			byKey[l.mapKey(e)] = e
		}
		for it := o.Iterator(); it.HasNext() == types.True; {
			v := it.Next()
			e, ok := byKey[l.mapKey(v.Value())]
			if !ok {
				return types.False
			}
			if eq := toVal(e, l.items).Equal(v); eq != types.True {
				return eq
			}
		}
		return types.True
	case l.set:
		have := make(map[string]bool, len(l.elems))
		for _, e := range l.elems {
			have[scalarKey(e)] = true
		}
		for it := o.Iterator(); it.HasNext() == types.True; {
			if !have[scalarKey(it.Next().Value())] {
				return types.False
			}
		}
		return types.True
	}
	for i := range l.elems {
		if eq := l.Get(types.Int(i)).Equal(o.Get(types.Int(i))); eq != types.True {
			return eq
		}
	}
	return types.True
}

func (l *listVal) Add(other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	out := &listVal{elems: append([]any(nil), l.elems...), items: l.items, set: l.set, keys: l.keys}
	switch {
	case l.isMap():
		at := map[string]int{}
		for i, e := range out.elems {
			at[l.mapKey(e)] = i
		}
		for it := o.Iterator(); it.HasNext() == types.True; {
			v := it.Next().Value()
			if i, ok := at[l.mapKey(v)]; ok {
				out.elems[i] = v
			} else {
				at[l.mapKey(v)] = len(out.elems)
				out.elems = append(out.elems, v)
			}
		}
	case l.set:
		have := map[string]bool{}
		for _, e := range out.elems {
			have[scalarKey(e)] = true
		}
		for it := o.Iterator(); it.HasNext() == types.True; {
			v := it.Next().Value()
			if k := scalarKey(v); !have[k] {
				have[k] = true
				out.elems = append(out.elems, v)
			}
		}
	default:
		for it := o.Iterator(); it.HasNext() == types.True; {
			out.elems = append(out.elems, it.Next().Value())
		}
	}
	return out
}
