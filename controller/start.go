package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// Start runs the manager until ctx is done, a runnable fails or leadership is lost:
//
//  0. checks that the API server allows what Permissions lists, unless
//     ManagerOptions.SkipPermissionCheck: a missing permission fails Start at once;
//  1. serves the HTTP endpoints, if configured;
//  2. starts the shared informers and, in parallel, leader election (warm standby: a
//     standby's caches are synced before it wins, so it reconciles at once when it does,
//     without a relist; with LeaderElectionColdStandby the informers start when it wins);
//  3. waits for the caches to sync (CacheSyncTimeout; the error names the informers that did
//     not, and a resource the server does not serve fails Start after
//     MissingResourceTimeout with a *MissingResourceError) and starts the runnables that
//     do not need leadership;
//  4. when leading (or at once without leader election), starts the runnables that need it,
//     with a context that is cancelled, with cause ErrLeaderElectionLost, if the Lease is
//     lost; then Start returns ErrLeaderElectionLost, or, with LeaderElectionStepDown,
//     waits for them, keeps everything else running and campaigns again (each term starts
//     them anew).
//
// Shutdown cancels the runnables' context and waits for them at most
// GracefulShutdownTimeout (controllers drain their in-flight reconciles), releases the Lease
// (unless LeaderElectionKeepLease) so that a standby takes over at once, stops the
// informers and the HTTP server. Start returns nil after a shutdown
// caused by ctx, ErrLeaderElectionLost after a lost Lease, or the first runnable error.
// A Manager starts once.
func (m *Manager) Start(ctx context.Context) (err error) {
	runnables, err := m.markStarted()
	if err != nil {
		return err
	}
	defer m.client.Close()
	if m.leClient != nil {
		defer m.leClient.Close()
	}
	if !m.opts.SkipPermissionCheck {
		if err := m.checkPermissions(ctx); err != nil {
			return err
		}
	}

	// The HTTP server lives until everything else has stopped.
	stopHTTP, err := m.serveHTTP()
	if err != nil {
		return err
	}
	defer stopHTTP()

	// Caches outlive the runnables, which may need them while they drain.
	cachesCtx, stopCaches := context.WithCancel(context.WithoutCancel(ctx))
	defer func() {
		stopCaches()
		m.factory.Shutdown()
	}()
	if !m.cold {
		m.factory.Start(cachesCtx)
	}
	m.ctrlClient.Start(cachesCtx)
	stopFollowers := m.runFollowers(cachesCtx)
	defer stopFollowers()

	// Events are written from now until the runnables have stopped (deferred after the
	// caches' stop, so it runs before it): the reconciles that finish during the drain
	// still record theirs.
	stopEvents := m.runEvents(ctx)
	defer stopEvents()

	// runCtx ends the runnables: ctx done, a runnable failed, or leadership lost.
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	g := &runGroup{log: m.log, stop: stopRun, running: newRunningSet()}
	if m.ring != nil {
		// The ring runs on every replica, leader or not; at shutdown it leaves (its ranges
		// drained of their reconciles, its Lease released) while the controllers drain.
		g.wg.Go(func() { g.run(runCtx, ringRunnable{m.ring}) })
	}
	m.runRunnables(runCtx, cachesCtx, g, runnables)

	<-runCtx.Done()
	m.log.Info("stopping", "cause", context.Cause(runCtx))
	return g.drain(m.opts.GracefulShutdownTimeout)
}

// runRunnables starts leader election and the runnables: those that need no leadership once
// the caches have synced, the others when leading (at once without leader election). With a
// cold standby, the caches themselves start when leading.
func (m *Manager) runRunnables(runCtx, cachesCtx context.Context, g *runGroup, runnables []Runnable) {
	leaders, others := splitByLeadership(runnables)
	m.leaderRunnables = leaders
	m.runLeader = func(ctx context.Context, r Runnable) { m.runTerm(g, ctx, r) }
	startOthers := func() {
		for _, r := range others {
			g.wg.Go(func() { g.run(runCtx, r) })
		}
	}
	if m.cold {
		// Set before the elector runs: lead calls it, at every term; the caches start at
		// the first (with step-down they stay warm across the next).
		var once coldOnce
		m.coldStart = func() bool {
			return once.do(func() bool {
				m.log.Info("leading: starting the caches of a cold standby")
				m.factory.Start(cachesCtx)
				if !m.waitForCaches(runCtx, g) {
					return false
				}
				startOthers()
				return true
			})
		}
	}
	if m.elector != nil {
		m.leaderGauge.Set(0)
		g.wg.Go(func() { m.campaign(runCtx, g) })
	}
	if m.cold || !m.waitForCaches(runCtx, g) {
		return
	}
	startOthers()
	if m.elector == nil {
		m.electedOnce.Do(func() { close(m.elected) })
		for _, r := range leaders {
			g.wg.Go(func() { g.run(runCtx, r) })
		}
	}
}

// markStarted marks the manager started, once, and returns the runnables added so far.
func (m *Manager) markStarted() ([]Runnable, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started {
		return nil, errors.New("controller: Manager already started")
	}
	m.started = true
	return slices.Clone(m.runnables), nil
}

// runEvents runs the event broadcaster until the returned function is called; that function
// waits for it to stop.
func (m *Manager) runEvents(ctx context.Context) (stop func()) {
	eventsCtx, stopEvents := context.WithCancel(context.WithoutCancel(ctx))
	eventsDone := make(chan error, 1)
	go func() { eventsDone <- m.events.Run(eventsCtx) }()
	return func() {
		stopEvents()
		if err := <-eventsDone; err != nil {
			m.log.Error("event recorder", "err", err)
		}
	}
}

// splitByLeadership returns the runnables that need leadership and the others, in order.
func splitByLeadership(runnables []Runnable) (leaders, others []Runnable) {
	for _, r := range runnables {
		if needsLeader(r) {
			leaders = append(leaders, r)
		} else {
			others = append(others, r)
		}
	}
	return leaders, others
}

// waitForCaches waits at most CacheSyncTimeout for the shared informers to sync and reports
// whether they did; when they did not in time (and runCtx is not done), or a resource an
// informer watches is not served (checkServed), it fails g.
func (m *Manager) waitForCaches(runCtx context.Context, g *runGroup) bool {
	syncCtx, cancelSync := context.WithTimeout(runCtx, m.opts.CacheSyncTimeout)
	defer cancelSync()
	missing := make(chan error, 1)
	if m.opts.MissingResourceTimeout >= 0 {
		go func() {
			err := m.checkServed(syncCtx)
			if err != nil {
				cancelSync()
			}
			missing <- err
		}()
	} else {
		missing <- nil
	}
	serr := m.factory.WaitForCacheSync(syncCtx)
	cancelSync()
	if merr := <-missing; merr != nil {
		if runCtx.Err() == nil {
			g.fail(merr)
		}
		return false
	}
	if serr != nil {
		if runCtx.Err() == nil {
			g.fail(fmt.Errorf("controller: caches did not sync within %v: %w", m.opts.CacheSyncTimeout, serr))
		}
		return false
	}
	if err := m.checkBytesBudget(); err != nil {
		if runCtx.Err() == nil {
			g.fail(err)
		}
		return false
	}
	close(m.synced)
	m.log.Info("caches synced")
	return true
}

// runGroup runs the manager's runnables: the first error one of them returns stops them all
// (through stop, the cancel function of their context) and is what Start returns.
type runGroup struct {
	log     *slog.Logger
	stop    context.CancelCauseFunc
	running *runningSet
	wg      sync.WaitGroup

	mu       sync.Mutex
	firstErr error
}

// fail records err if it is the first and stops the runnables with it as the cause.
func (g *runGroup) fail(err error) {
	g.mu.Lock()
	if g.firstErr == nil {
		g.firstErr = err
	}
	g.mu.Unlock()
	g.stop(err)
}

// run runs r until it returns, and fails the group if r fails.
func (g *runGroup) run(ctx context.Context, r Runnable) {
	name := runnableName(r)
	g.running.add(name)
	defer g.running.done(name)
	if err := r.Start(ctx); err != nil {
		if !errors.Is(context.Cause(ctx), ErrLeaderElectionLost) {
			g.log.Error("runnable failed", "runnable", name, "err", err)
		}
		g.fail(fmt.Errorf("controller: runnable %s: %w", name, err))
	}
}

// drain waits at most timeout for the goroutines of g.wg, failing the group with the names
// of the runnables still running when it passes, and returns the group's first error.
func (g *runGroup) drain(timeout time.Duration) error {
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		g.fail(fmt.Errorf("controller: runnables still running after the graceful shutdown timeout %v: %s",
			timeout, strings.Join(g.running.names(), ", ")))
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.firstErr
}

// lead is the elector's OnStartedLeading: it runs the leader-only runnables until ctx ends.
func (m *Manager) lead(ctx context.Context) {
	if m.coldStart != nil && !m.coldStart() {
		return
	}
	select {
	case <-m.synced:
	case <-ctx.Done():
		return
	}
	m.leaderGauge.Set(1)
	m.log.Info("leading: starting leader-only runnables", "identity", m.elector.Identity())
	m.electedOnce.Do(func() { close(m.elected) })
	var wg sync.WaitGroup
	for _, r := range m.leaderRunnables {
		wg.Go(func() { m.runLeader(ctx, r) })
	}
	wg.Wait()
	m.leaderGauge.Set(0)
}

// runningSet tracks the names of running runnables, for the shutdown timeout error.
type runningSet struct {
	mu sync.Mutex
	n  map[string]int
}

func newRunningSet() *runningSet { return &runningSet{n: map[string]int{}} }

func (s *runningSet) add(name string) { s.mu.Lock(); s.n[name]++; s.mu.Unlock() }

func (s *runningSet) done(name string) {
	s.mu.Lock()
	if s.n[name]--; s.n[name] == 0 {
		delete(s.n, name)
	}
	s.mu.Unlock()
}

func (s *runningSet) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.n))
	for n := range s.n {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// ringRunnable runs the Manager's sharding ring member.
type ringRunnable struct {
	r interface{ Run(context.Context) error }
}

func (r ringRunnable) Start(ctx context.Context) error { return r.r.Run(ctx) }

func (ringRunnable) String() string { return "sharding ring" }
