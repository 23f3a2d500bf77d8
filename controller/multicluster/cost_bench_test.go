package multicluster_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/multicluster"
	"github.com/informerkit/informerkit/internal/testobj"
)

// costFleet is a hub Manager with a Fleet and one controller watching ConfigMaps, every
// goroutine of it (and of what it starts) labelled side=client, so that the goroutines of
// the apitest servers in the same process are not counted.
type costFleet struct {
	provider *multicluster.Manual
	fleet    *multicluster.Fleet
	ctrl     *multicluster.Controller
	stop     func()
}

func startCostFleet(b *testing.B, hub *apitest.Server, fopts multicluster.Options) *costFleet {
	b.Helper()
	cf := &costFleet{provider: multicluster.NewManual()}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	mgr, err := controller.NewManager(hub.Config(), controller.ManagerOptions{Kinds: testobj.NewRegistry(), Logger: quiet, SkipPermissionCheck: true})
	if err != nil {
		b.Fatal(err)
	}
	if cf.fleet, err = multicluster.New(mgr, cf.provider, fopts); err != nil {
		b.Fatal(err)
	}
	rec := &recorder{}
	rec.fn = func(context.Context, *multicluster.Cluster, multicluster.Request) (controller.Result, error) {
		return controller.Result{}, nil
	}
	rec.drop = true
	if cf.ctrl, err = multicluster.NewController(cf.fleet, "cost", rec, multicluster.ControllerOptions{}); err != nil {
		b.Fatal(err)
	}
	if err := multicluster.Watch(cf.ctrl, controller.EnqueueRequestForObject[*testobj.ConfigMap]()); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	pprof.Do(ctx, pprof.Labels("side", "client"), func(ctx context.Context) {
		go func() { done <- mgr.Start(ctx) }()
	})
	select {
	case <-cf.ctrl.Started():
	case err := <-done:
		b.Fatal(err)
	}
	cf.stop = func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}
	return cf
}

// engaged waits until cluster name is synced and its one ConfigMap reconciled.
func (cf *costFleet) engaged(b *testing.B, name string) {
	for {
		changed := cf.fleet.Changed()
		if st, ok := cf.ctrl.ClusterStats(name); ok && st.Synced && st.Succeeded >= 1 {
			return
		}
		select {
		case <-changed:
		case <-time.After(time.Millisecond):
		}
	}
}

// clientGoroutines counts the goroutines labelled side=client.
func clientGoroutines() int {
	var buf bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
	n := 0
	for _, blk := range strings.Split(buf.String(), "\n\n") {
		if strings.Contains(blk, `"side":"client"`) {
			var c int
			if _, err := fmt.Sscanf(blk, "%d @", &c); err == nil {
				n += c
			}
		}
	}
	return n
}

// BenchmarkIdleEngagedCluster measures what an idle engaged cluster with one informer
// costs the controller's process: its goroutines (the client's only) and the live heap
// (the client's and, as they share the process, the apitest server's state of its one
// watch: an upper bound), per cluster, with 200 clusters engaged. Each op engages and
// disengages one more cluster on top of them (its ns/op: engagement, list, sync, first
// reconcile, disengagement).
func BenchmarkIdleEngagedCluster(b *testing.B) {
	const n = 200
	hub := apitest.NewServerWithOptions(apitest.Options{InMemory: true})
	defer hub.Close()
	var members []*apitest.Server
	for i := range n + 1 {
		s := apitest.NewServerWithOptions(apitest.Options{InMemory: true, RequestLogSize: requestLog})
		defer s.Close()
		if _, err := s.Create("configmaps", testobj.NewConfigMap("default", fmt.Sprintf("cm-%d", i), nil)); err != nil {
			b.Fatal(err)
		}
		members = append(members, s)
	}
	cf := startCostFleet(b, hub, multicluster.Options{})
	defer cf.stop()
	time.Sleep(100 * time.Millisecond) // the hub's own start settles (not a synchronisation)
	g0, h0 := clientGoroutines(), heapInUse()
	for i := range n {
		name := fmt.Sprintf("c%03d", i)
		if err := cf.provider.Set(name, members[i].Config()); err != nil {
			b.Fatal(err)
		}
		cf.engaged(b, name)
	}
	time.Sleep(100 * time.Millisecond)
	g1, h1 := clientGoroutines(), heapInUse()

	extra := members[n]
	b.ResetTimer()
	for range b.N {
		if err := cf.provider.Set("extra", extra.Config()); err != nil {
			b.Fatal(err)
		}
		cf.engaged(b, "extra")
		cf.provider.Remove("extra")
		for {
			if _, ok := cf.fleet.Cluster("extra"); !ok {
				break
			}
			<-cf.fleet.Changed()
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(g1-g0)/n, "goroutines/cluster")
	b.ReportMetric(float64(int64(h1)-int64(h0))/n, "heap-B/cluster")
	runtime.KeepAlive(members)
}
