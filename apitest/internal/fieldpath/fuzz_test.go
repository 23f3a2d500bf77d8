package fieldpath

import (
	"encoding/json"
	"strings"
	"testing"
)

// pathGen draws paths from fuzz input: one to three elements of each kind, from a small
// alphabet so that sets share prefixes.
type pathGen struct{ b []byte }

func (g *pathGen) next() (byte, bool) {
	if len(g.b) == 0 {
		return 0, false
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c, true
}

func (g *pathGen) element(c byte) PathElement {
	switch c % 8 {
	case 0, 1, 2:
		return Field(string(rune('a' + c%3)))
	case 3:
		return KeyOf(KeyField{"name", string(rune('x' + c%2))})
	case 4:
		return KeyOf(KeyField{"port", json.Number("80")}, KeyField{"protocol", "TCP"})
	case 5:
		return ValueOf(json.Number("1"))
	case 6:
		return ValueOf("1")
	}
	return IndexOf(int(c % 2))
}

func (g *pathGen) path() (Path, bool) {
	c, ok := g.next()
	if !ok {
		return nil, false
	}
	n := int(c%3) + 1
	var p Path
	for range n {
		e, ok := g.next()
		if !ok {
			break
		}
		p = append(p, g.element(e))
	}
	return p, len(p) > 0
}

func key(p Path) string {
	parts := make([]string, len(p))
	for i, e := range p {
		parts[i] = SerializeElement(e)
	}
	return strings.Join(parts, "\x00")
}

// FuzzSetOperations checks Set against a model (a map of paths): Insert, Has, Size, the
// set operations, and the FieldsV1 round trip.
func FuzzSetOperations(f *testing.F) {
	f.Add([]byte{1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, []byte{2, 0, 3, 1, 0})
	f.Add([]byte{0, 3, 2, 1, 4, 7}, []byte{0, 3, 2, 0, 0, 1})
	f.Fuzz(func(t *testing.T, da, db []byte) {
		build := func(d []byte) (*Set, map[string]Path) {
			s, m := NewSet(), map[string]Path{}
			g := &pathGen{d}
			for {
				p, ok := g.path()
				if !ok {
					break
				}
				s.Insert(p)
				m[key(p)] = p
			}
			return s, m
		}
		a, ma := build(da)
		b, mb := build(db)
		check := func(name string, s *Set, want map[string]Path) {
			t.Helper()
			if s.Size() != len(want) {
				t.Fatalf("%s: size %d, model %d:\n%s", name, s.Size(), len(want), s)
			}
			for _, p := range want {
				if !s.Has(p) {
					t.Fatalf("%s: lacks %s", name, p)
				}
			}
			back, err := FromFieldsV1(s.FieldsV1())
			if err != nil || !back.Equal(s) {
				t.Fatalf("%s: FieldsV1 round trip: %v\n%s\n%s", name, err, s.FieldsV1(), back)
			}
		}
		check("a", a, ma)
		union, inter, diff, rdiff := map[string]Path{}, map[string]Path{}, map[string]Path{}, map[string]Path{}
		for k, p := range ma {
			union[k] = p
			if _, ok := mb[k]; ok {
				inter[k] = p
			} else {
				diff[k] = p
				under := false
				for i := 1; i < len(p); i++ {
					if _, ok := mb[key(p[:i])]; ok {
						under = true
					}
				}
				if !under {
					rdiff[k] = p
				}
			}
		}
		for k, p := range mb {
			union[k] = p
		}
		check("union", a.Union(b), union)
		check("intersection", a.Intersection(b), inter)
		check("difference", a.Difference(b), diff)
		check("recursive difference", a.RecursiveDifference(b), rdiff)
		var prev Path
		a.Iterate(func(p Path) {
			if prev != nil && len(prev) == len(p) && prev.Compare(p) >= 0 && key(prev[:len(p)-1]) == key(p[:len(p)-1]) {
				t.Fatalf("Iterate out of order: %s then %s", prev, p)
			}
			prev = p.Copy()
		})
	})
}
