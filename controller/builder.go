package controller

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/sharding/listwatch"
)

// Errors of Builder.Build. The errors it returns wrap them (errors.Is), with the type and
// resource involved; a type the registry does not know gives kinds.ErrNotRegistered.
var (
	// ErrNoPrimary: Owns needs a primary type (For) whose objects own the children.
	ErrNoPrimary = errors.New("controller: Owns needs a primary type: call For")
	// ErrNoSources: the builder has neither For nor Watches, so nothing would ever reconcile.
	ErrNoSources = errors.New("controller: the builder has no sources: call For or Watches")
	// ErrAlreadyBuilt: a Builder builds one controller, and a typed input (Primary, Owned,
	// Watched) belongs to one Builder.
	ErrAlreadyBuilt = errors.New("controller: already built")
	// ErrKindMismatch: the Go type is registered (package kinds) as another resource than the
	// one given as the exception (an input's Resource option), or the server serves its
	// resource as another kind or scope, so owner references written from the registry would
	// name a kind the watched objects are not (see KindMismatchError).
	ErrKindMismatch = errors.New("controller: registered kind does not match the watched resource")
	// ErrNotBuilt: Owned.ChildrenOf called before the Builder that owns it was built.
	ErrNotBuilt = errors.New("controller: the builder has not been built yet")
)

// KindMismatchError says that a Go type's registered kind is not what it is watched
// through: a Resource option names another resource, or discovery serves the resource as
// another kind or scope. An owner reference written from the registry (SetControllerReference)
// would carry the registered apiVersion and kind, which no object of the watched resource
// has, and Owns would never find the owner. It wraps ErrKindMismatch.
type KindMismatchError struct {
	// Type is the Go type.
	Type reflect.Type
	// Registered is its entry in the Manager's type registry.
	Registered kinds.Info
	// Watched is the resource the builder was given.
	Watched meta.GroupVersionResource
	// Served is what the API server's discovery says of Watched, when the mismatch was
	// found there (at Start: another kind or scope than registered); nil when Build found it.
	Served *apiclient.APIResource
}

// Error names the type, the registered kind and the watched resource.
func (e *KindMismatchError) Error() string {
	if e.Served != nil {
		return fmt.Sprintf("controller: %v is registered as kind %s (namespaced=%v) but the server serves %s as kind %s (namespaced=%v): fix the kinds.Info",
			e.Type, e.Registered.Kind, e.Registered.Namespaced, e.Watched, e.Served.Kind, e.Served.Namespaced)
	}
	return fmt.Sprintf("controller: %v is registered as %s %s (resource %q) but watched through %s: fix the kinds.Info or the resource",
		e.Type, gvString(e.Registered.Group, e.Registered.Version), e.Registered.Kind, e.Registered.Resource, e.Watched)
}

// Unwrap returns ErrKindMismatch.
func (e *KindMismatchError) Unwrap() error { return ErrKindMismatch }

func gvString(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}

// Builder wires a controller in one expression (controller-runtime's builder): its primary
// type (For), the types it creates and owns (Owns), other types mapped to its Requests
// (Watches), predicates for every source (WithEventFilter) and its Options:
//
//	pods := controller.Owned[*Pod]()
//	ctl, err := controller.NewBuilder(mgr, "widgets").
//		For(controller.Primary[*Widget](controller.GenerationChanged[*Widget]())).
//		Owns(pods).
//		WithOptions(controller.Options{MaxConcurrentReconciles: 4, MaxRetries: 15}).
//		Build(reconciler)
//	// in Reconcile: children, err := pods.ChildrenOf(widget)
//
// Go methods cannot have type parameters, so the types come in typed inputs made by the
// generic functions Primary, Owned and Watched, which the Builder's methods take. Each
// type's kind and resource come from the Manager's type registry (ManagerOptions.Kinds), and
// each input uses the Manager's shared informer of it (InformerFor), so two controllers
// watching Pods share one cache. The inputs' Resource option is the exception, for a type
// with no one resource (*meta.Unstructured, a type served at two resources).
//
// Errors are collected and returned by Build (or Complete): a type the registry does not
// know (kinds.ErrNotRegistered), a type registered as another resource than a Resource
// option (*KindMismatchError), Owns without For (ErrNoPrimary). When the controller
// starts, the primary type's registered kind and scope are checked against the API server's
// discovery: a kind the server does not serve under that resource (a typo in the
// kinds.Info) would make every owner reference name nothing, so the controller fails at
// once with a *KindMismatchError instead.
type Builder struct {
	mgr     *Manager
	name    string
	primary PrimaryInput
	others  []func(owner *kinds.Info) (Source, error)
	owned   []meta.GroupVersionResource // for the permissions
	watched []meta.GroupVersionResource
	sources []Source
	filters []Predicate[meta.Object]
	opts    Options
	errs    []error
	built   bool
	// With Options.Sharded: the gate of the Requests and how owned types follow the primary.
	shard    *shardGate
	children listwatch.Options
}

// NewBuilder starts a controller named name (unique among the Manager's controllers: it
// labels metrics and logs) for mgr.
func NewBuilder(mgr *Manager, name string) *Builder {
	if mgr == nil {
		panic("controller: NewBuilder: nil Manager")
	}
	return &Builder{mgr: mgr, name: name}
}

// For sets the primary type: each of its events enqueues the object's own Request
// (EnqueueRequestForObject), and Owns's children enqueue their controller owner of this
// type. A second For is an error.
func (b *Builder) For(p PrimaryInput) *Builder {
	switch {
	case p == nil:
		b.errs = append(b.errs, errors.New("controller: Builder.For: nil input"))
	case b.primary != nil:
		b.errs = append(b.errs, errors.New("controller: Builder.For called twice"))
	default:
		b.primary = p
	}
	return b
}

// Owns adds a type of children: an event of a child whose controller owner reference
// (controller: true) names an object of the primary type enqueues that owner's Request. The
// owner's group and kind come from the type registry; the version in the reference is
// ignored, as the garbage collector does. See Owned for the child index and expectations.
func (b *Builder) Owns(o OwnedInput) *Builder {
	if o == nil {
		b.errs = append(b.errs, errors.New("controller: Builder.Owns: nil input"))
		return b
	}
	gvr, err := o.resource(b.mgr)
	if err != nil {
		b.errs = append(b.errs, err)
		return b
	}
	b.others = append(b.others, func(owner *kinds.Info) (Source, error) { return o.bindOwned(b, owner) })
	b.owned = append(b.owned, gvr)
	return b
}

// Watches adds another type whose events the input's handler maps to Requests (usually
// EnqueueRequestsFromMapFunc), e.g. the Namespaces whose labels select what to reconcile.
func (b *Builder) Watches(w WatchedInput) *Builder {
	if w == nil {
		b.errs = append(b.errs, errors.New("controller: Builder.Watches: nil input"))
		return b
	}
	gvr, err := w.resource(b.mgr)
	if err != nil {
		b.errs = append(b.errs, err)
		return b
	}
	b.others = append(b.others, func(*kinds.Info) (Source, error) { return w.bindWatched(b) })
	b.watched = append(b.watched, gvr)
	return b
}

// WatchesSource adds a ready-made Source (Kind over an informer of your own, Channel). The
// event filters of WithEventFilter do not apply to it: give the source its own predicates.
func (b *Builder) WatchesSource(src Source) *Builder {
	if src == nil {
		b.errs = append(b.errs, errors.New("controller: Builder.WatchesSource: nil source"))
		return b
	}
	b.sources = append(b.sources, src)
	return b
}

// WithEventFilter adds a predicate that every event of For, Owns and Watches must pass, on
// top of each input's own predicates (controller-runtime's WithEventFilter). It sees the
// objects as meta.Object. For Owns with expectations, observations are made before any
// predicate, so a filtered event still satisfies an expectation.
func (b *Builder) WithEventFilter(p Predicate[meta.Object]) *Builder {
	if p == nil {
		b.errs = append(b.errs, errors.New("controller: Builder.WithEventFilter: nil predicate"))
		return b
	}
	b.filters = append(b.filters, p)
	return b
}

// WithOptions sets the controller's Options (workers, rate limiter, MaxRetries, ...); the
// last call wins.
func (b *Builder) WithOptions(opts Options) *Builder {
	b.opts = opts
	return b
}

// Build creates the controller, binds every input to the Manager's shared informers (and
// registers the child index of Owns), adds the controller to the Manager and returns it.
// Call it before the Manager starts. On error (the chain's errors, joined, or the first
// binding that failed) no controller is added; informers bound before the failure stay in
// the Manager's factory.
func (b *Builder) Build(r Reconciler) (*Controller, error) {
	if b.built {
		return nil, ErrAlreadyBuilt
	}
	b.built = true
	if r == nil {
		return nil, errors.New("controller: Builder.Build: nil reconciler")
	}
	if err := errors.Join(b.errs...); err != nil {
		return nil, err
	}
	if b.primary == nil && len(b.others) == 0 && len(b.sources) == 0 {
		return nil, ErrNoSources
	}
	if b.opts.Sharded && b.primary == nil {
		return nil, fmt.Errorf("%w: a sharded controller is placed by its primary type", ErrNoPrimary)
	}
	var sources []Source
	var owner *kinds.Info
	if b.primary != nil {
		src, info, err := b.primary.bindPrimary(b)
		if err != nil {
			return nil, err
		}
		owner = &info
		sources = append(sources, &discoveryChecked{Source: src, m: b.mgr, info: info, t: b.primary.goType()})
	}
	for _, bind := range b.others {
		src, err := bind(owner)
		if err != nil {
			return nil, err
		}
		sources = append(sources, src)
	}
	sources = append(sources, b.sources...)
	opts := b.opts
	opts.Sharded = false // New refuses it: the gate is the Builder's
	ctl, err := New(b.name, r, opts)
	if err != nil {
		return nil, err
	}
	ctl.shard = b.shard
	for _, s := range sources {
		if err := ctl.Watch(s); err != nil {
			return nil, err
		}
	}
	ctl.declare(builderPermissions(owner, b.owned, b.watched, b.mgr.Factory().Namespace())...)
	if err := b.mgr.Add(ctl); err != nil {
		return nil, err
	}
	return ctl, nil
}

// Complete is Build for callers that do not need the Controller (controller-runtime's
// Complete).
func (b *Builder) Complete(r Reconciler) error {
	_, err := b.Build(r)
	return err
}

// discoveryChecked is the primary's source: before it runs, the registered kind and scope
// are compared with what the server serves under the resource.
type discoveryChecked struct {
	Source
	m    *Manager
	info kinds.Info
	t    reflect.Type
}

func (s *discoveryChecked) Run(ctx context.Context, q Queue) error {
	// A resource discovery does not list (a CRD not installed yet, discovery failing) is
	// left to the informer, which reports it; only a contradiction is an error.
	gvr := meta.GroupVersionResource{Group: s.info.Group, Version: s.info.Version, Resource: s.info.Resource}
	served, found := apiclient.APIResource{}, false
	resources, _ := s.m.APIClient().ServerResources(ctx)
	for _, r := range resources {
		if r.GroupVersionResource == gvr {
			served, found = r, true
			break
		}
	}
	if !found {
		// A following controller's CRD may be newer than the discovery cache, which
		// CRD events do not refresh: the CRD the tracker watches says the same.
		s.m.follow.mu.Lock()
		t := s.m.follow.tracker
		s.m.follow.mu.Unlock()
		if t != nil {
			served, found = t.crdResource(gvr)
		}
	}
	if found && (served.Kind != s.info.Kind || served.Namespaced != s.info.Namespaced) {
		return &KindMismatchError{Type: s.t, Registered: s.info, Served: &served, Watched: gvr}
	}
	return s.Source.Run(ctx, q)
}

// syncedChan forwards the wrapped source's (nil: no notice, the wait polls).
func (s *discoveryChecked) syncedChan() <-chan struct{} {
	if n, ok := s.Source.(syncNotifier); ok {
		return n.syncedChan()
	}
	return nil
}

// trackedInformer lets Manager.Add see the informer of the wrapped source.
func (s *discoveryChecked) trackedInformer() (string, trackedInformer) {
	if k, ok := s.Source.(interface {
		trackedInformer() (string, trackedInformer)
	}); ok {
		return k.trackedInformer()
	}
	return "", nil
}

// String names the wrapped source.
func (s *discoveryChecked) String() string { return fmt.Sprint(s.Source) }

// withFilters returns the input's predicates followed by the builder's event filters,
// adapted to T.
func withFilters[T meta.Object](own []Predicate[T], filters []Predicate[meta.Object]) []Predicate[T] {
	out := make([]Predicate[T], 0, len(own)+len(filters))
	out = append(out, own...)
	for _, f := range filters {
		out = append(out, adaptPredicate[T](f))
	}
	return out
}

// adaptPredicate lets a predicate on meta.Object judge the events of a T.
func adaptPredicate[T meta.Object](p Predicate[meta.Object]) Predicate[T] {
	return PredicateFuncs[T]{
		CreateFunc: func(e CreateEvent[T]) bool {
			return p.Create(CreateEvent[meta.Object]{Object: e.Object, IsInInitialList: e.IsInInitialList})
		},
		UpdateFunc: func(e UpdateEvent[T]) bool {
			return p.Update(UpdateEvent[meta.Object]{ObjectOld: e.ObjectOld, ObjectNew: e.ObjectNew})
		},
		DeleteFunc: func(e DeleteEvent[T]) bool {
			return p.Delete(DeleteEvent[meta.Object]{Object: e.Object, DeleteStateUnknown: e.DeleteStateUnknown})
		},
		GenericFunc: func(e GenericEvent[T]) bool {
			return p.Generic(GenericEvent[meta.Object]{Object: e.Object})
		},
	}
}
