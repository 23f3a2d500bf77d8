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
	c := &candidate{name: name, done: make(chan error, 1)}
	el, err := New(Config{
		Client:          newClient(t, srv, name),
		Namespace:       "kube-system",
		Name:            "test-lease",
		Identity:        name,
		LeaseDuration:   leaseDuration,
		RenewDeadline:   renewDeadline,
		RetryPeriod:     retryPeriod,
		ReleaseOnCancel: release,
		Logger:          slog.New(slog.DiscardHandler),
		Callbacks: Callbacks{OnStartedLeading: func(ctx context.Context) {
			s := j.started(name)
			<-ctx.Done()
			j.stopped(s, context.Cause(ctx))
		}},
	})
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

func TestOnlyOneLeadsAndFailoverAfterLeaseDuration(t *testing.T) {
	srv := apitest.NewServer()
	defer srv.Close()
	j := newJournal()
	cands := map[string]*candidate{
		"a": startCandidate(t, srv, j, "a", false),
		"b": startCandidate(t, srv, j, "b", false),
	}
	spans := j.waitFor(t, "a leader", 60*time.Second, func(s []span) bool { return len(s) > 0 })
	first := spans[0].who
	other := map[string]string{"a": "b", "b": "a"}[first]

	// Let the leader renew for longer than a lease duration: the other must not start.
	seq := srv.LastRequestSeq()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := srv.WaitForRequests(ctx, apitest.RequestFilter{Verb: apitest.VerbUpdate, Resource: "leases", After: seq}, 10); err != nil {
		t.Fatal(err)
	}
	if s := j.snapshot(); len(s) != 1 || !s[0].stop.IsZero() {
		t.Fatalf("after 10 renewals: spans %v, want only %s leading", s, first)
	}
	if got := cands[other].el.Leader(); got != first {
		t.Fatalf("%s observes leader %q, want %q", other, got, first)
	}

	// Cancel the leader without releasing: the other takes over once the lease expires.
	cancelAt := time.Now()
	if err := cands[first].stop(t); err != nil {
		t.Fatalf("%s: Run = %v, want nil after cancel", first, err)
	}
	lastRenew := lastRenewal(srv, first)
	spans = j.waitFor(t, other+" leading", 60*time.Second, func(s []span) bool { return leaderOf(s) == other })
	checkNoOverlap(t, spans)
	newStart := spans[1].start
	failover := newStart.Sub(cancelAt)
	t.Logf("failover: %v after cancel, %v after the old leader's last renewal (lease %v, retry %v)",
		failover.Round(time.Millisecond), newStart.Sub(lastRenew).Round(time.Millisecond), leaseDuration, retryPeriod)
	// Safety: never before a full lease duration after the last renewal was written.
	if d := newStart.Sub(lastRenew); d < leaseDuration {
		t.Fatalf("%s started %v after %s's last renewal, before the lease duration %v", other, d, first, leaseDuration)
	}
	// Liveness: the lease duration plus the lag of observing that last renewal.
	if max := leaseDuration + time.Duration(JitterFactor*float64(retryPeriod)) + retryPeriod + slack; failover > max {
		t.Fatalf("failover took %v, want at most %v", failover, max)
	}
	l := getLease(t, srv)
	if l.Spec.Holder() != other || l.Spec.Transitions() != 1 {
		t.Fatalf("lease holder %q transitions %d, want %q and 1", l.Spec.Holder(), l.Spec.Transitions(), other)
	}
	if l.Spec.AcquireTime == nil || l.Spec.RenewTime == nil || l.Spec.Duration() != leaseDuration {
		t.Fatalf("lease spec incomplete: %+v", l.Spec)
	}
}

func TestReleaseOnCancelHandsOverSooner(t *testing.T) {
	srv := apitest.NewServer()
	defer srv.Close()
	j := newJournal()
	cands := map[string]*candidate{
		"a": startCandidate(t, srv, j, "a", true),
		"b": startCandidate(t, srv, j, "b", true),
	}
	spans := j.waitFor(t, "a leader", 60*time.Second, func(s []span) bool { return len(s) > 0 })
	first := spans[0].who
	other := map[string]string{"a": "b", "b": "a"}[first]
	cancelAt := time.Now()
	if err := cands[first].stop(t); err != nil {
		t.Fatal(err)
	}
	spans = j.waitFor(t, other+" leading", 60*time.Second, func(s []span) bool { return leaderOf(s) == other })
	checkNoOverlap(t, spans)
	failover := spans[1].start.Sub(cancelAt)
	t.Logf("failover with release: %v after cancel (lease %v)", failover.Round(time.Millisecond), leaseDuration)
	// The standby notices the release at its next retry.
	if max := time.Duration((1+JitterFactor)*float64(retryPeriod)) + slack; failover > max {
		t.Fatalf("failover with release took %v, want at most %v (much less than the lease duration)", failover, max)
	}
	// The released lease said so before being taken over: holder "" and duration 1 s.
	var sawRelease bool
	for _, r := range srv.RequestsMatching(apitest.RequestFilter{Verb: apitest.VerbUpdate, Resource: "leases"}) {
		if r.UserAgent == first && r.Code == 200 {
			sawRelease = true // the last successful update of the old leader is the release
		}
	}
	if !sawRelease {
		t.Fatal("no update from the old leader")
	}
	if l := getLease(t, srv); l.Spec.Holder() != other || l.Spec.Transitions() != 1 {
		t.Fatalf("lease %+v: want holder %s, transitions 1", l.Spec, other)
	}
}

func TestReleaseWritesEmptyHolder(t *testing.T) {
	srv := apitest.NewServer()
	defer srv.Close()
	j := newJournal()
	c := startCandidate(t, srv, j, "solo", true)
	j.waitFor(t, "solo leading", 60*time.Second, func(s []span) bool { return len(s) == 1 })
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
}

func TestBlockedRenewalsStopTheLeaderBeforeAnyoneElseStarts(t *testing.T) {
	srv := apitest.NewServer()
	defer srv.Close()
	j := newJournal()
	cands := map[string]*candidate{
		"a": startCandidate(t, srv, j, "a", false),
		"b": startCandidate(t, srv, j, "b", false),
	}
	spans := j.waitFor(t, "a leader", 60*time.Second, func(s []span) bool { return len(s) > 0 })
	first := spans[0].who
	other := map[string]string{"a": "b", "b": "a"}[first]

	// From now on lease writes fail (more than the leader can try before its deadline: two
	// updates per attempt, one attempt per retry period) and a few reads fail too.
	faultAt := time.Now()
	if err := srv.FailRequests(apitest.VerbUpdate, "leases", 2*int(renewDeadline/retryPeriod+2), 500, 0); err != nil {
		t.Fatal(err)
	}
	if err := srv.FailRequests(apitest.VerbGet, "leases", 3, 503, 0); err != nil {
		t.Fatal(err)
	}
	spans = j.waitFor(t, first+" stopping", 60*time.Second, func(s []span) bool { return !s[0].stop.IsZero() })
	if !errors.Is(spans[0].cause, ErrLeadershipLost) {
		t.Fatalf("leader's context ended with cause %v, want ErrLeadershipLost", spans[0].cause)
	}
	select {
	case err := <-cands[first].done:
		if !errors.Is(err, ErrLeadershipLost) {
			t.Fatalf("Run = %v, want ErrLeadershipLost", err)
		}
		cands[first].done <- err
	case <-time.After(30 * time.Second):
		t.Fatal("Run of the deposed leader did not return")
	}
	lastRenew := lastRenewal(srv, first)
	lostAfter := spans[0].stop.Sub(lastRenew)
	if lostAfter > renewDeadline+slack {
		t.Fatalf("the leader stopped %v after its last renewal, want at most the renew deadline %v", lostAfter, renewDeadline)
	}

	spans = j.waitFor(t, other+" leading", 60*time.Second, func(s []span) bool { return leaderOf(s) == other })
	checkNoOverlap(t, spans)
	gap := spans[1].start.Sub(spans[0].stop)
	t.Logf("renewals blocked at +0: leader stopped at +%v (%v after its last renewal), %s started %v later",
		spans[0].stop.Sub(faultAt).Round(time.Millisecond), lostAfter.Round(time.Millisecond), other, gap.Round(time.Millisecond))
	if gap <= 0 {
		t.Fatalf("%s started %v before %s stopped", other, -gap, first)
	}
	if d := spans[1].start.Sub(lastRenew); d < leaseDuration {
		t.Fatalf("%s started %v after the last renewal, before the lease duration", other, d)
	}
	if n := len(srv.FaultsOf(apitest.FaultFailRequest)); n == 0 {
		t.Fatal("no injected failure was served")
	}
}

func TestExpiryIsJudgedByLocalObservationNotServerTimestamps(t *testing.T) {
	srv := apitest.NewServer()
	defer srv.Close()
	// A lease held by a dead holder, renewed (by its timestamps) in 2001: a candidate that
	// trusted timestamps would take it at once.
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
	seq := srv.LastRequestSeq()
	startCandidate(t, srv, j, "b", false)
	spans := j.waitFor(t, "b leading", 60*time.Second, func(s []span) bool { return len(s) == 1 })
	reads := srv.RequestsMatching(apitest.RequestFilter{Verb: apitest.VerbGet, Resource: "leases", After: seq})
	if len(reads) == 0 {
		t.Fatal("no lease read")
	}
	waited := spans[0].start.Sub(reads[0].Time)
	t.Logf("took over a stale lease %v after first observing it", waited.Round(time.Millisecond))
	if waited < leaseDuration {
		t.Fatalf("took over %v after first observing the lease, before its duration %v", waited, leaseDuration)
	}
	if waited > leaseDuration+retryPeriod+slack {
		t.Fatalf("took over %v after first observing the lease; the expiry retry should be at %v", waited, leaseDuration)
	}
	if l := getLease(t, srv); l.Spec.Holder() != "b" || l.Spec.Transitions() != 5 {
		t.Fatalf("lease %+v: want holder b and transitions 5", l.Spec)
	}
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
