package main

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/meta"
)

// object is the part of a ConfigMap or a Secret the controllers read.
type object struct {
	meta.TypeMeta   `json:",inline"`
	meta.ObjectMeta `json:"metadata"`
}

var (
	configMaps = meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets    = meta.GroupVersionResource{Version: "v1", Resource: "secrets"}
	tenants    = []string{"tenant-a", "tenant-b", "tenant-c", "tenant-d"}
)

// workload is an in-process API server, a Manager that serves /metrics, two controllers
// and a generator of objects.
type workload struct {
	srv     *apitest.Server
	mgr     *controller.Manager
	metrics string // the /metrics URL
	stop    func() error
}

// startWorkload starts the server with 400 ConfigMaps of tenant-a already there (an initial
// list), and a Manager with an "annotator" of ConfigMaps (it patches each one once, 1–4 ms of
// work a reconcile, 2 workers) and a "secret-watcher" (no writes).
func startWorkload(ctx context.Context) (*workload, error) {
	srv := apitest.NewServer()
	for _, ns := range tenants {
		if _, err := srv.Create("namespaces", map[string]any{"metadata": map[string]any{"name": ns}}); err != nil {
			return nil, err
		}
	}
	for i := range 400 {
		if err := createConfigMap(srv, "tenant-a", fmt.Sprintf("pre-%d", i)); err != nil {
			return nil, err
		}
	}
	m, err := controller.NewManager(srv.Config(), controller.ManagerOptions{
		Logger: slog.New(slog.DiscardHandler), HTTPAddress: "127.0.0.1:0", SkipPermissionCheck: true,
	})
	if err != nil {
		return nil, err
	}
	// One metadata-only type for two resources: the resource is given (the exception).
	cms, err := controller.InformerForWithOptions[*object](m, controller.InformerOptions{Resource: configMaps})
	if err != nil {
		return nil, err
	}
	res := apiclient.NewResource[*object](m.APIClient(), configMaps)
	annotate := controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		o, err := cms.Lister().Namespace(req.Namespace).Get(req.Name)
		if err != nil || o.Annotations["seen"] != "" {
			return controller.Result{}, nil
		}
		time.Sleep(time.Millisecond + rand.N(3*time.Millisecond)) // the reconcile's work
		_, err = res.Namespace(req.Namespace).Patch(ctx, req.Name, apiclient.MergePatchType, []byte(`{"metadata":{"annotations":{"seen":"yes"}}}`), apiclient.PatchOptions{})
		return controller.Result{}, err
	})
	if err := addController(m, "annotator", configMaps, annotate, 2); err != nil {
		return nil, err
	}
	watch := controller.ReconcilerFunc(func(context.Context, controller.Request) (controller.Result, error) {
		time.Sleep(500 * time.Microsecond)
		return controller.Result{}, nil
	})
	if err := addController(m, "secret-watcher", secrets, watch, 1); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- m.Start(ctx) }()
	select {
	case <-m.Elected():
	case err := <-errc:
		cancel()
		return nil, err
	}
	return &workload{srv: srv, mgr: m, metrics: "http://" + m.HTTPAddr() + "/metrics", stop: func() error {
		cancel()
		err := <-errc
		srv.Close()
		return err
	}}, nil
}

func addController(m *controller.Manager, name string, resource meta.GroupVersionResource, r controller.Reconciler, workers int) error {
	c, err := controller.New(name, r, controller.Options{MaxConcurrentReconciles: workers})
	if err != nil {
		return err
	}
	if err := c.Watch(controller.KindWithOptions(m, controller.EnqueueRequestForObject[*object](),
		controller.KindOptions[*object]{Informer: controller.InformerOptions{Resource: resource}})); err != nil {
		return err
	}
	return m.Add(c)
}

func createConfigMap(srv *apitest.Server, ns, name string) error {
	_, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": ns, "name": name}, "data": map[string]any{"k": "v"}})
	return err
}

// generate makes objects change for d, in phases: a steady trickle over every tenant, a
// burst of 150 ConfigMaps a second in tenant-a for a tenth of d, updates and deletes, a relist of the Secrets (410)
// and a stalled Secret watch.
func (w *workload) generate(ctx context.Context, d time.Duration) {
	start := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	n, expired, stalled := 0, false, false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		f := float64(time.Since(start)) / float64(d)
		if f >= 1 {
			return
		}
		n++
		ns := tenants[n%len(tenants)]
		switch {
		case f >= 0.3 && f < 0.4: // the burst: one tenant writes 150 objects a second
			for i := range 15 {
				_ = createConfigMap(w.srv, "tenant-a", fmt.Sprintf("burst-%d-%d", n, i))
			}
		case f >= 0.55 && f < 0.8: // updates and deletes of what exists
			_, _ = w.srv.Mutate("configmaps", ns, fmt.Sprintf("live-%d", n-40), func(o apitest.Object) { o["data"] = map[string]any{"k": fmt.Sprint(n)} })
			_ = w.srv.Delete("configmaps", ns, fmt.Sprintf("live-%d", n-80))
		}
		_ = createConfigMap(w.srv, ns, fmt.Sprintf("live-%d", n))
		if n%5 == 0 {
			_, _ = w.srv.Create("secrets", map[string]any{"metadata": map[string]any{"namespace": ns, "name": fmt.Sprintf("s-%d", n)}})
		}
		if f >= 0.5 && !expired {
			expired = true
			_, _ = w.srv.Faults().ExpireWatches("secrets") // 410: the secrets reflector relists
		}
		if f >= 0.8 && !stalled {
			stalled = true
			release, _, _ := w.srv.Faults().StallWatches("secrets", 8*time.Second)
			defer release()
		}
	}
}
