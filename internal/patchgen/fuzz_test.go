package patchgen

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// gen makes JSON-shaped values from fuzz input, a byte at a time (zero once it runs out).
type gen struct{ b []byte }

func (g *gen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

// names are few, so that two objects share most of their keys.
var names = []string{"a", "b", "c", "x/y", "m~n", "d"}

func (g *gen) value(depth int) any {
	switch c := g.byte(); {
	case depth > 0 && c%6 == 0:
		return g.object(depth - 1)
	case depth > 0 && c%6 == 1:
		n := int(g.byte() % 4)
		l := make([]any, n)
		for i := range l {
			l[i] = g.value(depth - 1)
		}
		return l
	case c%6 == 2:
		return json.Number(strconv.Itoa(int(g.byte() % 5)))
	case c%6 == 3:
		return g.byte()%2 == 0
	case c%6 == 4:
		return nil // a null: an absent field to a merge patch
	default:
		return names[int(g.byte())%len(names)]
	}
}

func (g *gen) object(depth int) map[string]any {
	m := map[string]any{}
	for n := int(g.byte() % 5); n > 0; n-- {
		m[names[int(g.byte())%len(names)]] = g.value(depth)
	}
	return m
}

// pair makes two objects; the second is the first with changes, so that they share parts.
func pair(data []byte) (from, to map[string]any) {
	g := &gen{b: data}
	from = g.object(3)
	to = clone(from).(map[string]any)
	mutate(g, to, 3)
	return from, to
}

func mutate(g *gen, m map[string]any, depth int) {
	for n := int(g.byte() % 4); n > 0; n-- {
		k := names[int(g.byte())%len(names)]
		switch c := g.byte() % 4; {
		case c == 0:
			delete(m, k)
		case c == 1:
			if sub, ok := m[k].(map[string]any); ok && depth > 0 {
				mutate(g, sub, depth-1)
				continue
			}
			fallthrough
		default:
			m[k] = g.value(depth)
		}
	}
}

func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = clone(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = clone(e)
		}
		return out
	}
	return v
}

// applyMerge is RFC 7386, the model the merge patches are checked against.
func applyMerge(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return clone(patch)
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	} else {
		t = clone(t).(map[string]any)
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
		} else {
			t[k] = applyMerge(t[k], v)
		}
	}
	return t
}

// applyJSON is RFC 6902's add, remove and replace, the model the JSON patches are checked
// against; an operation on a path that does not exist is an error.
func applyJSON(doc any, ops []Op) (any, error) {
	doc = clone(doc)
	for _, op := range ops {
		if op.Path == "" {
			return nil, fmt.Errorf("an operation on the whole document")
		}
		toks := strings.Split(op.Path[1:], "/")
		for i, t := range toks {
			toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
		}
		parent := doc
		for _, t := range toks[:len(toks)-1] {
			switch x := parent.(type) {
			case map[string]any:
				parent = x[t]
			case []any:
				i, err := strconv.Atoi(t)
				if err != nil || i >= len(x) {
					return nil, fmt.Errorf("%s: no item %s", op.Path, t)
				}
				parent = x[i]
			default:
				return nil, fmt.Errorf("%s: no container at %s", op.Path, t)
			}
		}
		last := toks[len(toks)-1]
		switch x := parent.(type) {
		case map[string]any:
			_, exists := x[last]
			switch {
			case op.Op == "add":
				x[last] = clone(op.Value)
			case !exists:
				return nil, fmt.Errorf("%s %s: no such field", op.Op, op.Path)
			case op.Op == "remove":
				delete(x, last)
			case op.Op == "replace":
				x[last] = clone(op.Value)
			}
		case []any:
			i, err := strconv.Atoi(last)
			if err != nil || i >= len(x) || op.Op != "replace" {
				return nil, fmt.Errorf("%s %s: not a replace of an item", op.Op, op.Path)
			}
			x[i] = clone(op.Value)
		default:
			return nil, fmt.Errorf("%s: no container", op.Path)
		}
	}
	return doc, nil
}

// Applying Merge(from, to) to from gives to (without its nulls), and so does applying
// JSON(from, to); both patches are empty when nothing changed.
func FuzzMergeAndJSONPatches(f *testing.F) {
	// The seed corpus is testdata/fuzz/FuzzMergeAndJSONPatches.
	f.Fuzz(func(t *testing.T, data []byte) {
		from, to := pair(data)
		want := Normalize(to)
		mp := Merge(from, to)
		if got := applyMerge(Normalize(from), mp); !Equal(got, want) {
			t.Fatalf("merge patch %v\nfrom %v\n got %v\nwant %v", mp, from, got, want)
		}
		ops := JSON(from, to)
		got, err := applyJSON(Normalize(from), ops)
		if err != nil || !Equal(got, want) {
			t.Fatalf("JSON patch %+v: %v\nfrom %v\n got %v\nwant %v", ops, err, from, got, want)
		}
		if Equal(Normalize(from), want) && (len(mp) != 0 || len(ops) != 0) {
			t.Fatalf("nothing changed, patches %v %v", mp, ops)
		}
	})
}
