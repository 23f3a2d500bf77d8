package controller

import (
	"context"
	"errors"
	"reflect"
	"sync"

	"github.com/informerkit/informerkit/indexer"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// IndexByControllerUID is the name of the cache index Owns adds to a child type's shared
// informer: children by the uid of their controller owner reference (the one with
// controller: true). Every controller that owns the type shares it; query it with
// OwnedType.ChildrenOf, or through the Manager's client (client.ListOptions{Index:
// IndexByControllerUID, IndexValue: uid}), which returns deep copies and waits until the
// cache shows the client's own writes.
const IndexByControllerUID = "informerkit.io/controller-uid"

// PrimaryInput is the primary type of a Builder, made by Primary.
type PrimaryInput interface {
	bindPrimary(b *Builder) (Source, kinds.Info, error)
	goType() reflect.Type
}

// OwnedInput is a type of children of a Builder, made by Owned.
type OwnedInput interface {
	bindOwned(b *Builder, owner *kinds.Info) (Source, error)
	resource(m *Manager) (meta.GroupVersionResource, error)
}

// WatchedInput is another watched type of a Builder, made by Watched.
type WatchedInput interface {
	bindWatched(b *Builder) (Source, error)
	resource(m *Manager) (meta.GroupVersionResource, error)
}

// PrimaryOptions are the optional settings of PrimaryWithOptions.
type PrimaryOptions[T meta.Object] struct {
	// Predicates filter the primary type's events (e.g. GenerationChanged, so that the
	// controller's own status writes do not wake it). Default none.
	Predicates []Predicate[T]
	// WrapHandler, if set, wraps the handler that enqueues the object's Request (after the
	// predicates), for tracing or metrics. Default none.
	WrapHandler func(EventHandler[T]) EventHandler[T]
	// Resource is the exception to T's registered resource (see Resource's doc on
	// InformerOptions). Default: the resource T is registered as.
	Resource meta.GroupVersionResource
}

// PrimaryType is the typed input of Builder.For.
type PrimaryType[T meta.Object] struct {
	opts  PrimaryOptions[T]
	mu    sync.Mutex
	built bool
	inf   *informer.Informer[T]
}

// Primary returns the Builder.For input of T, watched with the Manager's shared informer of
// the resource T is registered as in the Manager's type registry (kinds.MustRegister,
// ManagerOptions.Kinds); predicates filter its events. The registry also gives the kind that
// Owns finds in owner references.
func Primary[T meta.Object](predicates ...Predicate[T]) *PrimaryType[T] {
	return PrimaryWithOptions(PrimaryOptions[T]{Predicates: predicates})
}

// PrimaryWithOptions is Primary with options.
func PrimaryWithOptions[T meta.Object](opts PrimaryOptions[T]) *PrimaryType[T] {
	return &PrimaryType[T]{opts: opts}
}

// Informer returns the shared informer the input was bound to by Build (nil before). For a
// controller that follows its resources (Options.FollowResources) it is the informer of the
// current run, nil while the controller waits.
func (p *PrimaryType[T]) Informer() *informer.Informer[T] {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.inf
}

func (p *PrimaryType[T]) goType() reflect.Type { return reflect.TypeFor[T]() }

func (p *PrimaryType[T]) bindPrimary(b *Builder) (Source, kinds.Info, error) {
	info, gvr, err := kindOf[T](b.mgr, p.opts.Resource)
	if err != nil {
		return nil, kinds.Info{}, err
	}
	p.mu.Lock()
	if p.built {
		p.mu.Unlock()
		return nil, kinds.Info{}, ErrAlreadyBuilt
	}
	p.built = true
	p.mu.Unlock()
	if b.opts.Sharded && b.opts.FollowResources {
		return nil, kinds.Info{}, errors.New("controller: Options.Sharded and FollowResources cannot be combined")
	}
	if b.opts.Sharded {
		g, children, err := shardPrimary[T](b, gvr, info)
		if err != nil {
			return nil, kinds.Info{}, err
		}
		b.shard, b.children = g, children
	}
	var h EventHandler[T] = EnqueueRequestForObject[T]()
	if b.shard != nil {
		inf, err := sharedInformer[T](b.mgr, gvr)
		if err != nil {
			return nil, kinds.Info{}, err
		}
		b.shard.bindUIDs(cachedUID(inf))
		h = gateDeletions(b.shard, h)
	}
	if p.opts.WrapHandler != nil {
		h = p.opts.WrapHandler(h)
	}
	set := func(inf *informer.Informer[T]) error {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.inf = inf
		return nil
	}
	return bindSource(b, gvr, h, withFilters(p.opts.Predicates, b.filters), set), info, nil
}

// bindSource is the source of an input: Kind over the Manager's shared informer, taken
// now; or, for a controller that follows its resources, a Kind source whose informer is
// taken each time it runs. set is told the informer (and nil once that source has released
// it).
func bindSource[T meta.Object](b *Builder, gvr meta.GroupVersionResource, h EventHandler[T], predicates []Predicate[T], set func(*informer.Informer[T]) error) Source {
	if b.opts.FollowResources {
		return &acquiredKind[T]{rerunnable: rerunnable[T]{dispatcher: dispatcher[T]{handler: h, predicates: predicates}, m: b.mgr, gvr: gvr}, bound: set}
	}
	inf, err := sharedInformer[T](b.mgr, gvr)
	if err == nil {
		err = set(inf)
	}
	if err != nil {
		return errSource{err} // Controller.Watch returns err
	}
	return FromInformer[T](inf, h, predicates...)
}

// errSource is a source that fails at once (an input whose binding failed): Controller.Watch
// refuses it with its error.
type errSource struct{ err error }

func (s errSource) Run(context.Context, Queue) error { return s.err }
func (s errSource) HasSynced() bool                  { return false }

// ExpectationsObserver receives the creations and deletions of children that Owns sees,
// before its predicates, to satisfy the expectations of their owner (kube-controller-manager's
// ControllerExpectations, see package controller/expectations, whose UIDTracking[Request]
// implements it). DeletionObserved may be called more than once for one child (a graceful
// deletion, then the delete): implementations count a uid once.
type ExpectationsObserver interface {
	CreationObserved(owner Request)
	DeletionObserved(owner Request, uid string)
}

// OwnedOptions are the optional settings of OwnedWithOptions.
type OwnedOptions[T meta.Accessor] struct {
	// Predicates filter the children's events before they enqueue their owner. Default none.
	Predicates []Predicate[T]
	// Expectations, if set, is told about every child created and deleted, by its owner's
	// Request, as the seed's ReplicaSet controller does in its pod handlers: a child added
	// (not being deleted) is a creation; a child added or updated with a deletion
	// timestamp, or deleted (tombstones included), is a deletion of its uid. Default none.
	Expectations ExpectationsObserver
	// WrapHandler, if set, wraps the handler that enqueues the owner (after the predicates),
	// for tracing or metrics. Default none.
	WrapHandler func(EventHandler[T]) EventHandler[T]
	// Resource is the exception to T's registered resource (see Resource's doc on
	// InformerOptions). Default: the resource T is registered as.
	Resource meta.GroupVersionResource
}

// OwnedType is the typed input of Builder.Owns, and the reconciler's typed view of the
// children: ChildrenOf.
type OwnedType[T meta.Accessor] struct {
	opts  OwnedOptions[T]
	mu    sync.Mutex
	built bool
	inf   *informer.Informer[T]
}

// Owned returns the Builder.Owns input of the child type T, watched with the Manager's
// shared informer of the resource T is registered as; predicates filter its events. Keep it:
// its ChildrenOf lists an owner's children from the cache.
func Owned[T meta.Accessor](predicates ...Predicate[T]) *OwnedType[T] {
	return OwnedWithOptions(OwnedOptions[T]{Predicates: predicates})
}

// OwnedWithOptions is Owned with options (expectations, ...).
func OwnedWithOptions[T meta.Accessor](opts OwnedOptions[T]) *OwnedType[T] {
	return &OwnedType[T]{opts: opts}
}

// Informer returns the shared informer the input was bound to by Build (nil before; for a
// controller that follows its resources, the informer of the current run).
func (o *OwnedType[T]) Informer() *informer.Informer[T] {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.inf
}

// ChildrenOf returns the cached children whose controller owner reference has owner's uid,
// in no particular order. They are the informer's objects: read them, never change them
// (deepcopy.Copy first). The cache may lag behind the controller's own creates and deletes:
// use expectations (OwnedOptions.Expectations) or read through the Manager's client (see
// IndexByControllerUID). It fails with ErrNotBuilt before Build.
func (o *OwnedType[T]) ChildrenOf(owner interface{ GetUID() string }) ([]T, error) {
	return o.ChildrenOfUID(owner.GetUID())
}

// ChildrenOfUID is ChildrenOf by the owner's uid.
func (o *OwnedType[T]) ChildrenOfUID(uid string) ([]T, error) {
	inf := o.Informer()
	if inf == nil {
		return nil, ErrNotBuilt
	}
	if uid == "" {
		return nil, nil
	}
	return inf.GetIndexer().ByIndex(IndexByControllerUID, uid)
}

// controllerUID is the index function of IndexByControllerUID.
func controllerUID[T meta.Accessor](obj T) ([]string, error) {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.IsController() && ref.UID != "" {
			return []string{ref.UID}, nil
		}
	}
	return nil, nil
}

func (o *OwnedType[T]) resource(m *Manager) (meta.GroupVersionResource, error) {
	return resourceOf[T](m, o.opts.Resource)
}

// controllerOwnerOf returns a function that finds the Request of an object's controlling
// owner when that owner is of owner's kind (group and kind; any version).
func controllerOwnerOf[T meta.Accessor](owner *kinds.Info) func(T) (Request, bool) {
	group, kind, clusterScoped := owner.Group, owner.Kind, !owner.Namespaced
	return func(obj T) (Request, bool) {
		if isNil(obj) {
			return Request{}, false
		}
		for _, ref := range obj.GetOwnerReferences() {
			if !ref.IsController() || ref.Kind != kind {
				continue
			}
			if gv, err := meta.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != group {
				return Request{}, false
			}
			req := Request{Name: ref.Name}
			if !clusterScoped {
				req.Namespace = obj.GetNamespace()
			}
			return req, true
		}
		return Request{}, false
	}
}

func (o *OwnedType[T]) bindOwned(b *Builder, owner *kinds.Info) (Source, error) {
	if owner == nil {
		return nil, ErrNoPrimary
	}
	gvr, err := o.resource(b.mgr)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	if o.built {
		o.mu.Unlock()
		return nil, ErrAlreadyBuilt
	}
	o.built = true
	o.mu.Unlock()
	if err := shardOwned[T](b, gvr); err != nil {
		return nil, err
	}
	set := func(inf *informer.Informer[T]) error {
		if inf != nil {
			// Shared by every controller owning T: the first adds it, the others find it.
			err := inf.AddIndexers(indexer.Indexers[T]{IndexByControllerUID: controllerUID[T]})
			if err != nil && !errors.Is(err, indexer.ErrDuplicateIndex) {
				return err
			}
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		o.inf = inf
		return nil
	}
	if !b.opts.FollowResources {
		// The index is added at Build, so that an error shows there.
		inf, err := sharedInformer[T](b.mgr, gvr)
		if err == nil {
			err = set(inf)
		}
		if err != nil {
			return nil, err
		}
	}

	ownerOf := controllerOwnerOf[T](owner)
	var enqueue EventHandler[T] = EnqueueRequestsFromMapFunc(func(_ context.Context, obj T) []Request {
		if r, ok := ownerOf(obj); ok {
			return []Request{r}
		}
		return nil
	})
	if o.opts.WrapHandler != nil {
		enqueue = o.opts.WrapHandler(enqueue)
	}
	d := &dispatcher[T]{handler: enqueue, predicates: withFilters(o.opts.Predicates, b.filters)}
	exp := o.opts.Expectations
	if exp == nil {
		return bindSource(b, gvr, EventHandler[T](dispatchHandler[T]{d}), nil, set), nil
	}
	deleted := func(obj T) {
		if r, ok := ownerOf(obj); ok {
			exp.DeletionObserved(r, obj.GetUID())
		}
	}
	// Observations come first, then the predicates and the enqueue: the reconcile the event
	// causes must find the expectation already lowered.
	return bindSource(b, gvr, EventHandler[T](EventHandlerFuncs[T]{
		CreateFunc: func(ctx context.Context, e CreateEvent[T], q Queue) {
			if !isNil(e.Object) {
				if e.Object.GetDeletionTimestamp() != nil {
					// Seen for the first time while already being deleted (a restart, a
					// relist): count it as deleted so that no expectation waits for it.
					deleted(e.Object)
				} else if r, ok := ownerOf(e.Object); ok {
					exp.CreationObserved(r)
				}
			}
			d.create(ctx, e, q)
		},
		UpdateFunc: func(ctx context.Context, e UpdateEvent[T], q Queue) {
			if !isNil(e.ObjectNew) && e.ObjectNew.GetDeletionTimestamp() != nil {
				// A graceful deletion: the child is on its way out, which is what a
				// controller that deleted it waits for.
				deleted(e.ObjectNew)
			}
			d.update(ctx, e, q)
		},
		DeleteFunc: func(ctx context.Context, e DeleteEvent[T], q Queue) {
			if !isNil(e.Object) {
				deleted(e.Object)
			}
			d.delete(ctx, e, q)
		},
		GenericFunc: func(ctx context.Context, e GenericEvent[T], q Queue) { d.generic(ctx, e, q) },
	}), nil, set), nil
}

// dispatchHandler applies a dispatcher's predicates, then its handler.
type dispatchHandler[T any] struct{ d *dispatcher[T] }

func (h dispatchHandler[T]) Create(ctx context.Context, e CreateEvent[T], q Queue) {
	h.d.create(ctx, e, q)
}
func (h dispatchHandler[T]) Update(ctx context.Context, e UpdateEvent[T], q Queue) {
	h.d.update(ctx, e, q)
}
func (h dispatchHandler[T]) Delete(ctx context.Context, e DeleteEvent[T], q Queue) {
	h.d.delete(ctx, e, q)
}
func (h dispatchHandler[T]) Generic(ctx context.Context, e GenericEvent[T], q Queue) {
	h.d.generic(ctx, e, q)
}

// WatchedOptions are the optional settings of WatchedWithOptions.
type WatchedOptions[T meta.Object] struct {
	// Predicates filter the events before the handler. Default none.
	Predicates []Predicate[T]
	// Resource is the exception to T's registered resource (see Resource's doc on
	// InformerOptions). Default: the resource T is registered as.
	Resource meta.GroupVersionResource
}

// WatchedType is the typed input of Builder.Watches.
type WatchedType[T meta.Object] struct {
	handler EventHandler[T]
	opts    WatchedOptions[T]
	mu      sync.Mutex
	built   bool
	inf     *informer.Informer[T]
}

// Watched returns the Builder.Watches input of T, watched with the Manager's shared informer
// of the resource T is registered as: handler (usually EnqueueRequestsFromMapFunc) turns its
// events, filtered by predicates, into Requests.
func Watched[T meta.Object](handler EventHandler[T], predicates ...Predicate[T]) *WatchedType[T] {
	return WatchedWithOptions(handler, WatchedOptions[T]{Predicates: predicates})
}

// WatchedWithOptions is Watched with options.
func WatchedWithOptions[T meta.Object](handler EventHandler[T], opts WatchedOptions[T]) *WatchedType[T] {
	return &WatchedType[T]{handler: handler, opts: opts}
}

// Informer returns the shared informer the input was bound to by Build (nil before; for a
// controller that follows its resources, the informer of the current run).
func (w *WatchedType[T]) Informer() *informer.Informer[T] {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.inf
}

func (w *WatchedType[T]) resource(m *Manager) (meta.GroupVersionResource, error) {
	return resourceOf[T](m, w.opts.Resource)
}

func (w *WatchedType[T]) bindWatched(b *Builder) (Source, error) {
	if w.handler == nil {
		return nil, errors.New("controller: Watched: nil handler")
	}
	gvr, err := w.resource(b.mgr)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	if w.built {
		w.mu.Unlock()
		return nil, ErrAlreadyBuilt
	}
	w.built = true
	w.mu.Unlock()
	set := func(inf *informer.Informer[T]) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.inf = inf
		return nil
	}
	return bindSource(b, gvr, w.handler, withFilters(w.opts.Predicates, b.filters), set), nil
}
