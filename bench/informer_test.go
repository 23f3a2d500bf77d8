package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/informerkit/informerkit/meta"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/informer"
)

// Shared informer benchmarks: informerkit's informer.Informer and client-go's
// SharedIndexInformer (from informers.NewSharedInformerFactory, client-go v0.37.2 defaults:
// WatchList, RealFIFO) over the same in-process apitest server, in one process.
//
//   - BenchmarkInformerSync: time from Run to HasSynced for syncObjects pods (the pods of
//     syncDeployments Deployments of fleetReplicas replicas, see fleetPod: ~6 KB of JSON
//     each), and the live heap the synced informer holds per cached object (runtime.GC,
//     HeapAlloc delta / objects).
//   - BenchmarkInformerEvents: watch events delivered to a handler per second. The
//     informer's watch is stalled on the server while eventBurst updates are written, then
//     released: the server replays them from its history as fast as the client reads, so
//     the figure is the client's throughput (read, decode, queue, cache, dispatch).
//
// Workloads (informerkit shares identical sub-values of cached objects by default):
//   - obj=pod: whole *corev1.Pod objects on both sides, managedFields included (informerkit
//     with SetTransform(nil); client-go's default): the same fields.
//   - obj=pod-stripped: *corev1.Pod without managedFields on both sides (informerkit's
//     default transform; client-go with a SetTransform doing the same): the same fields.
//   - obj=pod-default: each side's defaults (informerkit drops managedFields, client-go
//     keeps them): what a user who sets nothing gets.
//   - obj=pod-stripped-unshared: obj=pod-stripped with informerkit's sharing turned off
//     (Options.DisableSharing): what sharing saves and costs.
//   - obj=partial: on informerkit's side partialPod (metadata and three fields), against
//     client-go's default full pods.

const (
	syncDeployments  = 500
	eventDeployments = 10
	fleetReplicas    = 100
	syncObjects      = syncDeployments * fleetReplicas  // 50,000 pods
	eventPods        = eventDeployments * fleetReplicas // 1,000 pods
	eventBurst       = 5000
)

var podsGVR = meta.GroupVersionResource{Version: "v1", Resource: "pods"}

// populate creates the namespaces and the pods of deployments Deployments of replicas
// replicas each (see fleetPod).
func populate(s *apitest.Server, deployments, replicas int) error {
	for i := range fleetNamespaces {
		if _, err := s.Create("namespaces", map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("team-%02d", i)}}); err != nil {
			return err
		}
	}
	for d := range deployments {
		for r := range replicas {
			if _, err := s.Create("pods", fleetPod(d, r, replicas)); err != nil {
				return fmt.Errorf("deployment %d pod %d: %w", d, r, err)
			}
		}
	}
	return nil
}

var syncServer = sync.OnceValues(func() (*apitest.Server, error) {
	s, err := apitest.Start(apitest.Options{})
	if err != nil {
		return nil, err
	}
	if err := populate(s, syncDeployments, fleetReplicas); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
})

var eventServer = sync.OnceValues(func() (*apitest.Server, error) {
	s, err := apitest.Start(apitest.Options{HistorySize: 4 * eventBurst})
	if err != nil {
		return nil, err
	}
	if err := populate(s, eventDeployments, fleetReplicas); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
})

// cpuTime returns the CPU time the process has used (user + system). The benchmarks report
// it next to wall time: the machine is shared, and the CPU time of a sync (client and
// in-process server together) does not depend on what other processes run.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// liveHeap returns the live heap after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func stripManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

func clientGoClient(b *testing.B, s *apitest.Server) kubernetes.Interface {
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL, QPS: -1})
	if err != nil {
		b.Fatal(err)
	}
	return cs
}

func informerkitClient(b *testing.B, s *apitest.Server) *apiclient.Client {
	cfg := s.Config()
	cfg.QPS = -1
	c, err := apiclient.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func BenchmarkInformerSync(b *testing.B) {
	s, err := syncServer()
	if err != nil {
		b.Fatal(err)
	}
	tag := fmt.Sprintf("objects=%d/", syncObjects)
	keep, unshared := informerkitOptions{keepManagedFields: true}, informerkitOptions{disableSharing: true}
	b.Run(tag+"obj=pod/impl=informerkit", func(b *testing.B) { syncInformerkit[*corev1.Pod](b, s, keep) })
	b.Run(tag+"obj=pod/impl=client-go", func(b *testing.B) { syncClientGo(b, s, false) })
	b.Run(tag+"obj=pod-stripped/impl=informerkit", func(b *testing.B) { syncInformerkit[*corev1.Pod](b, s, informerkitOptions{}) })
	b.Run(tag+"obj=pod-stripped/impl=client-go", func(b *testing.B) { syncClientGo(b, s, true) })
	b.Run(tag+"obj=pod-default/impl=informerkit", func(b *testing.B) { syncInformerkit[*corev1.Pod](b, s, informerkitOptions{}) })
	b.Run(tag+"obj=pod-default/impl=client-go", func(b *testing.B) { syncClientGo(b, s, false) })
	b.Run(tag+"obj=pod-stripped-unshared/impl=informerkit", func(b *testing.B) { syncInformerkit[*corev1.Pod](b, s, unshared) })
	b.Run(tag+"obj=pod-stripped-unshared/impl=client-go", func(b *testing.B) { syncClientGo(b, s, true) })
	b.Run(tag+"obj=partial/impl=informerkit", func(b *testing.B) { syncInformerkit[*partialPod](b, s, informerkitOptions{}) })
	b.Run(tag+"obj=partial/impl=client-go", func(b *testing.B) { syncClientGo(b, s, false) })
}

// informerkitOptions are the departures from informerkit's defaults of a workload.
type informerkitOptions struct {
	keepManagedFields bool // SetTransform(nil)
	disableSharing    bool // Options.DisableSharing
}

func syncInformerkit[T meta.Object](b *testing.B, s *apitest.Server, o informerkitOptions) {
	c := informerkitClient(b, s)
	defer c.Close()
	var heap float64
	var cpu time.Duration
	for range b.N {
		b.StopTimer()
		base := liveHeap()
		cpu0 := cpuTime()
		b.StartTimer()
		inf := informer.New(apiclient.NewResource[T](c, podsGVR), informer.Options[T]{DisableSharing: o.disableSharing})
		if o.keepManagedFields {
			_ = inf.SetTransform(nil)
		}
		if _, err := inf.AddEventHandler(informer.ResourceEventHandlerFuncs[T]{}); err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go inf.Run(ctx)
		<-inf.Synced()
		b.StopTimer()
		cpu += cpuTime() - cpu0
		if n := inf.GetStore().Len(); n != syncObjects {
			b.Fatalf("cached %d objects, want %d", n, syncObjects)
		}
		heap = float64(liveHeap()-base) / syncObjects
		runtime.KeepAlive(inf)
		cancel()
		<-inf.Done()
		b.StartTimer()
	}
	b.ReportMetric(heap, "B/obj")
	b.ReportMetric(float64(syncObjects)*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

func syncClientGo(b *testing.B, s *apitest.Server, strip bool) {
	cs := clientGoClient(b, s)
	var heap float64
	var cpu time.Duration
	for range b.N {
		b.StopTimer()
		base := liveHeap()
		cpu0 := cpuTime()
		b.StartTimer()
		factory := informers.NewSharedInformerFactory(cs, 0)
		inf := factory.Core().V1().Pods().Informer()
		if strip {
			_ = inf.SetTransform(stripManagedFields)
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{}); err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		factory.Start(ctx.Done())
		cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
		b.StopTimer()
		cpu += cpuTime() - cpu0
		if n := len(inf.GetStore().ListKeys()); n != syncObjects {
			b.Fatalf("cached %d objects, want %d", n, syncObjects)
		}
		heap = float64(liveHeap()-base) / syncObjects
		runtime.KeepAlive(inf)
		cancel()
		factory.Shutdown()
		b.StartTimer()
	}
	b.ReportMetric(heap, "B/obj")
	b.ReportMetric(float64(syncObjects)*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

// writeBurst stalls the server's pod watches, writes eventBurst label updates round-robin
// over the event pods, and returns the resourceVersion of the last one and the release.
func writeBurst(b *testing.B, s *apitest.Server, round int) (uint64, func()) {
	if _, err := s.WaitForWatches(context.Background(), "pods", 1); err != nil {
		b.Fatal(err)
	}
	release, n, err := s.Faults().StallWatches("pods", 0)
	if err != nil || n != 1 {
		b.Fatalf("StallWatches: %d watches, %v", n, err)
	}
	objs, _, err := s.List("pods", "")
	if err != nil {
		b.Fatal(err)
	}
	var last apitest.Object
	for i := range eventBurst {
		o := objs[i%len(objs)]
		patch := fmt.Appendf(nil, `{"metadata":{"labels":{"bench-round":"r%d-%d"}}}`, round, i)
		if last, err = s.Patch("pods", o.Namespace(), o.Name(), apiclient.MergePatchType, patch); err != nil {
			b.Fatal(err)
		}
	}
	rv, _ := strconv.ParseUint(last.ResourceVersion(), 10, 64)
	return rv, release
}

// rvWaiter records the highest resourceVersion a handler saw and signals when it reaches a
// target.
type rvWaiter struct {
	mu     sync.Mutex
	max    uint64
	target uint64
	reach  chan struct{}
	calls  atomic.Int64
}

func (w *rvWaiter) saw(rv string) {
	w.calls.Add(1)
	n, _ := strconv.ParseUint(rv, 10, 64)
	w.mu.Lock()
	if n > w.max {
		w.max = n
	}
	if w.reach != nil && w.max >= w.target {
		close(w.reach)
		w.reach = nil
	}
	w.mu.Unlock()
}

func (w *rvWaiter) expect(target uint64) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := make(chan struct{})
	w.target, w.reach = target, ch
	if w.max >= target {
		close(ch)
		w.reach = nil
	}
	return ch
}

func BenchmarkInformerEvents(b *testing.B) {
	s, err := eventServer()
	if err != nil {
		b.Fatal(err)
	}
	tag := fmt.Sprintf("burst=%d/", eventBurst)
	b.Run(tag+"obj=pod/impl=informerkit", func(b *testing.B) { eventsInformerkit[*corev1.Pod](b, s) })
	b.Run(tag+"obj=pod/impl=client-go", func(b *testing.B) { eventsClientGo(b, s) })
	b.Run(tag+"obj=partial/impl=informerkit", func(b *testing.B) { eventsInformerkit[*partialPod](b, s) })
	b.Run(tag+"obj=partial/impl=client-go", func(b *testing.B) { eventsClientGo(b, s) })
}

var eventRound atomic.Int64

func eventsInformerkit[T meta.Object](b *testing.B, s *apitest.Server) {
	c := informerkitClient(b, s)
	defer c.Close()
	w := &rvWaiter{}
	inf := informer.New(apiclient.NewResource[T](c, podsGVR), informer.Options[T]{})
	reg, err := inf.AddEventHandler(informer.ResourceEventHandlerFuncs[T]{
		UpdateFunc: func(_, o T) { w.saw(o.GetResourceVersion()) },
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); <-inf.Done() }()
	go inf.Run(ctx)
	<-reg.Synced()
	runEventBursts(b, s, w)
	b.ReportMetric(float64(reg.Backlog().Coalesced)/float64(b.N), "coalesced/op")
}

func eventsClientGo(b *testing.B, s *apitest.Server) {
	cs := clientGoClient(b, s)
	w := &rvWaiter{}
	factory := informers.NewSharedInformerFactory(cs, 0)
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, o any) { w.saw(o.(*corev1.Pod).ResourceVersion) },
	}); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); factory.Shutdown() }()
	factory.Start(ctx.Done())
	cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
	runEventBursts(b, s, w)
}

func runEventBursts(b *testing.B, s *apitest.Server, w *rvWaiter) {
	calls0 := w.calls.Load()
	var cpu time.Duration
	for range b.N {
		b.StopTimer()
		target, release := writeBurst(b, s, int(eventRound.Add(1)))
		reached := w.expect(target)
		cpu0 := cpuTime()
		b.StartTimer()
		release()
		select {
		case <-reached:
		case <-time.After(5 * time.Minute):
			b.Fatalf("the handler did not see resourceVersion %d", target)
		}
		b.StopTimer()
		cpu += cpuTime() - cpu0
		b.StartTimer()
	}
	b.ReportMetric(cpu.Seconds()*1e6/float64(eventBurst*b.N), "cpu-µs/event")
	b.ReportMetric(float64(eventBurst)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(w.calls.Load()-calls0)/float64(b.N), "calls/op")
}

// BenchmarkInformerSyncServerOnly streams the same 50k-pod WatchList from the same server
// with a plain HTTP client that only looks for the end bookmark: the server's share of a
// sync (encoding and writing 250 MB of events), with no decoding at all.
func BenchmarkInformerSyncServerOnly(b *testing.B) {
	s, err := syncServer()
	if err != nil {
		b.Fatal(err)
	}
	hc := s.Client()
	defer hc.CloseIdleConnections()
	b.ResetTimer()
	var cpu time.Duration
	for range b.N {
		cpu0 := cpuTime()
		resp, err := hc.Get(s.URL + "/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=600")
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		events := 0
		for sc.Scan() {
			if bytes.Contains(sc.Bytes(), []byte(apiclient.InitialEventsEndAnnotation)) {
				break
			}
			events++
		}
		resp.Body.Close()
		if events != syncObjects {
			b.Fatalf("%d initial events, want %d (%v)", events, syncObjects, sc.Err())
		}
		cpu += cpuTime() - cpu0
	}
	b.ReportMetric(float64(syncObjects)*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

// TestInformerHeapProfile writes the in-use heap profile of each side's synced informer when
// INFORMERKIT_HEAP_PROFILE names a directory (INFORMERKIT_HEAP_DEPLOYMENTS sets the size of
// the fleet, default syncDeployments; INFORMERKIT_HEAP_REPLICAS the replicas of each, default
// fleetReplicas), for `go tool pprof -sample_index=inuse_space`:
// informerkit-default.pprof (informerkit's defaults), informerkit-keep.pprof (managedFields
// kept), client-go-default.pprof. It logs the heap per object of each.
func TestInformerHeapProfile(t *testing.T) {
	dir := os.Getenv("INFORMERKIT_HEAP_PROFILE")
	if dir == "" {
		t.Skip("set INFORMERKIT_HEAP_PROFILE=<dir> to write heap profiles of synced informers")
	}
	if os.Getenv("INFORMERKIT_HEAP_EXACT") == "1" { // every allocation sampled: slow
		defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
		runtime.MemProfileRate = 1
	}
	deployments := syncDeployments
	if n, err := strconv.Atoi(os.Getenv("INFORMERKIT_HEAP_DEPLOYMENTS")); err == nil && n > 0 {
		deployments = n
	}
	replicas := fleetReplicas
	if n, err := strconv.Atoi(os.Getenv("INFORMERKIT_HEAP_REPLICAS")); err == nil && n > 0 {
		replicas = n
	}
	s, err := apitest.Start(apitest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := populate(s, deployments, replicas); err != nil {
		t.Fatal(err)
	}
	objects := deployments * replicas
	write := func(name string, base uint64, took time.Duration) {
		heap := liveHeap()
		f, err := os.Create(filepath.Join(dir, name+".pprof"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %.0f B/obj, synced in %v", name, float64(heap-base)/float64(objects), took.Round(time.Millisecond))
	}
	ik := func(name string, keep bool) {
		c, err := apiclient.New(s.Config())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		base := liveHeap()
		inf := informer.New(apiclient.NewResource[*corev1.Pod](c, podsGVR), informer.Options[*corev1.Pod]{})
		if keep {
			_ = inf.SetTransform(nil)
		}
		ctx, cancel := context.WithCancel(context.Background())
		start := time.Now()
		go inf.Run(ctx)
		<-inf.Synced()
		write(name, base, time.Since(start))
		runtime.KeepAlive(inf)
		cancel()
		<-inf.Done()
	}
	ik("informerkit-default", false)
	ik("informerkit-keep", true)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	base := liveHeap()
	factory := informers.NewSharedInformerFactory(cs, 0)
	inf := factory.Core().V1().Pods().Informer()
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	factory.Start(ctx.Done())
	cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
	write("client-go-default", base, time.Since(start))
	runtime.KeepAlive(inf)
	cancel()
	factory.Shutdown()
}
