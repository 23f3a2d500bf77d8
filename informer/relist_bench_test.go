package informer

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/reflector"
)

// benchPod declares the fields of a Pod that a typical controller reads: metadata, the
// containers' names, images, ports, env and resources, the node, and the status' phase,
// IP and conditions. Its JSON is about 2.3 KB (about 1.8 KB in the cache after decoding).
type benchPod struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            struct {
		NodeName   string `json:"nodeName,omitempty"`
		Containers []struct {
			Name  string `json:"name"`
			Image string `json:"image"`
			Ports []struct {
				ContainerPort int32  `json:"containerPort"`
				Protocol      string `json:"protocol,omitempty"`
			} `json:"ports,omitempty"`
			Env []struct {
				Name  string `json:"name"`
				Value string `json:"value,omitempty"`
			} `json:"env,omitempty"`
			Resources struct {
				Requests map[string]string `json:"requests,omitempty"`
				Limits   map[string]string `json:"limits,omitempty"`
			} `json:"resources"`
		} `json:"containers"`
	} `json:"spec"`
	Status struct {
		Phase      string `json:"phase,omitempty"`
		PodIP      string `json:"podIP,omitempty"`
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions,omitempty"`
	} `json:"status"`
}

// relistObjects is the size of the collection BenchmarkRelistPeakHeap relists.
const relistObjects = 20000

// benchPodJSON builds pod i of the relist benchmark.
func benchPodJSON(i int) map[string]any {
	env := []any{}
	for k := range 8 {
		env = append(env, map[string]any{"name": fmt.Sprintf("SETTING_%02d", k), "value": fmt.Sprintf("value-%d-%d-abcdefghijklmnop", i, k)})
	}
	container := func(name, image string, port int) map[string]any {
		return map[string]any{
			"name": name, "image": image,
			"ports": []any{map[string]any{"containerPort": port, "protocol": "TCP"}},
			"env":   env,
			"resources": map[string]any{
				"requests": map[string]any{"cpu": "100m", "memory": "128Mi"},
				"limits":   map[string]any{"cpu": "500m", "memory": "512Mi"},
			},
		}
	}
	return map[string]any{
		"metadata": map[string]any{
			"namespace": "default",
			"name":      fmt.Sprintf("web-%05d-x7k2p", i),
			"labels":    map[string]any{"app": "web", "shard": strconv.Itoa(i % 16), "pod-template-hash": "5d8f7c9b4"},
			"annotations": map[string]any{
				"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z",
				"prometheus.io/scrape":              "true",
			},
			"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d8f7c9b4",
				"uid": fmt.Sprintf("0000%04x-aaaa-bbbb-cccc-ddddeeeeffff", i%16), "controller": true}},
		},
		"spec": map[string]any{
			"nodeName":   fmt.Sprintf("node-%03d", i%100),
			"containers": []any{container("web", "registry.example.com/web:1.2.3", 8080), container("sidecar", "registry.example.com/proxy:4.5.6", 15001)},
		},
		"status": map[string]any{
			"phase": "Running",
			"podIP": fmt.Sprintf("10.%d.%d.%d", 64+i>>16, i>>8&0xff, i&0xff),
			"conditions": []any{
				map[string]any{"type": "Initialized", "status": "True"}, map[string]any{"type": "Ready", "status": "True"},
				map[string]any{"type": "ContainersReady", "status": "True"}, map[string]any{"type": "PodScheduled", "status": "True"},
			},
		},
	}
}

// relistServer starts an apitest server holding the relistObjects pods.
func relistServer(b *testing.B) *apitest.Server {
	s, err := apitest.Start(apitest.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	for i := range relistObjects {
		if _, err := s.Create("pods", benchPodJSON(i)); err != nil {
			s.Close()
			b.Fatal(err)
		}
	}
	return s
}

// heapProbe records the largest live heap seen: sample forces a GC and reads the heap, so
// what it sees is live memory, not garbage waiting for collection. Samples taken on the
// reflector's goroutine (at queued objects) and by the background sampler are kept apart:
// while the sampler's GC runs, the reflector goes on decoding, and what it allocates
// meanwhile counts as live for that cycle (floating garbage), so the sampler's figure is an
// upper bound; at queued objects the reflector is paused.
type heapProbe struct {
	mu                    sync.Mutex
	on                    bool
	atObjects, bySampling uint64
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func (p *heapProbe) sample(atObject bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.on {
		return
	}
	if h := liveHeap(); atObject {
		p.atObjects = max(p.atObjects, h)
	} else {
		p.bySampling = max(p.bySampling, h)
	}
}

func (p *heapProbe) start() {
	p.mu.Lock()
	p.on, p.atObjects, p.bySampling = true, 0, 0
	p.mu.Unlock()
}

func (p *heapProbe) stop() (atObjects, bySampling uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.on = false
	return p.atObjects, p.bySampling
}

// BenchmarkRelistPeakHeap measures how much live heap an informer needs, on top of its steady
// state, while it relists relistObjects pod-sized objects (benchPod) from an in-process
// apitest server: the figure peak-extra/cache is (peak live heap during the relist − live
// heap before it) / (live heap of the synced informer − live heap before the informer
// started), i.e. the relist's extra memory as a fraction of the cache. With the whole-list
// Replace (client-go's way, incremental=off) it is more than the cache: the decoded list (and,
// for an unpaged LIST, the whole response body while it is decoded) before the transform and
// structural sharing shrink each object. With the incremental relist (the default) it is
// the set of listed keys plus a few objects in flight.
//
// changed=none relists the objects the cache holds; changed=all first updates every pod
// while the informer's watch is stalled, so that the relist finds every object changed
// (the worst case, as after a long outage): the incremental relist then
// holds every changed object, transformed and shared, until the list completes, since a
// list that fails must change nothing (unchanged objects are not held at all).
//
// Each iteration forces a relist at the last resourceVersion with an ERROR 410 on the watch
// (as compaction does): an unpaged LIST (client-go's relist), a paged LIST (limit 500, as on
// a server without a watch cache), or a streaming list (WatchList). The live heap is sampled
// at every 250th listed object, with the reflector paused (where the incremental relist
// receives it, or where a whole-list Replace transforms it: peak-extra-at-objects-MiB), and
// by back-to-back forced GCs in the background, which
// catch moments no object is queued, such as a whole LIST body being decoded, but count what
// the reflector allocates during each GC cycle as live (an upper bound; peak-extra-MiB is
// the larger of the two). The apitest server's own memory is part of the heap, in the steady
// state as during the relist: it has encoded every object before the figures (encodePods), a
// LIST snapshot is a slice of pointers to stored objects, and it writes a list body item by
// item (a body built whole would be counted as the informer's).
// sharing=off turns the informer's structural sharing off (Options.DisableSharing): a cache
// about three times larger.
//
// Run with -benchtime=1x -count=5 and take medians (bench/README.md, "Relist memory"). RELIST_VERBOSE=1 logs each iteration.
func BenchmarkRelistPeakHeap(b *testing.B) {
	s := relistServer(b)
	defer s.Close()
	protocols := []struct {
		name      string
		watchList reflector.WatchListMode
		pageSize  int64
	}{
		{"list-unpaged", reflector.WatchListOff, 0},
		{"list-paged", reflector.WatchListOff, reflector.DefaultPageSize},
		{"watchlist", reflector.WatchListOn, 0},
	}
	onOff := map[bool]string{true: "on", false: "off"}
	for _, changed := range []bool{false, true} {
		for _, sharing := range []bool{true, false} {
			for _, p := range protocols {
				for _, incremental := range []bool{true, false} {
					name := fmt.Sprintf("changed=%s/sharing=%s/protocol=%s/incremental=%s",
						map[bool]string{false: "none", true: "all"}[changed], onOff[sharing], p.name, onOff[incremental])
					b.Run(name, func(b *testing.B) { benchRelistPeakHeap(b, s, p.watchList, p.pageSize, incremental, sharing, changed) })
				}
			}
		}
	}
}

// changeRounds counts the calls of changeAllWhileNotWatching in the process: each gives
// every pod a podIP it did not have in the call before (with -benchtime=1x every run is
// iteration 0, so the iteration cannot tell them apart).
var changeRounds int

// changedPodIP is pod i's podIP after change round round.
func changedPodIP(round, i int) string {
	return fmt.Sprintf("172.%d.%d.%d", 16+round%16, i>>8&0xff, i&0xff)
}

// changeAllWhileNotWatching makes the next relist find every object changed: the informer's
// watch is stalled (open, silent) while every pod is updated and the history compacted, so
// the informer hears none of it; the ERROR 410 that follows makes it relist. It returns the
// stall's release and the podIP pod 0 has now.
func changeAllWhileNotWatching(b *testing.B, s *apitest.Server) (release func(), podIP0 string) {
	round := changeRounds
	changeRounds++
	release, n, err := s.Faults().StallWatches("pods", 0)
	if err != nil || n != 1 {
		b.Fatalf("StallWatches: %d, %v", n, err)
	}
	for i := range relistObjects {
		if _, err := s.Mutate("pods", "default", fmt.Sprintf("web-%05d-x7k2p", i), func(o apitest.Object) {
			o["status"].(map[string]any)["podIP"] = changedPodIP(round, i)
		}); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Compact("pods"); err != nil {
		b.Fatal(err)
	}
	return release, changedPodIP(round, 0)
}

// encodePods lists every pod once, so that the server has encoded each (apitest keeps an
// object's encodings from its first use): the relist's figures must not count the server's
// work, nor the cache's (before) the server's encodings of the first list.
func encodePods(b *testing.B, pods *apiclient.Resource[*benchPod]) {
	if _, err := pods.ListEach(context.Background(), apiclient.ListOptions{}, func(*benchPod) error { return nil }); err != nil {
		b.Fatal(err)
	}
}

func benchRelistPeakHeap(b *testing.B, s *apitest.Server, watchList reflector.WatchListMode, pageSize int64, incremental, sharing, changed bool) {
	c, err := apiclient.New(s.Config())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	pods := apiclient.NewResource[*benchPod](c, meta.GroupVersionResource{Version: "v1", Resource: "pods"})
	encodePods(b, pods)
	before := liveHeap()

	probe := &heapProbe{}
	var queued atomic.Int64
	inf := New(pods, Options[*benchPod]{
		WatchList:                watchList,
		PageSize:                 pageSize,
		disableIncrementalRelist: !incremental,
		DisableSharing:           !sharing,
		MinWatchTimeout:          time.Hour,
		StallTimeout:             -1,
		Logger:                   slog.New(slog.DiscardHandler),
	})
	// The heap is sampled at every 250th listed object, with the reflector paused: where the
	// incremental relist receives it (before it is kept or held), or where a whole-list
	// Replace transforms it.
	sampleAtObject := func() {
		if queued.Add(1)%250 == 0 {
			probe.sample(true)
		}
	}
	if incremental {
		relistAdded = sampleAtObject
		defer func() { relistAdded = nil }()
	}
	if err := inf.SetTransform(func(o *benchPod) (*benchPod, error) {
		if !incremental {
			sampleAtObject()
		}
		return DropManagedFields(o)
	}); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		<-inf.Done()
	}()
	go inf.Run(ctx)
	<-inf.Synced()
	// waitDrained waits until the reflector has completed lists lists and the informer has
	// processed everything queued (polled: the benchmark has nothing to wait on).
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	waitDrained := func(lists uint64) {
		for {
			if st := inf.Stats(); st.Reflector.Lists >= lists && st.Queued == 0 && st.Cached == relistObjects {
				return
			}
			<-tick.C
		}
	}
	waitDrained(1)
	base := liveHeap()
	cache := float64(base - before)

	var worst, worstAtObjects uint64
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		lists := inf.Stats().Reflector.Lists
		if _, err := s.WaitForWatches(ctx, "pods", 1); err != nil {
			b.Fatal(err)
		}
		release, podIP0 := func() {}, ""
		if changed {
			release, podIP0 = changeAllWhileNotWatching(b, s)
			encodePods(b, pods)
		}
		base = liveHeap()
		probe.start()
		done := make(chan struct{})
		sampler := make(chan struct{})
		go func() {
			defer close(sampler)
			for {
				select {
				case <-done:
					return
				default:
					probe.sample(false)
				}
			}
		}()
		b.StartTimer()
		if n, err := s.Faults().ExpireWatches("pods"); err != nil || n != 1 {
			b.Fatalf("ExpireWatches: %d, %v", n, err)
		}
		waitDrained(lists + 1)
		release()
		b.StopTimer()
		// The relist must have found the objects changed (and the cache hold the new state).
		if p, ok, _ := inf.GetStore().GetByKey("default/web-00000-x7k2p"); changed && (!ok || p.Status.PodIP != podIP0) {
			b.Fatalf("after the relist pod 0 is %v (found %v), want podIP %s", p, ok, podIP0)
		}
		close(done)
		<-sampler
		atObjects, bySampling := probe.stop()
		above := func(h uint64) uint64 { return max(h, base) - base }
		worst = max(worst, above(atObjects), above(bySampling))
		worstAtObjects = max(worstAtObjects, above(atObjects))
		if os.Getenv("RELIST_VERBOSE") != "" {
			b.Logf("iteration %d: base %.1f MiB, extra at objects %.1f MiB, by sampling %.1f MiB, cache %.1f MiB",
				i, mib(base), mib(above(atObjects)), mib(above(bySampling)), cache/(1<<20))
		}
		b.StartTimer()
	}
	b.StopTimer()
	if st := inf.Stats(); st.Reflector.Relists < uint64(b.N) || st.Cached != relistObjects {
		b.Fatalf("stats %+v", st)
	}
	if got := inf.incrementalLists.Load() != 0; got != incremental {
		b.Fatalf("incremental lists: %d, want incremental=%v", inf.incrementalLists.Load(), incremental)
	}
	b.ReportMetric(mib(worst), "peak-extra-MiB")
	b.ReportMetric(mib(worstAtObjects), "peak-extra-at-objects-MiB")
	b.ReportMetric(cache/(1<<20), "cache-MiB")
	b.ReportMetric(float64(worst)/cache, "peak-extra/cache")
	b.ReportMetric(float64(worst)/relistObjects, "extra-B/obj")
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }
