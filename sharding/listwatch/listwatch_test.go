package listwatch_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/sharding"
	"github.com/informerkit/informerkit/sharding/listwatch"
)

// share is a Share the test moves by hand.
type share struct {
	mu      sync.Mutex
	held    []sharding.Range
	changed chan struct{}
}

func newShare(held ...sharding.Range) *share { return &share{held: held, changed: make(chan struct{})} }

func (s *share) Snapshot() ([]sharding.Range, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.held), s.changed
}

func (s *share) set(held ...sharding.Range) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = held
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *share) holds(h uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.held, func(r sharding.Range) bool { return r.Contains(h) })
}

var (
	lower = sharding.Range{Start: 0, End: 1 << 63}
	upper = sharding.Range{Start: 1 << 63, End: 0}
)

// run runs an informer of T over New(Resource of gvr in "default", sh, opts).
func run[T meta.Object](t *testing.T, srv *apitest.Server, gvrRes string, sh listwatch.Share, opts listwatch.Options) (*informer.Informer[T], apiclient.ListerWatcher[T]) {
	t.Helper()
	cfg := srv.Config()
	cfg.WatchProtocol = apiclient.WatchChunked
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gvr := testobj.ConfigMapGVR
	if gvrRes == "pods" {
		gvr = testobj.PodGVR
	}
	lw, err := listwatch.New[T](apiclient.NewResource[T](c, gvr), sh, opts)
	if err != nil {
		t.Fatal(err)
	}
	// Transforms write to the objects they are given: a move must never hand over the
	// cache's own objects (its DELETED events carry copies).
	var inf *informer.Informer[T]
	ready := make(chan struct{})
	inf = informer.New(lw, informer.Options[T]{Logger: slog.New(slog.DiscardHandler), Transform: func(o T) (T, error) {
		<-ready
		if cached, ok, _ := inf.GetStore().GetByKey(o.GetNamespace() + "/" + o.GetName()); ok && any(cached) == any(o) {
			t.Errorf("the transform was given the cached %s/%s", o.GetNamespace(), o.GetName())
		}
		return o, nil
	}})
	close(ready)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { inf.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		c.Close()
	})
	return inf, lw
}

// waitCache waits until the informer holds exactly the server's objects of resource for which
// want is true.
func waitCache[T meta.Object](t *testing.T, srv *apitest.Server, resource string, inf *informer.Informer[T], want func(o apitest.Object) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		all, _, err := srv.List(resource, "")
		if err != nil {
			t.Fatal(err)
		}
		var exp, got []string
		for _, o := range all {
			if want(o) {
				exp = append(exp, o.Namespace()+"/"+o.Name())
			}
		}
		for _, o := range inf.GetStore().List() {
			got = append(got, o.GetNamespace()+"/"+o.GetName())
		}
		slices.Sort(exp)
		slices.Sort(got)
		if slices.Equal(exp, got) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cache holds %d objects, want %d:\n got %v\nwant %v", len(got), len(exp), got, exp)
		}
		tm := time.NewTimer(20 * time.Millisecond)
		<-tm.C
	}
}

func createConfigMaps(t *testing.T, srv *apitest.Server, ns, prefix string, n int) {
	t.Helper()
	for i := range n {
		if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": ns, "name": fmt.Sprintf("%s-%02d", prefix, i)}}); err != nil {
			t.Fatal(err)
		}
	}
}

// An informer over New caches exactly the objects whose uid the share holds, with the server
// selecting (shardSelector honoured) or without (client-side filtering), follows the share
// as it moves without a relist, and sees new objects of its share only.
func TestInformerCachesTheShareAndFollowsIt(t *testing.T) {
	for _, gate := range []bool{true, false} {
		t.Run(fmt.Sprintf("server-side=%v", gate), func(t *testing.T) {
			srv := apitest.NewServerWithOptions(apitest.Options{NoShardSelector: !gate})
			t.Cleanup(srv.Close)
			createConfigMaps(t, srv, "default", "cm", 60)
			sh := newShare(lower)
			inf, lw := run[*testobj.ConfigMap](t, srv, "configmaps", sh, listwatch.Options{})
			mine := func(o apitest.Object) bool { return sh.holds(sharding.Hash(o.UID())) }
			waitCache(t, srv, "configmaps", inf, mine)

			sh.set(upper) // everything moves
			waitCache(t, srv, "configmaps", inf, mine)
			sh.set() // nothing held
			waitCache(t, srv, "configmaps", inf, mine)
			sh.set(lower, upper)
			createConfigMaps(t, srv, "default", "new", 20)
			waitCache(t, srv, "configmaps", inf, mine)
			sh.set(sharding.Range{Start: 1 << 62, End: 3 << 62})
			waitCache(t, srv, "configmaps", inf, mine)

			if got := listwatch.Supported(lw); got != gate {
				t.Errorf("Supported = %v, want %v", got, gate)
			}
			sent, moves := 0, 0
			for _, r := range srv.RequestsMatching(apitest.RequestFilter{Resource: "configmaps"}) {
				if r.Query.Get("shardSelector") != "" {
					sent++
				}
				if r.Query.Get("resourceVersionMatch") == "Exact" {
					moves++
				}
			}
			if moves < 4 {
				t.Errorf("%d watches moved with a list at their resourceVersion, want 4", moves)
			}
			if st := inf.Stats(); st.Reflector.Lists != 1 {
				t.Errorf("%d lists, want 1 (changes of the share move the watch)", st.Reflector.Lists)
			}
			// Without the gate, only the probe carries one.
			if gate && sent < 2 || !gate && sent != 1 {
				t.Errorf("%d requests carried a shardSelector (server-side: %v)", sent, gate)
			}
		})
	}
}

// With FieldNamespace, a namespace's objects are all cached or none.
func TestShardByNamespace(t *testing.T) {
	srv := apitest.NewServer()
	t.Cleanup(srv.Close)
	var nss []string
	for i := range 8 {
		ns := fmt.Sprintf("team-%c", 'a'+i*3)
		nss = append(nss, ns)
		if _, err := srv.Create("namespaces", map[string]any{"metadata": map[string]any{"name": ns}}); err != nil {
			t.Fatal(err)
		}
		createConfigMaps(t, srv, ns, "cm", 3)
	}
	sh := newShare(lower)
	inf, _ := run[*testobj.ConfigMap](t, srv, "configmaps", sh, listwatch.Options{Field: sharding.FieldNamespace})
	mine := func(o apitest.Object) bool { return sh.holds(sharding.Hash(o.Namespace())) }
	waitCache(t, srv, "configmaps", inf, mine)
	sh.set(upper)
	waitCache(t, srv, "configmaps", inf, mine)
	in := 0
	for _, ns := range nss {
		if sh.holds(sharding.Hash(ns)) {
			in++
		}
	}
	if in == 0 || in == len(nss) {
		t.Logf("all or none of the namespaces in the upper half (%d of %d): the test shows less", in, len(nss))
	}
}

// With ByOwner, children are placed by their controller owner's uid (their own uid without
// one), filtered on the client even where the server selects.
func TestShardByOwner(t *testing.T) {
	srv := apitest.NewServer()
	t.Cleanup(srv.Close)
	var owners []string
	for i := range 10 {
		o, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": fmt.Sprintf("owner-%02d", i)}})
		if err != nil {
			t.Fatal(err)
		}
		owners = append(owners, o.UID())
		for j := range 3 {
			ref := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": o.Name(), "uid": o.UID(), "controller": j != 2}
			if _, err := srv.Create("pods", map[string]any{"metadata": map[string]any{"namespace": "default",
				"name": fmt.Sprintf("pod-%02d-%d", i, j), "ownerReferences": []any{ref}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	sh := newShare(lower)
	inf, lw := run[*testobj.Pod](t, srv, "pods", sh, listwatch.Options{ByOwner: true})
	mine := func(o apitest.Object) bool {
		var i, j int
		if _, err := fmt.Sscanf(o.Name(), "pod-%02d-%d", &i, &j); err != nil {
			t.Fatalf("pod %s", o.Name())
		}
		if j == 2 { // not a controller reference: placed by its own uid
			return sh.holds(sharding.Hash(o.UID()))
		}
		return sh.holds(sharding.Hash(owners[i]))
	}
	waitCache(t, srv, "pods", inf, mine)
	sh.set(upper)
	waitCache(t, srv, "pods", inf, mine)
	if listwatch.Supported(lw) {
		t.Error("Supported with ByOwner: the server cannot select by owner")
	}
	for _, r := range srv.RequestsMatching(apitest.RequestFilter{Resource: "pods"}) {
		if r.Query.Get("shardSelector") != "" {
			t.Fatalf("a request carried a shardSelector with ByOwner: %s", r.Query)
		}
	}
}

// New refuses options it cannot honour, with the reason.
func TestNewValidates(t *testing.T) {
	srv := apitest.NewServer()
	t.Cleanup(srv.Close)
	c, err := apiclient.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	type bare struct{ meta.Object } // no GetUID
	for _, tc := range []struct {
		name string
		err  func() error
	}{
		{"bad field", func() error {
			_, err := listwatch.New(apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR), newShare(), listwatch.Options{Field: "spec.x"})
			return err
		}},
		{"by owner on namespaces", func() error {
			_, err := listwatch.New(apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR), newShare(), listwatch.Options{Field: sharding.FieldNamespace, ByOwner: true})
			return err
		}},
		{"no uid", func() error {
			_, err := listwatch.New(apiclient.NewResource[bare](c, testobj.ConfigMapGVR), newShare(), listwatch.Options{})
			return err
		}},
	} {
		if err := tc.err(); err == nil {
			t.Errorf("%s: no error", tc.name)
		} else {
			t.Logf("%s: %v", tc.name, err)
		}
	}
	// A type without a uid can be sharded by namespace.
	if _, err := listwatch.New(apiclient.NewResource[bare](c, testobj.ConfigMapGVR), newShare(), listwatch.Options{Field: sharding.FieldNamespace}); err != nil {
		t.Errorf("by namespace: %v", err)
	}
}

// An informer's decoding options reach the Resource under the sharded ListerWatcher (it is
// DecodeTunable when its base is).
func TestForwardsDecodeOptions(t *testing.T) {
	srv := apitest.NewServer()
	t.Cleanup(srv.Close)
	c, err := apiclient.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lw, err := listwatch.New(apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR), newShare(upper), listwatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tun, ok := lw.(apiclient.DecodeTunable[*testobj.ConfigMap])
	if !ok {
		t.Fatal("the sharded ListerWatcher of a Resource is not DecodeTunable")
	}
	tuned := tun.WithDecodeOptions(apiclient.DecodeOptions{OmitManagedFields: true})
	if _, ok := tuned.(apiclient.DecodeTunable[*testobj.ConfigMap]); !ok || tuned == lw {
		t.Fatalf("WithDecodeOptions returned %T, the same one: %v", tuned, tuned == lw)
	}
}
