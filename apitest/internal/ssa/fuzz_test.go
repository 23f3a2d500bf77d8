package ssa

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/informerkit/informerkit/apitest/internal/fieldpath"
	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
)

type gen struct{ b []byte }

func (g *gen) pick(n int) int {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return int(c) % n
}

var (
	str      = mergeschema.StringType
	fzItem   = &mergeschema.Node{What: mergeschema.Struct, Fields: map[string]mergeschema.Field{"name": {Type: str}, "port": {Type: mergeschema.NumberType, Default: int64(80)}, "v": {Type: str}, "w": {Type: str}}}
	fzSchema = &mergeschema.Node{What: mergeschema.Struct, Fields: map[string]mergeschema.Field{
		"apiVersion": {Type: str}, "kind": {Type: str}, "metadata": {Type: mergeschema.ObjectMeta()},
		"spec": {Type: &mergeschema.Node{What: mergeschema.Struct, Fields: map[string]mergeschema.Field{
			"s":      {Type: str},
			"n":      {Type: mergeschema.NumberType},
			"labels": {Type: &mergeschema.Node{What: mergeschema.Map, Element: str}},
			"items":  {Type: &mergeschema.Node{What: mergeschema.List, Element: fzItem, Keys: []string{"name", "port"}}},
			"set":    {Type: &mergeschema.Node{What: mergeschema.List, Element: str}},
			"atomic": {Type: &mergeschema.Node{What: mergeschema.List, Element: str, IsAtomic: true}},
			"ref":    {Type: &mergeschema.Node{What: mergeschema.Struct, IsAtomic: true, Fields: map[string]mergeschema.Field{"a": {Type: str}, "b": {Type: str}}}},
			"free":   {Type: nil},
		}}},
	}}
)

func (g *gen) str() string { return fmt.Sprint("v", g.pick(3)) }

// config draws an applied configuration: valid (no repeated keys), without nulls and
// without empty maps or granular lists (which a kind's Go type would not keep apart from
// absent ones).
func (g *gen) config() map[string]any {
	spec := map[string]any{}
	if g.pick(2) == 0 {
		spec["s"] = g.str()
	}
	if g.pick(3) == 0 {
		spec["n"] = json.Number(fmt.Sprint(g.pick(3)))
	}
	if g.pick(2) == 0 {
		m := map[string]any{}
		for _, k := range "abc" {
			if g.pick(2) == 0 {
				m[string(k)] = g.str()
			}
		}
		if len(m) > 0 {
			spec["labels"] = m
		}
	}
	if g.pick(2) == 0 {
		items := []any{}
		seen := map[string]bool{}
		for range g.pick(4) {
			it := map[string]any{"name": fmt.Sprint("i", g.pick(3))}
			port := int64(80)
			if g.pick(2) == 0 {
				port = int64(81)
				it["port"] = json.Number("81")
			}
			k := fmt.Sprint(it["name"], port)
			if seen[k] {
				continue
			}
			seen[k] = true
			if g.pick(2) == 0 {
				it["v"] = g.str()
			}
			if g.pick(3) == 0 {
				it["w"] = g.str()
			}
			items = append(items, it)
		}
		if len(items) > 0 {
			spec["items"] = items
		}
	}
	if g.pick(2) == 0 {
		set := []any{}
		seen := map[string]bool{}
		for range g.pick(4) {
			s := g.str()
			if !seen[s] {
				seen[s] = true
				set = append(set, s)
			}
		}
		if len(set) > 0 {
			spec["set"] = set
		}
	}
	if g.pick(3) == 0 {
		spec["atomic"] = []any{g.str(), g.str()}[:g.pick(3)]
	}
	if g.pick(3) == 0 {
		spec["ref"] = map[string]any{"a": g.str()}
	}
	if g.pick(3) == 0 {
		spec["free"] = map[string]any{"x": map[string]any{"y": g.str()}, "l": []any{g.str()}}
	}
	c := map[string]any{"apiVersion": "fuzz/v1", "kind": "Thing", "metadata": map[string]any{"name": "t"}}
	if len(spec) > 0 {
		c["spec"] = spec
	}
	return c
}

// dropNulls removes null fields, as decoding into the kind's Go type does (apply leaves a
// map or list it empties as null).
func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if e != nil {
				out[k] = dropNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = dropNulls(e)
		}
		return out
	}
	return v
}

func fuzzManager() *FieldManager {
	return &FieldManager{Schema: fzSchema, APIVersion: "fuzz/v1", Kind: "Thing",
		Empty: func() map[string]any { return map[string]any{"apiVersion": "fuzz/v1", "kind": "Thing"} }}
}

// resolves reports whether path names something in v.
func resolves(v any, t mergeschema.Type, p fieldpath.Path) bool {
	for _, pe := range p {
		switch pe.Kind {
		case fieldpath.FieldName:
			m, ok := v.(map[string]any)
			if !ok {
				return false
			}
			if v, ok = m[pe.Name]; !ok {
				return false
			}
			t, _ = fieldType(t, pe.Name)
		default:
			l, ok := v.([]any)
			if !ok {
				return false
			}
			found := false
			for i, it := range l {
				e, err := itemElement(t, it)
				if pe.Kind == fieldpath.Index {
					e, err = fieldpath.IndexOf(i), nil
				}
				if err == nil && e.Equal(pe) {
					v, found = it, true
					break
				}
			}
			if !found {
				return false
			}
			t = elemType(t)
		}
	}
	return true
}

// checkOwnership: every manager owns something, and everything it owns is there.
func checkOwnership(t *testing.T, o map[string]any, step string) {
	t.Helper()
	m, err := DecodeManaged(meta(o)["managedFields"])
	if err != nil {
		t.Fatalf("%s: managedFields do not decode: %v", step, err)
	}
	for k, owned := range m.Fields {
		if owned.Set.Empty() {
			t.Fatalf("%s: %v owns nothing", step, k)
		}
		owned.Set.Iterate(func(p fieldpath.Path) {
			if !resolves(o, fzSchema, p) {
				t.Fatalf("%s: %v owns %s, which %s does not have", step, k, p, js(o))
			}
		})
	}
}

// FuzzApplyIsIdempotent applies a configuration over what another manager applied, then
// again: the second apply changes nothing, managedFields included.
func FuzzApplyIsIdempotent(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0, 2, 0, 3, 0, 1, 0}, []byte{0, 1, 0, 0, 1, 0, 2, 0, 2, 1, 1, 0, 0})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		fm := fuzzManager()
		c1, c2 := (&gen{a}).config(), (&gen{b}).config()
		live, _, err := fm.Apply(nil, c1, "m1", false)
		if err != nil {
			t.Fatalf("first apply: %v", err)
		}
		once, _, err := fm.Apply(dropNulls(live).(map[string]any), c2, "m2", true)
		if err != nil {
			t.Fatalf("forced apply: %v", err)
		}
		if meta(once)["managedFields"] == nil {
			// Nobody owns anything: the next apply records the object's fields under
			// "before-first-apply", as the kube-apiserver does.
			return
		}
		once = dropNulls(once).(map[string]any)
		twice, changed, err := fm.Apply(once, c2, "m2", false)
		if err != nil || changed || js(twice) != js(once) {
			t.Fatalf("apply again: changed=%v err=%v\nc1 %s\nc2 %s\nonce  %s\ntwice %s", changed, err, js(c1), js(c2), js(once), js(twice))
		}
		checkOwnership(t, once, "after the forced apply")
	})
}

// FuzzOwnership runs applies (forced or not) and updates by several managers and checks
// after each that ownership is consistent with the object, that an apply's configuration
// is in the result, and that applying it again is a no-op.
func FuzzOwnership(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 0, 1, 2, 3, 1, 0, 1, 1, 2, 0, 2, 1, 0, 3, 2, 1, 0, 1, 2, 3, 0, 0, 1})
	f.Add([]byte{3, 1, 2, 0, 1, 0, 0, 0, 1, 3, 1, 2, 1, 1, 0, 0, 1, 1, 1, 2, 2, 0, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		g := &gen{ops}
		fm := fuzzManager()
		var live map[string]any
		managers := []string{"m1", "m2", "m3"}
		for step := 0; step < 6 && len(g.b) > 0; step++ {
			c := g.config()
			if live != nil && g.pick(4) == 0 {
				// An update: the object as the configuration has it, by an updater.
				next := Merge(live, c, fzSchema).(map[string]any)
				next = copyMap(next)
				next["metadata"] = copyMap(meta(live))
				fm.Update(live, next, "updater")
				live = next
				checkOwnership(t, live, fmt.Sprint("update ", step))
				continue
			}
			who := managers[g.pick(3)]
			force := g.pick(2) == 0
			out, _, err := fm.Apply(live, c, who, force)
			var ce *ConflictError
			if errors.As(err, &ce) && !force {
				continue
			}
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			live = out
			checkOwnership(t, live, fmt.Sprint("apply ", step))
			FieldSet(c, fzSchema).Iterate(func(p fieldpath.Path) {
				if !resolves(live, fzSchema, p) {
					t.Fatalf("step %d: applied %s is not in %s", step, p, js(live))
				}
			})
			if meta(live)["managedFields"] == nil {
				continue
			}
			again, changed, err := fm.Apply(live, c, who, false)
			if err != nil || changed || js(again) != js(live) {
				t.Fatalf("step %d: re-apply by %s: changed=%v err=%v\n%s\n%s", step, who, changed, err, js(live), js(again))
			}
		}
	})
}
