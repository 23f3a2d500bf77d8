package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/informerkit/informerkit/bench/internal/fleet"
	"github.com/informerkit/informerkit/e2e/cluster"
)

// runArgs are the flags of benchreal run.
type runArgs struct {
	BinDir     string
	Kubeconfig string // an existing cluster instead of starting one (it must be empty)
	Pods       int
	ConfigMaps int
	Apps       int // custom resources (Applications)
	Burst      int
	Rounds     int
	Workers    int
	Impls      []string // client-go first or not: the table compares each with client-go
	Out        io.Writer
	Chart      string // file of the SVG chart ("" for none)
}

// workload is one informer measured in both implementations.
type workload struct {
	name   string
	kind   string
	obj    string // informerkit's declared type: full or partial
	expect int
	replay bool     // with the events phase
	relist bool     // with the forced-relist runs
	impls  []string // the implementations measured ("": the run's)
}

func run(ctx context.Context, a runArgs) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	start := time.Now()
	kubeconfig, server := a.Kubeconfig, "kube-apiserver"
	if kubeconfig == "" {
		c, err := cluster.Start(ctx, cluster.Options{BinDir: a.BinDir})
		if err != nil {
			return err
		}
		defer c.Cleanup()
		defer c.Stop()
		kubeconfig = c.KubeconfigPath
		if c.Version != "" {
			server += " " + c.Version
		}
		fmt.Fprintf(a.Out, "%s %s up in %s\n", server, c.URL, time.Since(start).Round(time.Second))
	}
	cs, err := writerClientset(kubeconfig)
	if err != nil {
		return err
	}
	seedStart := time.Now()
	counts, err := fleet.Seed(ctx, cs, a.Pods, a.ConfigMaps, a.Workers, func(s string) { fmt.Fprintln(a.Out, "  seeded", s) })
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	fmt.Fprintf(a.Out, "seeded %d Deployments, %d pods, %d configmaps in %s\n",
		counts.Deployments, counts.Pods, counts.ConfigMaps, time.Since(seedStart).Round(time.Second))
	if a.Apps > 0 {
		seedStart = time.Now()
		dyn, err := dynamicClient(kubeconfig)
		if err != nil {
			return err
		}
		if err := fleet.SeedApplications(ctx, dyn, a.Apps, a.Workers, func(s string) { fmt.Fprintln(a.Out, "  seeded", s) }); err != nil {
			return fmt.Errorf("seed applications: %w", err)
		}
		fmt.Fprintf(a.Out, "seeded %d Applications in %s\n", a.Apps, time.Since(seedStart).Round(time.Second))
	}

	// The cluster holds a few objects of its own (configmaps in kube-system): the informers
	// must hold exactly what the server lists.
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	cms, err := cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	impls := a.Impls
	if len(impls) == 0 {
		impls = []string{"informerkit", "client-go", "informerkit-json"}
	}
	workloads := []workload{
		{name: fmt.Sprintf("pods=%d/obj=pod", a.Pods), kind: "pods", obj: "full", expect: len(pods.Items), replay: true, relist: true},
		{name: fmt.Sprintf("pods=%d/obj=partial", a.Pods), kind: "pods", obj: "partial", expect: len(pods.Items), replay: true, relist: true},
		{name: fmt.Sprintf("configmaps=%d/obj=configmap", a.ConfigMaps), kind: "configmaps", obj: "full", expect: len(cms.Items), relist: true},
	}
	if a.Apps > 0 {
		// JSON on both sides: informerkit-json would repeat informerkit.
		workloads = append(workloads, workload{name: fmt.Sprintf("applications=%d/obj=typed", a.Apps), kind: "applications", obj: "full",
			expect: a.Apps, impls: []string{"informerkit", "client-go", "client-go-typed"}})
	}
	results := map[string][]childResult{} // workload/impl -> rounds
	for round := range a.Rounds {
		for _, w := range workloads {
			var rv string
			if w.replay && a.Burst > 0 {
				if rv, err = burst(ctx, cs, a.Burst, round, w.obj); err != nil {
					return fmt.Errorf("burst: %w", err)
				}
			}
			// Rotate the order so that no implementation always runs first (on a colder
			// server) or right after another's process.
			wimpls := impls
			if w.impls != nil {
				wimpls = w.impls
			}
			order := append(slices.Clone(wimpls[round%len(wimpls):]), wimpls[:round%len(wimpls)]...)
			for _, impl := range order {
				args := []string{"child", "-impl", impl, "-kind", w.kind, "-obj", w.obj,
					"-kubeconfig", kubeconfig, "-expect", fmt.Sprint(w.expect)}
				if rv != "" {
					args = append(args, "-replay-from", rv, "-replay", fmt.Sprint(a.Burst))
				}
				res, err := runChild(ctx, self, args)
				if err != nil {
					return fmt.Errorf("round %d %s %s: %w", round+1, w.name, impl, err)
				}
				key := w.name + "/impl=" + impl
				results[key] = append(results[key], res)
				fmt.Fprintf(a.Out, "round %d %-40s sync %6.2fs cpu %6.2fs heap %7.0f B/obj peak %4.0f MB (live %4.0f MB)",
					round+1, key, res.SyncSeconds, res.SyncCPUSeconds, res.HeapPerObject, res.PeakHeapSync/1e6, res.SteadyHeap/1e6)
				if res.Events > 0 {
					fmt.Fprintf(a.Out, " events %8.0f/s (cpu %.2fs)", float64(res.Events)/res.EventsSeconds, res.EventsCPUSeconds)
				}
				fmt.Fprintln(a.Out)
			}
			// The forced relist, in processes of their own (its 410 is injected through a
			// wrapper that would add to the sync's CPU).
			for _, impl := range order {
				if !w.relist {
					break
				}
				args := []string{"child", "-impl", impl, "-kind", w.kind, "-obj", w.obj,
					"-kubeconfig", kubeconfig, "-expect", fmt.Sprint(w.expect), "-relist"}
				var onSynced func() error
				if w.kind == "pods" && a.Burst > 0 {
					// The steady state: updates written while the synced informer runs.
					args = append(args, "-steady", fmt.Sprint(a.Burst))
					onSynced = func() error {
						_, err := burst(ctx, cs, a.Burst, 100+round, w.obj+"-"+impl)
						return err
					}
				}
				res, err := runChildWith(ctx, self, args, onSynced)
				if err != nil {
					return fmt.Errorf("round %d %s %s relist: %w", round+1, w.name, impl, err)
				}
				key := w.name + "/impl=" + impl + "/relist"
				results[key] = append(results[key], res)
				fmt.Fprintf(a.Out, "round %d %-40s relist %5.2fs cpu %5.2fs peak %4.0f MB (live %4.0f MB)\n",
					round+1, key, res.RelistSeconds, res.RelistCPUSeconds, res.PeakHeapRelist/1e6, res.SteadyHeap/1e6)
			}
		}
	}
	fmt.Fprintf(a.Out, "\n%s, %d rounds, %s, GOMAXPROCS=%d, %s/%s, total %s\n\n", server, a.Rounds, time.Now().Format("2006-01-02"),
		runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, time.Since(start).Round(time.Second))
	var built, custom []workload
	for _, w := range workloads {
		if w.impls == nil {
			built = append(built, w)
		} else {
			custom = append(custom, w)
		}
	}
	printTable(a.Out, built, impls, results)
	for _, w := range custom {
		fmt.Fprintln(a.Out)
		printTable(a.Out, []workload{w}, w.impls, results)
	}
	if a.Chart != "" {
		f, err := os.Create(a.Chart)
		if err != nil {
			return err
		}
		title := fmt.Sprintf("informerkit and client-go v0.37.2 on %s, %d pods (medians of %d rounds, %s)",
			server, a.Pods, a.Rounds, time.Now().Format("2006-01-02"))
		if err := writeChart(f, title, chartRows(workloads, results)); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// runChildWith is runChild that calls onSynced (when not nil) once the child announces its
// steady phase on stderr (steadyMarker).
func runChildWith(ctx context.Context, self string, args []string, onSynced func() error) (childResult, error) {
	if onSynced == nil {
		return runChild(ctx, self, args)
	}
	var res childResult
	cmd := exec.CommandContext(ctx, self, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return res, err
	}
	if err := cmd.Start(); err != nil {
		return res, err
	}
	var errb strings.Builder
	burstErr := make(chan error, 1)
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		errb.WriteString(sc.Text() + "\n")
		if sc.Text() == steadyMarker {
			go func() { burstErr <- onSynced() }()
		}
	}
	if err := cmd.Wait(); err != nil {
		return res, fmt.Errorf("%v: %s", err, tail(errb.String(), 2000))
	}
	select {
	case err := <-burstErr:
		if err != nil {
			return res, fmt.Errorf("steady-phase writes: %w", err)
		}
	default:
	}
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &res); err != nil {
		return res, fmt.Errorf("result %q: %v", out.String(), err)
	}
	return res, nil
}

// runChild runs one measuring process and decodes its result line.
func runChild(ctx context.Context, self string, args []string) (childResult, error) {
	var res childResult
	cmd := exec.CommandContext(ctx, self, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return res, fmt.Errorf("%v: %s", err, tail(errb.String(), 2000))
	}
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &res); err != nil {
		return res, fmt.Errorf("result %q: %v", out.String(), err)
	}
	return res, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// burst writes n updates (an annotation on n pods, round-robin over the fleet's namespaces)
// and returns the resourceVersion from before the first: the children's events phase
// replays them from there.
func burst(ctx context.Context, cs kubernetes.Interface, n, round int, tag string) (string, error) {
	list, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: int64(n)})
	if err != nil {
		return "", err
	}
	if len(list.Items) < n {
		return "", fmt.Errorf("%d pods, the burst needs %d", len(list.Items), n)
	}
	rv := list.ResourceVersion
	items := list.Items
	errs := make(chan error, 1)
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range items {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	workers := 16
	done := make(chan struct{})
	for range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range next {
				p := &items[i]
				patch := fmt.Sprintf(`{"metadata":{"annotations":{"bench.informerkit.dev/burst":"%d-%s-%d"}}}`, round, tag, i)
				if _, err := cs.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for range workers {
		<-done
	}
	select {
	case err := <-errs:
		return "", err
	default:
	}
	return rv, nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// figure is one row of the table: a value of a child's result.
type figure struct {
	name, unit string
	get        func(childResult) float64
	events     bool
	relist     bool // from the forced-relist runs
}

var figures = []figure{
	{"time to sync", "s", func(r childResult) float64 { return r.SyncSeconds }, false, false},
	{"process CPU to sync", "s", func(r childResult) float64 { return r.SyncCPUSeconds }, false, false},
	{"live heap per object", "B", func(r childResult) float64 { return r.HeapPerObject }, false, false},
	{"events/s through a handler", "/s", func(r childResult) float64 {
		if r.EventsSeconds == 0 {
			return 0
		}
		return float64(r.Events) / r.EventsSeconds
	}, true, false},
	{"process CPU per 1000 events", "s", func(r childResult) float64 {
		if r.Events == 0 {
			return 0
		}
		return r.EventsCPUSeconds * 1000 / float64(r.Events)
	}, true, false},
	{"peak heap in use during sync", "MB", func(r childResult) float64 { return r.PeakHeapSync / 1e6 }, false, false},
	{"live heap once synced", "MB", func(r childResult) float64 { return r.SteadyHeap / 1e6 }, false, false},
	{"peak heap during sync / live heap", "x", func(r childResult) float64 { return r.PeakHeapSync / r.SteadyHeap }, false, false},
	{"peak RSS after sync (VmHWM)", "MB", func(r childResult) float64 { return r.PeakRSSSync / 1e6 }, false, false},
	{"peak heap in use while updates flow (steady)", "MB", func(r childResult) float64 { return r.PeakHeapSteady / 1e6 }, false, true},
	{"peak heap, sync / steady", "x", func(r childResult) float64 { return ratioOf(r.PeakHeapSync, r.PeakHeapSteady) }, false, true},
	{"peak heap in use during a forced relist", "MB", func(r childResult) float64 { return r.PeakHeapRelist / 1e6 }, false, true},
	{"peak heap, relist / steady", "x", func(r childResult) float64 { return ratioOf(r.PeakHeapRelist, r.PeakHeapSteady) }, false, true},
	{"peak heap during relist / live heap", "x", func(r childResult) float64 { return r.PeakHeapRelist / r.SteadyHeap }, false, true},
	{"time to relist", "s", func(r childResult) float64 { return r.RelistSeconds }, false, true},
	{"process CPU to relist", "s", func(r childResult) float64 { return r.RelistCPUSeconds }, false, true},
}

// printTable prints, per workload and figure, the medians of each implementation and its
// ratio to client-go's (below 1 is better for times and bytes, above 1 for rates).
func printTable(w io.Writer, workloads []workload, impls []string, results map[string][]childResult) {
	cols := []string{"client-go"}
	for _, impl := range impls {
		if impl != "client-go" {
			cols = append(cols, impl)
		}
	}
	head, rule := "| workload | figure |", "|---|---|"
	for _, c := range cols {
		head += " " + c + " (median) |"
		rule += "---:|"
	}
	for _, c := range cols[1:] {
		head += " " + c + " / client-go |"
		rule += "---:|"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, rule)
	ratio := func(a, b float64) string {
		if b == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f×", a/b)
	}
	for _, wl := range workloads {
		for _, f := range figures {
			if f.events && !wl.replay || f.relist && !wl.relist {
				continue
			}
			vals := map[string]float64{}
			line := fmt.Sprintf("| %s | %s |", wl.name, f.name)
			for _, impl := range cols {
				var xs []float64
				key := wl.name + "/impl=" + impl
				if f.relist {
					key += "/relist"
				}
				for _, r := range results[key] {
					xs = append(xs, f.get(r))
				}
				vals[impl] = median(xs)
				line += " " + format(vals[impl], f.unit) + " |"
			}
			for _, impl := range cols[1:] {
				line += " " + ratio(vals[impl], vals["client-go"]) + " |"
			}
			fmt.Fprintln(w, line)
		}
	}
}

func format(v float64, unit string) string {
	switch unit {
	case "s":
		return fmt.Sprintf("%.2f s", v)
	case "B":
		return strings.TrimSpace(fmt.Sprintf("%.0f B", v))
	case "/s":
		return fmt.Sprintf("%.0f/s", v)
	case "MB":
		return fmt.Sprintf("%.0f MB", v)
	case "x":
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprint(v)
}

// writerClientset is the clientset that seeds and updates the fleet: client-side rate limits
// far above what the server takes, so that the writes measure the server, not the limiter.
func dynamicClient(kubeconfig string) (dynamic.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 2000, 4000
	return dynamic.NewForConfig(cfg)
}

func writerClientset(kubeconfig string) (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 2000, 4000
	return kubernetes.NewForConfig(cfg)
}

// chartRows are the chart's figures: informerkit (its defaults) against client-go (its
// defaults; its dynamic informer for custom resources).
func chartRows(workloads []workload, results map[string][]childResult) []chartRow {
	charted := map[string]bool{"time to sync": true, "process CPU to sync": true, "live heap per object": true,
		"process CPU per 1000 events": true, "events/s through a handler": true, "peak heap in use during sync": true,
		"peak heap in use during a forced relist": true}
	var rows []chartRow
	for _, wl := range workloads {
		for _, f := range figures {
			if !charted[f.name] || f.events && !wl.replay || f.relist && !wl.relist {
				continue
			}
			val := func(impl string) float64 {
				key := wl.name + "/impl=" + impl
				if f.relist {
					key += "/relist"
				}
				var xs []float64
				for _, r := range results[key] {
					xs = append(xs, f.get(r))
				}
				return median(xs)
			}
			rows = append(rows, chartRow{label: wl.name + ": " + f.name, clientGo: val("client-go"), ours: val("informerkit"),
				unit: f.unit, higherIsBetter: f.unit == "/s"})
		}
	}
	return rows
}

func ratioOf(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
