package controller

import (
	"context"
	"slices"

	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/workqueue"
)

// Queue is the controller's work queue as handlers see it: Requests are added (at once, with
// a priority, after a delay, or rate limited) and deduplicated until a worker takes them.
type Queue = workqueue.RateLimitingInterface[Request]

// Priorities handed to Queue.AddWithPriority by the built-in handlers. The controller's queue
// orders by priority (higher first), so objects of an informer's initial list and periodic
// resyncs, which a controller must visit but not urgently, wait behind live changes: a
// controller that starts over 10,000 existing objects still reacts at once to the one a user
// just edited. Options.PriorityAging keeps them from waiting for ever.
const (
	// PriorityDefault is the priority of live events.
	PriorityDefault = 0
	// PriorityLow is the priority of adds from an informer's initial list and of resyncs.
	PriorityLow = -100
)

// CreateEvent says an object appeared in a source: a watch ADDED event, or an object of the
// informer's initial list (IsInInitialList) or of its cache when the handler was added.
type CreateEvent[T any] struct {
	Object          T
	IsInInitialList bool
}

// UpdateEvent says an object changed. ObjectOld is the state the source delivered last.
// When both have the same resourceVersion the event is a periodic resync.
type UpdateEvent[T any] struct {
	ObjectOld T
	ObjectNew T
}

// DeleteEvent says an object is gone. Object is its last known state; DeleteStateUnknown is
// true when the deletion was inferred from a relist (the watch missed it), in which case the
// object may be older than its final state on the server.
type DeleteEvent[T any] struct {
	Object             T
	DeleteStateUnknown bool
}

// GenericEvent is an event from outside the API server (a Channel source): "look at this
// object again", for example from a webhook or an external system.
type GenericEvent[T any] struct {
	Object T
}

// EventHandler turns a source's events into Requests on the controller's queue
// (controller-runtime's handler.TypedEventHandler). A handler runs on its source's delivery
// goroutine: it must be quick and must not block (enqueueing is quick). Objects are shared
// with the informer's cache: never modify them.
type EventHandler[T any] interface {
	Create(ctx context.Context, e CreateEvent[T], q Queue)
	Update(ctx context.Context, e UpdateEvent[T], q Queue)
	Delete(ctx context.Context, e DeleteEvent[T], q Queue)
	Generic(ctx context.Context, e GenericEvent[T], q Queue)
}

// EventHandlerFuncs adapts functions to EventHandler; a nil function ignores its events.
type EventHandlerFuncs[T any] struct {
	CreateFunc  func(ctx context.Context, e CreateEvent[T], q Queue)
	UpdateFunc  func(ctx context.Context, e UpdateEvent[T], q Queue)
	DeleteFunc  func(ctx context.Context, e DeleteEvent[T], q Queue)
	GenericFunc func(ctx context.Context, e GenericEvent[T], q Queue)
}

// Create calls CreateFunc if it is set.
func (f EventHandlerFuncs[T]) Create(ctx context.Context, e CreateEvent[T], q Queue) {
	if f.CreateFunc != nil {
		f.CreateFunc(ctx, e, q)
	}
}

// Update calls UpdateFunc if it is set.
func (f EventHandlerFuncs[T]) Update(ctx context.Context, e UpdateEvent[T], q Queue) {
	if f.UpdateFunc != nil {
		f.UpdateFunc(ctx, e, q)
	}
}

// Delete calls DeleteFunc if it is set.
func (f EventHandlerFuncs[T]) Delete(ctx context.Context, e DeleteEvent[T], q Queue) {
	if f.DeleteFunc != nil {
		f.DeleteFunc(ctx, e, q)
	}
}

// Generic calls GenericFunc if it is set.
func (f EventHandlerFuncs[T]) Generic(ctx context.Context, e GenericEvent[T], q Queue) {
	if f.GenericFunc != nil {
		f.GenericFunc(ctx, e, q)
	}
}

// RequestFor returns the Request that names obj.
func RequestFor(obj meta.Object) Request {
	return Request{Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// EnqueueRequestForObject returns the handler of a controller's primary resource: every
// event enqueues the Request of the object itself (controller-runtime's
// handler.EnqueueRequestForObject). Objects of an initial list and resyncs are enqueued with
// PriorityLow.
func EnqueueRequestForObject[T meta.Object]() EventHandler[T] {
	return EventHandlerFuncs[T]{
		CreateFunc: func(_ context.Context, e CreateEvent[T], q Queue) {
			if isNil(e.Object) {
				return
			}
			q.AddWithPriority(RequestFor(e.Object), createPriority(e))
		},
		UpdateFunc: func(_ context.Context, e UpdateEvent[T], q Queue) {
			if !isNil(e.ObjectNew) {
				q.AddWithPriority(RequestFor(e.ObjectNew), updatePriority(e))
			} else if !isNil(e.ObjectOld) {
				q.Add(RequestFor(e.ObjectOld))
			}
		},
		DeleteFunc: func(_ context.Context, e DeleteEvent[T], q Queue) {
			if !isNil(e.Object) {
				q.Add(RequestFor(e.Object))
			}
		},
		GenericFunc: func(_ context.Context, e GenericEvent[T], q Queue) {
			if !isNil(e.Object) {
				q.Add(RequestFor(e.Object))
			}
		},
	}
}

func createPriority[T any](e CreateEvent[T]) int {
	if e.IsInInitialList {
		return PriorityLow
	}
	return PriorityDefault
}

// updatePriority is PriorityLow for a resync (both objects have the same resourceVersion),
// as in controller-runtime, else PriorityDefault.
func updatePriority[T any](e UpdateEvent[T]) int {
	type versioned interface{ GetResourceVersion() string }
	o, okOld := any(e.ObjectOld).(versioned)
	n, okNew := any(e.ObjectNew).(versioned)
	if okOld && okNew && !isNil(e.ObjectOld) && !isNil(e.ObjectNew) && o.GetResourceVersion() != "" &&
		o.GetResourceVersion() == n.GetResourceVersion() {
		return PriorityLow
	}
	return PriorityDefault
}

// OwnedObject is an object that lists its owners: any pointer to a struct embedding
// meta.ObjectMeta, and *meta.Unstructured.
type OwnedObject interface {
	meta.Object
	GetOwnerReferences() []meta.OwnerReference
}

// OwnerOptions are the optional settings of EnqueueRequestForOwner.
type OwnerOptions struct {
	// OnlyController follows only the ownerReference marked controller: true (the one
	// managing controller an object can have), as controllers that create children do.
	// Default false: every matching ownerReference is followed.
	OnlyController bool
	// ClusterScoped says the owner kind is cluster-scoped: the enqueued Request has an empty
	// namespace. Default false: the owner is taken to live in the owned object's namespace,
	// which is the only place a namespaced owner can be (the API forbids owner references
	// across namespaces: the garbage collector treats such an owner as missing and deletes
	// the dependent).
	ClusterScoped bool
}

// EnqueueRequestForOwner returns a handler for a controller's children: every event enqueues
// the Request of the object's owners whose ownerReference has the API group ownerGroup (""
// for the core group; the version in the reference's apiVersion is ignored, so an owner
// recorded as v1beta1 still matches after an API upgrade) and kind ownerKind
// (controller-runtime's handler.EnqueueRequestForOwner). An update enqueues the owners of
// both the old and the new object, so a change of owner reaches both.
func EnqueueRequestForOwner[T OwnedObject](ownerGroup, ownerKind string, opts OwnerOptions) EventHandler[T] {
	return EnqueueRequestsFromMapFunc(func(_ context.Context, obj T) []Request {
		var out []Request
		for _, ref := range obj.GetOwnerReferences() {
			if ref.Kind != ownerKind || (opts.OnlyController && !ref.IsController()) {
				continue
			}
			gv, err := meta.ParseGroupVersion(ref.APIVersion)
			if err != nil || gv.Group != ownerGroup {
				continue
			}
			req := Request{Name: ref.Name}
			if !opts.ClusterScoped {
				req.Namespace = obj.GetNamespace()
			}
			out = append(out, req)
		}
		return out
	})
}

// MapFunc maps an object to the Requests it concerns.
type MapFunc[T any] func(ctx context.Context, obj T) []Request

// EnqueueRequestsFromMapFunc returns a handler that enqueues whatever fn maps the event's
// object to (controller-runtime's handler.EnqueueRequestsFromMapFunc): for example a
// Namespace event mapped to every object that must react to the namespace's labels. An
// update maps both the old and the new object and enqueues the union once each.
func EnqueueRequestsFromMapFunc[T any](fn MapFunc[T]) EventHandler[T] {
	mapped := func(ctx context.Context, obj T) []Request {
		if isNil(obj) {
			return nil
		}
		return fn(ctx, obj)
	}
	add := func(q Queue, reqs []Request, prio int) {
		for _, r := range reqs {
			q.AddWithPriority(r, prio)
		}
	}
	return EventHandlerFuncs[T]{
		CreateFunc: func(ctx context.Context, e CreateEvent[T], q Queue) {
			add(q, mapped(ctx, e.Object), createPriority(e))
		},
		UpdateFunc: func(ctx context.Context, e UpdateEvent[T], q Queue) {
			// The queue would absorb a second Add of a waiting Request anyway; skipping the
			// repeats keeps one add per Request in traces and metrics.
			prio := updatePriority(e)
			old := mapped(ctx, e.ObjectOld)
			add(q, old, prio)
			for _, r := range mapped(ctx, e.ObjectNew) {
				if !slices.Contains(old, r) {
					q.AddWithPriority(r, prio)
				}
			}
		},
		DeleteFunc: func(ctx context.Context, e DeleteEvent[T], q Queue) {
			add(q, mapped(ctx, e.Object), PriorityDefault)
		},
		GenericFunc: func(ctx context.Context, e GenericEvent[T], q Queue) {
			add(q, mapped(ctx, e.Object), PriorityDefault)
		},
	}
}
