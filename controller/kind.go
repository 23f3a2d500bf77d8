package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/meta"
)

// kindSource is the Source returned by FromInformer, and by Kind once bound.
type kindSource[T meta.Object] struct {
	dispatcher[T]
	inf     informer.SharedIndexInformer[T]
	reg     atomic.Pointer[informer.Registration[T]]
	running atomic.Bool
	synced  atomic.Pointer[chan struct{}] // the current run's, closed once its handler has synced
}

// KindOptions are the optional settings of KindWithOptions.
type KindOptions[T meta.Object] struct {
	// Predicates filter the events before the handler. Default none.
	Predicates []Predicate[T]
	// Informer selects the informer: another resource than T's registered one (the
	// exception), a namespace, selectors. Default: InformerFor's.
	Informer InformerOptions
}

// Kind returns a Source of the events of T (controller-runtime's source.Kind), for a
// controller made with New; a Builder makes these from For, Owns and Watches. Its informer
// is the Manager's shared informer of the resource T is registered as (InformerFor). The
// controller registers one handler on it, which passes every add, update and delete through
// predicates and then handler; the source has synced once that handler has processed the
// informer's whole initial list, so the first reconciles see a complete cache. For a
// controller that follows its resources (Options.FollowResources) the informer is acquired
// each time the source runs and released when it stops, so that a CRD's removal frees its
// cache. Give it to Controller.Watch, which binds it (and returns an unregistered T's
// error).
//
// Informer handlers never block the informer: if the controller's handler falls behind,
// the informer coalesces its pending notifications by key. Enqueueing is quick, so in
// practice it never does.
func Kind[T meta.Object](m *Manager, handler EventHandler[T], predicates ...Predicate[T]) Source {
	return KindWithOptions(m, handler, KindOptions[T]{Predicates: predicates})
}

// KindWithOptions is Kind with options.
func KindWithOptions[T meta.Object](m *Manager, handler EventHandler[T], opts KindOptions[T]) Source {
	if m == nil {
		panic("controller: Kind: nil Manager")
	}
	return &unboundKind[T]{m: m, handler: handler, opts: opts}
}

// unboundKind is Kind's source until Controller.Watch binds it (bindSource).
type unboundKind[T meta.Object] struct {
	m       *Manager
	handler EventHandler[T]
	opts    KindOptions[T]
}

// bind returns the source to run: over the shared informer, or acquiring it at each run for
// a controller that follows its resources.
func (s *unboundKind[T]) bind(follow bool) (Source, error) {
	gvr, err := resourceOf[T](s.m, s.opts.Informer.Resource)
	if err != nil {
		return nil, err
	}
	iopts := informer.InformerForOptions{Namespace: s.opts.Informer.Namespace, LabelSelector: s.opts.Informer.LabelSelector, FieldSelector: s.opts.Informer.FieldSelector}
	if follow {
		return &acquiredKind[T]{rerunnable: rerunnable[T]{dispatcher: dispatcher[T]{handler: s.handler, predicates: s.opts.Predicates}, m: s.m, gvr: gvr},
			iopts: iopts}, nil
	}
	inf, err := managedInformer[T](s.m, gvr, iopts, "Kind")
	if err != nil {
		return nil, err
	}
	return FromInformer[T](inf, s.handler, s.opts.Predicates...), nil
}

func (s *unboundKind[T]) Run(context.Context, Queue) error {
	return errors.New("controller: a Kind source runs once given to Controller.Watch (or Builder.WatchesSource)")
}

func (s *unboundKind[T]) HasSynced() bool { return false }

// binder is a source that Controller.Watch replaces by the one it binds.
type binder interface {
	bind(follow bool) (Source, error)
}

// FromInformer returns a Source of the events of an informer the Manager does not make (one
// of another cluster's client, a test's): Kind's source over inf. It runs once at a time, and
// again once a run has returned, over the same informer, which replays its cache to the new
// run's handler (a Manager with LeaderElectionStepDown starts its controllers anew at each
// term); a controller that follows its resources needs Kind, which acquires its informer at
// each run.
func FromInformer[T meta.Object](inf informer.SharedIndexInformer[T], handler EventHandler[T], predicates ...Predicate[T]) Source {
	s := &kindSource[T]{dispatcher: dispatcher[T]{handler: handler, predicates: predicates}, inf: inf}
	ch := make(chan struct{})
	s.synced.Store(&ch)
	return s
}

func (s *kindSource[T]) Run(ctx context.Context, q Queue) error {
	if s.inf == nil || s.handler == nil {
		return errors.New("controller: FromInformer's source needs an informer and a handler")
	}
	if !s.running.CompareAndSwap(false, true) {
		return errors.New("controller: FromInformer's source runs once at a time")
	}
	defer func() {
		// Ready for the next run: not synced until its own handler has the initial list.
		s.reg.Store(nil)
		next := make(chan struct{})
		s.synced.Store(&next)
		s.running.Store(false)
	}()
	synced := *s.synced.Load()
	reg, err := s.inf.AddEventHandlerWithOptions(&kindHandler[T]{ctx: ctx, q: q, d: &s.dispatcher, inf: strings.TrimPrefix(s.String(), "informer ")},
		informer.HandlerOptions{Name: "controller:" + s.String()})
	if err != nil {
		return err
	}
	s.reg.Store(reg)
	select {
	case <-reg.Synced():
		close(synced)
	case <-ctx.Done():
	}
	<-ctx.Done()
	if err := s.inf.RemoveEventHandler(reg); err != nil {
		return err
	}
	<-reg.Done() // the call in progress, if any, has returned
	return nil
}

func (s *kindSource[T]) HasSynced() bool {
	reg := s.reg.Load()
	return reg != nil && reg.HasSynced()
}

func (s *kindSource[T]) syncedChan() <-chan struct{} { return *s.synced.Load() }

// trackedInformer lets Manager.Add register the informer for readiness.
func (s *kindSource[T]) trackedInformer() (string, trackedInformer) {
	if s.inf == nil {
		return "", nil
	}
	return strings.TrimPrefix(s.String(), "informer "), s.inf
}

// String names the informer, for errors about a source that did not sync.
func (s *kindSource[T]) String() string {
	if n, ok := s.inf.(interface{ Name() string }); ok {
		return "informer " + n.Name()
	}
	return fmt.Sprintf("informer of %T", *new(T))
}

// kindHandler adapts the informer's notifications to the dispatcher. It is an
// informer.EventInfoHandler: the events behind its calls are measured and traced to the
// reconciles they cause (trace.go).
type kindHandler[T meta.Object] struct {
	ctx  context.Context
	q    Queue
	d    *dispatcher[T]
	inf  string             // the informer's name, for traces
	info informer.EventInfo // of the call about to be made
}

// EventInfo implements informer.EventInfoHandler.
func (h *kindHandler[T]) EventInfo(info informer.EventInfo) { h.info = info }

func (h *kindHandler[T]) OnAdd(obj T, isInInitialList bool) {
	kind := TriggerCreate
	if isInInitialList {
		kind = TriggerInitialList
	}
	ctx, eq, span := beginEvent(h.ctx, h.q, h.info, kind, obj, h.inf)
	h.d.create(ctx, CreateEvent[T]{Object: obj, IsInInitialList: isInInitialList}, h.q)
	endEvent(eq, span)
}

func (h *kindHandler[T]) OnUpdate(oldObj, newObj T) {
	kind := TriggerUpdate
	if updatePriority(UpdateEvent[T]{ObjectOld: oldObj, ObjectNew: newObj}) == PriorityLow {
		kind = TriggerResync // the same resourceVersion
	}
	ctx, eq, span := beginEvent(h.ctx, h.q, h.info, kind, newObj, h.inf)
	h.d.update(ctx, UpdateEvent[T]{ObjectOld: oldObj, ObjectNew: newObj}, h.q)
	endEvent(eq, span)
}

func (h *kindHandler[T]) OnDelete(obj T, finalStateUnknown bool) {
	ctx, eq, span := beginEvent(h.ctx, h.q, h.info, TriggerDelete, obj, h.inf)
	h.d.delete(ctx, DeleteEvent[T]{Object: obj, DeleteStateUnknown: finalStateUnknown}, h.q)
	endEvent(eq, span)
}
