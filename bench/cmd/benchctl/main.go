// Command benchctl measures a whole controller built on informerkit against the same
// controller built on controller-runtime v0.25.2 (make bench-controllers). Each runs in a
// process of its own, a binary of its own (./informerkit and ./controllerruntime beside
// this one): a Deployment controller that owns Pods and a controller of a custom resource
// (Application) that owns ConfigMaps. benchctl starts the e2e cluster (kube-apiserver and
// etcd from -bindir), seeds Deployments with their Pods and the Applications, lets each
// implementation bring the cluster in sync once (unmeasured), then runs them in turn over
// interleaved rounds and measures each from outside: binary size; time, CPU and peak RSS
// from start to ready (every primary reconciled once); RSS and goroutines at rest; the
// reconciles, their rate and CPU, and the delays from change to reconcile through a burst
// of stamped spec changes. It prints the medians and the ratios, and draws a chart.
//
//	benchctl [-deployments 2000] [-replicas 10] [-apps 2000] [-burst 2000] [-rounds 3] [-bindir DIR] [-chart F.svg]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informerkit/informerkit/bench/internal/fleet"
	"github.com/informerkit/informerkit/e2e/cluster"
)

// impls are the implementations: their binaries' names, beside benchctl's.
var impls = []string{"informerkit", "controllerruntime"}

type options struct {
	binDir, kubeconfig, ctlDir, chart  string
	profile, jsonOut                   string
	deployments, replicas, apps, burst int
	rounds, workers                    int
	rest                               time.Duration
	warmup                             bool
}

func main() {
	var o options
	flag.StringVar(&o.binDir, "bindir", os.Getenv("E2E_BIN_DIR"), "directory of kube-apiserver and etcd (default: the nearest bin/)")
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "use this cluster instead of starting one")
	flag.StringVar(&o.ctlDir, "ctldir", "", "directory of the controller binaries (default: benchctl's)")
	flag.StringVar(&o.chart, "chart", "", "write an SVG chart of the ratios to this file")
	flag.IntVar(&o.deployments, "deployments", 2000, "Deployments")
	flag.IntVar(&o.replicas, "replicas", 10, "Pods per Deployment")
	flag.IntVar(&o.apps, "apps", 2000, "Applications (custom resources)")
	flag.IntVar(&o.burst, "burst", 2000, "spec changes of the burst, half Deployments and half Applications")
	flag.IntVar(&o.rounds, "rounds", 3, "interleaved rounds")
	flag.IntVar(&o.workers, "workers", 16, "parallel writers while seeding")
	flag.DurationVar(&o.rest, "rest", 5*time.Second, "idle time after ready before RSS at rest is read")
	flag.StringVar(&o.profile, "profile", "", "write CPU profiles of the last round's bursts to this directory (controllers built with -tags benchprofile)")
	flag.StringVar(&o.jsonOut, "json", "", "write every round's results to this JSON file")
	flag.BoolVar(&o.warmup, "warmup", true, "run each implementation once, unmeasured, first")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "benchctl:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	if o.ctlDir == "" {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		o.ctlDir = filepath.Dir(self)
	}
	sizes := map[string]float64{}
	for _, impl := range impls {
		fi, err := os.Stat(filepath.Join(o.ctlDir, impl))
		if err != nil {
			return fmt.Errorf("the controller binary: %w (make bench-controllers builds it)", err)
		}
		sizes[impl] = float64(fi.Size())
	}
	start := time.Now()
	kubeconfig, server := o.kubeconfig, "the given cluster"
	if kubeconfig == "" {
		c, err := cluster.Start(ctx, cluster.Options{BinDir: o.binDir})
		if err != nil {
			return err
		}
		defer c.Cleanup()
		defer c.Stop()
		kubeconfig, server = c.KubeconfigPath, fmt.Sprintf("kube-apiserver 1.%d", c.Minor())
		fmt.Printf("%s at %s up in %s\n", server, c.URL, time.Since(start).Round(time.Second))
	}
	cs, dyn, err := clients(kubeconfig)
	if err != nil {
		return err
	}
	seedStart := time.Now()
	if err := seed(ctx, cs, dyn, o.deployments, o.replicas, o.apps, o.workers, func(s string) { fmt.Println("  seeded", s) }); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	deps, err := cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	apps, err := dyn.Resource(fleet.ApplicationGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	fmt.Printf("seeded %d Deployments of %d Pods and %d Applications in %s\n", len(deps.Items), o.replicas, len(apps.Items),
		time.Since(seedStart).Round(time.Second))

	seq := int(time.Now().Unix() % 100000) // minReadySeconds: a new value every run, also across invocations
	args := func(impl, tag string, burst int) measureArgs {
		seq++
		return measureArgs{bin: filepath.Join(o.ctlDir, impl), kubeconfig: kubeconfig, deployments: len(deps.Items),
			apps: len(apps.Items), burst: burst, rest: o.rest, tag: tag, seq: seq}
	}
	if o.warmup {
		for _, impl := range impls {
			res, err := measure(ctx, cs, dyn, args(impl, "warmup-"+impl, 0))
			if err != nil {
				return fmt.Errorf("warm-up %s: %w", impl, err)
			}
			fmt.Printf("warm-up %-18s ready %6.2fs (wrote %d objects)\n", impl, res.ReadySeconds, res.StartWrites)
		}
	}
	results := map[string][]result{}
	for round := range o.rounds {
		order := impls
		if round%2 == 1 {
			order = []string{impls[1], impls[0]}
		}
		for _, impl := range order {
			a := args(impl, fmt.Sprintf("r%d-%s-%d", round+1, impl, time.Now().Unix()), min(o.burst, 2*min(o.deployments, o.apps)))
			if o.profile != "" && round == o.rounds-1 {
				a.profile = filepath.Join(o.profile, impl+"-burst.pprof")
			}
			res, err := measure(ctx, cs, dyn, a)
			if err != nil {
				return fmt.Errorf("round %d %s: %w", round+1, impl, err)
			}
			results[impl] = append(results[impl], res)
			fmt.Printf("round %d %-18s ready %6.2fs cpu %6.2fs peak %5.0f MB rest %5.0f MB gor %4d | burst %5d rec in %5.2fs (writes %.2fs) cpu %5.2fs p50 %6.0f ms p99 %6.0f ms err %d | load %.1f-%.1f\n",
				round+1, impl, res.ReadySeconds, res.ReadyCPUSeconds, res.PeakRSSReady/1e6, res.RSSRest/1e6, res.GoroutinesRest,
				res.BurstReconciles, res.BurstSeconds, res.BurstWriteSeconds, res.BurstCPUSeconds, res.LatencyP50, res.LatencyP99,
				res.BurstErrors, res.Load[0], res.Load[1])
			if res.StartWrites != 0 {
				fmt.Printf("  warning: %s wrote %d objects before ready (the cluster was not in sync)\n", impl, res.StartWrites)
			}
		}
	}
	fmt.Printf("\n%s, %d Deployments × %d Pods, %d Applications, burst %d; %d rounds, %s, GOMAXPROCS=%d, %d CPUs, %s/%s, total %s\n\n",
		server, len(deps.Items), o.replicas, len(apps.Items), o.burst, o.rounds, time.Now().UTC().Format("2006-01-02"),
		runtime.GOMAXPROCS(0), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, time.Since(start).Round(time.Second))
	if o.jsonOut != "" {
		b, err := json.MarshalIndent(map[string]any{"server": server, "deployments": len(deps.Items), "replicas": o.replicas,
			"applications": len(apps.Items), "burst": o.burst, "binary_bytes": sizes, "rounds": results}, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.jsonOut, b, 0o644); err != nil {
			return err
		}
	}
	rows := tableRows(sizes, results)
	printTable(os.Stdout, rows)
	if o.chart != "" {
		title := fmt.Sprintf("informerkit / controller-runtime v0.25.2, %s, %d Pods, %d custom resources (medians of %d rounds)",
			server, len(deps.Items)*o.replicas, len(apps.Items), o.rounds)
		if err := writeChartFile(o.chart, title, rows); err != nil {
			return err
		}
	}
	return nil
}
