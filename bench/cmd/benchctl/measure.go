package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/informerkit/informerkit/bench/internal/ctlbench"
	"github.com/informerkit/informerkit/bench/internal/fleet"
)

// result is one run of one implementation.
type result struct {
	ReadySeconds, ReadyCPUSeconds float64 // start to ready
	PeakRSSReady, RSSReady        float64 // VmHWM and VmRSS at ready
	RSSRest                       float64 // VmRSS after the rest
	GoroutinesRest                int
	StartWrites                   int64 // writes before ready (0 once the cluster is in sync)
	BurstWriteSeconds             float64
	BurstSeconds                  float64 // first change written to the last reconcile
	BurstCPUSeconds               float64
	BurstReconciles               int64
	BurstErrors                   int64
	LatencyP50, LatencyP99        float64 // ms
	PeakRSS                       float64 // VmHWM at the end
	Load                          [2]float64
}

// measureArgs say what one run does.
type measureArgs struct {
	bin, kubeconfig   string
	deployments, apps int
	burst             int // changes, half Deployments and half Applications
	rest              time.Duration
	tag               string // unique per run: the stamps' tag and part of the changed values
	seq               int    // unique per run: the Deployments' minReadySeconds
	profile           string // a file for a CPU profile of the burst ("": none; needs -tags benchprofile)
}

// measure runs one controller process through start, rest and burst.
func measure(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, a measureArgs) (result, error) {
	var res result
	res.Load[0] = loadAverage()
	p, err := startProc(ctx, a.bin, a.kubeconfig, "-deployments", fmt.Sprint(a.deployments), "-apps", fmt.Sprint(a.apps))
	if err != nil {
		return res, err
	}
	defer p.stop()
	var ready ctlbench.Stats
	if err := p.await(ctx, "ready", 15*time.Minute, &ready); err != nil {
		return res, err
	}
	res.ReadySeconds = time.Since(p.start).Seconds()
	cpu, err := p.cpu()
	if err != nil {
		return res, err
	}
	res.ReadyCPUSeconds = cpu.Seconds()
	if res.PeakRSSReady, res.RSSReady, err = p.memory(); err != nil {
		return res, err
	}
	res.StartWrites = ready.Writes

	// At rest: the initial reconciles' own events (none once in sync) have been handled.
	select {
	case <-time.After(a.rest):
	case <-ctx.Done():
		return res, ctx.Err()
	}
	if _, res.RSSRest, err = p.memory(); err != nil {
		return res, err
	}
	before, err := p.stats(ctx)
	if err != nil {
		return res, err
	}
	res.GoroutinesRest = before.Goroutines

	if a.burst > 0 {
		if err := burstPhase(ctx, cs, dyn, p, a, before, &res); err != nil {
			return res, err
		}
	}
	if res.PeakRSS, _, err = p.memory(); err != nil {
		return res, err
	}
	res.Load[1] = loadAverage()
	return res, p.stop()
}

// burstPhase writes a.burst stamped spec changes (Deployments' minReadySeconds, with no
// Pod to create or delete, and Applications' targetRevision, which changes their
// ConfigMap), waits for the controller to have reconciled every one, then for it to go
// quiet (the reconciles its own writes cause), and records rate, CPU and latencies.
func burstPhase(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, p *proc, a measureArgs, before ctlbench.Stats, res *result) error {
	if a.profile != "" {
		if err := p.send("profile " + a.profile); err != nil {
			return err
		}
	}
	cpu0, err := p.cpu()
	if err != nil {
		return err
	}
	if err := p.send(fmt.Sprintf("expect %s %d", a.tag, a.burst)); err != nil {
		return err
	}
	if _, err := p.stats(ctx); err != nil { // the expectation is set once this is answered
		return err
	}
	start := time.Now()
	err = fleet.Parallel(ctx, 16, a.burst, func(i int) error {
		n := i / 2
		stamp := fmt.Sprintf(`"metadata":{"annotations":{%q:"%s/%d"}}`, ctlbench.StampAnnotation, a.tag, time.Now().UnixNano())
		if i%2 == 0 {
			dep := fleet.Deployment(n%a.deployments, 0)
			patch := fmt.Sprintf(`{%s,"spec":{"minReadySeconds":%d}}`, stamp, 1+a.seq%500) // below progressDeadlineSeconds
			_, err := cs.AppsV1().Deployments(dep.Namespace).Patch(ctx, dep.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			return err
		}
		m := n % a.apps
		patch := fmt.Sprintf(`{%s,"spec":{"source":{"targetRevision":"%s"}}}`, stamp, a.tag)
		_, err := dyn.Resource(fleet.ApplicationGVR).Namespace(fleet.Namespace(m%fleet.Namespaces)).
			Patch(ctx, fmt.Sprintf("app-%05d", m), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("burst: %w", err)
	}
	res.BurstWriteSeconds = time.Since(start).Seconds()
	var done ctlbench.Done
	if err := p.await(ctx, "done", 10*time.Minute, &done); err != nil {
		return err
	}
	res.LatencyP50, res.LatencyP99 = percentile(done.Latencies, 0.50), percentile(done.Latencies, 0.99)
	// Quiet: no reconcile for a second (the echoes of the controller's writes are done).
	last := done.Stats
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return ctx.Err()
		}
		s, err := p.stats(ctx)
		if err != nil {
			return err
		}
		quiet := s.Reconciles == last.Reconciles
		last = s
		if quiet {
			break
		}
	}
	cpu1, err := p.cpu()
	if err != nil {
		return err
	}
	res.BurstCPUSeconds = (cpu1 - cpu0).Seconds()
	if a.profile != "" {
		if err := p.send("profile-stop"); err != nil {
			return err
		}
		if _, err := p.stats(ctx); err != nil {
			return err
		}
	}
	res.BurstReconciles = last.Reconciles - before.Reconciles
	res.BurstErrors = last.Errors - before.Errors
	res.BurstSeconds = float64(last.LastReconcile-start.UnixNano()) / 1e9
	return nil
}

// percentile is the q-quantile of sorted xs (nearest rank).
func percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[max(0, min(i, len(xs)-1))]
}

// loadAverage is the machine's one-minute load average (/proc/loadavg).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	fmt.Sscan(strings.Fields(string(b))[0], &l)
	return l
}
