package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/examples/deployment"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/labels"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/sharding"
	"github.com/informerkit/informerkit/sharding/ring"
	"github.com/informerkit/informerkit/tracing"
)

// reportHeap prints the live heap, after a garbage collection, and the process's resident
// set and its peak, at each SIGUSR1.
func reportHeap(ctx context.Context, id string) {
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	defer signal.Stop(usr1)
	for {
		select {
		case <-ctx.Done():
			return
		case <-usr1:
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		rss, peak := residentSet()
		emit("HEAP %s %d %d %d %d", id, ms.HeapAlloc, time.Now().UnixNano(), rss, peak)
	}
}

// newManager returns a Manager in the ring ringName, its member Lease in ns. cacheNS
// restricts its informers to one namespace ("": all), selector to the objects it matches.
func newManager(kubeconfig, id, ns, cacheNS, ringName string, timing ring.Options, field sharding.Field, tracer tracing.Tracer, selector labels.Selector) (*controller.Manager, error) {
	cfg, err := apiclient.LoadConfigWithOptions(apiclient.LoadOptions{Kubeconfig: kubeconfig})
	if err != nil {
		return nil, err
	}
	return controller.NewManager(cfg, controller.ManagerOptions{
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),
		Sharding: controller.ShardingOptions{Ring: ringName, Namespace: ns, Identity: id, Field: field,
			LeaseDuration: timing.LeaseDuration, RenewDeadline: timing.RenewDeadline, RetryPeriod: timing.RetryPeriod},
		Tracer:              tracer,
		InformerOptions:     informer.FactoryOptions{Namespace: cacheNS, LabelSelector: selector},
		SkipPermissionCheck: true,
	})
}

// runManager is --controller built through a Manager with sharding and a sharded Builder.
// With clusterRoles set, its primary type is the ClusterRoles labelled shard-e2e=clusterRoles,
// in a ring by namespace.
func runManager(ctx context.Context, kubeconfig, id, ns, ringName string, work time.Duration, timing ring.Options, workers int, clusterRoles string) error {
	cacheNS, field, selector := ns, sharding.FieldUID, labels.Everything()
	gvr := meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	if clusterRoles != "" {
		cacheNS, field = "", sharding.FieldNamespace
		selector = labels.SelectorFromSet(map[string]string{"shard-e2e": clusterRoles})
		gvr = meta.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	}
	mgr, err := newManager(kubeconfig, id, ns, cacheNS, ringName, timing, field, nil, selector)
	if err != nil {
		return err
	}
	primary := controller.PrimaryWithOptions(controller.PrimaryOptions[*configMap]{Resource: gvr}) // one type, two resources
	_, err = controller.NewBuilder(mgr, "shard-replica").
		For(primary).
		WithOptions(controller.Options{Sharded: true, MaxConcurrentReconciles: workers}).
		Build(controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
			o, ok, _ := primary.Informer().GetStore().GetByKey(req.String())
			if !ok {
				return controller.Result{}, nil // deleted
			}
			return reconcileRecorded(ctx, id, o, work)
		}))
	if err != nil {
		return err
	}
	go reportCache(ctx, id, func() int { return len(primary.Informer().GetStore().ListKeys()) })
	return mgr.Start(ctx)
}

// reportCache prints the cache size when it changes (every 200 ms at most).
func reportCache(ctx context.Context, id string, size func() int) {
	last := -1
	for {
		if n := size(); n != last {
			emit("CACHE %s %d %d", id, n, time.Now().UnixNano())
			last = n
		}
		t := time.NewTimer(200 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// runDeployment runs examples/deployment's sharded controller, sharded by namespace.
func runDeployment(ctx context.Context, kubeconfig, id, ns, ringName string, timing ring.Options) error {
	mgr, err := newManager(kubeconfig, id, ns, "", ringName, timing, sharding.FieldNamespace, reconcileTracer{id: id}, labels.Everything())
	if err != nil {
		return err
	}
	if _, err := deployment.SetupSharded(mgr); err != nil {
		return err
	}
	go reportCache(ctx, id, func() int {
		inf, err := controller.InformerFor[*deployment.MiniDeployment](mgr)
		if err != nil {
			return -1
		}
		return len(inf.GetStore().ListKeys())
	})
	return mgr.Start(ctx)
}

// reconcileTracer prints START and END around each reconcile span: the shard gate runs
// before the span starts, so a span is a reconcile that ran.
type reconcileTracer struct{ id string }

type noSpan struct{}

func (noSpan) SetAttributes(...tracing.Attribute) {}
func (noSpan) RecordError(error)                  {}
func (noSpan) End()                               {}

type reconcileSpan struct{ id, key string }

func (reconcileSpan) SetAttributes(...tracing.Attribute) {}
func (reconcileSpan) RecordError(error)                  {}
func (s reconcileSpan) End()                             { emit("END %s %s %d -", s.id, s.key, time.Now().UnixNano()) }

func (r reconcileTracer) Start(ctx context.Context, name string, opts tracing.StartOptions) (context.Context, tracing.Span) {
	if name != tracing.SpanReconcile {
		return ctx, noSpan{}
	}
	var ns, n string
	for _, a := range opts.Attributes {
		switch a.Key {
		case tracing.AttrNamespace:
			ns = a.Value
		case tracing.AttrName:
			n = a.Value
		}
	}
	key := ns + "/" + n
	emit("START %s %s %d", r.id, key, time.Now().UnixNano())
	return ctx, reconcileSpan{id: r.id, key: key}
}

// residentSet returns the process's resident set size and its peak (VmRSS and VmHWM of
// /proc/self/status, in bytes); 0 where they cannot be read.
func residentSet() (rss, peak uint64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 || f[2] != "kB" {
			continue
		}
		n, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			rss = n << 10
		case "VmHWM:":
			peak = n << 10
		}
	}
	return rss, peak
}
