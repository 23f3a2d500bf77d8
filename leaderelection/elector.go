package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/meta"
)

// ErrLeadershipLost is returned by Run, and is the cause of the cancellation of the
// leader's context (context.Cause), when the elector could not renew the Lease within
// RenewDeadline or saw another holder in it.
var ErrLeadershipLost = errors.New("leaderelection: leadership lost")

// JitterFactor spreads the retries of candidates that are not leading: each waits
// RetryPeriod × (1 + JitterFactor × rand[0,1)) between attempts, as client-go does, so that
// candidates do not hit the API server in step.
const JitterFactor = 1.2

// Callbacks are the elector's notifications.
type Callbacks struct {
	// OnStartedLeading is called, on its own goroutine, when the elector becomes the leader.
	// Its context is cancelled when leadership ends: with cause ErrLeadershipLost when the
	// Lease could not be renewed, or when Run's context is done. Required.
	OnStartedLeading func(ctx context.Context)
	// OnStoppedLeading, if set, is called once when leadership has ended: at once when it is
	// lost, or after OnStartedLeading has returned (and the Lease was released, with
	// ReleaseOnCancel) when Run's context is done.
	OnStoppedLeading func()
	// OnNewLeader, if set, is called with the identity of the holder each time the elector
	// observes a different one ("" when the Lease was released). It must return quickly.
	OnNewLeader func(identity string)
}

// Config configures an Elector. Durations follow client-go's rules: LeaseDuration >
// RenewDeadline > JitterFactor × RetryPeriod > 0.
type Config struct {
	// Client writes the Lease. Requests are bounded by the election's deadlines; a client
	// built with MaxRetries -1 makes each renewal attempt a single request (the Manager does
	// this).
	Client *apiclient.Client
	// Namespace and Name locate the Lease (created if missing).
	Namespace, Name string
	// Labels are set on the Lease when the elector creates it (a sharding ring selects its
	// members' Leases by label). Optional.
	Labels map[string]string
	// Identity names this candidate in holderIdentity; it must be unique among candidates
	// (two candidates with one identity would both lead).
	Identity string
	// LeaseDuration is how long candidates wait after they last observed a change of the
	// Lease before they take it over (at least 1 s: the Lease stores whole seconds). It is
	// the longest time nobody leads after a leader dies without releasing.
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader keeps trying to renew before it gives up
	// leadership. Measured from the start of its last successful renewal, so the leader
	// stops strictly before any candidate can consider the Lease expired.
	RenewDeadline time.Duration
	// RetryPeriod is the interval between attempts to acquire or renew.
	RetryPeriod time.Duration
	// ReleaseOnCancel releases the Lease (holderIdentity "", leaseDurationSeconds 1) when Run's
	// context is done, once OnStartedLeading has returned, so another candidate, which sees
	// the release on its watch, leads at once instead of after LeaseDuration.
	ReleaseOnCancel bool
	// Callbacks are required (OnStartedLeading at least).
	Callbacks Callbacks
	// Logger receives the elector's logs (default slog.Default()).
	Logger *slog.Logger
}

// Validate checks the configuration and explains what is wrong.
func (c *Config) Validate() error {
	var errs []error
	if c.Client == nil {
		errs = append(errs, errors.New("Client is required"))
	}
	if c.Name == "" || c.Namespace == "" {
		errs = append(errs, fmt.Errorf("the Lease needs a namespace and a name (got %q/%q)", c.Namespace, c.Name))
	}
	if c.Identity == "" {
		errs = append(errs, errors.New("Identity is required"))
	}
	if c.Callbacks.OnStartedLeading == nil {
		errs = append(errs, errors.New("Callbacks.OnStartedLeading is required"))
	}
	switch {
	case c.RetryPeriod <= 0:
		errs = append(errs, fmt.Errorf("RetryPeriod (%v) must be greater than zero", c.RetryPeriod))
	case c.RenewDeadline <= time.Duration(JitterFactor*float64(c.RetryPeriod)):
		errs = append(errs, fmt.Errorf("RenewDeadline (%v) must be greater than %v × RetryPeriod (%v)",
			c.RenewDeadline, JitterFactor, time.Duration(JitterFactor*float64(c.RetryPeriod))))
	}
	if c.LeaseDuration <= c.RenewDeadline {
		errs = append(errs, fmt.Errorf("LeaseDuration (%v) must be greater than RenewDeadline (%v)", c.LeaseDuration, c.RenewDeadline))
	}
	if c.LeaseDuration < time.Second {
		errs = append(errs, fmt.Errorf("LeaseDuration (%v) must be at least 1s: the Lease records it in whole seconds", c.LeaseDuration))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("leaderelection: invalid config: %w", errors.Join(errs...))
}

// Elector competes for leadership on a Lease (client-go's LeaderElector with a LeaseLock).
//
// Rules (as client-go): a candidate reads the Lease every RetryPeriod (with jitter); it
// creates it if it does not exist; it takes it over when it is released (holder "") or when
// LeaseDuration (the holder's leaseDurationSeconds) has passed on the candidate's own clock
// since it observed the last change of the Lease; a takeover increments leaseTransitions.
// The leader renews every RetryPeriod and gives up once RenewDeadline has passed since the
// start of its last successful renewal. Every write carries the resourceVersion that was
// read, so two candidates can never both succeed. Server timestamps are written for humans
// and never used to judge expiry, so clock skew between machines does not matter.
//
// Where it differs from client-go: a leader that observes another holder gives up at once
// instead of at the renew deadline; a candidate watches the Lease besides polling it, so it
// takes a released Lease at once and judges expiry from the arrival of the last renewal,
// retrying right when it expires rather than at its next jittered poll; and a leader whose
// context is done keeps renewing until OnStartedLeading has returned, so the work it guards
// has finished before the Lease can pass to someone else.
type Elector struct {
	cfg      Config
	leases   *apiclient.Resource[*Lease]
	log      *slog.Logger
	duration int32 // leaseDurationSeconds written

	mu           sync.Mutex
	lease        *Lease    // last version read or written
	observed     record    // last record observed
	observedTime time.Time // when it was first observed (local clock)
	leading      bool
	lost         bool
	running      bool
}

// New validates cfg and returns an Elector.
func New(cfg Config) (*Elector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	secs := int32((cfg.LeaseDuration + time.Second - 1) / time.Second)
	return &Elector{
		cfg:      cfg,
		leases:   apiclient.NewResource[*Lease](cfg.Client, LeaseGVR).Namespace(cfg.Namespace),
		log:      cfg.Logger.With("lease", cfg.Namespace+"/"+cfg.Name, "identity", cfg.Identity),
		duration: secs,
	}, nil
}

// Identity returns the elector's identity.
func (e *Elector) Identity() string { return e.cfg.Identity }

// IsLeader reports whether the elector leads now.
func (e *Elector) IsLeader() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leading
}

// Leader returns the holder the elector last observed ("" if none or not yet known).
func (e *Elector) Leader() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.observed.holder
}

// Run competes for leadership until ctx is done or leadership is lost. While leading it runs
// Callbacks.OnStartedLeading. It returns nil when ctx ends (after OnStartedLeading has
// returned and, with ReleaseOnCancel, the Lease was released), and ErrLeadershipLost when the
// Lease could not be renewed (after OnStartedLeading has returned). One Run at a time: a
// second concurrent call fails. Once Run has returned, calling it again campaigns again,
// from what the elector last observed of the Lease (a leader that lost it waits for the
// new holder's Lease to expire, or to be released, as any candidate).
func (e *Elector) Run(ctx context.Context) error {
	e.mu.Lock()
	if e.running {
		e.mu.Unlock()
		return errors.New("leaderelection: Run called twice")
	}
	e.running = true
	e.lost = false
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.running = false
		e.mu.Unlock()
	}()

	acquiredAt, ok := e.acquire(ctx)
	if !ok {
		return nil
	}
	return e.lead(ctx, acquiredAt)
}

// lead runs the leader's part: the work, renewals, and the end of leadership.
func (e *Elector) lead(ctx context.Context, acquiredAt time.Time) error {
	leaderCtx, cancelLeader := context.WithCancelCause(ctx)
	defer cancelLeader(nil)
	t := e.newTerm(cancelLeader, acquiredAt)
	defer t.lostTimer.Stop()

	e.mu.Lock()
	e.leading = true
	e.mu.Unlock()
	e.log.Info("acquired the lease; leading")
	workDone := make(chan struct{})
	go func() {
		defer close(workDone)
		e.cfg.Callbacks.OnStartedLeading(leaderCtx)
	}()

	// Renewals continue after ctx is done, until the work has returned.
	renewBase := context.WithoutCancel(ctx)
	workReturned := t.renewUntilEnd(ctx, renewBase, workDone)

	e.mu.Lock()
	lost := e.lost
	e.mu.Unlock()
	if lost {
		if e.cfg.Callbacks.OnStoppedLeading != nil {
			e.cfg.Callbacks.OnStoppedLeading()
		}
		if !workReturned {
			<-workDone
		}
		return ErrLeadershipLost
	}
	// Clean shutdown: the work has returned; release, then say so.
	t.lostTimer.Stop()
	if e.cfg.ReleaseOnCancel {
		e.release(renewBase)
	}
	t.end(context.Canceled)
	if e.cfg.Callbacks.OnStoppedLeading != nil {
		e.cfg.Callbacks.OnStoppedLeading()
	}
	return nil
}

// term is one term of leadership. It ends at validUntil unless a renewal moves it: lostTimer
// cancels the work on time even while a renewal request is in flight.
type term struct {
	e            *Elector
	cancelLeader context.CancelCauseFunc // cancels the work's context
	endOnce      sync.Once
	stopped      chan struct{} // closed when the term has ended
	validUntil   time.Time
	lostTimer    *time.Timer
}

// newTerm starts a term acquired at acquiredAt, whose work cancelLeader cancels.
func (e *Elector) newTerm(cancelLeader context.CancelCauseFunc, acquiredAt time.Time) *term {
	t := &term{e: e, cancelLeader: cancelLeader, stopped: make(chan struct{})}
	t.validUntil = acquiredAt.Add(e.cfg.RenewDeadline)
	t.lostTimer = time.AfterFunc(time.Until(t.validUntil), func() {
		e.log.Error("failed to renew the lease within the renew deadline; leadership lost", "renewDeadline", e.cfg.RenewDeadline)
		t.end(ErrLeadershipLost)
	})
	return t
}

// end ends the term once, with cause: leading stops, ErrLeadershipLost is remembered, and the
// work's context is cancelled with cause.
func (t *term) end(cause error) {
	t.endOnce.Do(func() {
		e := t.e
		e.mu.Lock()
		e.leading = false
		if errors.Is(cause, ErrLeadershipLost) {
			e.lost = true
		}
		e.mu.Unlock()
		t.cancelLeader(cause)
		close(t.stopped)
	})
}

// renewUntilEnd renews the Lease every RetryPeriod, with requests made from renewBase, until
// the term ends (lost), or ctx is done and the work has returned, or the work returned and
// ctx is done; when ctx is done first it cancels the work and goes on renewing while the
// work winds down. It reports whether the work has returned.
func (t *term) renewUntilEnd(ctx, renewBase context.Context, workDone <-chan struct{}) (workReturned bool) {
	ctxDone := ctx.Done()
	tick := time.NewTimer(t.e.cfg.RetryPeriod)
	defer tick.Stop()
	for {
		select {
		case <-t.stopped:
			return workReturned
		case <-ctxDone:
			ctxDone = nil
			t.cancelLeader(context.Cause(ctx)) // the work winds down; keep renewing meanwhile
			if workReturned {
				return true
			}
			continue
		case <-workDone:
			workDone, workReturned = nil, true
			// Shutting down and the work has returned: stop. Otherwise the work returned on
			// its own: keep leading until ctx is done.
			if ctx.Err() != nil {
				return true
			}
			continue
		case <-tick.C:
		}
		if t.renew(renewBase) {
			tick.Reset(t.e.cfg.RetryPeriod)
		}
	}
}

// renew tries once to renew the Lease before validUntil. On success it moves validUntil;
// when another candidate holds the Lease it ends the term. It reports whether to try again
// after RetryPeriod (false: the term has ended or is ending).
func (t *term) renew(renewBase context.Context) bool {
	e := t.e
	start := time.Now()
	actx, cancel := context.WithDeadline(renewBase, t.validUntil)
	ok := e.tryAcquireOrRenew(actx, true)
	cancel()
	if ok {
		if !t.lostTimer.Stop() {
			return false // the deadline passed while the request was in flight: lost
		}
		t.validUntil = start.Add(e.cfg.RenewDeadline)
		t.lostTimer.Reset(time.Until(t.validUntil))
	} else if e.sawOtherHolder() {
		t.lostTimer.Stop()
		e.log.Error("another candidate holds the lease; leadership lost", "holder", e.Leader())
		t.end(ErrLeadershipLost)
		return false
	}
	return true
}

// sawOtherHolder reports whether the last observed record names another holder.
func (e *Elector) sawOtherHolder() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.observed.holder != e.cfg.Identity
}

// observe records lease as read at time now and reports a new holder.
func (e *Elector) observe(lease *Lease, now time.Time) {
	r := recordOf(lease.Spec)
	e.mu.Lock()
	e.lease = lease
	changedHolder := r.holder != e.observed.holder || e.observedTime.IsZero()
	if !r.equal(e.observed) || e.observedTime.IsZero() {
		e.observed = r
		e.observedTime = now
	}
	e.mu.Unlock()
	if changedHolder {
		e.log.Info("new leader observed", "holder", r.holder)
		if e.cfg.Callbacks.OnNewLeader != nil {
			e.cfg.Callbacks.OnNewLeader(r.holder)
		}
	}
}

// tryAcquireOrRenew makes one attempt to create, take over or renew the Lease.
func (e *Elector) tryAcquireOrRenew(ctx context.Context, leading bool) bool {
	me := e.cfg.Identity
	now := time.Now()

	// Fast path for the leader: update the version it wrote last.
	e.mu.Lock()
	cached := e.lease
	e.mu.Unlock()
	if leading && cached != nil && cached.Spec.Holder() == me {
		next := e.withHolder(cached, now, true)
		if out, err := e.leases.Update(ctx, next, apiclient.UpdateOptions{}); err == nil {
			e.observe(out, time.Now())
			return true
		} else {
			e.log.Debug("lease renewal failed; reading the lease again", "err", err)
		}
	}

	lease, err := e.leases.Get(ctx, e.cfg.Name, apiclient.GetOptions{})
	if meta.IsNotFound(err) {
		l := &Lease{
			TypeMeta:   meta.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
			ObjectMeta: meta.ObjectMeta{Name: e.cfg.Name, Namespace: e.cfg.Namespace, Labels: e.cfg.Labels},
		}
		l = e.withHolder(l, now, false)
		zero := int32(0)
		l.Spec.LeaseTransitions = &zero
		out, err := e.leases.Create(ctx, l, apiclient.CreateOptions{})
		if err != nil {
			e.log.Debug("creating the lease failed", "err", err)
			return false
		}
		e.observe(out, time.Now())
		return true
	}
	if err != nil {
		e.log.Debug("reading the lease failed", "err", err)
		return false
	}
	e.observe(lease, time.Now())

	holder := lease.Spec.Holder()
	if holder != me {
		if leading {
			return false // someone else took it: lost (the caller checks sawOtherHolder)
		}
		e.mu.Lock()
		valid := holder != "" && time.Now().Before(e.observedTime.Add(e.observedDuration()))
		e.mu.Unlock()
		if valid {
			return false
		}
	}
	next := e.withHolder(lease, now, holder == me)
	out, err := e.leases.Update(ctx, next, apiclient.UpdateOptions{})
	if err != nil {
		e.log.Debug("updating the lease failed", "err", err)
		return false
	}
	e.observe(out, time.Now())
	if holder != me {
		e.log.Info("took over the lease", "previousHolder", holder, "transitions", out.Spec.Transitions())
	}
	return true
}

// withHolder returns a copy of l held by this elector, renewed at now. renew keeps the
// acquire time and transition count; otherwise the holder changes and transitions grow.
func (e *Elector) withHolder(l *Lease, now time.Time, renew bool) *Lease {
	cp := *l
	spec := cp.Spec
	me := e.cfg.Identity
	dur := e.duration
	spec.HolderIdentity = &me
	spec.LeaseDurationSeconds = &dur
	spec.RenewTime = NewMicroTime(now)
	if !renew || spec.AcquireTime == nil {
		spec.AcquireTime = NewMicroTime(now)
	}
	if !renew {
		n := spec.Transitions() + 1
		spec.LeaseTransitions = &n
	}
	cp.Spec = spec
	return &cp
}

// release gives the Lease up if this elector still holds it.
func (e *Elector) release(base context.Context) {
	ctx, cancel := context.WithTimeout(base, e.cfg.RenewDeadline)
	defer cancel()
	lease, err := e.leases.Get(ctx, e.cfg.Name, apiclient.GetOptions{})
	if err != nil {
		e.log.Error("releasing the lease: cannot read it", "err", err)
		return
	}
	if lease.Spec.Holder() != e.cfg.Identity {
		return
	}
	now := time.Now()
	cp := *lease
	empty := ""
	one := int32(1)
	cp.Spec.HolderIdentity = &empty
	cp.Spec.LeaseDurationSeconds = &one
	cp.Spec.RenewTime = NewMicroTime(now)
	cp.Spec.AcquireTime = NewMicroTime(now)
	out, err := e.leases.Update(ctx, &cp, apiclient.UpdateOptions{})
	if err != nil {
		e.log.Error("releasing the lease failed", "err", err)
		return
	}
	e.observe(out, time.Now())
	e.log.Info("released the lease")
}
