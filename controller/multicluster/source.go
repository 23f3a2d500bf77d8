package multicluster

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// WatchOptions are the optional settings of WatchWithOptions and WatchHubWithOptions.
type WatchOptions[T meta.Object] struct {
	// Predicates filter the events before the handler. Default none.
	Predicates []controller.Predicate[T]
	// Informer selects the informer: another resource than T's registered one (the
	// exception), a namespace, selectors. Default: T's registered resource, the factory's
	// namespace and selectors.
	Informer controller.InformerOptions
}

// Watch makes c watch T in every cluster it reconciles: in each, the cluster's informer of
// T (acquired when the cluster is engaged, released when it is disengaged) passes its
// events through predicates to handler, whose Requests are the cluster's. The handlers of
// controller (EnqueueRequestForObject, EnqueueRequestForOwner, EnqueueRequestsFromMapFunc)
// work unchanged: the cluster is added to the Requests they enqueue. T must be registered
// in the Manager's type registry. Call it before the Manager starts.
func Watch[T meta.Object](c *Controller, handler controller.EventHandler[T], predicates ...controller.Predicate[T]) error {
	return WatchWithOptions(c, handler, WatchOptions[T]{Predicates: predicates})
}

// WatchWithOptions is Watch with options.
func WatchWithOptions[T meta.Object](c *Controller, handler controller.EventHandler[T], opts WatchOptions[T]) error {
	if handler == nil {
		return fmt.Errorf("multicluster: controller %s: Watch: nil handler", c.name)
	}
	gvr, err := resourceFor[T](c.fleet.mgr.Kinds(), opts.Informer.Resource)
	if err != nil {
		return fmt.Errorf("multicluster: controller %s: Watch: %w", c.name, err)
	}
	s := &clusterSource[T]{
		c: c, gvr: gvr, handler: handler, preds: opts.Predicates,
		iopts: informer.InformerForOptions{Namespace: opts.Informer.Namespace, LabelSelector: opts.Informer.LabelSelector, FieldSelector: opts.Informer.FieldSelector},
	}
	return c.addSource(s, nil)
}

// WatchHub makes c watch T in the hub (the Manager's own cluster, through its shared
// informer of T): every Request handler enqueues is enqueued for every cluster c
// reconciles, and a cluster that c starts reconciling gets the Requests of every object
// the hub's cache holds then (as an initial list). This is how a fleet follows a desired
// state kept in the hub: the ConfigMap to copy to every cluster, a policy to apply
// everywhere. Call it before the Manager starts.
func WatchHub[T meta.Object](c *Controller, handler controller.EventHandler[T], predicates ...controller.Predicate[T]) error {
	return WatchHubWithOptions(c, handler, WatchOptions[T]{Predicates: predicates})
}

// WatchHubWithOptions is WatchHub with options.
func WatchHubWithOptions[T meta.Object](c *Controller, handler controller.EventHandler[T], opts WatchOptions[T]) error {
	if handler == nil {
		return fmt.Errorf("multicluster: controller %s: WatchHub: nil handler", c.name)
	}
	inf, err := controller.InformerForWithOptions[T](c.fleet.mgr, opts.Informer)
	if err != nil {
		return fmt.Errorf("multicluster: controller %s: WatchHub: %w", c.name, err)
	}
	return c.addSource(nil, &hubSource[T]{c: c, inf: inf, handler: handler, preds: opts.Predicates})
}

// resourceFor resolves the resource T is watched as: T's registered resource, or resource
// (the exception) for which T, if registered, must be registered.
func resourceFor[T meta.Object](reg *kinds.Registry, resource meta.GroupVersionResource) (meta.GroupVersionResource, error) {
	t := reflect.TypeFor[T]()
	info, ok := reg.Lookup(t)
	switch {
	case resource.Resource == "" && !ok:
		return resource, &kinds.NotRegisteredError{Type: t}
	case resource.Resource == "":
		return info.GroupVersionResource(), nil
	case ok && (info.Group != resource.Group || info.Resource != resource.Resource):
		return resource, &controller.KindMismatchError{Type: t, Registered: info, Watched: resource}
	}
	return resource, nil
}

// source is a Watch: bound to each engaged cluster.
type source interface {
	bind(cl *Cluster) binding
}

// binding is a source in one cluster: its informer acquired, its handler registered while
// the controller reconciles the cluster.
type binding interface {
	activate(ctx context.Context, q *clusterQueue) error
	synced() <-chan struct{}
	deactivate()
	release()
}

// hubSrc is a WatchHub.
type hubSrc interface {
	start(ctx context.Context) error
	synced() <-chan struct{}
	stop()
	replay(ctx context.Context, q *clusterQueue)
}

type clusterSource[T meta.Object] struct {
	c       *Controller
	gvr     meta.GroupVersionResource
	iopts   informer.InformerForOptions
	handler controller.EventHandler[T]
	preds   []controller.Predicate[T]
}

func (s *clusterSource[T]) bind(cl *Cluster) binding {
	return &clusterBinding[T]{s: s, ref: informer.AcquireWithOptions[T](cl.factory, s.gvr, s.iopts)}
}

type clusterBinding[T meta.Object] struct {
	s   *clusterSource[T]
	ref *informer.Ref[T]
	reg *informer.Registration[T]
}

func (b *clusterBinding[T]) activate(ctx context.Context, q *clusterQueue) error {
	reg, err := b.ref.Informer().AddEventHandlerWithOptions(&eventHandler[T]{ctx: ctx, q: q, handler: b.s.handler, preds: b.s.preds},
		informer.HandlerOptions{Name: "multicluster:" + b.s.c.name})
	if err != nil {
		return err
	}
	b.reg = reg
	return nil
}

func (b *clusterBinding[T]) synced() <-chan struct{} {
	if b.reg == nil {
		return closedChan
	}
	return b.reg.Synced()
}

func (b *clusterBinding[T]) deactivate() {
	if b.reg == nil {
		return
	}
	if err := b.ref.Informer().RemoveEventHandler(b.reg); err == nil {
		<-b.reg.Done() // the call in progress, if any, has returned
	}
	b.reg = nil
}

func (b *clusterBinding[T]) release() {
	b.deactivate()
	b.ref.Release()
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

type hubSource[T meta.Object] struct {
	c       *Controller
	inf     *informer.Informer[T]
	handler controller.EventHandler[T]
	preds   []controller.Predicate[T]
	reg     atomic.Pointer[informer.Registration[T]]
}

func (s *hubSource[T]) start(ctx context.Context) error {
	reg, err := s.inf.AddEventHandlerWithOptions(&eventHandler[T]{ctx: ctx, q: &hubQueue{c: s.c}, handler: s.handler, preds: s.preds},
		informer.HandlerOptions{Name: "multicluster-hub:" + s.c.name})
	if err != nil {
		return err
	}
	s.reg.Store(reg)
	return nil
}

func (s *hubSource[T]) synced() <-chan struct{} {
	if reg := s.reg.Load(); reg != nil {
		return reg.Synced()
	}
	return nil
}

func (s *hubSource[T]) stop() {
	reg := s.reg.Swap(nil)
	if reg == nil {
		return
	}
	if err := s.inf.RemoveEventHandler(reg); err == nil {
		<-reg.Done()
	}
}

// replay hands the objects of the hub's cache to the handler as an initial list whose
// Requests go to q's cluster only.
func (s *hubSource[T]) replay(ctx context.Context, q *clusterQueue) {
	h := &eventHandler[T]{ctx: ctx, q: q, handler: s.handler, preds: s.preds}
	for _, obj := range s.inf.GetIndexer().List() {
		h.OnAdd(obj, true)
	}
}

// eventHandler passes an informer's notifications through the predicates to a controller
// handler, with q as its queue.
type eventHandler[T any] struct {
	ctx     context.Context
	q       controller.Queue
	handler controller.EventHandler[T]
	preds   []controller.Predicate[T]
}

func (h *eventHandler[T]) OnAdd(obj T, isInInitialList bool) {
	e := controller.CreateEvent[T]{Object: obj, IsInInitialList: isInInitialList}
	for _, p := range h.preds {
		if !p.Create(e) {
			return
		}
	}
	h.handler.Create(h.ctx, e, h.q)
}

func (h *eventHandler[T]) OnUpdate(oldObj, newObj T) {
	e := controller.UpdateEvent[T]{ObjectOld: oldObj, ObjectNew: newObj}
	for _, p := range h.preds {
		if !p.Update(e) {
			return
		}
	}
	h.handler.Update(h.ctx, e, h.q)
}

func (h *eventHandler[T]) OnDelete(obj T, finalStateUnknown bool) {
	e := controller.DeleteEvent[T]{Object: obj, DeleteStateUnknown: finalStateUnknown}
	for _, p := range h.preds {
		if !p.Delete(e) {
			return
		}
	}
	h.handler.Delete(h.ctx, e, h.q)
}

// errViewGet: the queue a handler sees hands nothing out.
var errViewGet = errors.New("multicluster: a handler's queue does not hand Requests out")

// clusterQueue is the controller's queue as the handlers of one cluster see it: what they
// add is added for that cluster, while the controller reconciles it (live).
type clusterQueue struct {
	c       *Controller
	cluster string
	live    atomic.Bool
}

func (q *clusterQueue) req(r controller.Request) Request {
	return Request{Cluster: q.cluster, Request: r}
}

func (q *clusterQueue) Add(r controller.Request) {
	if q.live.Load() {
		q.c.queue.Add(q.req(r))
	}
}

func (q *clusterQueue) AddWithPriority(r controller.Request, p int) {
	if q.live.Load() {
		q.c.queue.AddWithPriority(q.req(r), p)
	}
}

func (q *clusterQueue) AddAfter(r controller.Request, d time.Duration) {
	if q.live.Load() {
		q.c.queue.AddAfter(q.req(r), d)
	}
}

func (q *clusterQueue) AddRateLimited(r controller.Request) {
	if q.live.Load() {
		q.c.queue.AddRateLimited(q.req(r))
	}
}

func (q *clusterQueue) Forget(r controller.Request)          { q.c.queue.Forget(q.req(r)) }
func (q *clusterQueue) NumRequeues(r controller.Request) int { return q.c.queue.NumRequeues(q.req(r)) }
func (q *clusterQueue) Len() int                             { return q.c.queue.Len() }
func (q *clusterQueue) Get() (controller.Request, bool)      { return controller.Request{}, true }
func (q *clusterQueue) GetWithContext(context.Context) (controller.Request, bool, error) {
	return controller.Request{}, true, errViewGet
}
func (q *clusterQueue) Done(controller.Request)                        {}
func (q *clusterQueue) ShutDown()                                      {}
func (q *clusterQueue) ShutDownWithDrain()                             {}
func (q *clusterQueue) ShutDownWithDrainContext(context.Context) error { return nil }
func (q *clusterQueue) ShuttingDown() bool                             { return q.c.queue.ShuttingDown() }

// hubQueue is the controller's queue as the handlers of a hub source see it: what they add
// is added for every cluster the controller reconciles.
type hubQueue struct{ c *Controller }

func (q *hubQueue) each(fn func(cq *clusterQueue)) {
	for _, cq := range q.c.liveQueues() {
		fn(cq)
	}
}

func (q *hubQueue) Add(r controller.Request) { q.each(func(cq *clusterQueue) { cq.Add(r) }) }
func (q *hubQueue) AddWithPriority(r controller.Request, p int) {
	q.each(func(cq *clusterQueue) { cq.AddWithPriority(r, p) })
}
func (q *hubQueue) AddAfter(r controller.Request, d time.Duration) {
	q.each(func(cq *clusterQueue) { cq.AddAfter(r, d) })
}
func (q *hubQueue) AddRateLimited(r controller.Request) {
	q.each(func(cq *clusterQueue) { cq.AddRateLimited(r) })
}
func (q *hubQueue) Forget(r controller.Request)          { q.each(func(cq *clusterQueue) { cq.Forget(r) }) }
func (q *hubQueue) NumRequeues(r controller.Request) int { return 0 }
func (q *hubQueue) Len() int                             { return q.c.queue.Len() }
func (q *hubQueue) Get() (controller.Request, bool)      { return controller.Request{}, true }
func (q *hubQueue) GetWithContext(context.Context) (controller.Request, bool, error) {
	return controller.Request{}, true, errViewGet
}
func (q *hubQueue) Done(controller.Request)                        {}
func (q *hubQueue) ShutDown()                                      {}
func (q *hubQueue) ShutDownWithDrain()                             {}
func (q *hubQueue) ShutDownWithDrainContext(context.Context) error { return nil }
func (q *hubQueue) ShuttingDown() bool                             { return q.c.queue.ShuttingDown() }
