package share

import (
	"encoding/json"
	"fmt"
	"testing"
)

// fObj is the fuzz target's object: every kind of value the walk handles (strings, string
// maps, slices of strings and of structs, pointers, interface{} trees, an unexported field),
// with values drawn from a small pool so that objects have much in common.
type fObj struct {
	Name    string            `json:"name"`
	Labels  map[string]string `json:"labels"`
	Tags    []string          `json:"tags"`
	Items   []fItem           `json:"items"`
	Ptr     *fItem            `json:"ptr"`
	Any     any               `json:"any"`
	Meta    map[string]any    `json:"meta"`
	Count   *int64            `json:"count"`
	private string
}

type fItem struct {
	Key  string   `json:"key"`
	Vals []string `json:"vals"`
	N    int      `json:"n"`
	Sub  *fItem   `json:"sub"`
}

type fuzzBytes struct {
	data []byte
	i    int
}

func (r *fuzzBytes) next() int {
	if r.i >= len(r.data) {
		return 0
	}
	r.i++
	return int(r.data[r.i-1])
}

func (r *fuzzBytes) more() bool { return r.i < len(r.data) }

var fuzzPool = []string{"", "a", "app", "registry.example.com/app:v1", "kube-system", "x"}

func (r *fuzzBytes) str() string {
	b := r.next()
	if b >= 250 { // now and then a string of its own
		return fmt.Sprint("u", r.i)
	}
	return fuzzPool[b%len(fuzzPool)]
}

func (r *fuzzBytes) strings() []string {
	n := r.next() % 4
	if n == 0 && r.next()%2 == 0 {
		return nil
	}
	out := make([]string, n, n+r.next()%4) // spare capacity, as JSON decoding leaves
	for i := range out {
		out[i] = r.str()
	}
	return out
}

func (r *fuzzBytes) item(depth int) *fItem {
	if depth > 2 || r.next()%3 == 0 {
		return nil
	}
	return &fItem{Key: r.str(), Vals: r.strings(), N: r.next() % 3, Sub: r.item(depth + 1)}
}

func (r *fuzzBytes) any(depth int) any {
	switch k := r.next() % 7; {
	case depth > 3 || k == 0:
		return nil
	case k == 1:
		return r.str()
	case k == 2:
		return float64(r.next() % 3)
	case k == 3:
		return r.next()%2 == 0
	case k == 4:
		s := make([]any, r.next()%3)
		for i := range s {
			s[i] = r.any(depth + 1)
		}
		return s
	default:
		m := map[string]any{}
		for range r.next() % 3 {
			m[r.str()] = r.any(depth + 1)
		}
		return m
	}
}

func (r *fuzzBytes) object() *fObj {
	o := &fObj{Name: r.str(), Tags: r.strings(), Ptr: r.item(0), Any: r.any(0), private: r.str()}
	if n := r.next() % 4; n > 0 {
		o.Labels = map[string]string{}
		for range n {
			o.Labels[r.str()] = r.str()
		}
	}
	for range r.next() % 3 {
		o.Items = append(o.Items, fItem{Key: r.str(), Vals: r.strings()})
	}
	if m, ok := r.any(1).(map[string]any); ok {
		o.Meta = m
	}
	if r.next()%2 == 0 {
		c := int64(r.next() % 2)
		o.Count = &c
	}
	return o
}

func snapshot(t *testing.T, o *fObj) string {
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "|" + o.private
}

// FuzzShare checks the engine against the simplest model of it, the objects' content: sharing
// returns the object it was given, leaves its content (as encoding/json sees it, plus the
// unexported field) unchanged, and never changes the content of an object shared before.
func FuzzShare(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	f.Add([]byte("the same bytes twice the same bytes twice the same bytes twice"))
	f.Add([]byte{5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzBytes{data: data}
		s := New[*fObj]()
		var objs []*fObj
		var snaps []string
		for step := 0; step < 64 && (step == 0 || r.more()); step++ {
			o := r.object()
			snap := snapshot(t, o)
			if got := s.Share(o); got != o {
				t.Fatalf("step %d: Share returned another object", step)
			}
			if after := snapshot(t, o); after != snap {
				t.Fatalf("step %d: content changed by sharing:\n%s\n%s", step, snap, after)
			}
			objs, snaps = append(objs, o), append(snaps, snap)
		}
		for i, o := range objs {
			if after := snapshot(t, o); after != snaps[i] {
				t.Fatalf("object %d changed by later sharing:\n%s\n%s", i, snaps[i], after)
			}
		}
	})
}
