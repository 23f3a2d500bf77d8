package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/informerkit/informerkit/meta"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/bench/internal/fleet"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/reflector"
)

// partialPod is what a controller that places pods declares: metadata and three fields.
// client-go cannot decode partially; its obj=partial figures are its full pods.
type partialPod struct {
	meta.TypeMeta   `json:",inline"`
	meta.ObjectMeta `json:"metadata"`
	Spec            struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase"`
		PodIP string `json:"podIP"`
	} `json:"status"`
}

// keyOnly declares what an informer cannot do without: the key, the resourceVersion and the
// annotations (a streaming list ends at an annotated bookmark). An informer of it costs what
// is left once decoding costs next to nothing: the floor of the per-object path (obj=floor).
type keyOnly struct {
	Metadata struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace"`
		ResourceVersion string            `json:"resourceVersion"`
		Annotations     map[string]string `json:"annotations"`
	} `json:"metadata"`
}

func (k *keyOnly) GetName() string                   { return k.Metadata.Name }
func (k *keyOnly) GetNamespace() string              { return k.Metadata.Namespace }
func (k *keyOnly) GetResourceVersion() string        { return k.Metadata.ResourceVersion }
func (k *keyOnly) GetLabels() map[string]string      { return nil }
func (k *keyOnly) GetAnnotations() map[string]string { return k.Metadata.Annotations }

// childArgs say what one measuring process does.
type childArgs struct {
	Impl       string // informerkit, informerkit-json or client-go
	Kind       string // pods or configmaps
	Obj        string // full or partial (informerkit's declared type)
	Kubeconfig string
	Expect     int    // objects the informer must hold once synced
	ReplayFrom string // resourceVersion before the burst ("" for no events phase)
	Replay     int    // events of the burst
	CPUProfile string // file for a CPU profile of the sync ("" for none)
	MemProfile string // file for a heap profile written once synced ("" for none)
	Watch      string // informerkit's watch protocol: auto (default), chunked or websocket

	// Relist: after the sync, force a relist (a 410 injected into the watch, the same way
	// in both implementations) and measure its peak heap; no events phase. The wrapper that
	// injects the 410 forwards every event through a goroutine of its own, so these runs
	// give the memory figures only.
	Relist bool
	// Steady (with Relist): after the sync, announce it on stderr (steadyMarker) and sample
	// the heap in use until the informer has seen Steady updates, which the parent writes
	// meanwhile: the heap of the steady state, events flowing and the collector at work.
	Steady int

	StdJSON          bool   // informerkit decodes with encoding/json
	NoSync           bool   // skip the sync phase
	NoSharing        bool   // informerkit's structural sharing off
	EventsCPUProfile string // file for a CPU profile of the events phase ("" for none)
}

// startEventsProfile starts the events phase's CPU profile if one is asked for; the
// returned function stops it.
func startEventsProfile(a childArgs) (func(), error) {
	if a.EventsCPUProfile == "" {
		return func() {}, nil
	}
	f, err := os.Create(a.EventsCPUProfile)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// writeMemProfile writes the heap profile (its allocation counts are those since the
// process started) to file, if one is asked for.
func writeMemProfile(file string) error {
	if file == "" {
		return nil
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// childResult is what a measuring process prints, as one JSON line.
type childResult struct {
	SyncSeconds, SyncCPUSeconds float64
	HeapPerObject               float64
	Objects                     int
	Events                      int
	EventsSeconds               float64
	EventsCPUSeconds            float64
	// Memory, in bytes: the largest heap in use while syncing, the live heap once synced
	// (after a GC: the steady state), the resident set's high-water mark after the sync,
	// and with Relist the largest heap in use during the forced relist.
	PeakHeapSync, SteadyHeap, PeakRSSSync, PeakHeapRelist float64
	PeakHeapSteady                                        float64 // heap in use while updates flow
	RelistSeconds, RelistCPUSeconds                       float64
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func child(ctx context.Context, a childArgs) error {
	var res childResult
	var err error
	if a.CPUProfile != "" {
		f, err := os.Create(a.CPUProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	switch a.Impl {
	case "informerkit", "informerkit-json":
		switch {
		case a.Kind == "applications":
			res, err = childInformerkit[*Application](ctx, a, "Application")
		case a.Kind == "configmaps":
			res, err = childInformerkit[*corev1.ConfigMap](ctx, a, "ConfigMap")
		case a.Obj == "partial":
			res, err = childInformerkit[*partialPod](ctx, a, "Pod")
		case a.Obj == "floor":
			res, err = childInformerkit[*keyOnly](ctx, a, "Pod")
		default:
			res, err = childInformerkit[*corev1.Pod](ctx, a, "Pod")
		}
	case "client-go", "client-go-typed":
		if a.Kind == "applications" {
			res, err = syncClientGoCR(ctx, a)
		} else {
			res, err = childClientGo(ctx, a)
		}
	default:
		err = fmt.Errorf("unknown implementation %q", a.Impl)
	}
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

func gvrOf(kind string) meta.GroupVersionResource {
	if kind == fleet.ApplicationGVR.Resource {
		g := fleet.ApplicationGVR
		return meta.GroupVersionResource{Group: g.Group, Version: g.Version, Resource: g.Resource}
	}
	return meta.GroupVersionResource{Version: "v1", Resource: kind}
}

// replayLW lists nothing at the resourceVersion before the burst and watches from there,
// so that the informer receives the burst's events as fast as it can take them.
type replayLW[T meta.Object] struct {
	lw apiclient.ListerWatcher[T]
	rv string
}

func (l replayLW[T]) List(ctx context.Context, opts apiclient.ListOptions) (*meta.List[T], error) {
	return &meta.List[T]{ListMeta: meta.ListMeta{ResourceVersion: l.rv}}, nil
}

func (l replayLW[T]) Watch(ctx context.Context, opts apiclient.ListOptions) (apiclient.Watcher[T], error) {
	return l.lw.Watch(ctx, opts)
}

// WithDecodeOptions passes the informer's decoding options (skip managedFields, shared
// strings) to the collection under it, as the sync phase's informer gets them: without it
// the events phase decoded every pod's managedFields only for the transform to drop them
// (apiclient.DecodeTunable).
func (l replayLW[T]) WithDecodeOptions(o apiclient.DecodeOptions) apiclient.ListerWatcher[T] {
	if t, ok := l.lw.(apiclient.DecodeTunable[T]); ok {
		return replayLW[T]{t.WithDecodeOptions(o), l.rv}
	}
	return l
}

func childInformerkit[T meta.Object](ctx context.Context, a childArgs, kind string) (childResult, error) {
	var res childResult
	cfg, err := apiclient.LoadConfigWithOptions(apiclient.LoadOptions{Kubeconfig: a.Kubeconfig})
	if err != nil {
		return res, err
	}
	switch a.Watch {
	case "chunked":
		cfg.WatchProtocol = apiclient.WatchChunked
	case "websocket":
		cfg.WatchProtocol = apiclient.WatchWebSocket
	}
	if a.StdJSON {
		cfg.JSONDecoder = apiclient.JSONStandard
	}
	// informerkit reads built-in kinds as protobuf by default; informerkit-json is the same
	// informer over JSON (internal/jsondec), for comparison.
	cfg.DisableProtobuf = a.Impl == "informerkit-json"
	c, err := apiclient.New(cfg)
	if err != nil {
		return res, err
	}
	defer c.Close()
	res.Objects = a.Expect

	// lw is the collection; replay a second one for the events phase, watched the same way.
	var lw apiclient.ListerWatcher[T] = apiclient.NewResource[T](c, gvrOf(a.Kind))
	replay := apiclient.NewResource[T](c, gvrOf(a.Kind))
	rl := newRelister()
	if a.Relist {
		lw = relistLW[T]{apiclient.NewResource[T](c, gvrOf(a.Kind)), rl}
	}
	var cpu0 time.Duration
	var t0 time.Time
	if !a.NoSync {
		base := liveHeap()
		heap := sampleHeap()
		cpu0, t0 = cpuTime(), time.Now()
		inf := informer.New[T](lw, informer.Options[T]{DisableSharing: a.NoSharing})
		var updates atomic.Int64
		if _, err := inf.AddEventHandler(informer.ResourceEventHandlerFuncs[T]{UpdateFunc: func(T, T) { updates.Add(1) }}); err != nil {
			return res, err
		}
		ictx, cancel := context.WithCancel(ctx)
		defer cancel()
		go inf.Run(ictx)
		select {
		case <-inf.Synced():
		case <-ctx.Done():
			return res, ctx.Err()
		}
		res.SyncSeconds = time.Since(t0).Seconds()
		res.SyncCPUSeconds = (cpuTime() - cpu0).Seconds()
		res.PeakHeapSync, res.PeakRSSSync = float64(heap.end()), float64(procStatus("VmHWM"))
		if err := writeMemProfile(a.MemProfile); err != nil {
			return res, err
		}
		if n := len(inf.GetStore().List()); n != a.Expect {
			return res, fmt.Errorf("informerkit cached %d %s, want %d", n, a.Kind, a.Expect)
		}
		steady := liveHeap()
		res.SteadyHeap, res.HeapPerObject = float64(steady), float64(steady-base)/float64(a.Expect)
		if a.Relist {
			if err := measureSteady(ctx, &res, a.Steady, &updates); err != nil {
				return res, err
			}
			if err := measureRelist(ctx, &res, rl, func() bool { return len(inf.GetStore().List()) == a.Expect }); err != nil {
				return res, err
			}
		}
		runtime.KeepAlive(inf)
		cancel()
		<-inf.Done()
	}
	if a.Relist {
		return res, nil
	}

	if a.ReplayFrom == "" {
		return res, nil
	}
	var events atomic.Int64
	done := make(chan struct{})
	count := func() {
		if events.Add(1) == int64(a.Replay) {
			close(done)
		}
	}
	stopProfile, err := startEventsProfile(a)
	if err != nil {
		return res, err
	}
	cpu0, t0 = cpuTime(), time.Now()
	rinf := informer.New[T](replayLW[T]{replay, a.ReplayFrom},
		informer.Options[T]{WatchList: reflector.WatchListOff, DisableSharing: a.NoSharing})
	if _, err := rinf.AddEventHandler(informer.ResourceEventHandlerFuncs[T]{
		AddFunc:    func(T, bool) { count() },
		UpdateFunc: func(T, T) { count() },
	}); err != nil {
		return res, err
	}
	rctx, rcancel := context.WithCancel(ctx)
	defer rcancel()
	go rinf.Run(rctx)
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		return res, fmt.Errorf("informerkit: %d of %d replayed events after 5 minutes", events.Load(), a.Replay)
	}
	res.EventsSeconds = time.Since(t0).Seconds()
	res.EventsCPUSeconds = (cpuTime() - cpu0).Seconds()
	stopProfile()
	res.Events = a.Replay
	rcancel()
	<-rinf.Done()
	return res, nil
}

// noWatchList is the client of a ListerWatcher that does not support streaming lists.
type noWatchList struct{}

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

func childClientGo(ctx context.Context, a childArgs) (childResult, error) {
	var res childResult
	cfg, err := clientcmd.BuildConfigFromFlags("", a.Kubeconfig)
	if err != nil {
		return res, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return res, err
	}
	res.Objects = a.Expect

	var cpu0 time.Duration
	var t0 time.Time
	if !a.NoSync {
		rl := newRelister()
		base := liveHeap()
		heap := sampleHeap()
		cpu0, t0 = cpuTime(), time.Now()
		factory := informers.NewSharedInformerFactory(cs, 0)
		var inf cache.SharedIndexInformer
		if a.Relist {
			// The factory's informer, with the relister's watch.
			inf = factory.InformerFor(relistObject(a.Kind), func(cs kubernetes.Interface, _ time.Duration) cache.SharedIndexInformer {
				return cache.NewSharedIndexInformer(clientGoLW(cs, a.Kind, rl), relistObject(a.Kind), 0,
					cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
			})
		} else {
			gi, err := factory.ForResource(schema.GroupVersionResource{Version: "v1", Resource: a.Kind})
			if err != nil {
				return res, err
			}
			inf = gi.Informer()
		}
		var updates atomic.Int64
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(any, any) { updates.Add(1) }}); err != nil {
			return res, err
		}
		ictx, cancel := context.WithCancel(ctx)
		factory.Start(ictx.Done())
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			cancel()
			return res, errors.New("client-go: cache not synced")
		}
		res.SyncSeconds = time.Since(t0).Seconds()
		res.SyncCPUSeconds = (cpuTime() - cpu0).Seconds()
		res.PeakHeapSync, res.PeakRSSSync = float64(heap.end()), float64(procStatus("VmHWM"))
		if err := writeMemProfile(a.MemProfile); err != nil {
			cancel()
			return res, err
		}
		if n := len(inf.GetStore().ListKeys()); n != a.Expect {
			cancel()
			return res, fmt.Errorf("client-go cached %d %s, want %d", n, a.Kind, a.Expect)
		}
		steady := liveHeap()
		res.SteadyHeap, res.HeapPerObject = float64(steady), float64(steady-base)/float64(a.Expect)
		if a.Relist {
			err := measureSteady(ctx, &res, a.Steady, &updates)
			if err == nil {
				err = measureRelist(ctx, &res, rl, func() bool { return len(inf.GetStore().ListKeys()) == a.Expect })
			}
			if err != nil {
				cancel()
				return res, err
			}
		}
		runtime.KeepAlive(inf)
		cancel()
		factory.Shutdown()
	}
	if a.Relist {
		return res, nil
	}

	if a.ReplayFrom == "" {
		return res, nil
	}
	var events atomic.Int64
	done := make(chan struct{})
	count := func() {
		if events.Add(1) == int64(a.Replay) {
			close(done)
		}
	}
	stopProfile, err := startEventsProfile(a)
	if err != nil {
		return res, err
	}
	cpu0, t0 = cpuTime(), time.Now()
	lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (k8sruntime.Object, error) {
			return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: a.ReplayFrom}}, nil
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return cs.CoreV1().Pods("").Watch(ctx, opts)
		},
	}, noWatchList{})
	rinf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if _, err := rinf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { count() },
		UpdateFunc: func(any, any) { count() },
	}); err != nil {
		return res, err
	}
	rctx, rcancel := context.WithCancel(ctx)
	defer rcancel()
	go rinf.RunWithContext(rctx)
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		return res, fmt.Errorf("client-go: %d of %d replayed events after 5 minutes", events.Load(), a.Replay)
	}
	res.EventsSeconds = time.Since(t0).Seconds()
	res.EventsCPUSeconds = (cpuTime() - cpu0).Seconds()
	stopProfile()
	res.Events = a.Replay
	return res, nil
}
