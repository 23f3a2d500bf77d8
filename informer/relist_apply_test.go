package informer

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/informerkit/informerkit/deltafifo"
	"github.com/informerkit/informerkit/indexer"
	"github.com/informerkit/informerkit/internal/testobj"
)

// tapped is an informer over cache that records every notification it distributes, for the
// relist application's own tests.
func tapped(cache indexer.Indexer[*testobj.ConfigMap]) (*Informer[*testobj.ConfigMap], *[]string) {
	var got []string
	inf := &Informer[*testobj.ConfigMap]{name: "test", cache: cache}
	inf.tap = func(key string, n notification[*testobj.ConfigMap]) {
		switch n.kind {
		case kindDelete:
			got = append(got, fmt.Sprintf("delete %s@%s unknown=%v", key, n.old.ResourceVersion, n.unknown))
		case kindUpdate:
			got = append(got, fmt.Sprintf("update %s %s->%s", key, n.old.ResourceVersion, n.new.ResourceVersion))
		default:
			got = append(got, fmt.Sprintf("add %s@%s", key, n.new.ResourceVersion))
		}
	}
	return inf, &got
}

func relistCM(name, rv string) *testobj.ConfigMap {
	o := testobj.NewConfigMap("ns", name, nil)
	o.ResourceVersion = rv
	return o
}

func cacheOf(objs ...*testobj.ConfigMap) indexer.Indexer[*testobj.ConfigMap] {
	ix := indexer.New(indexer.MetaNamespaceKeyFunc[*testobj.ConfigMap], nil)
	for _, o := range objs {
		_ = ix.Add(o)
	}
	return ix
}

// An atomic relist: tombstones first for the keys the list lacks, then each listed object
// in list order (a key listed twice twice, the second with the first as old); a failing key
// function changes and notifies nothing.
func TestApplyReplacedAll(t *testing.T) {
	cache := cacheOf(relistCM("a", "1"), relistCM("b", "1"))
	inf, got := tapped(cache)
	if err := inf.applyReplacedAll(&deltafifo.ReplacedAllInfo[*testobj.ConfigMap]{ResourceVersion: "9",
		Objects: []*testobj.ConfigMap{relistCM("a", "2"), relistCM("c", "2"), relistCM("c", "3")}}, false); err != nil {
		t.Fatal(err)
	}
	if want := []string{"delete ns/b@1 unknown=true", "update ns/a 1->2", "add ns/c@2", "update ns/c 2->3"}; !slices.Equal(*got, want) {
		t.Fatalf("notified %q, want %q", *got, want)
	}
	if cache.Len() != 2 || cache.LastSyncResourceVersion() != "9" {
		t.Fatalf("cache %v at %s", cache.ListKeys(), cache.LastSyncResourceVersion())
	}
	*got = nil
	if err := inf.applyReplacedAll(&deltafifo.ReplacedAllInfo[*testobj.ConfigMap]{Objects: []*testobj.ConfigMap{relistCM("d", "1"), nil}}, false); err == nil {
		t.Fatal("no error for a nil object")
	}
	if len(*got) != 0 || cache.Len() != 2 {
		t.Fatalf("a failed relist changed the cache (%v) or notified %q", cache.ListKeys(), *got)
	}
}

// An incremental relist: a chunk stores and notifies every object the cache accepts and
// reports those it refuses (an index function failing), deleting nothing; the end deletes
// what the list did not have, as tombstones.
func TestApplyIncrementalRelist(t *testing.T) {
	boom := errors.New("bad index value")
	cache := indexer.New(indexer.MetaNamespaceKeyFunc[*testobj.ConfigMap], indexer.Indexers[*testobj.ConfigMap]{"by-name": func(o *testobj.ConfigMap) ([]string, error) {
		if o.Name == "bad" {
			return nil, boom
		}
		return []string{o.Name}, nil
	}})
	_ = cache.Add(relistCM("a", "1"))
	_ = cache.Add(relistCM("gone", "1"))
	inf, got := tapped(cache)
	err := inf.applyReplacedChunk(&deltafifo.ReplacedChunkInfo[*testobj.ConfigMap]{
		Objects: []*testobj.ConfigMap{relistCM("a", "2"), relistCM("bad", "1"), relistCM("c", "1")}, Keys: []string{"ns/a", "ns/bad", "ns/c"}}, false)
	if !errors.Is(err, boom) {
		t.Fatalf("chunk: %v, want the index error", err)
	}
	if want := []string{"update ns/a 1->2", "add ns/c@1"}; !slices.Equal(*got, want) || cache.Len() != 3 {
		t.Fatalf("chunk notified %q (want %q), cache %v", *got, want, cache.ListKeys())
	}
	*got = nil
	inf.applyReplacedEnd(&deltafifo.ReplacedEndInfo{ResourceVersion: "7", Keys: map[string]struct{}{"ns/a": {}, "ns/bad": {}, "ns/c": {}}})
	if want := []string{"delete ns/gone@1 unknown=true"}; !slices.Equal(*got, want) {
		t.Fatalf("end notified %q, want %q", *got, want)
	}
	if keys := cache.ListKeys(); len(keys) != 2 {
		t.Fatalf("cache %v", keys)
	}
}
