package e2e

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/meta"
)

// TestLeaderHandOff measures leader hand-offs between manager processes (e2e/cmd/
// leader-manager, a controller of the ConfigMaps of one namespace) on the real
// kube-apiserver with the Manager's default Lease timings (15 s, 10 s, 2 s): rounds of a
// graceful stop (SIGTERM: the leader drains and releases its Lease) and of a SIGKILL, each
// with a fresh warm standby. A graceful hand-off must reach the new leader's first reconcile
// within 1 s of the SIGTERM; after a SIGKILL the standby must lead no earlier than the Lease
// could expire and within the lease duration + 1 s. No new leader lists again (warm caches),
// and no two replicas lead at once. E2E_HANDOFF_OBJECTS sets the ConfigMaps (default 1000);
// E2E_HANDOFF_ROUNDS the rounds (default 2: one of each).
func TestLeaderHandOff(t *testing.T) {
	c := cluster.ForTest(t)
	ctx := t.Context()
	objects, rounds := 1000, 2
	if v, err := strconv.Atoi(os.Getenv("E2E_HANDOFF_OBJECTS")); err == nil && v > 0 {
		objects = v
	}
	if v, err := strconv.Atoi(os.Getenv("E2E_HANDOFF_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	const lock = "handoff"
	ns := newNamespace(t, c)
	lease := controller.DefaultLeaseDuration
	cfg := mustConfig(t, c)
	cfg.QPS, cfg.Burst = 2000, 2000
	client, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	type obj struct {
		meta.TypeMeta
		meta.ObjectMeta `json:"metadata"`
	}
	cms := apiclient.NewResource[*obj](client, meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	var wg sync.WaitGroup
	errs := make(chan error, objects)
	next := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range next {
				o := &obj{ObjectMeta: meta.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i)}}
				o.APIVersion, o.Kind = "v1", "ConfigMap"
				if _, err := cms.Create(ctx, o, apiclient.CreateOptions{}); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range objects {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	bin := buildBinary(t, "github.com/informerkit/informerkit/e2e/cmd/leader-manager")
	args := []string{"--namespace", ns, "--lease", lock, "--lease-duration", lease.String(),
		"--renew-deadline", controller.DefaultRenewDeadline.String(), "--retry-period", controller.DefaultRetryPeriod.String()}
	tl := newTimeline()
	reps := map[string]*replica{}
	killed := map[string]time.Time{}
	start := func(id string) {
		reps[id] = startReplica(t, bin, c, id, args...)
		tl.follow(reps[id])
		tl.waitFor(t, "SYNCED", id, 2*time.Minute)
	}
	leader := "r0"
	start(leader)
	tl.waitFor(t, "LEADING", leader, time.Minute)
	for round := range rounds {
		standby := fmt.Sprintf("r%d", round+1)
		start(standby)
		graceful := round%2 == 0
		at := time.Now()
		if graceful {
			if err := reps[leader].cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
		} else {
			if err := reps[leader].cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-reps[leader].done
			killed[leader] = at
		}
		took := tl.waitFor(t, "LEADING", standby, 2*lease)
		first := tl.waitFor(t, "RECONCILE", standby, time.Minute)
		lead, reconcile := took.at.Sub(at), first.at.Sub(at)
		if graceful {
			stopped := tl.waitFor(t, "STOPPED", leader, time.Minute)
			t.Logf("round %d, graceful: %s leads %v after the SIGTERM (%v after %s stopped), reconciles %v after it",
				round, standby, lead.Round(time.Millisecond), took.at.Sub(stopped.at).Round(time.Millisecond), leader, reconcile.Round(time.Millisecond))
			if reconcile >= time.Second {
				t.Errorf("graceful hand-off: first reconcile %v after the SIGTERM, want under 1 s", reconcile)
			}
			if exit := tl.waitFor(t, "EXIT", leader, time.Minute); exit.rest != "ok" {
				t.Errorf("%s exited with %q", leader, exit.rest)
			}
		} else {
			t.Logf("round %d, SIGKILL: %s leads %v after the kill, reconciles %v after it (lease %v)",
				round, standby, lead.Round(time.Millisecond), reconcile.Round(time.Millisecond), lease)
			// The dead leader renewed at most a retry period before the kill.
			if lead < lease-controller.DefaultRetryPeriod {
				t.Errorf("%s led %v after the kill, before the Lease could expire", standby, lead)
			}
			if lead > lease+time.Second {
				t.Errorf("SIGKILL take-over: %s led %v after the kill, want within the lease duration + 1 s (%v)", standby, lead, lease+time.Second)
			}
		}
		leader = standby
	}
	if err := reps[leader].cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	tl.waitFor(t, "EXIT", leader, time.Minute)
	for _, r := range tl.snapshot() {
		if r.kind == "LISTS" && r.rest != "1" {
			t.Errorf("%s's informers listed %s times: a warm standby must not list again when it leads", r.id, r.rest)
		}
	}
	spans := leaderSpans(tl.snapshot(), killed)
	for a, sa := range spans {
		for b, sb := range spans {
			if a < b && !sa[0].IsZero() && !sb[0].IsZero() && sa[0].Before(sb[1]) && sb[0].Before(sa[1]) {
				t.Errorf("%s %v and %s %v led at the same time", a, fmtSpan(sa), b, fmtSpan(sb))
			}
		}
	}
}
