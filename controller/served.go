package controller

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/meta"
)

// DefaultDiscoveryInterval is the default of ManagerOptions.DiscoveryInterval.
const DefaultDiscoveryInterval = 30 * time.Second

// crdsGVR is the CustomResourceDefinition resource.
var crdsGVR = meta.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// crdInfo is what the tracker reads of a CustomResourceDefinition.
type crdInfo struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Spec            struct {
		Group string `json:"group"`
		Scope string `json:"scope"`
		Names struct {
			Plural string `json:"plural"`
			Kind   string `json:"kind"`
		} `json:"names"`
		Versions []struct {
			Name   string `json:"name"`
			Served bool   `json:"served"`
		} `json:"versions"`
	} `json:"spec"`
	Status struct {
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	} `json:"status"`
}

// metaOnly is what a probe decodes of an object.
type metaOnly struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
}

// serves reports whether the CRD, as cached, serves version: established and the version
// served. A CRD being deleted still serves its resource until it is gone (its objects'
// finalizers need their controllers), as the kube-apiserver does.
func (c *crdInfo) serves(version string) bool {
	established := false
	for _, x := range c.Status.Conditions {
		established = established || (x.Type == "Established" && x.Status == "True")
	}
	return established && slices.ContainsFunc(c.Spec.Versions, func(v struct {
		Name   string `json:"name"`
		Served bool   `json:"served"`
	}) bool {
		return v.Name == version && v.Served
	})
}

// resourceTracker tells the Manager's following controllers (Options.FollowResources)
// whether their resources are served. A resource that a CustomResourceDefinition defines is
// served while the CRD is established with that version served (watched, so a change is
// seen at once) and the resource answers a watch (the kube-apiserver answers 429 while it
// sets up a new CRD's watch cache); any other resource is served while discovery lists it
// (read again every DiscoveryInterval). Without the permission to list CRDs, discovery is
// all it reads.
type resourceTracker struct {
	api      *apiclient.Client
	log      *slog.Logger
	interval time.Duration
	ns       string // the probes' namespace (the factory's)

	mu        sync.Mutex
	wanted    map[meta.GroupVersionResource]bool
	crds      map[string]*crdInfo                    // by group/plural
	crdBacked map[string]bool                        // group/plural a CRD was seen for
	confirmed map[meta.GroupVersionResource]bool     // served by its CRD and answered a watch since
	probing   map[meta.GroupVersionResource]bool     // a probe runs
	listed    map[meta.GroupVersionResource]struct{} // by the last discovery read
	synced    bool
	changed   chan struct{}   // closed and replaced at every change
	ctx       context.Context // run's, once it runs
	wg        sync.WaitGroup
}

func newResourceTracker(api *apiclient.Client, log *slog.Logger, interval time.Duration, ns string) *resourceTracker {
	return &resourceTracker{api: api, log: log, interval: interval, ns: ns,
		wanted: map[meta.GroupVersionResource]bool{}, crds: map[string]*crdInfo{}, crdBacked: map[string]bool{},
		confirmed: map[meta.GroupVersionResource]bool{}, probing: map[meta.GroupVersionResource]bool{},
		changed: make(chan struct{})}
}

// want adds resources to those the tracker follows; one whose CRD it has seen already is
// probed at once.
func (t *resourceTracker) want(gvrs ...meta.GroupVersionResource) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, g := range gvrs {
		if t.wanted[g] {
			continue
		}
		t.wanted[g] = true
		if c, ok := t.crds[g.Group+"/"+g.Resource]; ok && t.ctx != nil && c.serves(g.Version) {
			t.probeLocked(t.ctx, g)
		}
	}
}

// broadcastLocked wakes every waiter.
func (t *resourceTracker) broadcastLocked() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// run tracks until ctx is done, then returns once its goroutines have stopped.
func (t *resourceTracker) run(ctx context.Context) {
	defer t.wg.Wait()
	t.mu.Lock()
	t.ctx = ctx
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.ctx = nil // no probe starts once run is on its way out
		t.mu.Unlock()
	}()
	var inf *informer.Informer[*crdInfo]
	crds := apiclient.NewResource[*crdInfo](t.api, crdsGVR)
	if _, err := crds.List(ctx, apiclient.ListOptions{Limit: 1}); err != nil {
		if ctx.Err() != nil {
			return
		}
		t.log.Info("following resources through discovery only: CustomResourceDefinitions cannot be listed",
			"err", err, "discoveryInterval", t.interval)
	} else {
		inf = informer.New[*crdInfo](crds, informer.Options[*crdInfo]{Name: "followed CustomResourceDefinitions", Logger: t.log, DisableSharing: true})
		_, _ = inf.AddEventHandler(informer.ResourceEventHandlerFuncs[*crdInfo]{
			AddFunc:    func(c *crdInfo, _ bool) { t.setCRD(ctx, c, false) },
			UpdateFunc: func(_, c *crdInfo) { t.setCRD(ctx, c, false) },
			DeleteFunc: func(c *crdInfo, _ bool) { t.setCRD(ctx, c, true) },
		})
		t.wg.Go(func() { inf.Run(ctx) })
		select {
		case <-inf.Synced():
		case <-ctx.Done():
			return
		}
	}
	t.discover(ctx)
	t.mu.Lock()
	t.synced = true
	t.broadcastLocked()
	t.mu.Unlock()
	timer := time.NewTimer(t.interval)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
			timer.Reset(t.interval)
		}
		t.discover(ctx)
	}
}

// setCRD records a CRD's new state (or its deletion) and starts the probes of the resources
// it now serves. It does not read discovery again: a CRD's events say all there is to know
// of the resources it defines, and nothing of the others. (Reading it at every CRD event made
// a pickup wait, 300-500 ms, behind one or two discovery sweeps, each a request per group
// version through the client's rate limit, and did so for every CRD change in the cluster.)
func (t *resourceTracker) setCRD(ctx context.Context, c *crdInfo, deleted bool) {
	key := c.Spec.Group + "/" + c.Spec.Names.Plural
	t.mu.Lock()
	t.crdBacked[key] = true
	if deleted {
		delete(t.crds, key)
	} else {
		t.crds[key] = c
	}
	for gvr := range t.wanted {
		if gvr.Group != c.Spec.Group || gvr.Resource != c.Spec.Names.Plural {
			continue
		}
		switch {
		case deleted || !c.serves(gvr.Version):
			delete(t.confirmed, gvr)
		case !t.confirmed[gvr]:
			t.probeLocked(ctx, gvr)
		}
	}
	t.broadcastLocked()
	t.mu.Unlock()
}

// probeLocked opens a watch of gvr (and stops it at once) until the server answers anything
// but 404, 429 or 503, then marks it confirmed: the kube-apiserver serves a new CRD's
// discovery before its storage is ready, and a controller started then would back off for
// the second of its Retry-After. A watch, not a list: while its watch cache initialises the
// kube-apiserver (v1.36) serves lists from etcd but answers watches 429, and an informer
// needs the watch (a list probe let 6 of 100 starts wait 1.1-1.4 s).
func (t *resourceTracker) probeLocked(ctx context.Context, gvr meta.GroupVersionResource) {
	if t.probing[gvr] {
		return
	}
	t.probing[gvr] = true
	t.wg.Go(func() {
		res := apiclient.NewResource[*metaOnly](t.api, gvr).Namespace(t.ns)
		delay := 20 * time.Millisecond
		deadline := time.Now().Add(10 * time.Second)
		for {
			// No resourceVersion: the watch starts at the newest, without initial events.
			w, err := res.Watch(ctx, apiclient.ListOptions{})
			if err == nil {
				w.Stop()
			}
			if ctx.Err() != nil {
				break
			}
			if err == nil || !(meta.IsNotFound(err) || meta.IsTooManyRequests(err) || meta.IsServiceUnavailable(err)) || time.Now().After(deadline) {
				break
			}
			timer := time.NewTimer(delay)
			select {
			case <-ctx.Done():
			case <-timer.C:
			}
			timer.Stop()
			delay = min(2*delay, 200*time.Millisecond)
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		delete(t.probing, gvr)
		// Confirmed only if the CRD still serves it (it may have gone during the probe).
		if c, ok := t.crds[gvr.Group+"/"+gvr.Resource]; ok && c.serves(gvr.Version) {
			t.confirmed[gvr] = true
		}
		t.broadcastLocked()
	})
}

// discover reads discovery again.
func (t *resourceTracker) discover(ctx context.Context) {
	t.api.InvalidateDiscovery()
	res, err := t.api.ServerResources(ctx)
	if res == nil && err != nil {
		if ctx.Err() == nil {
			t.log.Info("discovery failed; keeping what it said last", "err", err)
		}
		return
	}
	listed := make(map[meta.GroupVersionResource]struct{}, len(res))
	for _, r := range res {
		listed[r.GroupVersionResource] = struct{}{}
	}
	t.mu.Lock()
	t.listed = listed
	t.broadcastLocked()
	t.mu.Unlock()
}

// servedLocked reports whether gvr is served.
func (t *resourceTracker) servedLocked(gvr meta.GroupVersionResource) bool {
	if c, ok := t.crds[gvr.Group+"/"+gvr.Resource]; ok {
		if !c.serves(gvr.Version) {
			return false
		}
		// A change of the CRD that keeps the version served (another version added, a
		// label) keeps it confirmed: no new probe.
		return t.confirmed[gvr]
	}
	if t.crdBacked[gvr.Group+"/"+gvr.Resource] {
		// Its CRD is gone: discovery may not have caught up yet.
		return false
	}
	_, listed := t.listed[gvr]
	return listed
}

// crdResource returns gvr as the CRD the tracker has seen defines it (its kind and scope),
// if that CRD serves it. The Builder's kind check reads it for a resource that discovery,
// read at intervals, does not list yet.
func (t *resourceTracker) crdResource(gvr meta.GroupVersionResource) (apiclient.APIResource, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.crds[gvr.Group+"/"+gvr.Resource]
	if !ok || !c.serves(gvr.Version) {
		return apiclient.APIResource{}, false
	}
	return apiclient.APIResource{GroupVersionResource: gvr, Kind: c.Spec.Names.Kind, Namespaced: c.Spec.Scope == "Namespaced"}, true
}

// missing returns those of gvrs that are not served, and a channel closed at the tracker's
// next change; before the tracker's first read, every resource is missing.
func (t *resourceTracker) missing(gvrs []meta.GroupVersionResource) ([]meta.GroupVersionResource, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []meta.GroupVersionResource
	for _, g := range gvrs {
		if !t.synced || !t.servedLocked(g) {
			out = append(out, g)
		}
	}
	return out, t.changed
}

// waitServed waits until every one of gvrs is served (nil) or ctx is done (its error),
// calling waiting with the missing resources whenever they change.
func (t *resourceTracker) waitServed(ctx context.Context, gvrs []meta.GroupVersionResource, waiting func([]meta.GroupVersionResource)) error {
	var last []meta.GroupVersionResource
	for {
		miss, changed := t.missing(gvrs)
		if !slices.Equal(miss, last) || last == nil {
			waiting(miss)
			last = miss
			if last == nil {
				last = []meta.GroupVersionResource{}
			}
		}
		if len(miss) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// whenGone returns a channel closed when one of gvrs stops being served (or ctx ends).
func (t *resourceTracker) whenGone(ctx context.Context, gvrs []meta.GroupVersionResource) (<-chan []meta.GroupVersionResource, func()) {
	out := make(chan []meta.GroupVersionResource, 1)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			miss, changed := t.missing(gvrs)
			if len(miss) > 0 {
				out <- miss
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-changed:
			}
		}
	}()
	return out, func() { cancel(); <-done }
}

// gvrList writes resources as "widgets.v1.example.com, ...".
func gvrList(gvrs []meta.GroupVersionResource) string {
	s := make([]string, len(gvrs))
	for i, g := range gvrs {
		s[i] = g.String()
	}
	return strings.Join(s, ", ")
}

// NotServedError is the readiness error of a controller that follows its resources while
// one of them is not served (see Options.FollowResources).
type NotServedError struct {
	// Controller is the controller's name.
	Controller string
	// Resources are the resources it waits for.
	Resources []meta.GroupVersionResource
}

// Error reads "waiting for resource widgets.v1.example.com to be served".
func (e *NotServedError) Error() string {
	noun := "resource"
	if len(e.Resources) > 1 {
		noun = "resources"
	}
	return fmt.Sprintf("waiting for %s %s to be served", noun, gvrList(e.Resources))
}
