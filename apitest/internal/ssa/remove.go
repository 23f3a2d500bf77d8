package ssa

import (
	"github.com/informerkit/informerkit/apitest/internal/fieldpath"
	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
)

// Removing fields from a value: those an applier no longer manages.

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
