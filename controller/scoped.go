package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/meta"
)

// ScopedKind is a Source of the events of a scoped informer of T (informer.ScopedInformer):
// a cache whose namespaces and label selector change while it runs. The informer is made
// each time the source runs, with the scope last set, and stopped when the source stops, so
// a controller that follows its resources (Options.FollowResources) can watch it too: each
// life of the controller lists the scope afresh, and SetScope changes the scope of the
// running life and of those to come. Make it with Scoped.
type ScopedKind[T meta.Object] struct {
	rerunnable[T]
	err error // resolving T's resource

	// setMu orders SetScope calls, so that the running informer ends at the last scope set.
	setMu sync.Mutex
	// mu guards the scope and the informer of the current run (nil between runs).
	mu    sync.Mutex
	scope informer.Scope
	inf   *informer.ScopedInformer[T]
}

// Scoped returns a Source of the events of T (the resource T is registered as) in scope
// (namespaces, label selector), over an informer made each time the source runs, with the
// factory's settings (its namespace and selectors do not apply: the scope says what is
// cached). Namespaces added by SetScope are listed and their objects reach the controller as
// creates; objects that leave the scope reach it as deletes (a reconcile that finds
// nothing); objects that stay are not delivered again. The handler and predicates are
// Kind's; /readyz covers the informer while it runs. Give it to Controller.Watch (or
// Builder.WatchesSource), which returns an unregistered T's error, and keep it to call
// SetScope.
func Scoped[T meta.Object](m *Manager, scope informer.Scope, handler EventHandler[T], predicates ...Predicate[T]) *ScopedKind[T] {
	if m == nil {
		panic("controller: Scoped: nil Manager")
	}
	gvr, err := resourceOf[T](m, meta.GroupVersionResource{})
	return &ScopedKind[T]{rerunnable: rerunnable[T]{dispatcher: dispatcher[T]{handler: handler, predicates: predicates}, m: m, gvr: gvr}, err: err,
		scope: informer.Scope{Namespaces: slices.Clone(scope.Namespaces), LabelSelector: scope.LabelSelector}}
}

// bind lets Controller.Watch report an unregistered T.
func (s *ScopedKind[T]) bind(bool) (Source, error) { return s, s.err }

// SetScope sets the scope. While the source runs, its informer moves to it as
// ScopedInformer.SetScope does (what enters reaches the handler as creates, what leaves as
// deletes, what stays is not delivered again) and SetScope returns as that one does; the
// next run starts with it.
func (s *ScopedKind[T]) SetScope(ctx context.Context, scope informer.Scope) error {
	s.setMu.Lock()
	defer s.setMu.Unlock()
	s.mu.Lock()
	s.scope = informer.Scope{Namespaces: slices.Clone(scope.Namespaces), LabelSelector: scope.LabelSelector}
	inf := s.inf
	s.mu.Unlock()
	if inf == nil {
		return nil
	}
	err := inf.SetScope(ctx, scope)
	if errors.Is(err, informer.ErrStopped) {
		return nil // the run ended meanwhile; the next one starts with scope
	}
	return err
}

// Scope returns the scope last set.
func (s *ScopedKind[T]) Scope() informer.Scope {
	s.mu.Lock()
	defer s.mu.Unlock()
	return informer.Scope{Namespaces: slices.Clone(s.scope.Namespaces), LabelSelector: s.scope.LabelSelector}
}

// Informer returns the informer of the current run, nil while the source does not run. Read
// the cache through it (GetIndexer, Lister); do not run it or set its scope directly.
func (s *ScopedKind[T]) Informer() *informer.ScopedInformer[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inf
}

// Run makes the informer with the current scope, runs it until ctx is done, and stops it.
func (s *ScopedKind[T]) Run(ctx context.Context, q Queue) error {
	if s.err != nil {
		return s.err
	}
	if err := s.begin("Scoped"); err != nil {
		return err
	}
	defer s.end()
	s.setMu.Lock() // a SetScope in progress completes on the previous informer first
	s.mu.Lock()
	inf := informer.NewScopedFor[T](s.m.factory, s.gvr, s.scope)
	s.inf = inf
	s.mu.Unlock()
	s.setMu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inf = nil
		s.mu.Unlock()
	}()
	reg, forget, err := s.register(ctx, q, inf, s)
	if err != nil {
		return err
	}
	defer forget()
	s.m.track(inf.Name(), inf)
	defer s.m.untrack(inf)
	inf.Run(ctx) // returns once ctx is done and its handlers have stopped
	<-reg.Done()
	return nil
}

// String names the informer, for errors about a source that did not sync.
func (s *ScopedKind[T]) String() string {
	return fmt.Sprintf("informer %s (scoped, made each run)", s.gvr)
}
