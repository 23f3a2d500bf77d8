package ring_test

import (
	"context"
	"log/slog"
	"net/http"
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

// settle waits (in fake time) until the members hold exactly their shares of an assignment
// of themselves, and returns how long that took.
func settle(t *testing.T, ms ...*member) time.Duration {
	t.Helper()
	var names []string
	for _, m := range ms {
		names = append(names, m.name)
	}
	a, err := ring.Assign(names, 64)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for {
		ok := true
		for _, m := range ms {
			ok = ok && slices.Equal(m.ring.Held(), a.Ranges(m.name))
		}
		if ok {
			return time.Since(start)
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("%v did not settle within a minute", names)
		}
		time.Sleep(time.Millisecond)
	}
}

// The member Leases' timing, to the tick in a synctest bubble: a join settles within three
// steps (the others give up what the joiner wins, then it claims it); a member cut off from
// the API server drops its ranges exactly RenewDeadline after its last write, and the
// others take them over no earlier than LeaseDuration after it and within one step more; a
// clean leave hands over within a step.
func TestMemberLeaseTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := apitest.NewServerWithOptions(apitest.Options{InMemory: true})
		defer srv.Close()
		a := startMember(t, srv, "a")
		settle(t, a)
		b := startMember(t, srv, "b")
		if d := settle(t, a, b); d > 3*retryPeriod {
			t.Errorf("a join settled after %v, want at most 3 retry periods (%v)", d, 3*retryPeriod)
		}
		time.Sleep(10 * leaseDuration)
		if d := settle(t, a, b); d != 0 {
			t.Fatalf("the ring moved while nothing changed (settled again after %v)", d)
		}

		// b is cut off.
		b.net.on.Store(true)
		cut := time.Now()
		changed := b.ring.Changed()
		for len(b.ring.Held()) > 0 {
			<-changed
			changed = b.ring.Changed()
		}
		dropped := time.Now()
		last := lastWrite(srv, "b")
		if d := dropped.Sub(last); d != renewDeadline {
			t.Errorf("b dropped its ranges %v after its last write, want the renew deadline %v", d, renewDeadline)
		}
		settle(t, a)
		took := time.Now()
		if d := took.Sub(last); d < leaseDuration || d > leaseDuration+retryPeriod {
			t.Errorf("a took b's ranges %v after b's last write, want from the lease duration %v to one retry period more", d, leaseDuration)
		}
		t.Logf("cut at +0: b stopped at +%v, a took over at +%v (b's last write at %v)", dropped.Sub(cut), took.Sub(cut), last.Sub(cut))

		// b comes back and joins again; then it leaves cleanly.
		b.net.on.Store(false)
		settle(t, a, b)
		b.stop()
		if d := settle(t, a); d > retryPeriod {
			t.Errorf("a clean leave settled after %v, want at most a retry period (%v)", d, retryPeriod)
		}
	})
}
