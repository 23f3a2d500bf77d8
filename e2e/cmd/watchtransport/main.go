// Command watchtransport measures what informerkit's two watch transports cost on the real
// kube-apiserver: N informers whose watches each open a WebSocket connection (apiclient's
// WatchWebSocket, and WatchAuto's first choice) against N informers whose chunked watches
// share one HTTP/2 connection (WatchChunked over TLS, which is how client-go watches).
//
// For each N it starts the informers (one per namespace, on configmaps), waits until every
// watch delivers, then for -duration updates one ConfigMap per tick (-rate a second, round
// robin over the N namespaces) and records: the TCP connections the informers' client holds
// to kube-apiserver, kube-apiserver's CPU time and its goroutines, heap in use and RSS, and
// the client's CPU time. A run without informers (the writes alone) gives the baseline. The
// modes are interleaved and rotated from one run to the next so that machine noise spreads
// over all of them; medians over -runs are printed.
//
//	cd e2e && E2E_BIN_DIR=../bin go run ./cmd/watchtransport -informers 1,10,50,100 -runs 3
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/informerkit/informerkit/meta"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/e2e/cluster"
	"github.com/informerkit/informerkit/informer"
)

// ConfigMap is the part of a ConfigMap the informers decode.
type ConfigMap struct {
	meta.TypeMeta
	meta.ObjectMeta `json:"metadata"`
	Data            map[string]string `json:"data,omitempty"`
}

var configMaps = meta.GroupVersionResource{Version: "v1", Resource: "configmaps"}

type mode struct {
	name  string
	proto apiclient.WatchProtocol
	none  bool // no informers: the writes alone
}

var modes = []mode{
	{name: "none", none: true},
	{name: "websocket", proto: apiclient.WatchWebSocket},
	{name: "http2", proto: apiclient.WatchChunked},
}

// sample is one measurement window.
type sample struct {
	conns                     int
	apiCPU, clientCPU         time.Duration
	setupCPU, setupWall       time.Duration // informers started until every watch delivers
	goroutines, heapMB, rssMB float64
	events, expected          int
}

func main() {
	var (
		informersFlag = flag.String("informers", "1,10,50,100", "numbers of informers, comma-separated")
		duration      = flag.Duration("duration", 20*time.Second, "measurement window per mode and N")
		rate          = flag.Int("rate", 20, "ConfigMap updates per second during the window")
		runs          = flag.Int("runs", 3, "repetitions (modes interleaved, medians printed)")
		restart       = flag.Int("restart", 0, "instead: restart kube-apiserver under this many informers per transport, -runs times")
		apiArgs       []string
	)
	flag.Func("apiserver-arg", "extra kube-apiserver flag (repeatable)", func(v string) error { apiArgs = append(apiArgs, v); return nil })
	flag.Parse()
	var ns []int
	for _, f := range strings.Split(*informersFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fatal(fmt.Errorf("-informers: %q", f))
		}
		ns = append(ns, n)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := cluster.Start(ctx, cluster.Options{ExtraAPIServerArgs: apiArgs})
	if err != nil {
		fatal(err)
	}
	if *restart > 0 {
		err = runRestarts(ctx, c, *restart, *runs)
	} else {
		err = run(ctx, c, ns, *duration, *rate, *runs)
	}
	c.Stop()
	c.Cleanup()
	if err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "watchtransport:", err)
	os.Exit(1)
}

func run(ctx context.Context, c *cluster.Cluster, ns []int, d time.Duration, rate, runs int) error {
	pid := c.APIServerPID()
	u, err := url.Parse(c.URL)
	if err != nil {
		return err
	}
	port, _ := strconv.Atoi(u.Port())
	admin, err := newClient(c, apiclient.WatchChunked)
	if err != nil {
		return err
	}
	defer admin.Close()
	maxN := slices.Max(ns)
	for i := range maxN {
		if err := setup(ctx, admin, i); err != nil {
			return err
		}
	}
	results := map[string][]sample{} // "mode/N"
	for r := range runs {
		for _, n := range ns {
			for k := range modes {
				m := modes[(k+r)%len(modes)]
				s, err := measure(ctx, c, admin, pid, port, m, n, d, rate)
				if err != nil {
					return fmt.Errorf("%s N=%d: %w", m.name, n, err)
				}
				key := fmt.Sprintf("%s/%d", m.name, n)
				results[key] = append(results[key], s)
				fmt.Fprintf(os.Stderr, "run %d %-9s N=%-3d conns=%-3d setup %5.2fs apiserver cpu=%5.2fs | window apiserver cpu=%6.2fs goroutines=%5.0f heap=%6.1fMB rss=%6.1fMB client cpu=%5.2fs events=%d/%d\n",
					r+1, m.name, n, s.conns, s.setupWall.Seconds(), s.setupCPU.Seconds(), s.apiCPU.Seconds(), s.goroutines, s.heapMB, s.rssMB, s.clientCPU.Seconds(), s.events, s.expected)
			}
		}
	}
	fmt.Printf("\nmedians of %d runs; window %v at up to %d updates/s (the writes a loaded machine managed are counted); "+
		"apiserver CPU per 1000 writes in the window, and over the writes-only baseline\n\n", runs, d, rate)
	fmt.Println("| informers | transport | TCP connections | start: wall s | start: apiserver CPU s | apiserver CPU ms / 1000 writes | over baseline | apiserver goroutines | apiserver heap MB | apiserver RSS MB | client CPU ms / 1000 events | events delivered |")
	fmt.Println("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	perK := func(d time.Duration, n int) float64 { return d.Seconds() * 1e6 / float64(max(n, 1)) }
	for _, n := range ns {
		base := median(results[fmt.Sprintf("none/%d", n)], func(s sample) float64 { return perK(s.apiCPU, s.expected) })
		for _, m := range modes {
			ss := results[fmt.Sprintf("%s/%d", m.name, n)]
			cpu := median(ss, func(s sample) float64 { return perK(s.apiCPU, s.expected) })
			fmt.Printf("| %d | %s | %.0f | %.2f | %.2f | %.0f | %.0f | %.0f | %.1f | %.1f | %.0f | %.0f/%.0f |\n", n, m.name,
				median(ss, func(s sample) float64 { return float64(s.conns) }),
				median(ss, func(s sample) float64 { return s.setupWall.Seconds() }),
				median(ss, func(s sample) float64 { return s.setupCPU.Seconds() }),
				cpu, cpu-base,
				median(ss, func(s sample) float64 { return s.goroutines }),
				median(ss, func(s sample) float64 { return s.heapMB }),
				median(ss, func(s sample) float64 { return s.rssMB }),
				median(ss, func(s sample) float64 { return perK(s.clientCPU, s.events) }),
				median(ss, func(s sample) float64 { return float64(s.events) }),
				median(ss, func(s sample) float64 { return float64(s.expected) }))
		}
	}
	return nil
}

func median(ss []sample, f func(sample) float64) float64 {
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func newClient(c *cluster.Cluster, proto apiclient.WatchProtocol) (*apiclient.Client, error) {
	cfg, err := apiclient.LoadConfigWithOptions(apiclient.LoadOptions{Kubeconfig: c.KubeconfigPath})
	if err != nil {
		return nil, err
	}
	cfg.WatchProtocol = proto
	cfg.QPS = -1
	return apiclient.New(cfg)
}

func nsName(i int) string { return fmt.Sprintf("watchtransport-%d", i) }

// setup creates namespace i and its ConfigMap (both may exist from an earlier run).
func setup(ctx context.Context, c *apiclient.Client, i int) error {
	nsRes := apiclient.NewResource[*meta.Unstructured](c, meta.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	nsObj := &meta.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": nsName(i)}}}
	if _, err := nsRes.Create(ctx, nsObj, apiclient.CreateOptions{}); err != nil && !meta.IsAlreadyExists(err) {
		return err
	}
	cm := &ConfigMap{TypeMeta: meta.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta.ObjectMeta{Name: "cm", Namespace: nsName(i)}, Data: map[string]string{"v": "0"}}
	_, err := apiclient.NewResource[*ConfigMap](c, configMaps).Namespace(nsName(i)).Create(ctx, cm, apiclient.CreateOptions{})
	if err != nil && !meta.IsAlreadyExists(err) {
		return err
	}
	return nil
}

var writes atomic.Int64

func update(ctx context.Context, c *apiclient.Client, i int) error {
	patch := fmt.Sprintf(`{"data":{"v":"%d"}}`, writes.Add(1))
	_, err := apiclient.NewResource[*ConfigMap](c, configMaps).Namespace(nsName(i)).
		Patch(ctx, "cm", apiclient.MergePatchType, []byte(patch), apiclient.PatchOptions{})
	return err
}

func measure(ctx context.Context, c *cluster.Cluster, admin *apiclient.Client, pid, port int, m mode, n int, d time.Duration, rate int) (sample, error) {
	// The admin client's connection is open (setup and earlier windows used it).
	if err := update(ctx, admin, 0); err != nil {
		return sample{}, err
	}
	base, err := countConns(port)
	if err != nil {
		return sample{}, err
	}
	var events atomic.Int64
	var wg sync.WaitGroup
	runCtx, cancel := context.WithCancel(ctx)
	var client *apiclient.Client
	defer func() {
		cancel()
		wg.Wait()
		if client != nil {
			client.Close()
		}
	}()
	setup0, err := procCPU(pid)
	if err != nil {
		return sample{}, err
	}
	setupStart := time.Now()
	if !m.none {
		client, err = newClient(c, m.proto)
		if err != nil {
			return sample{}, err
		}
		seen := make([]atomic.Int64, n)
		infs := make([]*informer.Informer[*ConfigMap], n)
		for i := range n {
			inf := informer.New[*ConfigMap](apiclient.NewResource[*ConfigMap](client, configMaps).Namespace(nsName(i)),
				informer.Options[*ConfigMap]{Logger: slog.New(slog.DiscardHandler)})
			if _, err := inf.AddEventHandler(informer.ResourceEventHandlerFuncs[*ConfigMap]{
				UpdateFunc: func(_, _ *ConfigMap) { seen[i].Add(1); events.Add(1) },
			}); err != nil {
				return sample{}, err
			}
			infs[i] = inf
			wg.Go(func() { inf.Run(runCtx) })
		}
		for _, inf := range infs {
			select {
			case <-inf.Synced():
			case <-time.After(2 * time.Minute):
				return sample{}, errors.New("informers did not sync")
			}
		}
		// Every watch delivers: one update per namespace, seen by its informer.
		for i := range n {
			if err := update(ctx, admin, i); err != nil {
				return sample{}, err
			}
		}
		deadline := time.Now().Add(2 * time.Minute)
		for i := range n {
			for seen[i].Load() == 0 {
				if time.Now().After(deadline) {
					return sample{}, fmt.Errorf("informer %d saw no update", i)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	setupWall := time.Since(setupStart)
	setup1, err := procCPU(pid)
	if err != nil {
		return sample{}, err
	}
	conns, err := countConns(port)
	if err != nil {
		return sample{}, err
	}
	conns -= base
	events.Store(0)
	api0, err := procCPU(pid)
	if err != nil {
		return sample{}, err
	}
	cl0 := selfCPU()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	expected := 0
	for start := time.Now(); time.Since(start) < d; {
		<-tick.C
		if err := update(ctx, admin, expected%n); err != nil {
			tick.Stop()
			return sample{}, err
		}
		expected++
	}
	tick.Stop()
	api1, err := procCPU(pid)
	if err != nil {
		return sample{}, err
	}
	s := sample{conns: conns, apiCPU: api1 - api0, clientCPU: selfCPU() - cl0, expected: expected,
		setupCPU: setup1 - setup0, setupWall: setupWall}
	// Let the last events arrive before counting them.
	for i := 0; !m.none && i < 200 && int(events.Load()) < s.expected; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	s.events = int(events.Load())
	s.rssMB, err = procRSSMB(pid)
	if err != nil {
		return sample{}, err
	}
	metrics, err := scrape(ctx, c, "go_goroutines", "go_memstats_heap_inuse_bytes")
	if err != nil {
		return sample{}, err
	}
	s.goroutines, s.heapMB = metrics[0], metrics[1]/(1<<20)
	return s, nil
}

// countConns counts this process's established TCP connections to port.
func countConns(port int) (int, error) {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	n := 0
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "01" { // ESTABLISHED
				continue
			}
			remote := fields[2]
			p, err := strconv.ParseInt(remote[strings.LastIndexByte(remote, ':')+1:], 16, 32)
			if err == nil && int(p) == port && inodes[fields[9]] {
				n++
			}
		}
		f.Close()
	}
	return n, nil
}

// procCPU returns the user+system CPU time of process pid (clock ticks of 10 ms).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	rest := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(rest[11], 10, 64)
	stime, _ := strconv.ParseInt(rest[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

func procRSSMB(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024, err
		}
	}
	return 0, errors.New("no VmRSS")
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// scrape reads unlabelled gauges from kube-apiserver's /metrics.
func scrape(ctx context.Context, c *cluster.Cluster, names ...string) ([]float64, error) {
	req, err := newRequest(ctx, c.URL+"/metrics")
	if err != nil {
		return nil, err
	}
	resp, err := c.HTTPClient().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(names))
	for _, line := range strings.Split(string(b), "\n") {
		for i, name := range names {
			if v, ok := strings.CutPrefix(line, name+" "); ok {
				out[i], _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
			}
		}
	}
	return out, nil
}

func newRequest(ctx context.Context, u string) (*http.Request, error) {
	return http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
}

// runRestarts restarts kube-apiserver (SIGTERM, wait for the exit, start again on the same
// port) under n informers of each transport, and records how long the old process took to
// exit (the harness kills it after 30 s), how long until every informer delivered an event
// written after the restart, and what the reflectors counted meanwhile.
func runRestarts(ctx context.Context, c *cluster.Cluster, n, runs int) error {
	admin, err := newClient(c, apiclient.WatchChunked)
	if err != nil {
		return err
	}
	defer admin.Close()
	for i := range n {
		if err := setup(ctx, admin, i); err != nil {
			return err
		}
	}
	fmt.Println("| transport | run | kube-apiserver exit after SIGTERM | all informers current again | relists | connections lost |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for r := range runs {
		for k := range 2 {
			m := modes[1+(k+r)%2]
			if err := restartOnce(ctx, c, admin, m, n, r+1); err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
		}
	}
	return nil
}

func restartOnce(ctx context.Context, c *cluster.Cluster, admin *apiclient.Client, m mode, n, run int) error {
	client, err := newClient(c, m.proto)
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
		client.Close()
	}()
	seen := make([]atomic.Int64, n)
	infs := make([]*informer.Informer[*ConfigMap], n)
	for i := range n {
		inf := informer.New[*ConfigMap](apiclient.NewResource[*ConfigMap](client, configMaps).Namespace(nsName(i)),
			informer.Options[*ConfigMap]{Logger: slog.New(slog.DiscardHandler)})
		if _, err := inf.AddEventHandler(informer.ResourceEventHandlerFuncs[*ConfigMap]{
			UpdateFunc: func(_, _ *ConfigMap) { seen[i].Add(1) },
		}); err != nil {
			return err
		}
		infs[i] = inf
		wg.Go(func() { inf.Run(runCtx) })
	}
	allSee := func(deadline time.Time) error {
		for i := range n {
			seen[i].Store(0)
		}
		for i := range n {
			for {
				err := update(ctx, admin, i)
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					return err
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		for i := range n {
			for seen[i].Load() == 0 {
				if time.Now().After(deadline) {
					return fmt.Errorf("informer %d saw no update", i)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		return nil
	}
	for _, inf := range infs {
		<-inf.Synced()
	}
	if err := allSee(time.Now().Add(2 * time.Minute)); err != nil {
		return err
	}
	relists0, lost0 := 0, 0
	for _, inf := range infs {
		st := inf.Stats().Reflector
		relists0 += int(st.Relists)
		lost0 += int(st.ConnectionsLost)
	}
	t0 := time.Now()
	stopErr := c.StopAPIServer()
	exit := time.Since(t0)
	note := ""
	if stopErr != nil {
		note = " (killed)"
	}
	if err := c.StartAPIServer(ctx); err != nil {
		return err
	}
	if err := allSee(time.Now().Add(3 * time.Minute)); err != nil {
		return err
	}
	current := time.Since(t0)
	relists, lost := -relists0, -lost0
	for _, inf := range infs {
		st := inf.Stats().Reflector
		relists += int(st.Relists)
		lost += int(st.ConnectionsLost)
	}
	fmt.Printf("| %s | %d | %.1f s%s | %.1f s | %d | %d |\n", m.name, run, exit.Seconds(), note, current.Seconds(), relists, lost)
	return nil
}
