package indexer

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
)

func sorted(ss []string) []string {
	out := slices.Clone(ss)
	sort.Strings(out)
	return out
}

func keysOf(t *testing.T, objs []*testObj) []string {
	t.Helper()
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		k, err := MetaNamespaceKeyFunc(o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func mustAdd(t *testing.T, ix Indexer[*testObj], objs ...*testObj) {
	t.Helper()
	for _, o := range objs {
		if err := ix.Add(o); err != nil {
			t.Fatalf("Add(%s/%s): %v", o.ns, o.name, err)
		}
	}
}

func wantByIndex(t *testing.T, ix Indexer[*testObj], index, value string, want ...string) {
	t.Helper()
	got, err := ix.ByIndex(index, value)
	if err != nil {
		t.Fatalf("ByIndex(%q, %q): %v", index, value, err)
	}
	if g, w := keysOf(t, got), sorted(want); !slices.Equal(g, w) {
		t.Errorf("ByIndex(%q, %q) = %v, want %v", index, value, g, w)
	}
	keys, err := ix.IndexKeys(index, value)
	if err != nil {
		t.Fatalf("IndexKeys(%q, %q): %v", index, value, err)
	}
	if g, w := sorted(keys), sorted(want); !slices.Equal(g, w) {
		t.Errorf("IndexKeys(%q, %q) = %v, want %v", index, value, g, w)
	}
}

func wantValues(t *testing.T, ix Indexer[*testObj], index string, want ...string) {
	t.Helper()
	if g, w := sorted(ix.ListIndexFuncValues(index)), sorted(want); !slices.Equal(g, w) {
		t.Errorf("ListIndexFuncValues(%q) = %v, want %v", index, g, w)
	}
}

func TestMetaNamespaceKeyFuncIsNamespaceSlashNameOrNameWhenClusterScoped(t *testing.T) {
	for _, tc := range []struct {
		o    *testObj
		want string
	}{
		{&testObj{ns: "default", name: "web"}, "default/web"},
		{&testObj{name: "node-1"}, "node-1"},
	} {
		got, err := MetaNamespaceKeyFunc(tc.o)
		if err != nil || got != tc.want {
			t.Errorf("MetaNamespaceKeyFunc(%+v) = %q, %v; want %q", tc.o, got, err, tc.want)
		}
	}
}

func TestMetaNamespaceKeyFuncOfNilObjectIsAnError(t *testing.T) {
	if _, err := MetaNamespaceKeyFunc[*testObj](nil); !errors.Is(err, ErrNilObject) {
		t.Errorf("err = %v, want ErrNilObject", err)
	}
	if _, err := MetaNamespaceIndexFunc[*testObj](nil); !errors.Is(err, ErrNilObject) {
		t.Errorf("index err = %v, want ErrNilObject", err)
	}
	ix := newTestIndexer(nil)
	var ke *KeyError
	if err := ix.Add(nil); !errors.As(err, &ke) || !errors.Is(err, ErrNilObject) {
		t.Errorf("Add(nil) = %v, want a KeyError wrapping ErrNilObject", err)
	}
	if ix.Len() != 0 {
		t.Errorf("Len = %d after a failed Add", ix.Len())
	}
}

func TestSplitMetaNamespaceKeyInvertsTheKeyFunc(t *testing.T) {
	for _, tc := range []struct {
		key, ns, name string
		bad           bool
	}{
		{key: "default/web", ns: "default", name: "web"},
		{key: "node-1", name: "node-1"},
		{key: "/web", name: "web"},
		{key: "", name: ""},
		{key: "a/b/c", bad: true},
	} {
		ns, name, err := SplitMetaNamespaceKey(tc.key)
		if tc.bad {
			if err == nil {
				t.Errorf("SplitMetaNamespaceKey(%q): no error", tc.key)
			}
			continue
		}
		if err != nil || ns != tc.ns || name != tc.name {
			t.Errorf("SplitMetaNamespaceKey(%q) = %q, %q, %v; want %q, %q", tc.key, ns, name, err, tc.ns, tc.name)
		}
	}
}

func TestReturnedObjectsAreTheStoredPointers(t *testing.T) {
	ix := newTestIndexer(nil)
	o := obj("ns", "a", "web")
	mustAdd(t, ix, o)
	got, ok, err := ix.GetByKey("ns/a")
	if err != nil || !ok || got != o {
		t.Fatalf("GetByKey = %p, %v, %v; want %p", got, ok, err, o)
	}
	got, ok, err = ix.Get(&testObj{ns: "ns", name: "a"})
	if err != nil || !ok || got != o {
		t.Fatalf("Get = %p, %v, %v; want %p", got, ok, err, o)
	}
	if l := ix.List(); len(l) != 1 || l[0] != o {
		t.Fatalf("List = %v", l)
	}
	if l, _ := ix.ByIndex("app", "web"); len(l) != 1 || l[0] != o {
		t.Fatalf("ByIndex = %v", l)
	}
}

func TestAddOfAnExistingKeyReplacesAndUpdateOfAMissingKeyAdds(t *testing.T) {
	ix := newTestIndexer(nil)
	if err := ix.Update(obj("ns", "a", "web")); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := ix.GetByKey("ns/a"); !ok {
		t.Fatal("Update of a missing key did not add it")
	}
	o2 := obj("ns", "a", "db")
	mustAdd(t, ix, o2)
	if got, _, _ := ix.GetByKey("ns/a"); got != o2 {
		t.Fatal("Add of an existing key did not replace it")
	}
	if ix.Len() != 1 {
		t.Fatalf("Len = %d, want 1", ix.Len())
	}
	wantByIndex(t, ix, "app", "web")
	wantByIndex(t, ix, "app", "db", "ns/a")
}

func TestIndicesMapEachValueToTheSetOfKeys(t *testing.T) {
	ix := newTestIndexer(nil)
	mustAdd(t, ix, obj("a", "1", "web"), obj("a", "2", "db"), obj("b", "3", "web"), &testObj{name: "cluster"})
	wantByIndex(t, ix, NamespaceIndex, "a", "a/1", "a/2")
	wantByIndex(t, ix, NamespaceIndex, "b", "b/3")
	wantByIndex(t, ix, NamespaceIndex, "", "cluster")
	wantByIndex(t, ix, "app", "web", "a/1", "b/3")
	wantByIndex(t, ix, "app", "nothing")
	wantValues(t, ix, NamespaceIndex, "a", "b", "")
	wantValues(t, ix, "app", "web", "db")
}

func TestEmptyIndexSetsAreRemoved(t *testing.T) {
	ix := newTestIndexer(nil)
	a, b := obj("a", "1", "web"), obj("a", "2", "web")
	mustAdd(t, ix, a, b)
	if err := ix.Delete(a); err != nil {
		t.Fatal(err)
	}
	wantValues(t, ix, "app", "web")
	if err := ix.Update(obj("a", "2", "db")); err != nil {
		t.Fatal(err)
	}
	wantValues(t, ix, "app", "db")
	if err := ix.Delete(b); err != nil {
		t.Fatal(err)
	}
	wantValues(t, ix, "app")
	wantValues(t, ix, NamespaceIndex)
	s := ix.(*store[*testObj])
	for i, m := range s.sets {
		if len(m) != 0 {
			t.Errorf("index %d still holds %d values", i, len(m))
		}
	}
}

func TestDeleteRemovesTheObjectAndItsIndexEntries(t *testing.T) {
	ix := newTestIndexer(nil)
	mustAdd(t, ix, obj("a", "1", "web"), obj("a", "2", "web"))
	// Delete needs only the key: a different object with the same key will do.
	if err := ix.Delete(&testObj{ns: "a", name: "1"}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := ix.GetByKey("a/1"); ok {
		t.Fatal("a/1 still present")
	}
	wantByIndex(t, ix, "app", "web", "a/2")
	wantByIndex(t, ix, NamespaceIndex, "a", "a/2")
	if got := ix.ListKeys(); !slices.Equal(got, []string{"a/2"}) {
		t.Fatalf("ListKeys = %v", got)
	}
}

func TestDeleteOfAnAbsentKeyIsANoop(t *testing.T) {
	ix := newTestIndexer(nil)
	mustAdd(t, ix, obj("a", "1", "web"))
	if err := ix.Delete(obj("a", "zzz", "web")); err != nil {
		t.Fatal(err)
	}
	if _, ok := ix.DeleteByKey("nope"); ok {
		t.Fatal("DeleteByKey of an absent key reported existed")
	}
	if ix.Len() != 1 {
		t.Fatalf("Len = %d", ix.Len())
	}
}

func TestAddIndexersBackfillsExistingObjects(t *testing.T) {
	ix := New(MetaNamespaceKeyFunc[*testObj], nil)
	mustAdd(t, ix, obj("a", "1", "web"), obj("b", "2", "web"), obj("b", "3", "db"))
	if err := ix.AddIndexers(Indexers[*testObj]{"app": appIndex, NamespaceIndex: MetaNamespaceIndexFunc[*testObj]}); err != nil {
		t.Fatal(err)
	}
	wantByIndex(t, ix, "app", "web", "a/1", "b/2")
	wantByIndex(t, ix, NamespaceIndex, "b", "b/2", "b/3")
	// Later writes maintain the added indexes.
	mustAdd(t, ix, obj("c", "4", "web"))
	wantByIndex(t, ix, "app", "web", "a/1", "b/2", "c/4")
	if got := sortedNames(ix.GetIndexers()); !slices.Equal(got, []string{"app", "namespace"}) {
		t.Fatalf("GetIndexers names = %v", got)
	}
}

func TestAddIndexersRejectsADuplicateNameAndChangesNothing(t *testing.T) {
	ix := newTestIndexer(nil)
	mustAdd(t, ix, obj("a", "1", "web"))
	err := ix.AddIndexers(Indexers[*testObj]{"app": appIndex, "tags": tagsIndex})
	if !errors.Is(err, ErrDuplicateIndex) {
		t.Fatalf("err = %v, want ErrDuplicateIndex", err)
	}
	if _, ok := ix.GetIndexers()["tags"]; ok {
		t.Fatal("the non-duplicate index of the rejected call was registered")
	}
	if _, err := ix.ByIndex("tags", "x"); !errors.Is(err, ErrNoSuchIndex) {
		t.Fatalf("ByIndex on the rejected index: %v", err)
	}
}

func TestAddIndexersWithAFailingIndexFuncNamesIndexAndKeyAndChangesNothing(t *testing.T) {
	ix := newTestIndexer(nil)
	bad := obj("a", "bad", "web")
	bad.fail = true
	mustAdd(t, ix, obj("a", "1", "web"), bad)
	err := ix.AddIndexers(Indexers[*testObj]{"fragile": fragileIndex})
	var ie *IndexError
	if !errors.As(err, &ie) || ie.Index != "fragile" || ie.Key != "a/bad" || !errors.As(err, new(fragileError)) {
		t.Fatalf("err = %v, want an IndexError for index fragile, key a/bad", err)
	}
	if _, ok := ix.GetIndexers()["fragile"]; ok {
		t.Fatal("failed index was registered")
	}
	// The index can be added once the offending object is gone.
	ix.DeleteByKey("a/bad")
	if err := ix.AddIndexers(Indexers[*testObj]{"fragile": fragileIndex}); err != nil {
		t.Fatal(err)
	}
	wantByIndex(t, ix, "fragile", "1", "a/1")
}

func TestAddIndexersRejectsANilIndexFunc(t *testing.T) {
	ix := newTestIndexer(nil)
	if err := ix.AddIndexers(Indexers[*testObj]{"x": nil}); err == nil {
		t.Fatal("no error")
	}
}

func TestIndexFuncFailureOnAddNamesIndexAndKeyAndLeavesTheStoreUnchanged(t *testing.T) {
	ix := newTestIndexer(Indexers[*testObj]{"fragile": fragileIndex})
	mustAdd(t, ix, obj("a", "1", "web"))
	bad := obj("a", "2", "web")
	bad.fail = true
	err := ix.Add(bad)
	var ie *IndexError
	if !errors.As(err, &ie) || ie.Index != "fragile" || ie.Key != "a/2" {
		t.Fatalf("err = %v, want IndexError{fragile, a/2}", err)
	}
	if _, ok, _ := ix.GetByKey("a/2"); ok {
		t.Fatal("object stored despite the error")
	}
	wantByIndex(t, ix, "app", "web", "a/1")
	wantValues(t, ix, "fragile", "1")
}

func TestIndexFuncFailureOnUpdateKeepsTheOldObjectAndIndexEntries(t *testing.T) {
	ix := newTestIndexer(Indexers[*testObj]{"fragile": fragileIndex})
	old := obj("a", "1", "web")
	mustAdd(t, ix, old)
	bad := obj("a", "1", "db")
	bad.fail = true
	if err := ix.Update(bad); err == nil {
		t.Fatal("no error")
	}
	if got, _, _ := ix.GetByKey("a/1"); got != old {
		t.Fatal("object replaced despite the error")
	}
	wantByIndex(t, ix, "app", "web", "a/1")
	wantByIndex(t, ix, "app", "db")
}

func TestKeyFuncFailureIsAKeyError(t *testing.T) {
	boom := errors.New("boom")
	ix := New(func(*testObj) (string, error) { return "", boom }, nil)
	err := ix.Add(obj("a", "1", "x"))
	var ke *KeyError
	if !errors.As(err, &ke) || !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if err := ix.Replace([]*testObj{obj("a", "1", "x")}, "1"); !errors.Is(err, boom) {
		t.Fatalf("Replace err = %v", err)
	}
	if _, _, err := ix.Get(obj("a", "1", "x")); !errors.Is(err, boom) {
		t.Fatalf("Get err = %v", err)
	}
	if err := ix.Delete(obj("a", "1", "x")); !errors.Is(err, boom) {
		t.Fatalf("Delete err = %v", err)
	}
}

// countingIndex counts its calls and records the objects it was called with.
type countingIndex struct {
	mu    sync.Mutex
	calls []*testObj
}

func (c *countingIndex) fn(o *testObj) ([]string, error) {
	c.mu.Lock()
	c.calls = append(c.calls, o)
	c.mu.Unlock()
	return []string{o.labels["app"]}, nil
}

func TestUpdateWithUnchangedIndexValuesDoesNoIndexWork(t *testing.T) {
	var c countingIndex
	ix := New(MetaNamespaceKeyFunc[*testObj], Indexers[*testObj]{"app": c.fn})
	s := ix.(*store[*testObj])
	mustAdd(t, ix, obj("a", "1", "web"), obj("a", "2", "web"))
	set := s.sets[0]["web"]
	small := slices.Clone(set.small)
	stored := s.slab.at(s.keys["a/1"]).vals.at(0)

	c.calls = nil
	nw := obj("a", "1", "web")
	nw.rv = "2"
	if err := ix.Update(nw); err != nil {
		t.Fatal(err)
	}
	// The index function ran once, on the new object only.
	if len(c.calls) != 1 || c.calls[0] != nw {
		t.Fatalf("index function calls = %v, want just the new object", c.calls)
	}
	// The set is the same set with the same members in the same order, and the entry still
	// holds the same interned values slice.
	if s.sets[0]["web"] != set || !slices.Equal(set.small, small) {
		t.Fatal("the index set was rebuilt")
	}
	if got := s.slab.at(s.keys["a/1"]).vals.at(0); &got[0] != &stored[0] || &got[0] != &set.one[0] {
		t.Fatal("the stored values were replaced by the new, equal, values")
	}
}

func TestUpdateAndDeleteNeverCallIndexFuncsOnTheOldObject(t *testing.T) {
	var c countingIndex
	ix := New(MetaNamespaceKeyFunc[*testObj], Indexers[*testObj]{"app": c.fn})
	old := obj("a", "1", "web")
	mustAdd(t, ix, old)
	c.calls = nil
	mustAdd(t, ix, obj("a", "1", "db"))
	if err := ix.Delete(obj("a", "1", "other")); err != nil {
		t.Fatal(err)
	}
	for _, o := range c.calls {
		if o == old {
			t.Fatal("index function called on the old object")
		}
	}
	if len(c.calls) != 1 {
		t.Fatalf("calls = %d, want 1 (the new object of the update)", len(c.calls))
	}
	wantValues(t, ix, "app")
}

func TestSingleValuesAreInterned(t *testing.T) {
	ix := newTestIndexer(nil)
	mustAdd(t, ix, obj("a", "1", "web"), obj("b", "2", "web"))
	s := ix.(*store[*testObj])
	p := s.defs.Load().pos["app"]
	v1 := s.slab.at(s.keys["a/1"]).vals.at(p)
	v2 := s.slab.at(s.keys["b/2"]).vals.at(p)
	if &v1[0] != &v2[0] {
		t.Fatal("two objects with the single value \"web\" hold different slices")
	}
}

func TestMultiValuedIndexWithRepeatedValues(t *testing.T) {
	ix := newTestIndexer(Indexers[*testObj]{"tags": tagsIndex})
	a := &testObj{ns: "n", name: "a", tags: []string{"x", "y", "x"}}
	b := &testObj{ns: "n", name: "b", tags: []string{"y"}}
	mustAdd(t, ix, a, b)
	wantByIndex(t, ix, "tags", "x", "n/a")
	wantByIndex(t, ix, "tags", "y", "n/a", "n/b")
	got, err := ix.Index("tags", &testObj{tags: []string{"x", "y", "z"}})
	if err != nil {
		t.Fatal(err)
	}
	if g := keysOf(t, got); !slices.Equal(g, []string{"n/a", "n/b"}) {
		t.Fatalf("Index = %v, want each object once", g)
	}
	if err := ix.Update(&testObj{ns: "n", name: "a", tags: []string{"z"}}); err != nil {
		t.Fatal(err)
	}
	wantValues(t, ix, "tags", "y", "z")
	if err := ix.Delete(a); err != nil {
		t.Fatal(err)
	}
	wantValues(t, ix, "tags", "y")
}

func TestIndexReturnsObjectsSharingAValueWithTheQueriedObject(t *testing.T) {
	ix := newTestIndexer(nil)
	mustAdd(t, ix, obj("a", "1", "web"), obj("b", "2", "web"), obj("b", "3", "db"))
	got, err := ix.Index("app", obj("zzz", "q", "web"))
	if err != nil {
		t.Fatal(err)
	}
	if g := keysOf(t, got); !slices.Equal(g, []string{"a/1", "b/2"}) {
		t.Fatalf("Index = %v", g)
	}
	got, err = ix.Index("app", obj("zzz", "q", "none"))
	if err != nil || len(got) != 0 {
		t.Fatalf("Index(none) = %v, %v", got, err)
	}
}

func TestIndexWithAFailingIndexFuncReturnsTheError(t *testing.T) {
	ix := newTestIndexer(Indexers[*testObj]{"fragile": fragileIndex})
	q := obj("a", "1", "web")
	q.fail = true
	if _, err := ix.Index("fragile", q); !errors.As(err, new(fragileError)) {
		t.Fatalf("err = %v", err)
	}
}

func TestUnknownIndexIsErrNoSuchIndex(t *testing.T) {
	ix := newTestIndexer(nil)
	mustAdd(t, ix, obj("a", "1", "web"))
	if _, err := ix.ByIndex("nope", "x"); !errors.Is(err, ErrNoSuchIndex) {
		t.Errorf("ByIndex: %v", err)
	}
	if _, err := ix.IndexKeys("nope", "x"); !errors.Is(err, ErrNoSuchIndex) {
		t.Errorf("IndexKeys: %v", err)
	}
	if _, err := ix.Index("nope", obj("a", "1", "web")); !errors.Is(err, ErrNoSuchIndex) {
		t.Errorf("Index: %v", err)
	}
	if err := ix.RangeByIndex("nope", "x", func(string, *testObj) bool { return true }); !errors.Is(err, ErrNoSuchIndex) {
		t.Errorf("RangeByIndex: %v", err)
	}
	if v := ix.ListIndexFuncValues("nope"); v == nil || len(v) != 0 {
		t.Errorf("ListIndexFuncValues = %#v, want an empty slice", v)
	}
}

func TestGetIndexersReturnsACopy(t *testing.T) {
	ix := newTestIndexer(nil)
	got := ix.GetIndexers()
	delete(got, "app")
	got["x"] = appIndex
	if _, ok := ix.GetIndexers()["app"]; !ok {
		t.Fatal("deleting from the copy changed the store")
	}
	if _, ok := ix.GetIndexers()["x"]; ok {
		t.Fatal("adding to the copy changed the store")
	}
}

func TestReplaceRebuildsEveryIndex(t *testing.T) {
	ix := newTestIndexer(nil)
	mustAdd(t, ix, obj("a", "1", "web"), obj("a", "2", "db"))
	n1, n3 := obj("a", "1", "cache"), obj("c", "3", "web")
	if err := ix.Replace([]*testObj{n1, n3}, "42"); err != nil {
		t.Fatal(err)
	}
	if got := sorted(ix.ListKeys()); !slices.Equal(got, []string{"a/1", "c/3"}) {
		t.Fatalf("ListKeys = %v", got)
	}
	if got, _, _ := ix.GetByKey("a/1"); got != n1 {
		t.Fatal("a/1 not replaced")
	}
	wantValues(t, ix, "app", "cache", "web")
	wantByIndex(t, ix, "app", "web", "c/3")
	wantByIndex(t, ix, NamespaceIndex, "a", "a/1")
	if rv := ix.LastSyncResourceVersion(); rv != "42" {
		t.Fatalf("LastSyncResourceVersion = %q", rv)
	}
	// The store keeps working incrementally after a Replace.
	mustAdd(t, ix, obj("c", "4", "web"))
	wantByIndex(t, ix, "app", "web", "c/3", "c/4")
}

func TestReplaceWithADuplicateKeyKeepsTheLastObject(t *testing.T) {
	ix := newTestIndexer(nil)
	first, last := obj("a", "1", "web"), obj("a", "1", "db")
	if err := ix.Replace([]*testObj{first, obj("a", "2", "web"), last}, ""); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := ix.GetByKey("a/1"); got != last {
		t.Fatal("the last duplicate did not win")
	}
	wantByIndex(t, ix, "app", "web", "a/2")
	wantByIndex(t, ix, "app", "db", "a/1")
	if ix.Len() != 2 {
		t.Fatalf("Len = %d", ix.Len())
	}
}

func TestReplaceWithAFailingIndexFuncChangesNothing(t *testing.T) {
	ix := newTestIndexer(Indexers[*testObj]{"fragile": fragileIndex})
	mustAdd(t, ix, obj("a", "1", "web"))
	if err := ix.Replace([]*testObj{obj("a", "1", "web")}, "7"); err != nil {
		t.Fatal(err)
	}
	bad := obj("b", "2", "db")
	bad.fail = true
	err := ix.Replace([]*testObj{obj("c", "3", "x"), bad}, "8")
	var ie *IndexError
	if !errors.As(err, &ie) || ie.Key != "b/2" || ie.Index != "fragile" {
		t.Fatalf("err = %v", err)
	}
	if got := ix.ListKeys(); !slices.Equal(got, []string{"a/1"}) {
		t.Fatalf("ListKeys = %v", got)
	}
	if rv := ix.LastSyncResourceVersion(); rv != "7" {
		t.Fatalf("rv = %q", rv)
	}
	wantValues(t, ix, "app", "web")
}

func TestResyncIsANoop(t *testing.T) {
	ix := newTestIndexer(nil)
	mustAdd(t, ix, obj("a", "1", "web"))
	if err := ix.Resync(); err != nil || ix.Len() != 1 {
		t.Fatalf("Resync = %v, Len = %d", err, ix.Len())
	}
}

func TestUpsertReturnsTheReplacedObject(t *testing.T) {
	ix := newTestIndexer(nil)
	a := obj("a", "1", "web")
	if old, existed, err := ix.Upsert(a); err != nil || existed || old != nil {
		t.Fatalf("first Upsert = %v, %v, %v", old, existed, err)
	}
	if old, existed, err := ix.Upsert(obj("a", "1", "db")); err != nil || !existed || old != a {
		t.Fatalf("second Upsert = %v, %v, %v", old, existed, err)
	}
}

func TestDeleteByKeyReturnsTheRemovedObject(t *testing.T) {
	ix := newTestIndexer(nil)
	a := obj("a", "1", "web")
	mustAdd(t, ix, a)
	if old, ok := ix.DeleteByKey("a/1"); !ok || old != a {
		t.Fatalf("DeleteByKey = %v, %v", old, ok)
	}
	wantValues(t, ix, "app")
}

func TestRangeVisitsEveryObjectAndStopsWhenAsked(t *testing.T) {
	ix := newTestIndexer(nil)
	mustAdd(t, ix, obj("a", "1", "web"), obj("a", "2", "web"), obj("a", "3", "db"))
	var keys []string
	ix.Range(func(k string, o *testObj) bool {
		if k2, _ := MetaNamespaceKeyFunc(o); k2 != k {
			t.Errorf("key %q for object %q", k, k2)
		}
		keys = append(keys, k)
		return true
	})
	if got := sorted(keys); !slices.Equal(got, []string{"a/1", "a/2", "a/3"}) {
		t.Fatalf("Range keys = %v", got)
	}
	n := 0
	ix.Range(func(string, *testObj) bool { n++; return false })
	if n != 1 {
		t.Fatalf("Range continued after false: %d calls", n)
	}
	keys = nil
	if err := ix.RangeByIndex("app", "web", func(k string, _ *testObj) bool { keys = append(keys, k); return true }); err != nil {
		t.Fatal(err)
	}
	if got := sorted(keys); !slices.Equal(got, []string{"a/1", "a/2"}) {
		t.Fatalf("RangeByIndex keys = %v", got)
	}
	n = 0
	_ = ix.RangeByIndex("app", "web", func(string, *testObj) bool { n++; return false })
	if n != 1 {
		t.Fatalf("RangeByIndex continued after false: %d calls", n)
	}
}

func TestSmallSetsGrowIntoMapsAndShrinkBack(t *testing.T) {
	ix := newTestIndexer(nil)
	s := ix.(*store[*testObj])
	var objs []*testObj
	for i := range smallSetMax + 5 {
		o := obj("ns", fmt.Sprint(i), "web")
		objs = append(objs, o)
		mustAdd(t, ix, o)
	}
	p := s.defs.Load().pos["app"]
	if set := s.sets[p]["web"]; set.big == nil || set.len() != smallSetMax+5 {
		t.Fatalf("set of %d members is not a map (len %d)", smallSetMax+5, set.len())
	}
	for _, o := range objs[:len(objs)-3] {
		if err := ix.Delete(o); err != nil {
			t.Fatal(err)
		}
	}
	if set := s.sets[p]["web"]; set.big != nil || set.len() != 3 {
		t.Fatalf("set of 3 members is still a map or has the wrong size %d", set.len())
	}
	var want []string
	for _, o := range objs[len(objs)-3:] {
		want = append(want, "ns/"+o.name)
	}
	wantByIndex(t, ix, "app", "web", want...)
}

func TestMassDeletionCompactsTheSlabAndKeepsTheContent(t *testing.T) {
	ix := newTestIndexer(nil)
	s := ix.(*store[*testObj])
	const n = 4 * compactMinFree
	for i := range n {
		mustAdd(t, ix, obj(fmt.Sprint("ns", i%7), fmt.Sprint(i), fmt.Sprint("app", i%13)))
	}
	for i := range n {
		if i%5 != 0 {
			ix.DeleteByKey(fmt.Sprintf("ns%d/%d", i%7, i))
		}
	}
	if s.slab.len() >= n || len(s.free) >= compactMinFree {
		t.Fatalf("slab not compacted: %d slots, %d free", s.slab.len(), len(s.free))
	}
	for a := range 13 {
		var want []string
		for i := 0; i < n; i += 5 {
			if i%13 == a {
				want = append(want, fmt.Sprintf("ns%d/%d", i%7, i))
			}
		}
		wantByIndex(t, ix, "app", fmt.Sprint("app", a), want...)
	}
	for i := 0; i < n; i += 5 {
		ix.DeleteByKey(fmt.Sprintf("ns%d/%d", i%7, i))
	}
	if ix.Len() != 0 || s.slab.len() != 0 {
		t.Fatalf("after deleting everything: Len %d, slab %d", ix.Len(), s.slab.len())
	}
	wantValues(t, ix, "app")
}

func TestNewPanicsOnANilKeyFuncOrIndexFunc(t *testing.T) {
	for name, f := range map[string]func(){
		"key":   func() { New[*testObj](nil, nil) },
		"index": func() { New(MetaNamespaceKeyFunc[*testObj], Indexers[*testObj]{"x": nil}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestConcurrentWritersReadersAndAddIndexers(t *testing.T) {
	ix := newTestIndexer(nil)
	const writers, perWriter = 4, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				o := obj(fmt.Sprint("ns", w), fmt.Sprint(i), fmt.Sprint("app", i%3))
				if err := ix.Add(o); err != nil {
					t.Error(err)
					return
				}
				if i%4 == 0 {
					ix.DeleteByKey(fmt.Sprintf("ns%d/%d", w, i))
				}
			}
		}()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range 50 {
			_, _ = ix.ByIndex("app", "app1")
			_ = ix.List()
			_ = ix.ListIndexFuncValues(NamespaceIndex)
		}
	}()
	go func() {
		defer wg.Done()
		if err := ix.AddIndexers(Indexers[*testObj]{"name": func(o *testObj) ([]string, error) { return []string{o.name}, nil }}); err != nil {
			t.Error(err)
		}
	}()
	wg.Wait()
	// Whatever the interleaving, every stored object is in the index added concurrently.
	if ix.Len() != writers*perWriter*3/4 {
		t.Fatalf("Len = %d", ix.Len())
	}
	for _, o := range ix.List() {
		keys, err := ix.IndexKeys("name", o.name)
		if err != nil {
			t.Fatal(err)
		}
		k, _ := MetaNamespaceKeyFunc(o)
		if !slices.Contains(keys, k) {
			t.Fatalf("%s missing from the concurrently added index", k)
		}
	}
}

func TestMetaNamespaceIndexFuncSharesOneSlicePerNamespace(t *testing.T) {
	a, _ := MetaNamespaceIndexFunc(obj("interned-ns", "1", ""))
	b, _ := MetaNamespaceIndexFunc(obj("interned-ns", "2", ""))
	if len(a) != 1 || a[0] != "interned-ns" || &a[0] != &b[0] {
		t.Fatalf("values %v and %v are not one shared slice", a, b)
	}
	o := obj("interned-ns", "3", "")
	if n := testing.AllocsPerRun(100, func() { _, _ = MetaNamespaceIndexFunc(o) }); n != 0 {
		t.Fatalf("%v allocations per call", n)
	}
}

func TestReplaceAndDiffReportsDeletionsThenListedObjects(t *testing.T) {
	ix := newTestIndexer(nil)
	a0, b0, c0 := obj("n", "a", "web"), obj("n", "b", "web"), obj("n", "c", "web")
	mustAdd(t, ix, a0, b0, c0)
	a1, d1 := obj("n", "a", "db"), obj("n", "d", "web")
	var got []string
	err := ix.ReplaceAndDiff([]*testObj{d1, a1}, "9", func(c Change[*testObj]) {
		switch {
		case c.Deleted:
			got = append(got, "delete "+c.Key)
			if c.Old == nil || c.New != nil {
				t.Errorf("deletion %+v", c)
			}
		case c.Existed:
			got = append(got, "update "+c.Key)
			if c.Old != a0 || c.New != a1 {
				t.Errorf("update %+v", c)
			}
		default:
			got = append(got, "add "+c.Key)
		}
		// Called without the lock: reading the store must not deadlock.
		_ = ix.Len()
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got[:2])
	if want := []string{"delete n/b", "delete n/c", "add n/d", "update n/a"}; !slices.Equal(got, want) {
		t.Fatalf("changes = %q, want %q", got, want)
	}
	wantByIndex(t, ix, "app", "web", "n/d")
	wantByIndex(t, ix, "app", "db", "n/a")
}

func TestReplaceOfAnUnchangedCollectionUpdatesInPlaceWithoutIndexWork(t *testing.T) {
	var c countingIndex
	ix := New(MetaNamespaceKeyFunc[*testObj], Indexers[*testObj]{"app": c.fn})
	s := ix.(*store[*testObj])
	mustAdd(t, ix, obj("a", "1", "web"), obj("a", "2", "web"))
	set := s.sets[0]["web"]
	id := s.keys["a/1"]
	c.calls = nil
	n1, n2 := obj("a", "1", "web"), obj("a", "2", "web")
	if err := ix.Replace([]*testObj{n1, n2}, "2"); err != nil {
		t.Fatal(err)
	}
	if len(c.calls) != 2 {
		t.Fatalf("index function called %d times, want once per listed object", len(c.calls))
	}
	if s.sets[0]["web"] != set || s.keys["a/1"] != id {
		t.Fatal("the set or the slot changed although nothing indexed did")
	}
	if got, _, _ := ix.GetByKey("a/1"); got != n1 {
		t.Fatal("object not replaced")
	}
}
