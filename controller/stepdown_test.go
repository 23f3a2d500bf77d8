package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// ledger records the writes the leaders' reconciles made, as the server accepted them.
type ledger struct {
	mu     sync.Mutex
	writes []ledgerWrite
	held   chan error // the cause of the end of a "hold" reconcile and its refused write
}

type ledgerWrite struct {
	who string
	at  time.Time
}

func (l *ledger) byWho(who string) []ledgerWrite {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []ledgerWrite
	for _, w := range l.writes {
		if w.who == who {
			out = append(out, w)
		}
	}
	return out
}

// reconciler returns who's Reconciler: each reconcile of a ConfigMap of "default" creates
// one in "out" (skipped) and asks to run again a second later, so a leader writes all the
// time; a's first reconcile of "hold" runs until its context ends and then tries a write,
// which must be refused.
func (l *ledger) reconciler(who string, m *Manager) Reconciler {
	cms := client.TypedFor[*testobj.ConfigMap](m.Client())
	var n atomic.Int64
	var held atomic.Bool
	write := func(ctx context.Context) error {
		obj := &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: "out", Name: fmt.Sprintf("%s-%d", who, n.Add(1))}}
		_, err := cms.Create(ctx, obj, client.CreateOptions{})
		if err == nil {
			l.mu.Lock()
			l.writes = append(l.writes, ledgerWrite{who: who, at: time.Now()})
			l.mu.Unlock()
		}
		return err
	}
	return ReconcilerFunc(func(ctx context.Context, req Request) (Result, error) {
		if req.Namespace != "default" {
			return Result{}, nil
		}
		if req.Name == "hold" && who == "a" && !held.Swap(true) {
			<-ctx.Done()
			cause := context.Cause(ctx)
			if err := write(ctx); err == nil {
				l.held <- fmt.Errorf("a write after the context ended (cause %v) was accepted", cause)
			} else {
				l.held <- cause
			}
			return Result{}, nil
		}
		if err := write(ctx); err != nil && ctx.Err() == nil {
			return Result{}, err
		}
		return Result{RequeueAfter: time.Second}, nil
	})
}

// The Lease is taken from the leader a by an intruder (a's Lease writes failing until b
// leads, so that b wins the expired Lease): a steps down (its in-flight reconcile
// cancelled with cause ErrLeaderElectionLost, its write refused), keeps its caches and
// campaigns again; the standby b takes over once the intruder's Lease expires; when b stops,
// a leads again, its controller started anew from its warm cache. Neither lists again, no
// write of one leader's term falls inside another's, and nothing leaks (goleak).
func TestStepDownStaysWarmAndLeadsAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServerWithOptions(t, apitest.Options{InMemory: true})
		if _, err := srv.Create("namespaces", map[string]any{"metadata": map[string]any{"name": "out"}}); err != nil {
			t.Fatal(err)
		}
		createCM(t, srv, "one")
		createCM(t, srv, "two")
		l := &ledger{held: make(chan error, 1)}
		ctls := map[string]*Controller{}
		mk := func(who string) *Manager {
			m := newManagerWithConfig(t, srv.ConfigFor(who), ManagerOptions{LeaderElection: true, LeaderElectionID: "test-controller",
				LeaderElectionNamespace: "kube-system", LeaderElectionIdentity: who, LeaderElectionStepDown: true})
			c, err := New("cm", l.reconciler(who, m), Options{Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Watch(FromInformer[*testobj.ConfigMap](mustInformer[*testobj.ConfigMap](t, m), EnqueueRequestForObject[*testobj.ConfigMap]())); err != nil {
				t.Fatal(err)
			}
			if err := m.Add(c); err != nil {
				t.Fatal(err)
			}
			ctls[who] = c
			return m
		}
		a, b := mk("a"), mk("b")
		stopA, doneA := startManager(t, a)
		waitClosed(t, a.Elected(), "a to lead")
		stopB, _ := startManager(t, b)
		time.Sleep(10 * time.Second) // b syncs; a writes and renews
		if b.IsLeader() || len(l.byWho("b")) > 0 || len(l.byWho("a")) == 0 {
			t.Fatalf("b leads %v; writes a %d, b %d", b.IsLeader(), len(l.byWho("a")), len(l.byWho("b")))
		}
		lists := func(who string) int {
			return len(requestsBy(srv, apitest.RequestFilter{Verb: apitest.VerbList, Resource: "configmaps"}, who))
		}
		listsA, listsB := lists("a"), lists("b")
		firstQueue := ctls["a"].Queue()
		informersA := len(a.Factory().Informers())

		// a holds a reconcile in flight, then the intruder takes the Lease right after a's
		// renewal, so a finds out at its next one, a retry period later.
		createCM(t, srv, "hold")
		time.Sleep(time.Second)
		ctx := t.Context()
		renewals := apitest.RequestFilter{Verb: apitest.VerbUpdate, Resource: "leases", After: srv.LastRequestSeq()}
		if err := srv.WaitFor(ctx, func() bool { return len(requestsBy(srv, renewals, "a")) > 0 }); err != nil {
			t.Fatal(err)
		}
		// While b has not taken over, a's Lease writes fail: a, campaigning again, cannot
		// win the intruder's expired Lease before b does (b may see the theft later than a,
		// if its watch of the Lease is being reopened then).
		var blockA atomic.Bool
		blockA.Store(true)
		srv.Clients().OnWrite("a", func(w apitest.Write) apitest.WriteAction {
			if blockA.Load() && strings.HasPrefix(w.Resource, "leases") {
				return apitest.WriteInternalError
			}
			return apitest.WriteProceed
		})
		stolen := time.Now()
		if _, err := srv.Mutate("leases", "kube-system", "test-controller", func(o apitest.Object) {
			spec := o["spec"].(map[string]any)
			spec["holderIdentity"] = "intruder"
		}); err != nil {
			t.Fatal(err)
		}
		select {
		case cause := <-l.held:
			if !errors.Is(cause, ErrLeaderElectionLost) {
				t.Fatalf("a's held reconcile: %v, want cancelled with ErrLeaderElectionLost and its write refused", cause)
			}
		case <-time.After(testTimeout):
			t.Fatal("a's held reconcile did not end")
		}
		lostAt := time.Now()
		if d := lostAt.Sub(stolen); d > DefaultRetryPeriod {
			t.Errorf("a stepped down %v after the theft, want within a retry period", d)
		}
		select {
		case <-doneA:
			t.Fatal("a's Start returned on the lost Lease, want it to step down")
		default:
		}

		// b takes over when the intruder's Lease expires.
		for i := 0; len(l.byWho("b")) == 0; i++ {
			if i == 600 {
				lease, _ := srv.Get("leases", "kube-system", "test-controller")
				t.Fatalf("b did not lead within a minute: a leads %v, b %v, lease %v; b's controller running %v", a.IsLeader(), b.IsLeader(), lease["spec"], ctls["b"].Running())
			}
			time.Sleep(100 * time.Millisecond)
		}
		blockA.Store(false)
		firstB := l.byWho("b")[0].at
		t.Logf("theft to b's first write: %v (lease %v)", firstB.Sub(stolen), DefaultLeaseDuration)
		if a.IsLeader() {
			t.Fatal("a leads again while b leads")
		}
		time.Sleep(5 * time.Second)

		// b stops and releases: a leads again, from its warm cache.
		n := len(l.byWho("a"))
		stoppedB := time.Now()
		if err := stopB(); err != nil {
			t.Fatalf("b's Start = %v", err)
		}
		lastB := l.byWho("b")[len(l.byWho("b"))-1].at
		for i := 0; len(l.byWho("a")) == n; i++ {
			if i == 600 {
				t.Fatalf("a did not lead again within a minute of b's stop: a leads %v", a.IsLeader())
			}
			time.Sleep(100 * time.Millisecond)
		}
		againA := l.byWho("a")[n].at
		t.Logf("b's stop to a's first write of its second term: %v", againA.Sub(stoppedB))
		if !a.IsLeader() {
			t.Fatal("a writes without leading")
		}
		if q := ctls["a"].Queue(); q == firstQueue || !ctls["a"].Running() {
			t.Errorf("a's second term runs %v, on its first term's queue %v", ctls["a"].Running(), q == firstQueue)
		}

		// The terms: a's first, b's, a's second; none overlaps another.
		for _, w := range l.byWho("a") {
			if !w.at.After(lastB) && !w.at.Before(firstB) {
				t.Errorf("a wrote at %v, inside b's term [%v, %v]", w.at.Sub(stolen), firstB.Sub(stolen), lastB.Sub(stolen))
			}
			if w.at.After(lostAt) && w.at.Before(againA) {
				t.Errorf("a wrote at %v, after it stepped down at %v and before it led again", w.at.Sub(stolen), lostAt.Sub(stolen))
			}
		}
		if got := lists("a"); got != listsA {
			t.Errorf("a listed ConfigMaps %d times, %d before it stepped down: a warm replica must not list again", got, listsA)
		}
		if got := lists("b"); got != listsB {
			t.Errorf("b listed ConfigMaps %d times, %d while standing by", got, listsB)
		}
		if got := len(a.Factory().Informers()); got != informersA {
			t.Errorf("a has %d informers, %d before it stepped down", got, informersA)
		}
		if text := scrape(t, a.Registry()); !strings.Contains(text, `informerkit_leader_election_step_downs_total{name="test-controller"} 1`) {
			t.Errorf("a's metrics lack one step-down:\n%s", text)
		}
		if err := stopA(); err != nil {
			t.Fatalf("a's Start = %v", err)
		}
	})
}

// requestsBy returns the logged requests that match f, of the client named who.
func requestsBy(srv *apitest.Server, f apitest.RequestFilter, who string) []apitest.Request {
	var out []apitest.Request
	for _, r := range srv.RequestsMatching(f) {
		if r.UserAgent == who {
			out = append(out, r)
		}
	}
	return out
}
