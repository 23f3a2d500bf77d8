package sharding_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
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
	"github.com/informerkit/informerkit/sharding/ring"
)

const (
	procRing      = "procs"
	procLease     = 3 * time.Second
	procRenew     = 2 * time.Second
	procRetry     = 200 * time.Millisecond
	procObjects   = 120
	procWorkDelay = 5 * time.Millisecond
)

func buildReplica(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "shard-replica")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "github.com/informerkit/informerkit/e2e/cmd/shard-replica")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// span is one reconcile of one key by one replica.
type span struct {
	id         string
	start, end time.Time
	round      string // the label "round" the reconcile saw (controller mode)
}

// recorder gathers the START/END lines of every replica process.
type recorder struct {
	mu    sync.Mutex
	open  map[string]map[string]time.Time // id -> key -> start
	spans map[string][]span               // key -> spans
	cache map[string]int                  // id -> objects cached (controller mode)
	heap  map[string]memory               // id -> its last HEAP line
}

// memory is a replica's HEAP line: live heap after a GC, resident set and its peak.
type memory struct{ heap, rss, peakRSS uint64 }

func newRecorder() *recorder {
	return &recorder{open: map[string]map[string]time.Time{}, spans: map[string][]span{}, cache: map[string]int{}, heap: map[string]memory{}}
}

func (rc *recorder) line(l string) {
	f := strings.Fields(l)
	if len(f) == 6 && f[0] == "HEAP" {
		var m memory
		var errs [3]error
		m.heap, errs[0] = strconv.ParseUint(f[2], 10, 64)
		m.rss, errs[1] = strconv.ParseUint(f[4], 10, 64)
		m.peakRSS, errs[2] = strconv.ParseUint(f[5], 10, 64)
		if errs == [3]error{} {
			rc.mu.Lock()
			rc.heap[f[1]] = m
			rc.mu.Unlock()
		}
		return
	}
	if len(f) == 4 && f[0] == "CACHE" {
		if n, err := strconv.Atoi(f[2]); err == nil {
			rc.mu.Lock()
			rc.cache[f[1]] = n
			rc.mu.Unlock()
		}
		return
	}
	if len(f) < 4 || (f[0] != "START" && f[0] != "END") {
		return
	}
	n, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil {
		return
	}
	at := time.Unix(0, n)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	id, key := f[1], f[2]
	if rc.open[id] == nil {
		rc.open[id] = map[string]time.Time{}
	}
	if f[0] == "START" {
		rc.open[id][key] = at
		return
	}
	if s, ok := rc.open[id][key]; ok {
		sp := span{id: id, start: s, end: at}
		if len(f) > 4 {
			sp.round = f[4]
		}
		rc.spans[key] = append(rc.spans[key], sp)
		delete(rc.open[id], key)
	}
}

// killed closes the spans a SIGKILLed replica left open at the kill.
func (rc *recorder) killed(id string, at time.Time) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for key, s := range rc.open[id] {
		rc.spans[key] = append(rc.spans[key], span{id: id, start: s, end: at})
	}
	delete(rc.open, id)
}

// lastReconciledBy reports whether all n keys have been reconciled, each last by one of ids.
func (rc *recorder) lastReconciledBy(ids []string, n int) bool {
	by := rc.lastReconcilers()
	keys := 0
	for id, k := range by {
		if !slices.Contains(ids, id) {
			return false
		}
		keys += k
	}
	return keys >= n
}

// lastReconcilers returns, for each replica, the number of keys it reconciled last.
func (rc *recorder) lastReconcilers() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	by := map[string]int{}
	for _, ss := range rc.spans {
		last := ss[0]
		for _, sp := range ss[1:] {
			if sp.start.After(last.start) {
				last = sp
			}
		}
		by[last.id]++
	}
	return by
}

// overlaps returns every pair of reconciles of one key by two replicas that overlap.
func (rc *recorder) overlaps() (out []string, reconciled int, total int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for key, ss := range rc.spans {
		sort.Slice(ss, func(i, j int) bool { return ss[i].start.Before(ss[j].start) })
		for i := 1; i < len(ss); i++ {
			if ss[i].start.Before(ss[i-1].end) && ss[i].id != ss[i-1].id {
				out = append(out, fmt.Sprintf("%s: %s %v-%v and %s from %v", key, ss[i-1].id,
					ss[i-1].start.Format("15:04:05.000000"), ss[i-1].end.Format("15:04:05.000000"), ss[i].id, ss[i].start.Format("15:04:05.000000")))
			}
		}
		total += len(ss)
	}
	return out, len(rc.spans), total
}

type proc struct {
	id   string
	cmd  *exec.Cmd
	done chan struct{}
}

func startProc(t *testing.T, bin, kubeconfig, id string, rc *recorder, extra ...string) *proc {
	t.Helper()
	args := []string{"--kubeconfig", kubeconfig, "--id", id, "--ring", procRing,
		"--work", procWorkDelay.String(), "--lease-duration", procLease.String(), "--renew-deadline", procRenew.String(), "--retry-period", procRetry.String()}
	cmd := exec.Command(bin, append(args, extra...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(t.TempDir(), id+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{id: id, cmd: cmd, done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			rc.line(sc.Text())
		}
		_ = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	return p
}

// waitConverged waits until the claims published on the Leases of ids are exactly the
// assignment of ids, and returns how long that took. A member claims a range only once no
// live member claims it, so after a SIGKILL this includes the victim's Lease expiring.
func waitConverged(t *testing.T, ctx context.Context, leases *apiclient.Resource[*leaderelection.Lease], ids []string) time.Duration {
	return waitRingConverged(t, ctx, leases, procRing, ids)
}

func waitRingConverged(t *testing.T, ctx context.Context, leases *apiclient.Resource[*leaderelection.Lease], ringName string, ids []string) time.Duration {
	t.Helper()
	start := time.Now()
	want, err := ring.Assign(ids, 0)
	if err != nil {
		t.Fatal(err)
	}
	var last string
	for time.Since(start) < 2*time.Minute {
		l, err := leases.List(ctx, apiclient.ListOptions{LabelSelector: ring.LabelRing + "=" + ringName})
		if err != nil {
			t.Fatal(err)
		}
		ok := true
		var b strings.Builder
		holders := map[string]bool{}
		for _, lease := range l.Items {
			h := lease.Spec.Holder()
			if h == "" || !slices.Contains(ids, h) {
				continue // released, or a killed member's Lease (never released; it expires)
			}
			holders[h] = true
			got := ring.ParseClaimed(lease.Annotations[ring.AnnotationClaimed])
			if !slices.Equal(got, want.Ranges(h)) {
				ok = false
			}
			fmt.Fprintf(&b, "%s claims %d ranges (assignment %d); ", h, len(got), len(want.Ranges(h)))
		}
		for _, id := range ids {
			ok = ok && holders[id]
		}
		last = b.String()
		if ok && len(holders) == len(ids) {
			return time.Since(start)
		}
		tm := time.NewTimer(50 * time.Millisecond)
		<-tm.C
	}
	t.Fatalf("members %v did not converge within 2 minutes: %s", ids, last)
	return 0
}

// TestShardedReplicaProcesses: replica processes of a sharded controller on the real
// kube-apiserver (gate on) join one by one to four, one stops cleanly (SIGTERM), one is
// killed (SIGKILL); after each change the claims converge on the assignment of the live
// members, and no ConfigMap is ever reconciled by two processes at once. The replicas are
// bare (a Ring, a sharded informer, workers under Ring.BeginObject), controllers built
// through a Manager with ManagerOptions.Sharding and Options.Sharded, or such controllers
// of a cluster-scoped type (ClusterRoles) in a ring by namespace, which places them by uid.
func TestShardedReplicaProcesses(t *testing.T) {
	bin := buildReplica(t)
	for _, mode := range []string{"bare", "manager", "cluster-scoped"} {
		t.Run(mode, func(t *testing.T) {
			procNS := "shard-procs-" + mode
			var extra []string
			switch mode {
			case "manager":
				extra = []string{"--manager", "--workers", "2"}
			case "cluster-scoped":
				extra = []string{"--manager", "--workers", "2", "--cluster-roles", procNS}
			}
			testReplicaProcesses(t, bin, procNS, mode == "cluster-scoped", extra)
		})
	}
}

var clusterRolesGVR = meta.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}

// seedReplicaObjects creates procObjects ConfigMaps in procNS, or with clusterScoped as many
// ClusterRoles labelled shard-e2e=procNS (deleted at the test's end).
func seedReplicaObjects(t *testing.T, ctx context.Context, c *apiclient.Client, procNS string, clusterScoped bool) {
	res := apiclient.NewResource[*configMap](c, meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(procNS)
	if clusterScoped {
		res = apiclient.NewResource[*configMap](c, clusterRolesGVR)
		t.Cleanup(func() {
			opts := apiclient.ListOptions{LabelSelector: "shard-e2e=" + procNS}
			if err := res.DeleteCollection(context.Background(), apiclient.DeleteOptions{}, opts); err != nil {
				t.Errorf("delete the ClusterRoles: %v", err)
			}
		})
	}
	for i := range procObjects {
		o := &configMap{ObjectMeta: meta.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i)}}
		o.APIVersion, o.Kind = "v1", "ConfigMap"
		if clusterScoped {
			o.Name = fmt.Sprintf("%s-%03d", procNS, i)
			o.Labels = map[string]string{"shard-e2e": procNS}
			o.APIVersion, o.Kind = "rbac.authorization.k8s.io/v1", "ClusterRole"
		}
		if _, err := res.Create(ctx, o, apiclient.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func testReplicaProcesses(t *testing.T, bin, procNS string, clusterScoped bool, extra []string) {
	c := cluster.ForTest(t)
	ctx := ctxFor(t)
	real := realSide(t)
	nsObj := &configMap{ObjectMeta: meta.ObjectMeta{Name: procNS}}
	nsObj.APIVersion, nsObj.Kind = "v1", "Namespace"
	if _, err := apiclient.NewResource[*configMap](real.c, namespacesGVR).Create(ctx, nsObj, apiclient.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	seedReplicaObjects(t, ctx, real.c, procNS, clusterScoped)
	leases := apiclient.NewResource[*leaderelection.Lease](real.c, leaderelection.LeaseGVR).Namespace(procNS)
	rc := newRecorder()

	procs := map[string]*proc{}
	var live []string
	for i := range 4 {
		id := fmt.Sprintf("p%d", i)
		procs[id] = startProc(t, bin, c.KubeconfigPath, id, rc, append([]string{"--namespace", procNS}, extra...)...)
		live = append(live, id)
		d := waitConverged(t, ctx, leases, live)
		t.Logf("join of %s: claims converged in %v (N=%d)", id, d.Round(time.Millisecond), len(live))
	}

	// A clean leave.
	if err := procs["p1"].cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-procs["p1"].done
	live = slices.DeleteFunc(live, func(s string) bool { return s == "p1" })
	d := waitConverged(t, ctx, leases, live)
	t.Logf("clean leave of p1: claims converged in %v after its exit", d.Round(time.Millisecond))

	// A crash.
	if err := procs["p2"].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	<-procs["p2"].done
	rc.killed("p2", killedAt)
	live = slices.DeleteFunc(live, func(s string) bool { return s == "p2" })
	d = waitConverged(t, ctx, leases, live)
	t.Logf("SIGKILL of p2: claims converged in %v after the kill (lease duration %v)", d.Round(time.Millisecond), procLease)

	// Wait until the survivors have reconciled their new shares (every key's latest reconcile
	// is by a live replica), then stop them cleanly.
	for !rc.lastReconciledBy(live, procObjects) {
		if ctx.Err() != nil {
			t.Fatalf("the survivors did not reconcile every key: %v", ctx.Err())
		}
		time.Sleep(20 * time.Millisecond) // polling the state asserted
	}
	if slices.Contains(extra, "--manager") { // a controller prints its cache size
		res, opts := real.cms.Namespace(procNS), apiclient.ListOptions{}
		if clusterScoped {
			res, opts = apiclient.NewResource[*configMap](real.c, clusterRolesGVR), apiclient.ListOptions{LabelSelector: "shard-e2e=" + procNS}
		}
		t.Logf("objects cached by %v: %v of %d", live, waitCaches(t, ctx, rc, res, opts, live), procObjects)
	}
	for _, id := range live {
		_ = procs[id].cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, id := range live {
		<-procs[id].done
	}
	if by := rc.lastReconcilers(); clusterScoped && len(by) < 2 {
		t.Errorf("the cluster-scoped objects were last reconciled by %v: not spread by uid", by)
	}
	overlaps, keys, total := rc.overlaps()
	for _, o := range overlaps {
		t.Error("double reconcile: " + o)
	}
	t.Logf("%d reconciles of %d keys by 4 processes, %d overlapping", total, keys, len(overlaps))
	if keys != procObjects {
		t.Errorf("%d of %d objects were reconciled", keys, procObjects)
	}
}
