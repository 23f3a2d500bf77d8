package informer

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/sharding"
	"github.com/informerkit/informerkit/sharding/listwatch"
)

// fixedShare is a listwatch.Share that holds the same ranges for ever.
type fixedShare struct {
	held    []sharding.Range
	once    sync.Once
	changed chan struct{}
}

func (s *fixedShare) Snapshot() ([]sharding.Range, <-chan struct{}) {
	s.once.Do(func() { s.changed = make(chan struct{}) })
	return s.held, s.changed
}

// Shard makes every informer of the resource, whatever its namespace or selectors, cache only
// the share; other resources are untouched; Lookup finds the sharded informer.
func TestFactoryShardsAResource(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	var all []string
	for i := range 40 {
		o := mkCM(t, s, "default", fmt.Sprintf("cm-%02d", i), nil)
		all = append(all, o.UID())
	}
	f := testFactory(t, c, FactoryOptions{})
	share := &fixedShare{held: []sharding.Range{{Start: 0, End: 1 << 63}}}
	if err := f.Shard(testobj.ConfigMapGVR, share, listwatch.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := f.Shard(testobj.ConfigMapGVR, share, listwatch.Options{Field: sharding.FieldUID}); err != nil {
		t.Fatalf("sharding again the same way: %v", err)
	}
	cms := InformerFor[*testobj.ConfigMap](f, testobj.ConfigMapGVR)
	selected := InformerForWithOptions[*testobj.ConfigMap](f, testobj.ConfigMapGVR, InformerForOptions{LabelSelector: labels.MustParse("!missing")})
	if got, ok := Lookup[*testobj.ConfigMap](f, testobj.ConfigMapGVR); !ok || got != cms {
		t.Fatal("Lookup does not find the sharded informer")
	}
	if !strings.HasSuffix(cms.Name(), "sharded by uid") {
		t.Errorf("Name() = %q, want it to say it is sharded", cms.Name())
	}
	ctx := ctxT(t)
	f.Start(ctx)
	if err := f.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, uid := range all {
		if share.held[0].Contains(sharding.Hash(uid)) {
			want = append(want, uid)
		}
	}
	slices.Sort(want)
	for _, inf := range []*Informer[*testobj.ConfigMap]{cms, selected} {
		var got []string
		for _, o := range inf.GetStore().List() {
			got = append(got, o.UID)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s caches %d objects, want the %d of its share", inf.Name(), len(got), len(want))
		}
	}
	if len(want) == 0 || len(want) == len(all) {
		t.Fatalf("the share holds %d of %d objects: the test shows nothing", len(want), len(all))
	}
	if _, _, ok := f.Sharded(testobj.PodGVR); ok {
		t.Error("pods are sharded")
	}
}

// Shard refuses a resource whose informers exist already, and a second sharding that differs.
func TestFactoryShardConflicts(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	f := testFactory(t, c, FactoryOptions{})
	share := &fixedShare{}
	InformerFor[*testobj.Pod](f, testobj.PodGVR)
	if err := f.Shard(testobj.PodGVR, share, listwatch.Options{}); !errors.Is(err, ErrShardConflict) {
		t.Errorf("sharding a resource with an informer: %v, want ErrShardConflict", err)
	} else {
		t.Log(err)
	}
	if err := f.Shard(testobj.ConfigMapGVR, share, listwatch.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		share listwatch.Share
		opts  listwatch.Options
	}{
		{&fixedShare{}, listwatch.Options{}},
		{share, listwatch.Options{ByOwner: true}},
		{share, listwatch.Options{Field: sharding.FieldNamespace}},
	} {
		if err := f.Shard(testobj.ConfigMapGVR, tc.share, tc.opts); !errors.Is(err, ErrShardConflict) {
			t.Errorf("sharding again with %+v: %v, want ErrShardConflict", tc.opts, err)
		}
	}
	if err := f.Shard(testobj.WidgetGVR, share, listwatch.Options{Field: "spec.x"}); err == nil || errors.Is(err, ErrShardConflict) {
		t.Errorf("bad options: %v", err)
	}
}
