package ring_test

import (
	"context"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/sharding/ring"
)

// member is a ring member without workers, for the timing tests.
type member struct {
	name string
	ring *ring.Ring
	net  *blackhole
	stop func()
}

func startMember(t *testing.T, srv *apitest.Server, name string) *member {
	t.Helper()
	m := &member{name: name, net: &blackhole{}}
	cfg := srv.Config()
	cfg.MaxRetries = -1
	cfg.UserAgent = name
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { m.net.next = rt; return m.net }
	client, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ring.New(client, "default", "workers", name, ring.Options{Buckets: 64, Logger: slog.New(slog.DiscardHandler),
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod})
	if err != nil {
		t.Fatal(err)
	}
	m.ring = r
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = r.Run(ctx) })
	var once sync.Once
	m.stop = func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			client.Close()
		})
	}
	t.Cleanup(m.stop)
	return m
}

// lastWrite is when who last wrote its member Lease successfully (a renewal or a claim).
func lastWrite(srv *apitest.Server, who string) time.Time {
	var last time.Time
	for _, r := range srv.RequestsMatching(apitest.RequestFilter{Resource: "leases", Verb: apitest.VerbUpdate}) {
		if r.UserAgent == who && r.Code/100 == 2 {
			last = r.Time
		}
	}
	return last
}

// settled returns the condition that the members hold exactly their shares of an
// assignment of themselves.
func settled(t *testing.T, ms ...*member) func() bool {
	t.Helper()
	var names []string
	for _, m := range ms {
		names = append(names, m.name)
	}
	a, err := ring.Assign(names, 64)
	if err != nil {
		t.Fatal(err)
	}
	return func() bool {
		for _, m := range ms {
			if !slices.Equal(m.ring.Held(), a.Ranges(m.name)) {
				return false
			}
		}
		return true
	}
}

// within waits in fake time, for at most d, until cond holds, and reports whether it did.
// cond is checked at every change of the members' ranges (Changed), and last at the
// instant d itself, once everything due then has run (synctest.Wait): the answer is a state
// at an instant, the same however loaded the machine, not a duration measured by a
// polling timer.
func within(d time.Duration, cond func() bool, ms ...*member) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		cases := []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(deadline.C)}}
		for _, m := range ms {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(m.ring.Changed())})
		}
		if cond() {
			return true
		}
		if i, _, _ := reflect.Select(cases); i == 0 {
			synctest.Wait()
			return cond()
		}
	}
}

// at sleeps until the instant t, and returns once everything due by then has run.
func at(t time.Time) {
	time.Sleep(time.Until(t))
	synctest.Wait()
}

// The member Leases' timing, to the tick in a synctest bubble, asserted as the state of the
// ring at given instants: a join settles within three steps (the others give up what the
// joiner wins, then it claims it); a member cut off from the API server still holds its
// ranges just before RenewDeadline after its last write and none at it, and the others take
// them over no earlier than LeaseDuration after it and within one step more; a clean leave
// hands over within a step.
func TestMemberLeaseTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := apitest.NewServerWithOptions(apitest.Options{InMemory: true})
		defer srv.Close()
		a := startMember(t, srv, "a")
		if !within(time.Minute, settled(t, a), a) {
			t.Fatal("a alone did not settle within a minute")
		}
		b := startMember(t, srv, "b")
		if !within(3*retryPeriod, settled(t, a, b), a, b) {
			t.Errorf("a join not settled within 3 retry periods (%v)", 3*retryPeriod)
		}
		if !within(time.Minute, settled(t, a, b), a, b) {
			t.Fatal("a join did not settle within a minute")
		}
		// Nothing changes for 10 lease durations: neither member's ranges move.
		ca, cb := a.ring.Changed(), b.ring.Changed()
		time.Sleep(10 * leaseDuration)
		synctest.Wait()
		for _, c := range []<-chan struct{}{ca, cb} {
			select {
			case <-c:
				t.Fatal("the ring moved while nothing changed")
			default:
			}
		}

		// b is cut off, between two of its requests.
		synctest.Wait()
		b.net.on.Store(true)
		last := lastWrite(srv, "b")
		held := b.ring.Held()
		if len(held) == 0 {
			t.Fatal("b holds nothing before the cut")
		}
		at(last.Add(renewDeadline - time.Millisecond))
		if !slices.Equal(b.ring.Held(), held) {
			t.Errorf("b's ranges changed within the renew deadline (%v) of its last write", renewDeadline)
		}
		at(last.Add(renewDeadline))
		if got := b.ring.Held(); len(got) != 0 {
			t.Errorf("b still holds %v the renew deadline (%v) after its last write", got, renewDeadline)
		}
		aAlone := settled(t, a)
		at(last.Add(leaseDuration - time.Millisecond))
		if aAlone() {
			t.Errorf("a took b's ranges before the lease duration (%v) after b's last write", leaseDuration)
		}
		if !within(time.Until(last.Add(leaseDuration+retryPeriod)), aAlone, a) {
			t.Errorf("a did not take b's ranges within a retry period of the lease duration (%v) after b's last write", leaseDuration)
		}

		// b comes back and joins again; then it leaves cleanly.
		b.net.on.Store(false)
		if !within(time.Minute, settled(t, a, b), a, b) {
			t.Fatal("b's return did not settle within a minute")
		}
		b.stop()
		if !within(retryPeriod, aAlone, a) {
			t.Errorf("a clean leave not handed over within a retry period (%v)", retryPeriod)
		}
	})
}
