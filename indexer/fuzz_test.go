package indexer

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"testing"
)

// The fuzz target runs a random sequence of writes against the indexer and against a model
// (a plain map of objects plus brute-force index evaluation) and, after every step, compares
// every query.

var (
	fuzzNamespaces = []string{"", "a", "b"}
	fuzzTags       = []string{"p", "q", "r", "s"}
	errKeyPoison   = errors.New("poisoned key")
	errIndexPoison = errors.New("poisoned index value")
)

// fuzzKey fails for objects named "x"; otherwise it is MetaNamespaceKeyFunc.
func fuzzKey(o *testObj) (string, error) {
	if o.name == "x" {
		return "", errKeyPoison
	}
	return MetaNamespaceKeyFunc(o)
}

// The index functions the fuzzer can register. "fragile*" fail on objects with fail set.
var fuzzIndexFuncs = map[string]IndexFunc[*testObj]{
	NamespaceIndex: MetaNamespaceIndexFunc[*testObj],
	"tags":         tagsIndex,
	"fragile":      fragileIndex,
	"parity": func(o *testObj) ([]string, error) {
		return []string{fmt.Sprint(len(o.name) % 2), "all"}, nil
	},
	"fragileTags": func(o *testObj) ([]string, error) {
		if o.fail && len(o.tags) > 0 {
			return nil, errIndexPoison
		}
		return o.tags, nil
	},
	"none": func(*testObj) ([]string, error) { return nil, nil },
}

// Indexes registered at construction; the others can be added by AddIndexers.
var fuzzInitial = []string{NamespaceIndex, "fragile"}
var fuzzAddable = [][]string{{"tags"}, {"parity", "none"}, {"fragileTags"}, {NamespaceIndex}, {"tags", "fragileTags"}}

type byteReader struct {
	data []byte
	pos  int
}

func (r *byteReader) more() bool { return r.pos < len(r.data) }

func (r *byteReader) next() byte {
	if r.pos >= len(r.data) {
		return 0
	}
	b := r.data[r.pos]
	r.pos++
	return b
}

func (r *byteReader) object() *testObj {
	b1, b2 := r.next(), r.next()
	o := &testObj{ns: fuzzNamespaces[int(b1)%len(fuzzNamespaces)], fail: b1&0x80 != 0 && b2&0x40 != 0}
	if n := (b1 >> 2) & 7; n == 7 {
		o.name = "x"
	} else {
		o.name = fmt.Sprint(n)
	}
	for i := range 6 {
		if b2&(1<<i) != 0 {
			o.tags = append(o.tags, fuzzTags[i%len(fuzzTags)])
		}
	}
	return o
}

type indexModel struct {
	items   map[string]*testObj
	indexes []string
}

func (m *indexModel) valuesOf(o *testObj) error {
	for _, n := range m.indexes {
		if _, err := fuzzIndexFuncs[n](o); err != nil {
			return err
		}
	}
	return nil
}

func (m *indexModel) has(index string) bool { return slices.Contains(m.indexes, index) }

// table evaluates every index on every object: index → value → sorted keys.
func (m *indexModel) table() map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for _, index := range m.indexes {
		t := map[string][]string{}
		for k, o := range m.items {
			vs, _ := fuzzIndexFuncs[index](o)
			for _, v := range vs {
				if !slices.Contains(t[v], k) {
					t[v] = append(t[v], k)
				}
			}
		}
		for _, keys := range t {
			sort.Strings(keys)
		}
		out[index] = t
	}
	return out
}

func FuzzIndexer(f *testing.F) {
	f.Add([]byte{0, 1, 2, 0, 5, 9, 1, 5, 3, 2, 5, 3})
	f.Add([]byte{3, 3, 1, 2, 5, 6, 7, 8, 4, 0, 0, 9, 9, 4, 3, 2, 2, 1})
	f.Add([]byte{0, 0x84, 0x41, 4, 2, 2, 0x84, 0x41, 4, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		ixs := Indexers[*testObj]{}
		for _, n := range fuzzInitial {
			ixs[n] = fuzzIndexFuncs[n]
		}
		ix := New(fuzzKey, ixs)
		m := &indexModel{items: map[string]*testObj{}, indexes: slices.Clone(fuzzInitial)}
		r := &byteReader{data: data}
		for step := 0; r.more() && step < 64; step++ {
			op := r.next() % 7
			var desc string
			switch op {
			case 0, 1, 6: // Add, Update, Upsert
				o := r.object()
				desc = fmt.Sprintf("write %+v", *o)
				key, kerr := fuzzKey(o)
				werr := kerr
				if werr == nil {
					werr = m.valuesOf(o)
				}
				var err error
				switch op {
				case 0:
					err = ix.Add(o)
				case 1:
					err = ix.Update(o)
				case 6:
					var old *testObj
					var existed bool
					old, existed, err = ix.Upsert(o)
					if err == nil && (old != m.items[key] || existed != (m.items[key] != nil)) {
						t.Fatalf("step %d %s: Upsert returned %v, %v; model has %v", step, desc, old, existed, m.items[key])
					}
				}
				if !sameOutcome(err, werr) {
					t.Fatalf("step %d %s: err = %v, model says %v", step, desc, err, werr)
				}
				if err == nil {
					m.items[key] = o
				}
			case 2: // Delete
				o := r.object()
				desc = fmt.Sprintf("delete %+v", *o)
				key, kerr := fuzzKey(o)
				err := ix.Delete(o)
				if !errors.Is(err, kerr) || (kerr == nil) != (err == nil) {
					t.Fatalf("step %d %s: err = %v, want %v", step, desc, err, kerr)
				}
				if err == nil {
					delete(m.items, key)
				}
			case 5: // DeleteByKey
				o := r.object()
				key, kerr := fuzzKey(o)
				if kerr != nil {
					continue
				}
				desc = "deleteByKey " + key
				old, existed := ix.DeleteByKey(key)
				if old != m.items[key] || existed != (m.items[key] != nil) {
					t.Fatalf("step %d %s: got %v, %v; model %v", step, desc, old, existed, m.items[key])
				}
				delete(m.items, key)
			case 3: // Replace
				n := int(r.next() % 6)
				list := make([]*testObj, 0, n)
				for range n {
					list = append(list, r.object())
				}
				desc = fmt.Sprintf("replace %d objects", n)
				next := map[string]*testObj{}
				var werr error
				for _, o := range list {
					key, err := fuzzKey(o)
					if err == nil {
						err = m.valuesOf(o)
					}
					if err != nil {
						werr = err
						break
					}
					next[key] = o
				}
				rv := fmt.Sprint(step)
				var err error
				if n%2 == 0 {
					err = ix.Replace(list, rv)
				} else {
					var got []Change[*testObj]
					err = ix.ReplaceAndDiff(list, rv, func(c Change[*testObj]) { got = append(got, c) })
					if err == nil {
						checkChanges(t, step, m.items, list, got)
					} else if got != nil {
						t.Fatalf("step %d: changes reported for a failed ReplaceAndDiff", step)
					}
				}
				if !sameOutcome(err, werr) {
					t.Fatalf("step %d %s: err = %v, model says %v", step, desc, err, werr)
				}
				if err == nil {
					m.items = next
					if got := ix.LastSyncResourceVersion(); got != rv {
						t.Fatalf("step %d: rv %q, want %q", step, got, rv)
					}
				}
			case 4: // AddIndexers
				names := fuzzAddable[int(r.next())%len(fuzzAddable)]
				desc = fmt.Sprintf("addIndexers %v", names)
				add := Indexers[*testObj]{}
				var werr error
				for _, n := range names {
					add[n] = fuzzIndexFuncs[n]
					if m.has(n) {
						werr = ErrDuplicateIndex
					}
				}
				if werr == nil {
				check:
					for _, n := range names {
						for _, o := range m.items {
							if _, err := fuzzIndexFuncs[n](o); err != nil {
								werr = err
								break check
							}
						}
					}
				}
				err := ix.AddIndexers(add)
				if (err == nil) != (werr == nil) || (werr == ErrDuplicateIndex && !errors.Is(err, ErrDuplicateIndex)) {
					t.Fatalf("step %d %s: err = %v, model says %v", step, desc, err, werr)
				}
				if err == nil {
					m.indexes = append(m.indexes, names...)
				}
			}
			checkIndexerAgainstModel(t, step, desc, ix, m)
		}
	})
}

// checkChanges compares what ReplaceAndDiff reported with what replacing before by list
// implies: deletions of the unlisted keys (in any order), then every listed object in order.
func checkChanges(t *testing.T, step int, before map[string]*testObj, list []*testObj, got []Change[*testObj]) {
	t.Helper()
	listed := map[string]bool{}
	for _, o := range list {
		k, _ := fuzzKey(o)
		listed[k] = true
	}
	var wantDeleted []string
	for k := range before {
		if !listed[k] {
			wantDeleted = append(wantDeleted, k)
		}
	}
	sort.Strings(wantDeleted)
	if len(got) != len(wantDeleted)+len(list) {
		t.Fatalf("step %d: %d changes, want %d deletions and %d upserts", step, len(got), len(wantDeleted), len(list))
	}
	var gotDeleted []string
	for _, c := range got[:len(wantDeleted)] {
		if !c.Deleted || !c.Existed || c.Old != before[c.Key] {
			t.Fatalf("step %d: bad deletion %+v", step, c)
		}
		gotDeleted = append(gotDeleted, c.Key)
	}
	if sort.Strings(gotDeleted); !slices.Equal(gotDeleted, wantDeleted) {
		t.Fatalf("step %d: deleted %v, want %v", step, gotDeleted, wantDeleted)
	}
	state := map[string]*testObj{}
	for k, o := range before {
		state[k] = o
	}
	for i, c := range got[len(wantDeleted):] {
		k, _ := fuzzKey(list[i])
		old, existed := state[k]
		if c.Deleted || c.Key != k || c.New != list[i] || c.Existed != existed || c.Old != old {
			t.Fatalf("step %d: change %d = %+v, want key %q new %p old %p existed %v", step, i, c, k, list[i], old, existed)
		}
		state[k] = list[i]
	}
}

// sameOutcome reports whether err and the model's predicted error agree: both nil, or both
// failures of the same kind (a key failure is a KeyError; an index failure is an IndexError,
// possibly of another failing index than the model's).
func sameOutcome(err, werr error) bool {
	switch {
	case werr == nil:
		return err == nil
	case errors.Is(werr, errKeyPoison):
		var ke *KeyError
		return errors.As(err, &ke) && errors.Is(err, errKeyPoison)
	default:
		var ie *IndexError
		return errors.As(err, &ie)
	}
}

func checkIndexerAgainstModel(t *testing.T, step int, desc string, ix Indexer[*testObj], m *indexModel) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("step %d after %s: %s", step, desc, fmt.Sprintf(format, args...))
	}
	wantKeys := make([]string, 0, len(m.items))
	for k := range m.items {
		wantKeys = append(wantKeys, k)
	}
	sort.Strings(wantKeys)
	if got := sorted(ix.ListKeys()); !slices.Equal(got, wantKeys) {
		fail("ListKeys = %v, want %v", got, wantKeys)
	}
	if ix.Len() != len(m.items) {
		fail("Len = %d, want %d", ix.Len(), len(m.items))
	}
	list := ix.List()
	if len(list) != len(m.items) {
		fail("List has %d objects, want %d", len(list), len(m.items))
	}
	for _, o := range list {
		k, _ := fuzzKey(o)
		if m.items[k] != o {
			fail("List holds %p for %q, model %p", o, k, m.items[k])
		}
	}
	for _, ns := range fuzzNamespaces {
		for n := range 7 {
			k, _ := fuzzKey(&testObj{ns: ns, name: fmt.Sprint(n)})
			got, ok, err := ix.GetByKey(k)
			if err != nil || got != m.items[k] || ok != (m.items[k] != nil) {
				fail("GetByKey(%q) = %p, %v, %v; model %p", k, got, ok, err, m.items[k])
			}
		}
	}
	names := sortedNames(ix.GetIndexers())
	if want := sorted(m.indexes); !slices.Equal(names, want) {
		fail("indexes %v, want %v", names, want)
	}
	table := m.table()
	for _, index := range m.indexes {
		t := table[index]
		values := make([]string, 0, len(t))
		for v := range t {
			values = append(values, v)
		}
		sort.Strings(values)
		if got := sorted(ix.ListIndexFuncValues(index)); !slices.Equal(got, values) {
			fail("ListIndexFuncValues(%q) = %v, want %v", index, got, values)
		}
		for _, v := range append(values, "absent") {
			want := t[v]
			keys, err := ix.IndexKeys(index, v)
			if err != nil {
				fail("IndexKeys(%q, %q): %v", index, v, err)
			}
			if got := sorted(keys); !slices.Equal(got, want) && len(got)+len(want) > 0 {
				fail("IndexKeys(%q, %q) = %v, want %v", index, v, got, want)
			}
			objs, err := ix.ByIndex(index, v)
			if err != nil {
				fail("ByIndex(%q, %q): %v", index, v, err)
			}
			got := make([]string, 0, len(objs))
			for _, o := range objs {
				k, _ := fuzzKey(o)
				if m.items[k] != o {
					fail("ByIndex(%q, %q) returned a stale object for %q", index, v, k)
				}
				got = append(got, k)
			}
			if sort.Strings(got); !slices.Equal(got, want) && len(got)+len(want) > 0 {
				fail("ByIndex(%q, %q) = %v, want %v", index, v, got, want)
			}
		}
		// Index with a stored object as the query: the union of its values' sets.
		for _, probe := range m.items {
			pvs, _ := fuzzIndexFuncs[index](probe)
			var want []string
			for _, v := range pvs {
				for _, k := range t[v] {
					if !slices.Contains(want, k) {
						want = append(want, k)
					}
				}
			}
			sort.Strings(want)
			objs, err := ix.Index(index, probe)
			if err != nil {
				fail("Index(%q): %v", index, err)
			}
			got := make([]string, 0, len(objs))
			for _, o := range objs {
				k, _ := fuzzKey(o)
				got = append(got, k)
			}
			sort.Strings(got)
			if !slices.Equal(got, want) && len(got)+len(want) > 0 {
				fail("Index(%q, %+v) = %v, want %v", index, *probe, got, want)
			}
			break
		}
	}
}
