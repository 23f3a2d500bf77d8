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

// kindSource is the Source returned by Kind.
type kindSource[T meta.Object] struct {
	dispatcher[T]
	inf     informer.SharedIndexInformer[T]
	reg     atomic.Pointer[informer.Registration[T]]
	running atomic.Bool
	synced  chan struct{} // closed once the handler has synced
}

// Kind returns a Source of the events of an informer (usually one of the Manager's shared
// informers, see InformerFor): the controller registers one handler on it, which passes every add,
// update and delete through predicates and then handler (controller-runtime's source.Kind).
// The source has synced once that handler has processed the informer's whole initial list,
// so the controller's first reconciles see a complete cache.
//
// Informer handlers never block the informer: if the controller's handler falls behind,
// the informer coalesces its pending notifications by key. Enqueueing is quick, so in
// practice it never does.
func Kind[T meta.Object](inf informer.SharedIndexInformer[T], handler EventHandler[T], predicates ...Predicate[T]) Source {
	return &kindSource[T]{dispatcher: dispatcher[T]{handler: handler, predicates: predicates}, inf: inf, synced: make(chan struct{})}
}

func (s *kindSource[T]) Run(ctx context.Context, q Queue) error {
	if s.inf == nil || s.handler == nil {
		return errors.New("controller: Kind source needs an informer and a handler")
	}
	if !s.running.CompareAndSwap(false, true) {
		return errors.New("controller: a Kind source can run only once")
	}
	reg, err := s.inf.AddEventHandlerWithOptions(&kindHandler[T]{ctx: ctx, q: q, d: &s.dispatcher, inf: strings.TrimPrefix(s.String(), "informer ")},
		informer.HandlerOptions{Name: "controller:" + s.String()})
	if err != nil {
		return err
	}
	s.reg.Store(reg)
	select {
	case <-reg.Synced():
		close(s.synced)
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

func (s *kindSource[T]) syncedChan() <-chan struct{} { return s.synced }

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
	ctx, eq, span := beginEvent(h.ctx, h.q, h.info, "add", obj, h.inf)
	h.d.create(ctx, CreateEvent[T]{Object: obj, IsInInitialList: isInInitialList}, h.q)
	endEvent(eq, span)
}

func (h *kindHandler[T]) OnUpdate(oldObj, newObj T) {
	ctx, eq, span := beginEvent(h.ctx, h.q, h.info, "update", newObj, h.inf)
	h.d.update(ctx, UpdateEvent[T]{ObjectOld: oldObj, ObjectNew: newObj}, h.q)
	endEvent(eq, span)
}

func (h *kindHandler[T]) OnDelete(obj T, finalStateUnknown bool) {
	ctx, eq, span := beginEvent(h.ctx, h.q, h.info, "delete", obj, h.inf)
	h.d.delete(ctx, DeleteEvent[T]{Object: obj, DeleteStateUnknown: finalStateUnknown}, h.q)
	endEvent(eq, span)
}
