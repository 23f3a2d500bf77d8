package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
)

// Short durations so the tests are quick; the rules hold at any scale.
const (
	leaseDuration = 2 * time.Second
	renewDeadline = 1500 * time.Millisecond
	retryPeriod   = 250 * time.Millisecond
	// slack absorbs scheduling and loopback latency on a loaded 2-core machine.
	slack = 400 * time.Millisecond
)

// span is one candidate's leadership: from the start of OnStartedLeading to its return.
type span struct {
	who         string
	start, stop time.Time
	cause       error
}

// journal records leadership spans of every candidate.
type journal struct {
	mu      sync.Mutex
	spans   []*span
	changed chan struct{}
}

func newJournal() *journal { return &journal{changed: make(chan struct{})} }

func (j *journal) notify() {
	close(j.changed)
	j.changed = make(chan struct{})
}

func (j *journal) started(who string) *span {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := &span{who: who, start: time.Now()}
	j.spans = append(j.spans, s)
	j.notify()
	return s
}

func (j *journal) stopped(s *span, cause error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	s.stop, s.cause = time.Now(), cause
	j.notify()
}

func (j *journal) snapshot() []span {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]span, len(j.spans))
	for i, s := range j.spans {
		out[i] = *s
	}
	return out
}

// waitFor blocks until cond holds for the spans or the test's deadline.
func (j *journal) waitFor(t *testing.T, what string, timeout time.Duration, cond func([]span) bool) []span {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		j.mu.Lock()
		ch := j.changed
		j.mu.Unlock()
		if s := j.snapshot(); cond(s) {
			return s
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("timed out after %v waiting for %s; spans: %v", timeout, what, j.snapshot())
		}
	}
}

// checkNoOverlap fails if two candidates ever led at the same time.
func checkNoOverlap(t *testing.T, spans []span) {
	t.Helper()
	for i, a := range spans {
		for _, b := range spans[i+1:] {
			aStop, bStop := a.stop, b.stop
			if aStop.IsZero() {
				aStop = time.Now().Add(time.Hour)
			}
			if bStop.IsZero() {
				bStop = time.Now().Add(time.Hour)
			}
			if a.start.Before(bStop) && b.start.Before(aStop) {
				t.Fatalf("two leaders at once: %s [%v, %v] and %s [%v, %v]", a.who, a.start, a.stop, b.who, b.start, b.stop)
			}
		}
	}
}

type candidate struct {
	name   string
	el     *Elector
	cancel context.CancelFunc
	done   chan error
}

// newClient returns a client whose requests are single attempts (no retries), named by its
// User-Agent so the server's request log tells the candidates apart.
func newClient(t *testing.T, srv *apitest.Server, name string) *apiclient.Client {
	t.Helper()
	cfg := srv.Config()
	cfg.MaxRetries = -1
	cfg.UserAgent = name
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func startCandidate(t *testing.T, srv *apitest.Server, j *journal, name string, release bool) *candidate {
	t.Helper()
	return startCandidateWith(t, j, Config{
		Client:          newClient(t, srv, name),
		Namespace:       "kube-system",
		Name:            "test-lease",
		Identity:        name,
		LeaseDuration:   leaseDuration,
		RenewDeadline:   renewDeadline,
		RetryPeriod:     retryPeriod,
		ReleaseOnCancel: release,
	})
}

// startCandidateWith runs an elector of cfg (its Callbacks and Logger are the test's) until
// the test ends.
func startCandidateWith(t *testing.T, j *journal, cfg Config) *candidate {
	t.Helper()
	name := cfg.Identity
	c := &candidate{name: name, done: make(chan error, 1)}
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Callbacks = Callbacks{OnStartedLeading: func(ctx context.Context) {
		s := j.started(name)
		<-ctx.Done()
		j.stopped(s, context.Cause(ctx))
	}}
	el, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.el = el
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	go func() { c.done <- el.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-c.done
	})
	return c
}

func (c *candidate) stop(t *testing.T) error {
	t.Helper()
	c.cancel()
	select {
	case err := <-c.done:
		c.done <- err // for the cleanup
		return err
	case <-time.After(30 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("%s: Run did not return; goroutines:\n%s", c.name, buf[:runtime.Stack(buf, true)])
		return nil
	}
}

func getLease(t *testing.T, srv *apitest.Server) *Lease {
	t.Helper()
	obj, err := srv.Get("leases", "kube-system", "test-lease")
	if err != nil {
		t.Fatal(err)
	}
	var l Lease
	if err := obj.Into(&l); err != nil {
		t.Fatal(err)
	}
	return &l
}

// lastRenewal returns the start time of who's last successful lease write, from the
// server's request log (the request's Time is when the server received it, after the
// client's attempt started).
func lastRenewal(srv *apitest.Server, who string) time.Time {
	var last time.Time
	for _, r := range srv.RequestsMatching(apitest.RequestFilter{Resource: "leases"}) {
		if r.UserAgent == who && (r.Verb == apitest.VerbUpdate || r.Verb == apitest.VerbCreate) && r.Code/100 == 2 {
			last = r.Time
		}
	}
	return last
}

func leaderOf(spans []span) string {
	for _, s := range spans {
		if s.stop.IsZero() {
			return s.who
		}
	}
	return ""
}

func TestConfigValidation(t *testing.T) {
	srv := apitest.NewServer()
	defer srv.Close()
	client := newClient(t, srv, "x")
	base := func() Config {
		return Config{Client: client, Namespace: "ns", Name: "l", Identity: "me",
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
			Callbacks: Callbacks{OnStartedLeading: func(context.Context) {}}}
	}
	if err := func() error { c := base(); return c.Validate() }(); err != nil {
		t.Fatalf("valid config rejected: %v", err)
	}
	cases := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"lease not above renew", func(c *Config) { c.LeaseDuration = 10 * time.Second }, "LeaseDuration (10s) must be greater than RenewDeadline (10s)"},
		{"renew not above 1.2 retry", func(c *Config) { c.RetryPeriod = 9 * time.Second }, "RenewDeadline (10s) must be greater than 1.2 × RetryPeriod (10.8s)"},
		{"retry zero", func(c *Config) { c.RetryPeriod = 0 }, "RetryPeriod (0s) must be greater than zero"},
		{"sub-second lease", func(c *Config) {
			c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = 900*time.Millisecond, 600*time.Millisecond, 100*time.Millisecond
		}, "must be at least 1s"},
		{"no identity", func(c *Config) { c.Identity = "" }, "Identity is required"},
		{"no lease name", func(c *Config) { c.Name = "" }, "namespace and a name"},
		{"no callback", func(c *Config) { c.Callbacks.OnStartedLeading = nil }, "OnStartedLeading is required"},
		{"no client", func(c *Config) { c.Client = nil }, "Client is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.change(&c)
			_, err := New(c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// bubble runs f in a testing/synctest bubble with an in-memory API server: time is the
// bubble's fake clock, so the tests assert the exact timing of renewals and take-overs.
func bubble(t *testing.T, f func(t *testing.T, srv *apitest.Server)) {
	synctest.Test(t, func(t *testing.T) {
		srv := apitest.NewServerWithOptions(apitest.Options{InMemory: true})
		defer srv.Close()
		f(t, srv)
	})
}

// updates returns the times of who's successful lease writes (creates and updates).
func updates(srv *apitest.Server, who string) []time.Time {
	var out []time.Time
	for _, r := range srv.RequestsMatching(apitest.RequestFilter{Resource: "leases"}) {
		if r.UserAgent == who && (r.Verb == apitest.VerbUpdate || r.Verb == apitest.VerbCreate) && r.Code/100 == 2 {
			out = append(out, r.Time)
		}
	}
	return out
}

// The leader renews every RetryPeriod to the tick, for as long as it runs, and the other
// candidate never starts meanwhile; stopped without a release, the leader leaves the Lease
// to expire, and the other candidate takes it over exactly LeaseDuration after the last
// renewal: it saw that renewal arrive on its watch, not at its next poll.
func TestRenewalsAndTakeOverAfterLeaseDuration(t *testing.T) {
	bubble(t, func(t *testing.T, srv *apitest.Server) {
		j := newJournal()
		cands := map[string]*candidate{
			"a": startCandidate(t, srv, j, "a", false),
			"b": startCandidate(t, srv, j, "b", false),
		}
		spans := j.waitFor(t, "a leader", time.Minute, func(s []span) bool { return len(s) > 0 })
		first := spans[0].who
		other := map[string]string{"a": "b", "b": "a"}[first]

		time.Sleep(10 * leaseDuration)
		if s := j.snapshot(); len(s) != 1 || !s[0].stop.IsZero() {
			t.Fatalf("after 10 lease durations: spans %v, want only %s leading", s, first)
		}
		writes := updates(srv, first)
		if len(writes) < 10*int(leaseDuration/retryPeriod) {
			t.Fatalf("%d lease writes in 10 lease durations, want one per retry period", len(writes))
		}
		for i := 1; i < len(writes); i++ {
			if d := writes[i].Sub(writes[i-1]); d != retryPeriod {
				t.Fatalf("renewal %d came %v after the previous one, want %v", i, d, retryPeriod)
			}
		}
		if got := cands[other].el.Leader(); got != first {
			t.Fatalf("%s observes leader %q, want %q", other, got, first)
		}

		if err := cands[first].stop(t); err != nil {
			t.Fatalf("%s: Run = %v, want nil after cancel", first, err)
		}
		writes = updates(srv, first)
		lastRenew := writes[len(writes)-1]
		spans = j.waitFor(t, other+" leading", time.Minute, func(s []span) bool { return leaderOf(s) == other })
		checkNoOverlap(t, spans)
		// The other candidate retries a millisecond after the observed expiry.
		if d := spans[1].start.Sub(lastRenew); d != leaseDuration+time.Millisecond {
			t.Fatalf("%s started %v after %s's last renewal, want the lease duration %v (+1 ms)", other, d, first, leaseDuration)
		}
		l := getLease(t, srv)
		if l.Spec.Holder() != other || l.Spec.Transitions() != 1 {
			t.Fatalf("lease holder %q transitions %d, want %q and 1", l.Spec.Holder(), l.Spec.Transitions(), other)
		}
		if l.Spec.AcquireTime == nil || l.Spec.RenewTime == nil || l.Spec.Duration() != leaseDuration {
			t.Fatalf("lease spec incomplete: %+v", l.Spec)
		}
	})
}

// A released Lease is taken over at once, at the instant of the release: the standby sees it
// on its watch, long before its next poll (RetryPeriod is long here).
func TestReleaseHandsOverAtOnce(t *testing.T) {
	bubble(t, func(t *testing.T, srv *apitest.Server) {
		j := newJournal()
		const slowRetry = 5 * time.Second // a poll would take up to 11 s
		cfg := func(name string) Config {
			return Config{Client: newClient(t, srv, name), Namespace: "kube-system", Name: "test-lease", Identity: name,
				LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: slowRetry, ReleaseOnCancel: true}
		}
		cands := map[string]*candidate{"a": startCandidateWith(t, j, cfg("a")), "b": startCandidateWith(t, j, cfg("b"))}
		spans := j.waitFor(t, "a leader", time.Minute, func(s []span) bool { return len(s) > 0 })
		first := spans[0].who
		other := map[string]string{"a": "b", "b": "a"}[first]
		time.Sleep(3 * slowRetry)
		if err := cands[first].stop(t); err != nil {
			t.Fatal(err)
		}
		writes := updates(srv, first)
		released := writes[len(writes)-1]
		spans = j.waitFor(t, other+" leading", time.Minute, func(s []span) bool { return leaderOf(s) == other })
		checkNoOverlap(t, spans)
		if d := spans[1].start.Sub(released); d != 0 {
			t.Fatalf("%s started %v after the release, want at once", other, d)
		}
		if l := getLease(t, srv); l.Spec.Holder() != other || l.Spec.Transitions() != 1 {
			t.Fatalf("lease %+v: want holder %s, transitions 1", l.Spec, other)
		}
	})
}

func TestReleaseWritesEmptyHolder(t *testing.T) {
	bubble(t, func(t *testing.T, srv *apitest.Server) {
		j := newJournal()
		c := startCandidate(t, srv, j, "solo", true)
		j.waitFor(t, "solo leading", time.Minute, func(s []span) bool { return len(s) == 1 })
		if err := c.stop(t); err != nil {
			t.Fatal(err)
		}
		l := getLease(t, srv)
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "" || l.Spec.Duration() != time.Second {
			t.Fatalf("released lease: holder %v duration %v, want \"\" and 1s", l.Spec.HolderIdentity, l.Spec.Duration())
		}
		if l.Spec.Transitions() != 0 {
			t.Fatalf("release changed leaseTransitions to %d", l.Spec.Transitions())
		}
		if c.el.IsLeader() {
			t.Fatal("still leader after Run returned")
		}
	})
}

// When renewals fail, the leader stops exactly RenewDeadline after the start of its last
// successful renewal, and the other candidate starts exactly LeaseDuration after that
// renewal: never two leaders.
func TestBlockedRenewalsStopTheLeaderBeforeAnyoneElseStarts(t *testing.T) {
	bubble(t, func(t *testing.T, srv *apitest.Server) {
		j := newJournal()
		cands := map[string]*candidate{
			"a": startCandidate(t, srv, j, "a", false),
			"b": startCandidate(t, srv, j, "b", false),
		}
		spans := j.waitFor(t, "a leader", time.Minute, func(s []span) bool { return len(s) > 0 })
		first := spans[0].who
		other := map[string]string{"a": "b", "b": "a"}[first]
		time.Sleep(3 * retryPeriod)

		// From now on lease writes fail (more than the leader can try before its deadline:
		// two updates per attempt, one attempt per retry period) and a few reads fail too.
		if err := srv.Faults().FailRequests(apitest.VerbUpdate, "leases", 2*int(renewDeadline/retryPeriod+2), 500, 0); err != nil {
			t.Fatal(err)
		}
		if err := srv.Faults().FailRequests(apitest.VerbGet, "leases", 3, 503, 0); err != nil {
			t.Fatal(err)
		}
		spans = j.waitFor(t, first+" stopping", time.Minute, func(s []span) bool { return !s[0].stop.IsZero() })
		if !errors.Is(spans[0].cause, ErrLeadershipLost) {
			t.Fatalf("leader's context ended with cause %v, want ErrLeadershipLost", spans[0].cause)
		}
		if err := <-cands[first].done; !errors.Is(err, ErrLeadershipLost) {
			t.Fatalf("Run = %v, want ErrLeadershipLost", err)
		} else {
			cands[first].done <- err
		}
		writes := updates(srv, first)
		lastRenew := writes[len(writes)-1]
		if d := spans[0].stop.Sub(lastRenew); d != renewDeadline {
			t.Fatalf("the leader stopped %v after its last renewal, want the renew deadline %v", d, renewDeadline)
		}
		spans = j.waitFor(t, other+" leading", time.Minute, func(s []span) bool { return leaderOf(s) == other })
		checkNoOverlap(t, spans)
		if d := spans[1].start.Sub(lastRenew); d < leaseDuration {
			t.Fatalf("%s started %v after the last renewal, before the lease duration", other, d)
		}
		if n := len(srv.Faults().RecordsOf(apitest.FaultFailRequest)); n == 0 {
			t.Fatal("no injected failure was served")
		}
	})
}

// A Lease whose timestamps are years old is taken over LeaseDuration after the candidate
// first observed it, not at once: expiry is judged on the candidate's clock.
func TestExpiryIsJudgedByLocalObservationNotServerTimestamps(t *testing.T) {
	bubble(t, func(t *testing.T, srv *apitest.Server) {
		old := "2001-01-01T00:00:00.000000Z"
		if _, err := srv.Create("leases", map[string]any{
			"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
			"metadata": map[string]any{"namespace": "kube-system", "name": "test-lease"},
			"spec": map[string]any{"holderIdentity": "ghost", "leaseDurationSeconds": 2, "acquireTime": old, "renewTime": old,
				"leaseTransitions": 4},
		}); err != nil {
			t.Fatal(err)
		}
		j := newJournal()
		start := time.Now()
		startCandidate(t, srv, j, "b", false)
		spans := j.waitFor(t, "b leading", time.Minute, func(s []span) bool { return len(s) == 1 })
		if d := spans[0].start.Sub(start); d != leaseDuration+time.Millisecond {
			t.Fatalf("took over %v after first observing the lease, want its duration %v (+1 ms)", d, leaseDuration)
		}
		if l := getLease(t, srv); l.Spec.Holder() != "b" || l.Spec.Transitions() != 5 {
			t.Fatalf("lease %+v: want holder b and transitions 5", l.Spec)
		}
	})
}

func TestLeaderReReadsOnConflictAndKeepsOthersChanges(t *testing.T) {
	srv := apitest.NewServer()
	defer srv.Close()
	j := newJournal()
	startCandidate(t, srv, j, "a", false)
	j.waitFor(t, "a leading", 60*time.Second, func(s []span) bool { return len(s) == 1 })
	// Someone else writes the lease: the leader's next renewal conflicts (its cached
	// resourceVersion is stale), so it must read again and keep the change.
	if _, err := srv.Mutate("leases", "kube-system", "test-lease", func(o apitest.Object) {
		o["metadata"].(map[string]any)["annotations"] = map[string]any{"note": "kept"}
	}); err != nil {
		t.Fatal(err)
	}
	seq := srv.LastRequestSeq()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := srv.WaitFor(ctx, func() bool {
		var conflict, okAfter bool
		for _, r := range srv.RequestsMatching(apitest.RequestFilter{Verb: apitest.VerbUpdate, Resource: "leases", After: seq}) {
			if r.Code == 409 {
				conflict = true
			} else if conflict && r.Code == 200 {
				okAfter = true
			}
		}
		return okAfter
	}); err != nil {
		t.Fatalf("no conflict followed by a successful renewal: %v", err)
	}
	l := getLease(t, srv)
	if l.Annotations["note"] != "kept" || l.Spec.Holder() != "a" {
		t.Fatalf("lease after renewal: annotations %v holder %q", l.Annotations, l.Spec.Holder())
	}
	if s := j.snapshot(); len(s) != 1 || !s[0].stop.IsZero() {
		t.Fatalf("leadership changed: %v", s)
	}
}

func TestMicroTimeRoundTrip(t *testing.T) {
	in := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.FixedZone("x", 3600))
	b, err := NewMicroTime(in).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `"2026-03-04T04:06:07.123456Z"`; got != want {
		t.Fatalf("MarshalJSON = %s, want %s", got, want)
	}
	var out MicroTime
	if err := out.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	if !out.Equal(in.Truncate(time.Microsecond)) {
		t.Fatalf("round trip: %v, want %v", out.Time, in)
	}
	for _, bad := range []string{`12`, `"yesterday"`} {
		if err := out.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("UnmarshalJSON(%s) accepted", bad)
		}
	}
}

func (s span) String() string {
	return fmt.Sprintf("%s[%s..%s]", s.who, s.start.Format("15:04:05.000"), s.stop.Format("15:04:05.000"))
}

// Run again after it returned ErrLeadershipLost campaigns again: the deposed leader waits,
// as any candidate, for the Lease it saw taken to expire (the taker here never renews), and
// leads a second term; a second Run while one runs is refused.
func TestRunAgainAfterLostLeadsAgain(t *testing.T) {
	bubble(t, func(t *testing.T, srv *apitest.Server) {
		j := newJournal()
		c := startCandidate(t, srv, j, "a", false)
		j.waitFor(t, "a leading", time.Minute, func(s []span) bool { return leaderOf(s) == "a" })
		if err := c.el.Run(t.Context()); err == nil || errors.Is(err, ErrLeadershipLost) {
			t.Fatalf("a second Run while one runs = %v, want refused", err)
		}
		if _, err := srv.Mutate("leases", "kube-system", "test-lease", func(o apitest.Object) {
			o["spec"].(map[string]any)["holderIdentity"] = "intruder"
		}); err != nil {
			t.Fatal(err)
		}
		stolen := time.Now()
		if err := <-c.done; !errors.Is(err, ErrLeadershipLost) {
			t.Fatalf("Run = %v, want ErrLeadershipLost", err)
		}
		if d := time.Since(stolen); d > retryPeriod {
			t.Fatalf("the loss was seen %v after the theft, want within a retry period", d)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer func() {
			if err := c.stop(t); err != nil {
				t.Errorf("second Run = %v, want nil after cancel", err)
			}
		}()
		c.cancel = cancel
		go func() { c.done <- c.el.Run(ctx) }()
		spans := j.waitFor(t, "a leading again", time.Minute, func(s []span) bool { return len(s) == 2 && s[1].stop.IsZero() })
		if !errors.Is(spans[0].cause, ErrLeadershipLost) {
			t.Fatalf("first term ended with %v, want ErrLeadershipLost", spans[0].cause)
		}
		if d := spans[1].start.Sub(stolen); d < leaseDuration {
			t.Fatalf("second term began %v after the theft, before the taker's Lease could expire (%v)", d, leaseDuration)
		}
		if l := getLease(t, srv); l.Spec.Holder() != "a" {
			t.Fatalf("holder %q, want a", l.Spec.Holder())
		}
	})
}
