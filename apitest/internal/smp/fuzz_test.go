package smp

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/informerkit/informerkit/apitest/internal/fieldpath"
	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
)

// gen draws values from fuzz input.
type gen struct{ b []byte }

func (g *gen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

func (g *gen) pick(n int) int { return int(g.byte()) % n }

var (
	scalar    = mergeschema.ScalarType
	fuzzItem  = &mergeschema.Node{What: mergeschema.Struct, Fields: map[string]mergeschema.Field{}}
	fuzzTypes = &mergeschema.Node{What: mergeschema.Struct, Fields: map[string]mergeschema.Field{
		"s":     {Type: scalar},
		"m":     {Type: &mergeschema.Node{What: mergeschema.Map, Element: scalar}},
		"list":  {Type: &mergeschema.Node{What: mergeschema.List, Element: fuzzItem, Keys: []string{"name"}}, PatchStrategy: "merge", PatchMergeKey: "name"},
		"tags":  {Type: &mergeschema.Node{What: mergeschema.List, Element: scalar}, PatchStrategy: "merge"},
		"repl":  {Type: &mergeschema.Node{What: mergeschema.List, Element: scalar, IsAtomic: true}},
		"sub":   {Type: &mergeschema.Node{What: mergeschema.Struct, Fields: map[string]mergeschema.Field{"a": {Type: scalar}, "b": {Type: scalar}, "c": {Type: scalar}}}, PatchStrategy: "retainKeys"},
		"whole": {Type: &mergeschema.Node{What: mergeschema.Struct, Fields: map[string]mergeschema.Field{"a": {Type: scalar}, "b": {Type: scalar}}}, PatchStrategy: "replace"},
		"free":  {Type: nil},
	}}
)

func init() {
	fuzzItem.Fields["name"] = mergeschema.Field{Type: scalar}
	fuzzItem.Fields["v"] = mergeschema.Field{Type: scalar}
	fuzzItem.Fields["tags"] = fuzzTypes.Fields["tags"]
	fuzzItem.Fields["sub"] = mergeschema.Field{Type: &mergeschema.Node{What: mergeschema.Map, Element: scalar}}
}

func (g *gen) scalar() any {
	switch g.pick(4) {
	case 0:
		return fmt.Sprint("s", g.pick(3))
	case 1:
		return json.Number(fmt.Sprint(g.pick(3)))
	case 2:
		return g.pick(2) == 0
	}
	return json.Number("1.5")
}

func (g *gen) scalarMap(keys string) map[string]any {
	m := map[string]any{}
	for _, k := range keys {
		if g.pick(2) == 0 {
			m[string(k)] = g.scalar()
		}
	}
	return m
}

// uniqueScalars is a list of distinct strings (a merge list of scalars is a set).
func (g *gen) uniqueScalars() []any {
	out := []any{}
	seen := map[string]bool{}
	for range g.pick(4) {
		s := fmt.Sprint("t", g.pick(5))
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func (g *gen) free(depth int) any {
	if depth > 2 || g.pick(3) == 0 {
		return g.scalar()
	}
	if g.pick(4) == 0 {
		return []any{g.scalar(), g.scalar()}
	}
	m := map[string]any{}
	for _, k := range "xyz" {
		if g.pick(2) == 0 {
			m[string(k)] = g.free(depth + 1)
		}
	}
	return m
}

// object draws an object of fuzzTypes without nulls, "$" keys or repeated list keys: the
// documents a strategic merge patch can reach.
func (g *gen) object() map[string]any {
	o := map[string]any{}
	if g.pick(2) == 0 {
		o["s"] = g.scalar()
	}
	if g.pick(2) == 0 {
		o["m"] = g.scalarMap("abc")
	}
	if g.pick(2) == 0 {
		items := []any{}
		seen := map[int]bool{}
		for range g.pick(4) {
			n := g.pick(4)
			if seen[n] {
				continue
			}
			seen[n] = true
			it := map[string]any{"name": fmt.Sprint("n", n)}
			if g.pick(2) == 0 {
				it["v"] = g.scalar()
			}
			if g.pick(3) == 0 {
				it["tags"] = g.uniqueScalars()
			}
			if g.pick(3) == 0 {
				it["sub"] = g.scalarMap("pq")
			}
			items = append(items, it)
		}
		o["list"] = items
	}
	if g.pick(2) == 0 {
		o["tags"] = g.uniqueScalars()
	}
	if g.pick(2) == 0 {
		o["repl"] = []any{g.scalar(), g.scalar()}[:g.pick(3)]
	}
	if g.pick(2) == 0 {
		o["sub"] = g.scalarMap("abc")
	}
	if g.pick(2) == 0 {
		o["whole"] = g.scalarMap("ab")
	}
	if g.pick(2) == 0 {
		o["free"] = g.free(0)
	}
	return o
}

// FuzzDiffApply checks that the patch Diff computes between two objects turns the first
// into the second when applied, through every directive Diff writes ($setElementOrder,
// $deleteFromPrimitiveList, "$patch": "delete", $retainKeys, replace strategies), and that
// Apply leaves its arguments alone.
func FuzzDiffApply(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 0, 3, 1, 0, 0, 1, 0, 0, 0, 2, 0, 1}, []byte{1, 0, 0, 2, 0, 2, 3, 0, 1, 0, 0, 1, 1, 0, 0})
	f.Add([]byte{2, 0, 0, 0, 0, 3, 0, 2, 1, 0, 0, 1, 0, 3}, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		orig := (&gen{a}).object()
		mod := (&gen{b}).object()
		patch := Diff(orig, mod, fuzzTypes)
		before, pb := js(orig), js(patch)
		got, err := Apply(orig, patch, fuzzTypes)
		if err != nil {
			t.Fatalf("apply: %v\norig  %s\nmod   %s\npatch %s", err, js(orig), js(mod), js(patch))
		}
		if js(got) != js(fieldpath.Normalize(mod)) {
			t.Fatalf("apply(diff) differs\norig  %s\nmod   %s\npatch %s\ngot   %s", js(orig), js(mod), pb, js(got))
		}
		if js(orig) != before || js(patch) != pb {
			t.Fatal("Apply changed its arguments")
		}
	})
}

// mergePatch is RFC 7386, the reference model of a strategic merge patch without lists to
// merge or directives.
func mergePatch(target, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	tm, ok := target.(map[string]any)
	if !ok {
		tm = map[string]any{}
	}
	out := map[string]any{}
	for k, v := range tm {
		out[k] = v
	}
	for k, v := range pm {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = mergePatch(out[k], v)
	}
	return out
}

// patchValue draws a patch value: nulls anywhere in objects, lists of scalars.
func (g *gen) patchValue(depth int) any {
	switch g.pick(5) {
	case 0:
		return nil
	case 1:
		return []any{g.scalar()}
	case 2, 3:
		if depth < 3 {
			m := map[string]any{}
			for _, k := range "xyz" {
				if g.pick(2) == 0 {
					m[string(k)] = g.patchValue(depth + 1)
				}
			}
			return m
		}
	}
	return g.scalar()
}

// FuzzApplyIsMergePatchWithoutSchema checks Apply against RFC 7386 on documents without a
// schema (no list merges): a strategic merge patch is then a JSON merge patch.
func FuzzApplyIsMergePatchWithoutSchema(f *testing.F) {
	f.Add([]byte{2, 0, 2, 1, 0, 3}, []byte{2, 0, 0, 1, 1, 2, 2, 0})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ga, gb := &gen{a}, &gen{b}
		orig, _ := ga.free(0).(map[string]any)
		patch, _ := gb.patchValue(0).(map[string]any)
		if orig == nil || patch == nil {
			return
		}
		got, err := Apply(orig, patch, nil)
		if err != nil {
			t.Fatalf("%v\norig  %s\npatch %s", err, js(orig), js(patch))
		}
		want := mergePatch(fieldpath.Normalize(orig), fieldpath.Normalize(patch))
		if js(got) != js(want) {
			t.Fatalf("orig  %s\npatch %s\ngot   %s\nwant  %s", js(orig), js(patch), js(got), js(want))
		}
	})
}

// FuzzApplyArbitrary throws any JSON at Apply with the Deployment schema: it must return
// an object or an error, never panic.
func FuzzApplyArbitrary(f *testing.F) {
	f.Add([]byte(base), []byte(`{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"b"}],"containers":[{"name":"a","$patch":"delete"},{"name":"c"}]}}}}`))
	f.Add([]byte(base), []byte(`{"metadata":{"$deleteFromPrimitiveList/finalizers":["a",{"x":1}],"$retainKeys":["finalizers",1]}}`))
	f.Add([]byte(base), []byte(`{"spec":{"template":{"spec":{"containers":[{"name":{"a":1}},{"$patch":"replace"}]}}}}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var orig, patch map[string]any
		if json.Unmarshal(a, &orig) != nil || json.Unmarshal(b, &patch) != nil {
			return
		}
		Apply(orig, patch, deployment())
	})
}
