package controller

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/meta"
)

// Source is where a controller's events come from, already bound to the handler that turns
// them into Requests and to the predicates that filter them (controller-runtime's
// source.TypedSource). Build one with Kind (an informer) or Channel (generic events) and give
// it to Controller.Watch.
//
// The binding happens in the constructor because that is where the object type is known:
// Kind[T] checks at compile time that the handler and the predicates are for the informer's T,
// and the controller itself needs no type parameter.
type Source interface {
	// Run delivers the source's events to q until ctx is done and then returns nil; once it
	// has returned, the source calls nothing any more. An error means the source could not
	// start or failed; the controller then stops.
	Run(ctx context.Context, q Queue) error
	// HasSynced reports whether the source has delivered its initial state (for an informer:
	// the handler has processed every object of the initial list). The controller starts its
	// workers once every source has synced.
	HasSynced() bool
}

// dispatcher applies predicates and calls the handler: the part every source shares.
type dispatcher[T any] struct {
	handler    EventHandler[T]
	predicates []Predicate[T]
}

func (d *dispatcher[T]) create(ctx context.Context, e CreateEvent[T], q Queue) {
	if all(d.predicates, func(p Predicate[T]) bool { return p.Create(e) }) {
		d.handler.Create(ctx, e, q)
	}
}

func (d *dispatcher[T]) update(ctx context.Context, e UpdateEvent[T], q Queue) {
	if all(d.predicates, func(p Predicate[T]) bool { return p.Update(e) }) {
		d.handler.Update(ctx, e, q)
	}
}

func (d *dispatcher[T]) delete(ctx context.Context, e DeleteEvent[T], q Queue) {
	if all(d.predicates, func(p Predicate[T]) bool { return p.Delete(e) }) {
		d.handler.Delete(ctx, e, q)
	}
}

func (d *dispatcher[T]) generic(ctx context.Context, e GenericEvent[T], q Queue) {
	if all(d.predicates, func(p Predicate[T]) bool { return p.Generic(e) }) {
		d.handler.Generic(ctx, e, q)
	}
}

// channelSource is the Source returned by Channel.
type channelSource[T any] struct {
	dispatcher[T]
	ch      <-chan GenericEvent[T]
	running atomic.Bool
}

// Channel returns a Source of generic events read from ch (controller-runtime's
// source.Channel): anything outside the API server that should make the controller look at
// an object again. Each event goes through predicates (their Generic method) and then
// handler.Generic. The source has synced as soon as it runs; it stops when ctx is done or ch
// is closed. Events sent before the controller starts wait in ch. It may run again once it
// has stopped (a controller that follows its resources does).
func Channel[T any](ch <-chan GenericEvent[T], handler EventHandler[T], predicates ...Predicate[T]) Source {
	return &channelSource[T]{dispatcher: dispatcher[T]{handler: handler, predicates: predicates}, ch: ch}
}

func (s *channelSource[T]) Run(ctx context.Context, q Queue) error {
	if s.ch == nil || s.handler == nil {
		return errors.New("controller: Channel source needs a channel and a handler")
	}
	if !s.running.CompareAndSwap(false, true) {
		return errors.New("controller: a Channel source runs once at a time")
	}
	defer s.running.Store(false)
	for {
		select {
		case <-ctx.Done():
			return nil
		case e, ok := <-s.ch:
			if !ok {
				<-ctx.Done()
				return nil
			}
			s.deliver(ctx, e, q)
		}
	}
}

func (s *channelSource[T]) HasSynced() bool { return s.running.Load() }

// deliver dispatches one generic event, as the trigger of what the handler enqueues.
func (s *channelSource[T]) deliver(ctx context.Context, e GenericEvent[T], q Queue) {
	var obj meta.Object
	if o, ok := any(e.Object).(meta.Object); ok {
		obj = o
	}
	hctx, eq, span := beginEvent(ctx, q, informer.EventInfo{}, TriggerGeneric, obj, "channel")
	s.generic(hctx, e, q)
	endEvent(eq, span)
}
