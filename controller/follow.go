package controller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/meta"
)

// Controllers that follow their resources (Options.FollowResources): the follow loop, and
// the sources that can run more than once.

// errResourceGone is the cause of the end of a following controller's life when one of its
// resources stopped being served.
var errResourceGone = errors.New("a resource is no longer served")

// followable is implemented by the sources a following controller can run again: those
// that watch a resource say which (the controller follows it), the others (Channel) say ok
// with no resource.
type followable interface {
	followedResource() (gvr meta.GroupVersionResource, ok bool)
}

// followedResources returns the resources sources watch, or an error naming a source that
// cannot run again.
func (c *Controller) followedResources(sources []Source) ([]meta.GroupVersionResource, error) {
	var out []meta.GroupVersionResource
	for i, s := range sources {
		f, ok := s.(followable)
		if !ok {
			return nil, fmt.Errorf("controller %q: FollowResources: source %d (%s) cannot run again: use Kind, Scoped, Channel or the Builder", c.name, i, describe(s))
		}
		if gvr, ok := f.followedResource(); ok && !slices.Contains(out, gvr) {
			out = append(out, gvr)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("controller %q: FollowResources: no source watches a resource", c.name)
	}
	return out, nil
}

// follow runs the controller's lives until ctx is done: each waits until every resource is
// served, runs (run) until one is not, and the next waits again. A life that fails on its own
// (a source error, the sync timeout) ends Start with its error.
func (c *Controller) follow(ctx context.Context, opts Options, sources []Source, tracker *resourceTracker, metrics *controllerMetrics, events *eventTracker) error {
	if tracker == nil {
		return fmt.Errorf("controller %q: FollowResources needs a Manager (Manager.Add)", c.name)
	}
	resources, err := c.followedResources(sources)
	if err != nil {
		return err
	}
	tracker.want(resources...)
	for {
		err := tracker.waitServed(ctx, resources, func(missing []meta.GroupVersionResource) {
			c.mu.Lock()
			c.waiting = missing
			c.mu.Unlock()
			if len(missing) > 0 {
				c.log.Info("waiting for resources to be served", "resources", gvrList(missing))
			}
		})
		if err != nil {
			return nil // ctx is done
		}
		c.log.Info("resources served; starting", "resources", gvrList(resources))
		lifeCtx, stopLife := context.WithCancelCause(ctx)
		gone, stopWatching := tracker.whenGone(lifeCtx, resources)
		var missing []meta.GroupVersionResource
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			select {
			case missing = <-gone:
				stopLife(errResourceGone)
			case <-lifeCtx.Done():
			}
		}()
		err = c.run(lifeCtx, opts, sources, metrics, events)
		cause := context.Cause(lifeCtx)
		stopLife(nil)
		stopWatching()
		<-watched
		if ctx.Err() != nil || !errors.Is(cause, errResourceGone) {
			return err
		}
		if err != nil {
			c.log.Warn("stopped with an error after a resource went", "err", err)
		}
		c.log.Info("a resource is no longer served; stopped until it is again", "resources", gvrList(missing))
	}
}

// Running reports whether the controller's workers run now: from the start of its workers to
// its stop, and, for a controller that follows its resources, not while it waits for them.
func (c *Controller) Running() bool { return c.running.Load() }

// Waiting returns the resources a controller that follows its resources waits for (nil
// while it runs, and for other controllers).
func (c *Controller) Waiting() []meta.GroupVersionResource {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.waiting)
}

// rerunnable is what the sources that can run again (Kind's and Scoped's) share:
// the handler, the resource they follow, the guard against two runs at once, and the
// registration of the current run's handler.
type rerunnable[T meta.Object] struct {
	dispatcher[T]
	m       *Manager
	gvr     meta.GroupVersionResource
	running atomic.Bool
	reg     atomic.Pointer[informer.Registration[T]]
}

// begin starts a run of the source made by maker: it fails without a handler or while
// another run is in progress. A successful begin is followed by end.
func (s *rerunnable[T]) begin(maker string) error {
	if s.handler == nil {
		return fmt.Errorf("controller: %s source needs a handler", maker)
	}
	if !s.running.CompareAndSwap(false, true) {
		return fmt.Errorf("controller: a %s source runs once at a time", maker)
	}
	return nil
}

func (s *rerunnable[T]) end() { s.running.Store(false) }

// handlerTarget is the part of an informer (plain or scoped) a run adds its handler to.
type handlerTarget[T meta.Object] interface {
	Name() string
	AddEventHandlerWithOptions(handler informer.ResourceEventHandler[T], opts informer.HandlerOptions) (*informer.Registration[T], error)
}

// register adds the run's handler, which enqueues into q, to inf, and records the
// registration for HasSynced until the run calls forget.
func (s *rerunnable[T]) register(ctx context.Context, q Queue, inf handlerTarget[T], source fmt.Stringer) (reg *informer.Registration[T], forget func(), err error) {
	reg, err = inf.AddEventHandlerWithOptions(&kindHandler[T]{ctx: ctx, q: q, d: &s.dispatcher, inf: inf.Name()},
		informer.HandlerOptions{Name: "controller:" + source.String()})
	if err != nil {
		return nil, nil, err
	}
	s.reg.Store(reg)
	return reg, func() { s.reg.Store(nil) }, nil
}

// HasSynced reports whether the current run's handler has processed its informer's initial
// list (false between runs).
func (s *rerunnable[T]) HasSynced() bool {
	reg := s.reg.Load()
	return reg != nil && reg.HasSynced()
}

func (s *rerunnable[T]) followedResource() (meta.GroupVersionResource, bool) { return s.gvr, true }

// acquiredKind is the Source of Kind (and of a Builder's inputs) in a controller that
// follows its resources: over the Manager's shared informer of T for a resource, acquired
// when the source runs and released when it stops, so that it can run again and the
// informer stops (its cache dropped) when no source or other holder uses it.
type acquiredKind[T meta.Object] struct {
	rerunnable[T]
	iopts informer.InformerForOptions
	// bound, if set, is called with the informer before the source's handler is added
	// (the Builder's inputs keep it for Informer and ChildrenOf, and add their indexes), and
	// with nil once the informer is released.
	bound func(inf *informer.Informer[T]) error
}

func (s *acquiredKind[T]) Run(ctx context.Context, q Queue) error {
	if err := s.begin("Kind"); err != nil {
		return err
	}
	defer s.end()
	if err := s.m.startInformers(); err != nil {
		return err
	}
	ref := informer.AcquireWithOptions[T](s.m.factory, s.gvr, s.iopts)
	// The last holder's release stops the informer and waits for it: a following
	// controller's stop frees its caches before it waits again.
	defer func() { _ = ref.ReleaseAndWait(context.WithoutCancel(ctx)) }()
	inf := ref.Informer()
	if s.bound != nil {
		if err := s.bound(inf); err != nil {
			return err
		}
		defer func() { _ = s.bound(nil) }()
	}
	reg, forget, err := s.register(ctx, q, inf, s)
	if err != nil {
		return err
	}
	defer forget()
	if err := s.m.startInformers(); err != nil {
		return err
	}
	<-ctx.Done()
	if err := inf.RemoveEventHandler(reg); err != nil {
		return err
	}
	<-reg.Done() // the call in progress, if any, has returned
	return nil
}

// String names the informer, for errors about a source that did not sync.
func (s *acquiredKind[T]) String() string {
	return fmt.Sprintf("informer %s (acquired)", s.gvr)
}

// followedResource lets a Channel source run in a following controller: it has no resource
// and can run again.
func (s *channelSource[T]) followedResource() (meta.GroupVersionResource, bool) {
	return meta.GroupVersionResource{}, false
}

// followedResource of the Builder's primary source is the wrapped source's.
func (s *discoveryChecked) followedResource() (meta.GroupVersionResource, bool) {
	if f, ok := s.Source.(followable); ok {
		return f.followedResource()
	}
	return meta.GroupVersionResource{}, false
}

// followers is the part of the Manager that serves following controllers: the resource
// tracker (created with the first following controller) and the caches' context, which
// sources that acquire their informers start them under.
type followers struct {
	mu        sync.Mutex
	tracker   *resourceTracker
	cachesCtx context.Context
}

// resourceTracker returns the Manager's tracker, creating it.
func (m *Manager) resourceTracker() *resourceTracker {
	m.follow.mu.Lock()
	defer m.follow.mu.Unlock()
	if m.follow.tracker == nil {
		m.follow.tracker = newResourceTracker(m.client, m.log.With("component", "resource-tracker"), m.opts.DiscoveryInterval, m.factory.Namespace())
	}
	return m.follow.tracker
}

// startInformers starts the factory's informers that do not run yet, under the caches'
// context. It fails before Manager.Start.
func (m *Manager) startInformers() error {
	m.follow.mu.Lock()
	ctx := m.follow.cachesCtx
	m.follow.mu.Unlock()
	if ctx == nil {
		return errors.New("controller: a Kind source of a following controller runs under a started Manager")
	}
	m.factory.Start(ctx)
	return nil
}

// runFollowers records the caches' context and runs the resource tracker, if a following
// controller was added; the returned function stops it and waits.
func (m *Manager) runFollowers(cachesCtx context.Context) (stop func()) {
	m.follow.mu.Lock()
	m.follow.cachesCtx = cachesCtx
	t := m.follow.tracker
	m.follow.mu.Unlock()
	if t == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(cachesCtx)
	done := make(chan struct{})
	go func() { defer close(done); t.run(ctx) }()
	return func() { cancel(); <-done }
}

// NotServed returns those of gvrs that the Manager does not see served now, as the
// controllers that follow their resources see them (Options.FollowResources): through the
// CustomResourceDefinitions it watches and discovery. Called before Start, it makes the
// Manager track gvrs from Start on (runner does it for the Resources of its Follow
// descriptors); before the first read every resource is missing. After Start, a Manager that
// tracks nothing returns nil.
func (m *Manager) NotServed(gvrs ...meta.GroupVersionResource) []meta.GroupVersionResource {
	m.mu.Lock()
	started := m.started
	m.mu.Unlock()
	var t *resourceTracker
	if started {
		m.follow.mu.Lock()
		t = m.follow.tracker
		m.follow.mu.Unlock()
		if t == nil {
			return nil
		}
	} else {
		t = m.resourceTracker()
		t.want(gvrs...)
	}
	miss, _ := t.missing(gvrs)
	return miss
}

// addFollower prepares a following controller added to m: the tracker, and its /readyz entry
// "resources-<name>", failing with a *NotServedError while it waits.
func (m *Manager) addFollower(c *Controller) error {
	t := m.resourceTracker()
	c.mu.Lock()
	c.tracker = t
	c.mu.Unlock()
	return m.AddReadyzCheck("resources-"+c.name, func(*http.Request) error {
		if miss := c.Waiting(); len(miss) > 0 {
			return &NotServedError{Controller: c.name, Resources: miss}
		}
		return nil
	})
}
