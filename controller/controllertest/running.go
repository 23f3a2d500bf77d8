package controllertest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/runner"
)

// Running is a Manager (and Runner) started by StartManager or StartRunner; it is stopped
// when the test ends, or by Stop.
type Running struct {
	// Manager is the running Manager.
	Manager *controller.Manager
	// Runner is the Runner of StartRunner (nil for StartManager).
	Runner *runner.Runner
	// Client is the name the Manager's requests go by on the server (their User-Agent):
	// "manager-1", "manager-2", ... in the order they were started. The server's
	// per-client controls take it (Server.Clients: holds, write hooks); Crash uses it.
	Client string

	e      *Env
	cancel context.CancelFunc
	done   chan struct{}
	err    error
	once   sync.Once
	// crashed is closed by Crash (crash.go).
	crashed   chan struct{}
	crashOnce sync.Once
}

// StartManager creates a Manager on the Env's server with opts (its Logger defaults to the
// Env's), calls setup to wire the controllers (a Setup(*controller.Manager) function of
// yours; nil for none), starts it and returns once its controllers run. The Manager stops
// when the test ends; a Start that fails fails the test.
func (e *Env) StartManager(opts controller.ManagerOptions, setup func(*controller.Manager) error) *Running {
	e.t.Helper()
	mgr, client := e.newManager(opts)
	if setup != nil {
		if err := setup(mgr); err != nil {
			e.t.Fatalf("controllertest: setting the controllers up: %v", err)
		}
	}
	return e.run(mgr, nil, client, mgr.Start, !opts.LeaderElection)
}

// StartRunner is StartManager for a controller manager: a Runner of descs on a new
// Manager, run with ropts (runner.Runner.Run).
func (e *Env) StartRunner(opts controller.ManagerOptions, descs []runner.Descriptor, ropts runner.Options) *Running {
	e.t.Helper()
	mgr, client := e.newManager(opts)
	r, err := runner.New(mgr, descs, ropts)
	if err != nil {
		e.t.Fatalf("controllertest: %v", err)
	}
	return e.run(mgr, r, client, r.Run, !opts.LeaderElection)
}

// NextClient returns the client name (Running.Client) of the next Manager the Env starts,
// so that a hold or a write hook can be set on it before it makes its first request.
func (e *Env) NextClient() string { return fmt.Sprintf("manager-%d", e.managers+1) }

// newManager creates a Manager whose requests carry the client name it returns.
func (e *Env) newManager(opts controller.ManagerOptions) (*controller.Manager, string) {
	e.t.Helper()
	if opts.Logger == nil {
		opts.Logger = e.opts.Logger
	}
	client := e.NextClient()
	e.managers++
	mgr, err := controller.NewManager(e.Server.ConfigFor(client), opts)
	if err != nil {
		e.t.Fatalf("controllertest: %v", err)
	}
	return mgr, client
}

// run starts start in the background and, if wait, waits until the Manager runs its
// controllers (without leader election: once its caches have synced) or start returns.
// With leader election, who leads is the test's to wait for (WaitForLeaseHolder).
func (e *Env) run(mgr *controller.Manager, r *runner.Runner, client string, start func(context.Context) error, wait bool) *Running {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	run := &Running{Manager: mgr, Runner: r, Client: client, e: e, cancel: cancel, done: make(chan struct{}), crashed: make(chan struct{})}
	go func() {
		defer close(run.done)
		run.err = start(ctx)
	}()
	e.t.Cleanup(func() {
		if err := run.Stop(); err != nil && !run.IsCrashed() {
			e.t.Errorf("controllertest: the Manager stopped with: %v", err)
		}
	})
	if wait {
		timer := time.NewTimer(e.opts.Timeout)
		defer timer.Stop()
		select {
		case <-mgr.Elected():
		case <-run.done:
			e.t.Fatalf("controllertest: the Manager stopped at start: %v", run.err)
		case <-timer.C:
			e.t.Fatalf("controllertest: the Manager's caches did not sync within %v", e.opts.Timeout)
		}
	}
	return run
}

// Stop stops the Manager and waits for it (at most the Env's timeout); it returns Start's
// error. Stop is idempotent; the test's cleanup calls it.
func (r *Running) Stop() error {
	r.once.Do(func() {
		r.cancel()
		timer := time.NewTimer(r.e.opts.Timeout)
		defer timer.Stop()
		select {
		case <-r.done:
		case <-timer.C:
			r.err = fmt.Errorf("controllertest: the Manager did not stop within %v", r.e.opts.Timeout)
		}
	})
	return r.err
}

// Done returns a channel closed once the Manager's Start has returned (Stop, a failure or
// a lost Lease); Err then says why.
func (r *Running) Done() <-chan struct{} { return r.done }

// Err returns what Start returned, once Done is closed (nil before).
func (r *Running) Err() error {
	select {
	case <-r.done:
		return r.err
	default:
		return nil
	}
}

// Controller returns the Manager's controller name, and fails the test if it has none.
func (r *Running) Controller(name string) *controller.Controller {
	r.e.t.Helper()
	c, ok := r.Manager.Controller(name)
	if !ok {
		r.e.t.Fatalf("controllertest: the Manager has no controller %q", name)
	}
	return c
}

// Stats returns the reconcile, error, conflict, requeue and drop counts of the controller
// name so far (controller.Controller.Stats).
func (r *Running) Stats(name string) controller.Stats {
	r.e.t.Helper()
	return r.Controller(name).Stats()
}

// WaitForStats waits until cond holds for the controller name's Stats and returns them.
// Stats change without a change on the server, so it checks at least every 10 ms.
func (r *Running) WaitForStats(name string, cond func(controller.Stats) bool) controller.Stats {
	r.e.t.Helper()
	c := r.Controller(name)
	deadline := time.NewTimer(r.e.opts.Timeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		st := c.Stats()
		if cond(st) {
			return st
		}
		select {
		case <-deadline.C:
			r.e.t.Fatalf("controllertest: waiting for the stats of %s: last %+v", name, st)
		case <-tick.C:
		}
	}
}
