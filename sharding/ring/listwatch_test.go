package ring_test

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
	"github.com/informerkit/informerkit/sharding"
	"github.com/informerkit/informerkit/sharding/ring"
)

// shardedInformer runs an informer of configmaps through the replica's ShardedListerWatcher.
func shardedInformer(t *testing.T, srv *apitest.Server, rep *replica) (*informer.Informer[*testobj.ConfigMap], apiclient.ListerWatcher[*testobj.ConfigMap]) {
	t.Helper()
	cfg := srv.Config()
	cfg.WatchProtocol = apiclient.WatchChunked
	cfg.UserAgent = rep.name + "-informer"
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lw := ring.ShardedListerWatcher[*testobj.ConfigMap](apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR).Namespace("default"), rep.ring)
	inf := informer.New(lw, informer.Options[*testobj.ConfigMap]{Logger: slog.New(slog.DiscardHandler)})
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

// waitCaches waits until every informer's cache holds exactly the objects whose uid its
// replica holds.
func waitCaches(t *testing.T, srv *apitest.Server, reps []*replica, infs []*informer.Informer[*testobj.ConfigMap]) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		all, _, err := srv.List("configmaps", "default")
		if err != nil {
			t.Fatal(err)
		}
		ok := true
		var report []string
		for i, rep := range reps {
			var want []string
			for _, o := range all {
				if rep.ring.Owns(sharding.Hash(o.UID())) {
					want = append(want, o.Name())
				}
			}
			var got []string
			for _, o := range infs[i].GetStore().List() {
				got = append(got, o.Name)
			}
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(want, got) {
				ok = false
				report = append(report, fmt.Sprintf("%s caches %d objects, holds %d", rep.name, len(got), len(want)))
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("caches did not follow the ranges within 30s: %v", report)
		}
		tm := time.NewTimer(20 * time.Millisecond)
		<-tm.C
	}
}

// TestShardedInformersFollowTheRing: each replica's informer caches exactly its share,
// with the server selecting (shardSelector honoured) or without (client-side filtering),
// and follows a join.
func TestShardedInformersFollowTheRing(t *testing.T) {
	for _, gate := range []bool{true, false} {
		t.Run(fmt.Sprintf("server-side=%v", gate), func(t *testing.T) {
			srv := apitest.NewServerWithOptions(apitest.Options{NoShardSelector: !gate})
			t.Cleanup(srv.Close)
			for i := range 60 {
				if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("cm-%02d", i)}}); err != nil {
					t.Fatal(err)
				}
			}
			c := newChecker()
			reps := []*replica{startReplica(t, srv, c, "r0"), startReplica(t, srv, c, "r1")}
			waitBalanced(t, reps)
			var infs []*informer.Informer[*testobj.ConfigMap]
			var lws []apiclient.ListerWatcher[*testobj.ConfigMap]
			for _, rep := range reps {
				inf, lw := shardedInformer(t, srv, rep)
				infs, lws = append(infs, inf), append(lws, lw)
			}
			waitCaches(t, srv, reps, infs)

			reps = append(reps, startReplica(t, srv, c, "r2"))
			waitBalanced(t, reps)
			inf, lw := shardedInformer(t, srv, reps[2])
			infs, lws = append(infs, inf), append(lws, lw)
			waitCaches(t, srv, reps, infs)

			// New objects go to their owner's cache only.
			for i := range 20 {
				if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("new-%02d", i)}}); err != nil {
					t.Fatal(err)
				}
			}
			waitCaches(t, srv, reps, infs)

			for i, lw := range lws {
				if got := ring.Supported(lw); got != gate {
					t.Errorf("%s: Supported = %v, want %v", reps[i].name, got, gate)
				}
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
			// The join moved the open watches (a list at their resourceVersion), no relist.
			if moves == 0 {
				t.Error("no watch moved to new ranges with a list at its resourceVersion")
			}
			for i, inf := range infs {
				if st := inf.Stats(); st.Reflector.Lists > 1 {
					t.Errorf("%s: %d lists, want 1 (ranges changes move the watch)", reps[i].name, st.Reflector.Lists)
				}
			}
			if gate && sent == 0 {
				t.Error("no list or watch carried a shardSelector")
			}
			t.Logf("%d configmap requests carried a shardSelector", sent)
		})
	}
}

// TestShardedListerWatcherForwardsDecodeOptions: an informer's decoding options reach the
// Resource under the sharded ListerWatcher (it is DecodeTunable when its base is).
func TestShardedListerWatcherForwardsDecodeOptions(t *testing.T) {
	srv := apitest.NewServer()
	t.Cleanup(srv.Close)
	rep := startReplica(t, srv, newChecker(), "solo")
	c, err := apiclient.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lw := ring.ShardedListerWatcher[*testobj.ConfigMap](apiclient.NewResource[*testobj.ConfigMap](c, testobj.ConfigMapGVR), rep.ring)
	tun, ok := lw.(apiclient.DecodeTunable[*testobj.ConfigMap])
	if !ok {
		t.Fatal("the sharded ListerWatcher of a Resource is not DecodeTunable")
	}
	tuned := tun.WithDecodeOptions(apiclient.DecodeOptions{OmitManagedFields: true})
	if _, ok := tuned.(apiclient.DecodeTunable[*testobj.ConfigMap]); !ok || tuned == lw {
		t.Fatalf("WithDecodeOptions returned %T, the same one: %v", tuned, tuned == lw)
	}
}
