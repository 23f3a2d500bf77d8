package controller

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apitest"
)

// Short leader election durations so that the tests are quick.
const (
	leLease = 2 * time.Second
	leRenew = 1500 * time.Millisecond
	leRetry = 250 * time.Millisecond
)

// work records when each manager's reconciles ran: [start, end] per call.
type work struct {
	mu    sync.Mutex
	spans []workSpan
	seen  chan workSpan
}

type workSpan struct {
	who        string
	req        Request
	start, end time.Time
	cause      error
}

func newWork() *work { return &work{seen: make(chan workSpan, 100)} }

// reconciler returns who's Reconciler: it records the call; a Request named "hold" blocks
// until its context ends (work that only leadership loss or shutdown stops).
func (w *work) reconciler(who string) Reconciler {
	return ReconcilerFunc(func(ctx context.Context, req Request) (Result, error) {
		s := workSpan{who: who, req: req, start: time.Now()}
		w.seen <- s
		if req.Name == "hold" {
			<-ctx.Done()
			s.cause = context.Cause(ctx)
		}
		s.end = time.Now()
		w.mu.Lock()
		w.spans = append(w.spans, s)
		w.mu.Unlock()
		return Result{}, nil
	})
}

func (w *work) next(t *testing.T) workSpan {
	t.Helper()
	select {
	case s := <-w.seen:
		return s
	case <-time.After(testTimeout):
		t.Fatal("no reconcile")
		return workSpan{}
	}
}

func leManager(t *testing.T, srv *apitest.Server, w *work, who string, release bool) *Manager {
	t.Helper()
	m := newManager(t, srv, ManagerOptions{
		LeaderElection:          true,
		LeaderElectionID:        "test-controller",
		LeaderElectionNamespace: "kube-system",
		LeaderElectionIdentity:  who,
		LeaseDuration:           leLease,
		RenewDeadline:           leRenew,
		RetryPeriod:             leRetry,
		LeaderElectionKeepLease: !release,
		// Reconciles that hold until their context ends are cut at the drain timeout.
		GracefulShutdownTimeout: time.Second,
	})
	configMapController(t, m, "cm", w.reconciler(who))
	return m
}

func createCM(t *testing.T, srv *apitest.Server, name string) {
	t.Helper()
	if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": name}}); err != nil {
		t.Fatal(err)
	}
}

func elected(m *Manager) bool {
	select {
	case <-m.Elected():
		return true
	default:
		return false
	}
}

func TestTwoManagersOneLeaderWarmStandbyAndRelease(t *testing.T) {
	srv := newTestServer(t)
	createCM(t, srv, "existing")
	w := newWork()
	ms := map[string]*Manager{"a": leManager(t, srv, w, "a", true), "b": leManager(t, srv, w, "b", true)}
	stops := map[string]func() error{}
	for who, m := range ms {
		stops[who], _ = startManager(t, m)
	}
	first := w.next(t)
	leader, standby := first.who, map[string]string{"a": "b", "b": "a"}[first.who]
	if first.req.Name != "existing" || !elected(ms[leader]) || !ms[leader].IsLeader() {
		t.Fatalf("first reconcile %+v; leader elected %v", first, elected(ms[leader]))
	}

	// Over several lease renewals the standby never leads, but its caches are synced and it
	// is ready (warm standby).
	seq := srv.LastRequestSeq()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := srv.WaitForRequests(ctx, apitest.RequestFilter{Verb: apitest.VerbUpdate, Resource: "leases", After: seq}, 8); err != nil {
		t.Fatal(err)
	}
	if elected(ms[standby]) || ms[standby].IsLeader() {
		t.Fatalf("standby %s leads too", standby)
	}
	rec := httptest.NewRecorder()
	ms[standby].Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != 200 {
		t.Fatalf("standby /readyz = %d %s", rec.Code, rec.Body)
	}
	for _, i := range ms[standby].trackedInformers() {
		if !i.inf.HasSynced() {
			t.Fatalf("standby informer %s not synced: the standby is not warm", i.name)
		}
	}
	// Only the leader reconciles new objects.
	createCM(t, srv, "new")
	if s := w.next(t); s.who != leader || s.req.Name != "new" {
		t.Fatalf("reconcile %+v, want %s reconciling new", s, leader)
	}
	text := scrape(t, ms[leader].Registry())
	if want := `leader_election_master_status{name="test-controller"} 1`; !strings.Contains(text, want) {
		t.Fatalf("leader metrics lack %q", want)
	}
	if want := `leader_election_master_status{name="test-controller"} 0`; !strings.Contains(scrape(t, ms[standby].Registry()), want) {
		t.Fatalf("standby metrics lack %q", want)
	}

	// Stop the leader: it releases the Lease once its controller has drained, and the
	// standby takes over at its next retry, reconciling at once from its warm cache.
	stoppedAt := time.Now()
	if err := stops[leader](); err != nil {
		t.Fatalf("leader's Start = %v", err)
	}
	s := w.next(t)
	if s.who != standby {
		t.Fatalf("reconcile by %s after the leader stopped", s.who)
	}
	failover := s.start.Sub(stoppedAt)
	t.Logf("failover with release, to the new leader's first reconcile: %v (lease %v, retry %v)", failover.Round(time.Millisecond), leLease, leRetry)
	if failover > leLease {
		t.Fatalf("failover took %v, want well under the lease duration %v with release", failover, leLease)
	}
}

func TestManagerStopsLeadingBeforeTheOtherStarts(t *testing.T) {
	srv := newTestServer(t)
	w := newWork()
	ms := map[string]*Manager{"a": leManager(t, srv, w, "a", false), "b": leManager(t, srv, w, "b", false)}
	stops := map[string]func() error{}
	dones := map[string]<-chan struct{}{}
	for who, m := range ms {
		stops[who], dones[who] = startManager(t, m)
	}
	// Wait for a leader, then give it work that runs until leadership ends.
	var leader string
	for leader == "" {
		select {
		case <-ms["a"].Elected():
			leader = "a"
		case <-ms["b"].Elected():
			leader = "b"
		case <-time.After(testTimeout):
			t.Fatal("nobody leads")
		}
	}
	other := map[string]string{"a": "b", "b": "a"}[leader]
	createCM(t, srv, "hold")
	if s := w.next(t); s.who != leader || s.req.Name != "hold" {
		t.Fatalf("reconcile %+v, want %s holding", s, leader)
	}

	// Block lease writes: more failures than the leader can attempt before its deadline.
	if err := srv.Faults().FailRequests(apitest.VerbUpdate, "leases", 2*int(leRenew/leRetry+2), 500, 0); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, dones[leader], "the leader to give up")
	if err := stops[leader](); !errors.Is(err, ErrLeaderElectionLost) {
		t.Fatalf("deposed leader's Start = %v, want ErrLeaderElectionLost", err)
	}
	s := w.next(t)
	if s.who != other || s.req.Name != "hold" {
		t.Fatalf("reconcile %+v, want %s taking over hold", s, other)
	}
	w.mu.Lock()
	var old workSpan
	for _, sp := range w.spans {
		if sp.who == leader && sp.req.Name == "hold" {
			old = sp
		}
	}
	w.mu.Unlock()
	if old.end.IsZero() || !errors.Is(old.cause, ErrLeaderElectionLost) {
		t.Fatalf("old leader's reconcile: %+v, want ended with ErrLeaderElectionLost", old)
	}
	gap := s.start.Sub(old.end)
	t.Logf("old leader's work ended %v before the new leader's began", gap.Round(time.Millisecond))
	if gap <= 0 {
		t.Fatalf("two leaders at once: old work ended at %v, new began at %v", old.end, s.start)
	}
}

// listsOf returns the number of lists each of m's informers made.
func listsOf(m *Manager) map[string]uint64 {
	out := map[string]uint64{}
	for _, inf := range m.Factory().Informers() {
		out[inf.Name()] = inf.Stats().Reflector.Lists
	}
	return out
}

// In a synctest bubble, with the default Lease timings (15 s, 10 s, 2 s): a warm standby
// reconciles at the very instant the leader's graceful shutdown released the Lease, from its
// synced cache, without a list; with LeaderElectionColdStandby, a standby runs no informer
// (and is ready) until it leads, then lists once and reconciles.
func TestHandOffWarmAndCold(t *testing.T) {
	for _, cold := range []bool{false, true} {
		t.Run(fmt.Sprintf("cold=%v", cold), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := newTestServerWithOptions(t, apitest.Options{InMemory: true})
				createCM(t, srv, "existing")
				w := newWork()
				mk := func(who string) *Manager {
					m := newManager(t, srv, ManagerOptions{LeaderElection: true, LeaderElectionID: "test-controller",
						LeaderElectionNamespace: "kube-system", LeaderElectionIdentity: who, LeaderElectionColdStandby: cold})
					configMapController(t, m, "cm", w.reconciler(who))
					return m
				}
				ms := map[string]*Manager{"a": mk("a")}
				stops := map[string]func() error{}
				stops["a"], _ = startManager(t, ms["a"])
				if s := w.next(t); s.who != "a" || s.req.Name != "existing" {
					t.Fatalf("first reconcile %+v", s)
				}
				ms["b"] = mk("b")
				stops["b"], _ = startManager(t, ms["b"])
				time.Sleep(time.Minute) // the standby settles; the leader renews 30 times
				for name, n := range listsOf(ms["b"]) {
					if want := uint64(1); cold && n != 0 || !cold && n != want {
						t.Errorf("standby's %s listed %d times before leading (cold %v)", name, n, cold)
					}
				}
				rec := httptest.NewRecorder()
				ms["b"].Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
				if rec.Code != 200 {
					t.Errorf("standby /readyz = %d %s", rec.Code, rec.Body)
				}

				stopAt := time.Now()
				if err := stops["a"](); err != nil {
					t.Fatal(err)
				}
				s := w.next(t)
				if s.who != "b" || s.req.Name != "existing" {
					t.Fatalf("reconcile %+v, want b reconciling existing", s)
				}
				if d := s.start.Sub(stopAt); d != 0 {
					t.Errorf("the new leader's first reconcile came %v after the old leader stopped, want at once", d)
				}
				for name, n := range listsOf(ms["b"]) {
					if n != 1 {
						t.Errorf("the new leader's %s listed %d times, want 1 (cold %v)", name, n, cold)
					}
				}
				if err := stops["b"](); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}
