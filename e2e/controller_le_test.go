package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/informerkit/informerkit/meta"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/leaderelection"
)

// Durations of the leader election between processes: short for a quick test, with room for
// a loaded 2-core machine.
const (
	peLease = 3 * time.Second
	peRenew = 2 * time.Second
	peRetry = 400 * time.Millisecond
	peNS    = "leader-e2e"
	peLock  = "leader-manager"
)

// record is one line printed by a leader-manager process.
type record struct {
	kind, id string
	at       time.Time
	rest     string
}

// timeline gathers the records of every replica.
type timeline struct {
	mu      sync.Mutex
	recs    []record
	changed chan struct{}
}

func newTimeline() *timeline { return &timeline{changed: make(chan struct{})} }

func (tl *timeline) follow(r *replica) {
	go func() {
		for line := range r.lines {
			f := strings.SplitN(line, " ", 4)
			if len(f) < 3 {
				continue
			}
			rec := record{kind: f[0], id: f[1]}
			ts := f[2]
			if f[0] == "RECONCILE" && len(f) == 4 { // RECONCILE id name ts
				rec.rest, ts = f[2], f[3]
			} else if len(f) == 4 {
				rec.rest = f[3]
			}
			n, err := strconv.ParseInt(ts, 10, 64)
			if err != nil {
				continue
			}
			rec.at = time.Unix(0, n)
			tl.mu.Lock()
			tl.recs = append(tl.recs, rec)
			close(tl.changed)
			tl.changed = make(chan struct{})
			tl.mu.Unlock()
		}
	}()
}

func (tl *timeline) snapshot() []record {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return append([]record(nil), tl.recs...)
}

// waitFor returns the first record of kind from id ("" matches any), waiting for it.
func (tl *timeline) waitFor(t *testing.T, kind, id string, timeout time.Duration) record {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		tl.mu.Lock()
		ch := tl.changed
		for _, r := range tl.recs {
			if r.kind == kind && (id == "" || r.id == id) {
				tl.mu.Unlock()
				return r
			}
		}
		tl.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("no %s %s within %v; records: %v", kind, id, timeout, tl.snapshot())
		}
	}
}

func (tl *timeline) has(kind, id string) bool {
	for _, r := range tl.snapshot() {
		if r.kind == kind && r.id == id {
			return true
		}
	}
	return false
}

// leaderSpans returns each replica's leadership: LEADING to STOPPED, or to its kill time.
func leaderSpans(recs []record, killed map[string]time.Time) map[string][2]time.Time {
	spans := map[string][2]time.Time{}
	for _, r := range recs {
		s := spans[r.id]
		switch r.kind {
		case "LEADING":
			s[0] = r.at
		case "STOPPED":
			s[1] = r.at
		}
		spans[r.id] = s
	}
	for id, at := range killed {
		if s, ok := spans[id]; ok && !s[0].IsZero() && s[1].IsZero() {
			s[1] = at
			spans[id] = s
		}
	}
	return spans
}

// waitRenewals waits until the Lease has been written n more times.
func waitRenewals(t *testing.T, ctx context.Context, leases *apiclient.Resource[*leaderelection.Lease], n int) {
	t.Helper()
	cur, err := leases.Get(ctx, peLock, apiclient.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Duration(n)*peRetry*5+10*time.Second)
	defer cancel()
	w, err := leases.Watch(wctx, apiclient.ListOptions{FieldSelector: "metadata.name=" + peLock, ResourceVersion: cur.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for seen := 0; seen < n; {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("lease watch ended after %d renewals", seen)
			}
			if ev.Type == apiclient.Modified {
				seen++
			}
		case <-wctx.Done():
			t.Fatalf("only %d lease renewals", seen)
		}
	}
}

func TestControllerLeaderElectionAcrossProcesses(t *testing.T) {
	c := cluster.ForTest(t)
	ctx := t.Context()
	client, err := apiclient.New(mustConfig(t, c))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	type obj struct {
		meta.TypeMeta
		meta.ObjectMeta `json:"metadata"`
	}
	if _, err := apiclient.NewResource[*obj](client, meta.GroupVersionResource{Version: "v1", Resource: "namespaces"}).
		Create(ctx, &obj{ObjectMeta: meta.ObjectMeta{Name: peNS}}, apiclient.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	leases := apiclient.NewResource[*leaderelection.Lease](client, leaderelection.LeaseGVR).Namespace(peNS)
	bin := buildBinary(t, "github.com/informerkit/informerkit/e2e/cmd/leader-manager")
	args := []string{"--namespace", peNS, "--lease", peLock, "--lease-duration", peLease.String(),
		"--renew-deadline", peRenew.String(), "--retry-period", peRetry.String()}
	tl := newTimeline()
	killed := map[string]time.Time{}
	reps := map[string]*replica{}
	start := func(id string, extra ...string) {
		reps[id] = startReplica(t, bin, c, id, append(append([]string(nil), args...), extra...)...)
		tl.follow(reps[id])
	}

	// Two replicas that release the Lease on shutdown (the default): one leads.
	start("alpha")
	start("beta")
	first := tl.waitFor(t, "LEADING", "", time.Minute)
	leader, standby := first.id, map[string]string{"alpha": "beta", "beta": "alpha"}[first.id]
	waitRenewals(t, ctx, leases, 8) // > a lease duration of renewals
	if tl.has("LEADING", standby) {
		t.Fatalf("%s leads while %s renews the Lease", standby, leader)
	}
	// Only the leader's controller runs.
	if _, err := apiclient.NewResource[*obj](client, meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(peNS).
		Create(ctx, &obj{ObjectMeta: meta.ObjectMeta{Name: "probe"}}, apiclient.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if r := tl.waitFor(t, "RECONCILE", "", 30*time.Second); r.id != leader || r.rest != "probe" {
		t.Fatalf("first reconcile %+v, want %s reconciling probe", r, leader)
	}

	// Graceful stop of the leader: it releases the Lease, the standby takes over at its next
	// retry and reconciles at once from its warm cache.
	if err := reps[leader].cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if exit := tl.waitFor(t, "EXIT", leader, 30*time.Second); exit.rest != "ok" {
		t.Fatalf("%s exited with %q", leader, exit.rest)
	}
	stopped := tl.waitFor(t, "STOPPED", leader, time.Second)
	took := tl.waitFor(t, "LEADING", standby, 30*time.Second)
	failover := took.at.Sub(stopped.at)
	t.Logf("graceful failover with release: %s stopped, %s leading %v later (lease %v, retry %v)", leader, standby,
		failover.Round(time.Millisecond), peLease, peRetry)
	if failover <= 0 {
		t.Fatalf("%s led before %s stopped", standby, leader)
	}
	if max := jittered(peRetry) + 2*time.Second; failover > max {
		t.Fatalf("failover with release took %v, want at most %v", failover, max)
	}
	if r := tl.waitFor(t, "RECONCILE", standby, 30*time.Second); r.rest != "probe" {
		t.Fatalf("new leader reconciled %q first", r.rest)
	}

	// A third replica joins as standby; then the leader crashes (SIGKILL: no release, no
	// last renewal). The standby takes over only once the lease has expired on its own clock.
	start("gamma")
	waitRenewals(t, ctx, leases, 4)
	if tl.has("LEADING", "gamma") {
		t.Fatal("gamma leads while beta/alpha renews")
	}
	killAt := time.Now()
	if err := reps[standby].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-reps[standby].done
	killed[standby] = killAt
	gamma := tl.waitFor(t, "LEADING", "gamma", time.Minute)
	after := gamma.at.Sub(killAt)
	t.Logf("failover after a crash (SIGKILL): gamma leading %v after the kill (lease %v)", after.Round(time.Millisecond), peLease)
	// The dead leader renewed at most a retry period (plus a request) before the kill; gamma
	// waits a full lease duration from when it saw that renewal.
	if min := peLease - peRetry - 500*time.Millisecond; after < min {
		t.Fatalf("gamma led %v after the crash, before the lease could have expired (%v)", after, min)
	}
	if max := peLease + 2*jittered(peRetry) + 3*time.Second; after > max {
		t.Fatalf("gamma led %v after the crash, want at most %v", after, max)
	}

	l, err := leases.Get(ctx, peLock, apiclient.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.Holder() != "gamma" || l.Spec.Transitions() != 2 || l.Spec.Duration() != peLease {
		t.Fatalf("lease: holder %q transitions %d duration %v; want gamma, 2, %v", l.Spec.Holder(), l.Spec.Transitions(), l.Spec.Duration(), peLease)
	}

	if err := reps["gamma"].cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if exit := tl.waitFor(t, "EXIT", "gamma", 30*time.Second); exit.rest != "ok" {
		t.Fatalf("gamma exited with %q", exit.rest)
	}

	// Never two leaders: the spans of leadership do not overlap.
	spans := leaderSpans(tl.snapshot(), killed)
	ids := []string{"alpha", "beta", "gamma"}
	for i, a := range ids {
		for _, b := range ids[i+1:] {
			sa, sb := spans[a], spans[b]
			if sa[0].IsZero() || sb[0].IsZero() {
				continue
			}
			if sa[0].Before(sb[1]) && sb[0].Before(sa[1]) {
				t.Fatalf("%s %v and %s %v led at the same time", a, fmtSpan(sa), b, fmtSpan(sb))
			}
		}
	}
}

// jittered is the longest wait of a candidate between two attempts.
func jittered(d time.Duration) time.Duration {
	f := 1 + leaderelection.JitterFactor
	return time.Duration(f * float64(d))
}

func fmtSpan(s [2]time.Time) string {
	return fmt.Sprintf("[%s, %s]", s[0].Format("15:04:05.000"), s[1].Format("15:04:05.000"))
}
