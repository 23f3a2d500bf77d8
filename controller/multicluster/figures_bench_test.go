package multicluster_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/multicluster"
	"github.com/informerkit/informerkit/internal/testobj"
)

// processCPU returns the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEngageCluster measures the engagement of one cluster (an apitest server over
// loopback TLS holding one ConfigMap) by a Fleet with one controller watching ConfigMaps:
// engage-ms from the Provider's Set to the cluster engaged (its clients and informer made
// and started, no request waited for); synced-ms to its caches synced (the TLS handshake,
// the list and the watch); reconciled-ms to its ConfigMap reconciled. Each op then
// disengages it. With the shared transport (the default) an op's client may reuse the
// connection of the previous op's, not yet torn down; with SeparateTransports each op opens
// its own (TCP and TLS handshakes included in synced-ms).
func BenchmarkEngageCluster(b *testing.B) {
	for _, separate := range []bool{false, true} {
		b.Run(fmt.Sprintf("separate=%t", separate), func(b *testing.B) { benchmarkEngage(b, separate) })
	}
}

func benchmarkEngage(b *testing.B, separate bool) {
	hub := apitest.NewServerWithOptions(apitest.Options{InMemory: true})
	defer hub.Close()
	member, err := apitest.Start(apitest.Options{TLS: true, RequestLogSize: requestLog})
	if err != nil {
		b.Fatal(err)
	}
	defer member.Close()
	if _, err := member.Create("configmaps", testobj.NewConfigMap("default", "cm", nil)); err != nil {
		b.Fatal(err)
	}
	cf := startCostFleet(b, hub, multicluster.Options{SeparateTransports: separate})
	defer cf.stop()
	cfg := member.Config()
	var engage, synced, reconciled time.Duration
	cpu0 := processCPU()
	b.ResetTimer()
	for i := range b.N {
		name := fmt.Sprintf("c%d", i)
		start := time.Now()
		if err := cf.provider.Set(name, cfg); err != nil {
			b.Fatal(err)
		}
		for {
			changed := cf.fleet.Changed()
			if _, ok := cf.fleet.Cluster(name); ok {
				break
			}
			<-changed
		}
		engage += time.Since(start)
		var sawSync bool
		for {
			changed := cf.fleet.Changed()
			st, _ := cf.ctrl.ClusterStats(name)
			if st.Synced && !sawSync {
				synced += time.Since(start)
				sawSync = true
			}
			if st.Synced && st.Succeeded >= 1 {
				reconciled += time.Since(start)
				break
			}
			select {
			case <-changed:
			case <-time.After(100 * time.Microsecond): // the stats change without a signal
			}
		}
		cf.provider.Remove(name)
		for {
			changed := cf.fleet.Changed()
			if _, ok := cf.fleet.Cluster(name); !ok {
				break
			}
			<-changed
		}
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(engage.Microseconds())/n/1000, "engage-ms")
	b.ReportMetric(float64(synced.Microseconds())/n/1000, "synced-ms")
	b.ReportMetric(float64(reconciled.Microseconds())/n/1000, "reconciled-ms")
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/n/1000, "cpu-ms/op")
}

// BenchmarkOutageP99 measures whether one cluster's outage delays another's reconciles:
// two clusters, a and b, each on an in-memory network of its own, and a hub whose
// ConfigMaps are each a Request of both (WatchHub, as fleetcopy); each reconcile reads its
// cluster's namespace (the clients' rate limit off). A round creates 100 hub ConfigMaps
// 5 ms apart and ends when a has reconciled all of them; the figure is the p99 of a's
// event-to-reconcile (the hub ConfigMap's creation to the start of a's reconcile), over
// rounds with b healthy, rounds with b partitioned (its request hangs until the 2 s request
// deadline, then it is marked down) and rounds with b hostile (its server takes b's first
// request of the round and never answers it, while it answers everything else: watches,
// /readyz), interleaved (healthy, partitioned, healthy, hostile...), -outage.rounds (10) of
// each outage and twice as many healthy ones. All apitest, in one process.
func BenchmarkOutageP99(b *testing.B) {
	const events = 100
	for range b.N {
		lat, cpu, wall := outageRun(b, *outageRounds, events)
		pct := func(d []time.Duration, p int) float64 {
			slices.Sort(d)
			return float64(d[len(d)*p/100].Microseconds()) / 1000
		}
		pn := pct(lat[roundHealthy], 99)
		b.ReportMetric(pn, "p99-healthy-ms")
		b.ReportMetric(pct(lat[roundHealthy], 50), "p50-healthy-ms")
		for _, k := range []roundKind{roundPartitioned, roundHostile} {
			po := pct(lat[k], 99)
			b.ReportMetric(po, "p99-"+k.String()+"-ms")
			b.ReportMetric(pct(lat[k], 50), "p50-"+k.String()+"-ms")
			b.ReportMetric(po/pn, k.String()+"/healthy")
		}
		b.ReportMetric(cpu.Seconds(), "cpu-s")
		b.ReportMetric(wall.Seconds(), "wall-s")
	}
}

// outageRounds is the number of rounds of each outage of BenchmarkOutageP99 (twice as many
// healthy ones).
var outageRounds = flag.Int("outage.rounds", 10, "BenchmarkOutageP99: rounds of each outage")

// outageVerbose logs a's reconciles of BenchmarkOutageP99 that took over 1 ms.
var outageVerbose = flag.Bool("outage.v", false, "BenchmarkOutageP99: log a's reconciles slower than 1 ms")

// roundKind is what b does during a round of BenchmarkOutageP99.
type roundKind int

const (
	roundHealthy roundKind = iota
	roundPartitioned
	roundHostile
)

func (k roundKind) String() string {
	return [...]string{"healthy", "partitioned", "hostile"}[k]
}

// outageRun runs the rounds of BenchmarkOutageP99 and returns a's latencies by the kind of
// round.
func outageRun(b *testing.B, rounds, events int) (lat map[roundKind][]time.Duration, cpu, wall time.Duration) {
	lat = map[roundKind][]time.Duration{}
	hub := apitest.NewServerWithOptions(apitest.Options{InMemory: true})
	defer hub.Close()
	nets := map[string]*apitest.Network{"a": apitest.NewNetwork(), "b": apitest.NewNetwork()}
	servers := map[string]*apitest.Server{}
	for name, n := range nets {
		s, err := apitest.Start(apitest.Options{Network: n, RequestLogSize: requestLog})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		servers[name] = s
	}
	var mu sync.Mutex
	created := map[string]time.Time{}
	seen := map[string]time.Duration{} // a's first reconcile of each hub ConfigMap
	bDone := map[string]bool{}
	r := multicluster.ReconcilerFunc(func(ctx context.Context, cl *multicluster.Cluster, req multicluster.Request) (controller.Result, error) {
		at := time.Now()
		if cl.Name() == "a" {
			mu.Lock()
			if _, ok := seen[req.Name]; !ok {
				if t0, ok := created[req.Name]; ok {
					seen[req.Name] = at.Sub(t0)
				}
			}
			mu.Unlock()
		}
		if _, err := cl.APIClient().Do(ctx, apiclient.Request{Path: "/api/v1/namespaces/default"}); err != nil {
			return controller.Result{}, err
		}
		if cl.Name() == "b" {
			mu.Lock()
			bDone[req.Name] = true
			mu.Unlock()
		}
		return controller.Result{}, nil
	})
	provider := multicluster.NewManual()
	for name, s := range servers {
		cfg := s.Config()
		cfg.QPS = -1 // the client's rate limit (50/s by default) is not what is measured
		if err := provider.Set(name, cfg); err != nil {
			b.Fatal(err)
		}
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	mgr, err := controller.NewManager(hub.Config(), controller.ManagerOptions{Kinds: testobj.NewRegistry(), Logger: quiet, SkipPermissionCheck: true})
	if err != nil {
		b.Fatal(err)
	}
	fleet, err := multicluster.New(mgr, provider, multicluster.Options{RequestTimeout: 2 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	ctrl, err := multicluster.NewController(fleet, "outage", r, multicluster.ControllerOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if err := multicluster.WatchHubWithOptions(ctrl, controller.EnqueueRequestForObject[*testobj.ConfigMap](),
		multicluster.WatchOptions[*testobj.ConfigMap]{Informer: controller.InformerOptions{Namespace: "default"}}); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}()
	waitFor := func(what string, cond func() bool) {
		deadline := time.Now().Add(time.Minute)
		for !cond() {
			if time.Now().After(deadline) {
				b.Fatalf("waiting for %s", what)
			}
			time.Sleep(time.Millisecond) // polls the state waited for
		}
	}
	waitFor("both clusters synced", func() bool {
		sa, _ := ctrl.ClusterStats("a")
		sb, _ := ctrl.ClusterStats("b")
		return sa.Synced && sb.Synced
	})
	cpu0, wall0 := processCPU(), time.Now()
	for round := range 4 * rounds {
		kind := [...]roundKind{roundHealthy, roundPartitioned, roundHealthy, roundHostile}[round%4]
		var heal func()
		switch kind {
		case roundPartitioned:
			heal = nets["b"].Partition()
		case roundHostile:
			if err := servers["b"].Faults().HangRequests(apitest.VerbGet, "namespaces", 1); err != nil {
				b.Fatal(err)
			}
		}
		var names []string
		for i := range events {
			name := fmt.Sprintf("r%02d-e%03d", round, i)
			names = append(names, name)
			mu.Lock()
			created[name] = time.Now()
			mu.Unlock()
			if _, err := hub.Create("configmaps", testobj.NewConfigMap("default", name, nil)); err != nil {
				b.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond) // the events' pace
		}
		waitFor("a's reconciles", func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, n := range names {
				if _, ok := seen[n]; !ok {
					return false
				}
			}
			return true
		})
		mu.Lock()
		for _, n := range names {
			lat[kind] = append(lat[kind], seen[n])
			if *outageVerbose && seen[n] > time.Millisecond {
				b.Logf("%s round %d: %s reconciled by a after %v", kind, round, n, seen[n])
			}
		}
		mu.Unlock()
		if heal != nil {
			heal()
		}
		// b catches up before the next round, so that each round starts alike.
		waitFor("b's reconciles", func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, n := range names {
				if !bDone[n] {
					return false
				}
			}
			return true
		})
	}
	return lat, processCPU() - cpu0, time.Since(wall0)
}
