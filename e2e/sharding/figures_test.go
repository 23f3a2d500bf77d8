package sharding_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/informerkit/informerkit/meta"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/leaderelection"
	"github.com/informerkit/informerkit/sharding"
	"github.com/informerkit/informerkit/sharding/ring"
)

// TestShardingFigures measures, for N = 1, 2, 4 replica processes of a sharded controller
// built through the Manager (--manager: ManagerOptions.Sharding and a Builder with
// Options.Sharded; a reconcile of --work per change) on the real kube-apiserver with the gate
// on: the objects cached per replica and its live heap, the time to reconcile a burst of
// changes to every object (from the first write to the last reconcile that saw its change),
// the time for the claims to converge after a join, a clean leave and a SIGKILL, and the
// reconciles of one object by two replicas at once. It runs only with E2E_SHARD_FIGURES=1
// (minutes); E2E_SHARD_OBJECTS sets the object count (default 2000).
func TestShardingFigures(t *testing.T) {
	if os.Getenv("E2E_SHARD_FIGURES") != "1" {
		t.Skip("set E2E_SHARD_FIGURES=1 to measure")
	}
	objects := 2000
	if v, err := strconv.Atoi(os.Getenv("E2E_SHARD_OBJECTS")); err == nil && v > 0 {
		objects = v
	}
	const work, workers = 5 * time.Millisecond, 4
	c := cluster.ForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Minute)
	defer cancel()
	bin := buildReplica(t)
	real := realSide(t)
	// The writer of the burst: no client-side rate limit, so that writes outpace reconciles.
	wcfg, err := apiclient.LoadConfigWithOptions(apiclient.LoadOptions{Kubeconfig: c.KubeconfigPath})
	if err != nil {
		t.Fatal(err)
	}
	wcfg.QPS, wcfg.Burst = 5000, 5000
	writer := newSide(t, "writer", wcfg)
	const ns = "shard-figures"
	nsObj := &configMap{ObjectMeta: meta.ObjectMeta{Name: ns}}
	nsObj.APIVersion, nsObj.Kind = "v1", "Namespace"
	if _, err := apiclient.NewResource[*configMap](real.c, namespacesGVR).Create(ctx, nsObj, apiclient.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := writer.cms.Namespace(ns)
	parallel(t, objects, func(i int) error {
		cm := &configMap{ObjectMeta: meta.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i), Labels: map[string]string{"round": "0"}}}
		cm.APIVersion, cm.Kind = "v1", "ConfigMap"
		_, err := cms.Create(ctx, cm, apiclient.CreateOptions{})
		return err
	})
	leases := apiclient.NewResource[*leaderelection.Lease](real.c, leaderelection.LeaseGVR).Namespace(ns)

	t.Logf("| N | objects cached per replica (min–max) | live heap per replica (min–max) | resident set, steady (peak) | burst of %d changes | join | clean leave | SIGKILL | double reconciles | replicas' CPU |", objects)
	prev := "0" // the label round every object has now
	for _, n := range []int{1, 2, 4} {
		ringName := fmt.Sprintf("fig-%d", n)
		rc := newRecorder()
		procs := map[string]*proc{}
		var ids []string
		extra := []string{"--namespace", ns, "--ring", ringName, "--manager", "--workers", strconv.Itoa(workers), "--work", work.String()}
		for i := range n {
			id := fmt.Sprintf("%s-p%d", ringName, i)
			procs[id] = startProc(t, bin, c.KubeconfigPath, id, rc, extra...)
			ids = append(ids, id)
		}
		waitRingConverged(t, ctx, leases, ringName, ids)
		caches := waitCaches(t, ctx, rc, cms, apiclient.ListOptions{}, ids)
		// The start reconciles every object once; the burst begins after that backlog.
		waitRound(t, rc, prev, objects)
		heaps := waitHeaps(t, rc, procs, ids)

		// The burst: every object's label round becomes n.
		round := strconv.Itoa(n)
		start := time.Now()
		parallel(t, objects, func(i int) error {
			o, err := cms.Get(ctx, fmt.Sprintf("cm-%05d", i), apiclient.GetOptions{})
			if err != nil {
				return err
			}
			o.Labels["round"] = round
			_, err = cms.Update(ctx, o, apiclient.UpdateOptions{})
			return err
		})
		wrote := time.Since(start)
		last := waitRound(t, rc, round, objects)
		burst := last.Sub(start)
		prev = round

		// Join, clean leave, crash (N >= 2: someone must remain).
		joinID := fmt.Sprintf("%s-p%d", ringName, n)
		procs[joinID] = startProc(t, bin, c.KubeconfigPath, joinID, rc, extra...)
		join := waitRingConverged(t, ctx, leases, ringName, append(slices.Clone(ids), joinID))
		_ = procs[joinID].cmd.Process.Signal(syscall.SIGTERM)
		<-procs[joinID].done
		leave := waitRingConverged(t, ctx, leases, ringName, ids)
		kill := "—"
		if n >= 2 {
			victim := ids[n-1]
			_ = procs[victim].cmd.Process.Kill()
			killedAt := time.Now()
			<-procs[victim].done
			rc.killed(victim, killedAt)
			ids = ids[:n-1]
			kill = waitRingConverged(t, ctx, leases, ringName, ids).Round(100 * time.Millisecond).String()
		}
		for _, id := range ids {
			_ = procs[id].cmd.Process.Signal(syscall.SIGTERM)
		}
		for _, id := range ids {
			<-procs[id].done
		}
		var cpu time.Duration // of every replica process of this N, from start to exit
		for _, p := range procs {
			if st := p.cmd.ProcessState; st != nil {
				cpu += st.UserTime() + st.SystemTime()
			}
		}
		overlaps, _, total := rc.overlaps()
		for _, o := range overlaps {
			t.Error("double reconcile: " + o)
		}
		heapLo, heapHi := mibRange(heaps, func(m memory) uint64 { return m.heap })
		rssLo, rssHi := mibRange(heaps, func(m memory) uint64 { return m.rss })
		peakLo, peakHi := mibRange(heaps, func(m memory) uint64 { return m.peakRSS })
		t.Logf("| %d | %d–%d | %.1f–%.1f MiB | %.0f–%.0f MiB (%.0f–%.0f MiB) | %v (writes %v) | %v | %v | %s | %d of %d | %v |", n, slices.Min(caches), slices.Max(caches),
			heapLo, heapHi, rssLo, rssHi, peakLo, peakHi,
			burst.Round(100*time.Millisecond), wrote.Round(100*time.Millisecond), join.Round(100*time.Millisecond), leave.Round(100*time.Millisecond), kill, len(overlaps), total, cpu.Round(100*time.Millisecond))
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// mibRange returns the least and the greatest of field over ms, in MiB.
func mibRange(ms []memory, field func(memory) uint64) (lo, hi float64) {
	lo, hi = mib(field(ms[0])), mib(field(ms[0]))
	for _, m := range ms[1:] {
		lo, hi = min(lo, mib(field(m))), max(hi, mib(field(m)))
	}
	return lo, hi
}

// waitHeaps asks each replica for its memory (SIGUSR1: a GC, then a HEAP line) and
// returns the answers.
func waitHeaps(t *testing.T, rc *recorder, procs map[string]*proc, ids []string) []memory {
	t.Helper()
	rc.mu.Lock()
	for _, id := range ids {
		delete(rc.heap, id)
	}
	rc.mu.Unlock()
	for _, id := range ids {
		if err := procs[id].cmd.Process.Signal(syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for {
		rc.mu.Lock()
		var out []memory
		for _, id := range ids {
			if h, ok := rc.heap[id]; ok {
				out = append(out, h)
			}
		}
		rc.mu.Unlock()
		if len(out) == len(ids) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("heaps of %v: only %d answers", ids, len(out))
		}
		tm := time.NewTimer(50 * time.Millisecond)
		<-tm.C
	}
}

// parallel runs f(0..n-1) on 16 goroutines and fails the test on the first error.
func parallel(t *testing.T, n int, f func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	next := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

// waitCaches waits until each replica caches exactly its share of the objects res lists
// with opts (by the uid and the assignment of ids) and returns the cache sizes.
func waitCaches(t *testing.T, ctx context.Context, rc *recorder, res *apiclient.Resource[*configMap], opts apiclient.ListOptions, ids []string) []int {
	t.Helper()
	a, err := ring.Assign(ids, 0)
	if err != nil {
		t.Fatal(err)
	}
	l, err := res.List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, o := range l.Items {
		want[a.Owner(sharding.Hash(o.UID))]++
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		rc.mu.Lock()
		var sizes []int
		ok := true
		for _, id := range ids {
			sizes = append(sizes, rc.cache[id])
			ok = ok && rc.cache[id] == want[id]
		}
		rc.mu.Unlock()
		if ok {
			return sizes
		}
		if time.Now().After(deadline) {
			t.Fatalf("caches %v never reached the shares %v", sizes, want)
		}
		tm := time.NewTimer(100 * time.Millisecond)
		<-tm.C
	}
}

// waitRound waits until every object was reconciled having seen round, and returns the end
// of the last such reconcile.
func waitRound(t *testing.T, rc *recorder, round string, objects int) time.Time {
	t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		rc.mu.Lock()
		var last time.Time
		done := 0
		for _, ss := range rc.spans {
			for _, s := range ss {
				if s.round == round {
					done++
					if s.end.After(last) {
						last = s.end
					}
					break
				}
			}
		}
		rc.mu.Unlock()
		if done == objects {
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d objects reconciled at round %s", done, objects, round)
		}
		tm := time.NewTimer(100 * time.Millisecond)
		<-tm.C
	}
}
