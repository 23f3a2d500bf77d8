package ring_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/leaderelection"
	"github.com/informerkit/informerkit/sharding"
	"github.com/informerkit/informerkit/sharding/ring"
)

// Short timings so that a test sees joins, leaves and expiries within seconds. A cut-off
// replica must finish its reconciles (up to 250 ms here) within LeaseDuration -
// RenewDeadline; 1.5 s leaves room for a loaded machine.
const (
	leaseDuration = 3 * time.Second
	renewDeadline = 1500 * time.Millisecond
	retryPeriod   = 100 * time.Millisecond
)

// checker records each reconcile's start and end per key and counts overlaps: a key being
// reconciled by two replicas at once (two workers of one replica may share a key here; a
// controller's workqueue would not let them).
type checker struct {
	mu       sync.Mutex
	cur      map[int]map[string]int // key -> replica -> reconciles in flight
	overlaps []string
	runs     map[int]int
}

func newChecker() *checker { return &checker{cur: map[int]map[string]int{}, runs: map[int]int{}} }

func (c *checker) start(key int, who string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur[key] == nil {
		c.cur[key] = map[string]int{}
	}
	for other, n := range c.cur[key] {
		if other != who && n > 0 {
			c.overlaps = append(c.overlaps, fmt.Sprintf("key %d: %s started while %s was reconciling it", key, who, other))
		}
	}
	c.cur[key][who]++
	c.runs[key]++
}

func (c *checker) end(key int, who string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur[key][who]--
}

func (c *checker) result() (overlaps []string, runs map[int]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.overlaps), maps(c.runs)
}

func maps(m map[int]int) map[int]int {
	out := make(map[int]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// blackhole fails every request while on: a replica cut off from the API server.
type blackhole struct {
	on   atomic.Bool
	next http.RoundTripper
}

func (b *blackhole) RoundTrip(req *http.Request) (*http.Response, error) {
	if b.on.Load() {
		return nil, errors.New("partitioned")
	}
	return b.next.RoundTrip(req)
}

// replica is one member of the ring with a worker that reconciles the keys it owns.
type replica struct {
	name   string
	ring   *ring.Ring
	net    *blackhole
	cancel context.CancelFunc
	done   chan struct{}
}

// keys are the objects of the test: key i hashes to hashes[i].
var hashes = func() []uint64 {
	out := make([]uint64, 32)
	for i := range out {
		out[i] = sharding.Hash(fmt.Sprintf("uid-%d", i))
	}
	return out
}()

func startReplica(t *testing.T, srv *apitest.Server, c *checker, name string) *replica {
	t.Helper()
	rep := &replica{name: name, net: &blackhole{}, done: make(chan struct{})}
	cfg := srv.Config()
	cfg.MaxRetries = -1
	cfg.UserAgent = name
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { rep.net.next = rt; return rep.net }
	client, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ring.New(client, "default", "workers", name, ring.Options{
		Buckets:       64,
		Logger:        slog.New(slog.DiscardHandler),
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
	})
	if err != nil {
		t.Fatal(err)
	}
	rep.ring = r
	ctx, cancel := context.WithCancel(context.Background())
	rep.cancel = cancel
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = r.Run(ctx)
	}()
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A worker: reconcile every owned key, round after round, in a random order,
			// each under Ring.Begin. A reconcile lasts a millisecond (a timer: simulated
			// I/O), one key in eight 250 ms (longer than the ring's RetryPeriod), so that a
			// handover finds reconciles in flight and two replicas working on one range
			// collide.
			for ctx.Err() == nil {
				for _, k := range rand.Perm(len(hashes)) {
					if done, ok := r.Begin(hashes[k]); ok {
						c.start(k, name)
						d := time.Millisecond
						if k%8 == 0 {
							d = 250 * time.Millisecond
						}
						tm := time.NewTimer(d)
						<-tm.C
						c.end(k, name)
						done()
					}
				}
				tm := time.NewTimer(time.Millisecond)
				select {
				case <-ctx.Done():
					tm.Stop()
				case <-tm.C:
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		client.Close()
		close(rep.done)
	}()
	t.Cleanup(rep.stop)
	return rep
}

func (r *replica) stop() {
	r.cancel()
	<-r.done
}

// waitBalanced waits until the replicas hold disjoint ranges that cover the whole space,
// each the share the assignment of exactly these members gives it.
func waitBalanced(t *testing.T, reps []*replica) {
	t.Helper()
	var names []string
	for _, r := range reps {
		names = append(names, r.name)
	}
	want, err := ring.Assign(names, 64)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok := true
		for _, r := range reps {
			if !slices.Equal(r.ring.Held(), want.Ranges(r.name)) {
				ok = false
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			for _, r := range reps {
				t.Logf("%s holds %v, members %v; assignment gives %v", r.name, r.ring.Held(), r.ring.Members(), want.Ranges(r.name))
			}
			t.Fatalf("replicas %v did not converge within 30s", names)
		}
		tm := time.NewTimer(20 * time.Millisecond)
		<-tm.C
	}
}

func leaseOf(t *testing.T, srv *apitest.Server, name string) *leaderelection.Lease {
	t.Helper()
	o, err := srv.Get("leases", "default", "workers-"+name)
	if err != nil {
		t.Fatal(err)
	}
	l := &leaderelection.Lease{}
	if err := o.Into(l); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestRingJoinLeaveDieWithoutOverlap: replicas join one by one up to four, one leaves
// cleanly, one is cut off from the API server (it stops at its renew deadline, the others
// take over after its lease duration); after every change the replicas converge on the
// assignment of the live members, and no key is ever reconciled by two replicas at once.
func TestRingJoinLeaveDieWithoutOverlap(t *testing.T) {
	srv := apitest.NewServer()
	t.Cleanup(srv.Close) // after the replicas' cleanups: they release their leases
	c := newChecker()

	var reps []*replica
	for i := range 4 {
		reps = append(reps, startReplica(t, srv, c, fmt.Sprintf("r%d", i)))
		waitBalanced(t, reps)
	}
	if l := leaseOf(t, srv, "r0"); l.Labels[ring.LabelRing] != "workers" || l.Spec.Holder() != "r0" {
		t.Fatalf("r0's lease: labels %v holder %q", l.Labels, l.Spec.Holder())
	}

	// A clean leave: the lease is released at once.
	reps[1].stop()
	if h := leaseOf(t, srv, "r1").Spec.Holder(); h != "" {
		t.Fatalf("r1 left but its lease names %q", h)
	}
	reps = slices.Delete(reps, 1, 2)
	waitBalanced(t, reps)

	// A partition: r3 stops renewing; it must drop everything before the others start.
	cut := reps[2]
	cut.net.on.Store(true)
	reps = reps[:2]
	waitBalanced(t, reps)
	if h := cut.ring.Held(); len(h) != 0 {
		t.Fatalf("the partitioned replica still holds %v after the others took over", h)
	}
	cut.net.on.Store(false) // it comes back and joins again
	reps = append(reps, cut)
	waitBalanced(t, reps)

	overlaps, runs := c.result()
	for _, o := range overlaps {
		t.Error(o)
	}
	for k := range hashes {
		if runs[k] == 0 {
			t.Errorf("key %d was never reconciled", k)
		}
	}
}

// TestRingOfOneHoldsEverything: a single replica holds the full range.
func TestRingOfOneHoldsEverything(t *testing.T) {
	srv := apitest.NewServer()
	t.Cleanup(srv.Close)
	rep := startReplica(t, srv, newChecker(), "solo")
	waitBalanced(t, []*replica{rep})
	if sel, ok := rep.ring.Selector(); !ok || sel.String() != "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')" {
		t.Fatalf("selector %v %v", sel, ok)
	}
}

func TestNewValidates(t *testing.T) {
	srv := apitest.NewServer()
	defer srv.Close()
	c, err := apiclient.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		ns, name, id string
		opts         ring.Options
	}{
		{"", "ring", "a", ring.Options{}},
		{"default", "ring", "a", ring.Options{Field: "object.metadata.name"}},
		{"default", "ring", "a", ring.Options{Buckets: 100}},
		{"default", "ring", "a", ring.Options{LeaseDuration: time.Second, RenewDeadline: 2 * time.Second}},
	} {
		if _, err := ring.New(c, tc.ns, tc.name, tc.id, tc.opts); err == nil {
			t.Errorf("New(%q, %q, %q, %+v) accepted", tc.ns, tc.name, tc.id, tc.opts)
		}
	}
}
