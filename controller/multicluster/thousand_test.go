package multicluster_test

import (
	"fmt"
	"runtime"
	"testing"
	"testing/synctest"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller/multicluster"
)

// A thousand clusters in one process (an apitest server each, in fake time): all engaged,
// each one's ConfigMap reconciled once, then all removed, leaving the goroutines as they
// were before the first was added. Under -race (or -short) a hundred.
func TestAThousandClusters(t *testing.T) {
	n := 1000
	if raceEnabled || testing.Short() {
		n = 100
	}
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		e := startFleet(t, multicluster.Options{}, multicluster.ControllerOptions{}, rec)
		var servers []*apitest.Server
		for i := range n {
			servers = append(servers, member(t, fmt.Sprintf("cluster-%04d", i)))
		}
		synctest.Wait()
		g0, h0 := bubbleGoroutines(), heapInUse()
		for i, s := range servers {
			if err := e.provider.Set(fmt.Sprintf("cluster-%04d", i), s.Config()); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if got := len(e.fleet.Clusters()); got != n {
			t.Fatalf("%d clusters engaged, want %d", got, n)
		}
		if got := len(rec.requests()); got != n {
			t.Fatalf("%d Requests reconciled, want %d", got, n)
		}
		for i := range n {
			name := fmt.Sprintf("cluster-%04d", i)
			if st, _ := e.ctrl.ClusterStats(name); !st.Synced || st.Succeeded != 1 {
				t.Fatalf("%s: %+v", name, st)
			}
		}
		g1, h1 := bubbleGoroutines(), heapInUse()
		perG, perH := float64(g1-g0)/float64(n), float64(int64(h1)-int64(h0))/float64(n)
		t.Logf("%d idle engaged clusters: %.1f goroutines and %.0f KiB of live heap per cluster (the client's, and its apitest server's for its connection and watch)",
			n, perG, perH/1024)
		// Issue 34's targets per idle engaged cluster with one informer, which hold here
		// even with the server's side counted.
		if perG > 20 || perH > 1<<20 {
			t.Errorf("an idle engaged cluster costs %.1f goroutines and %.0f KiB: over 20 goroutines or 1 MiB", perG, perH/1024)
		}
		for i := range n {
			e.provider.Remove(fmt.Sprintf("cluster-%04d", i))
		}
		synctest.Wait()
		if got := len(e.fleet.Clusters()); got != 0 {
			t.Fatalf("%d clusters engaged after all were removed", got)
		}
		for _, s := range servers {
			if w := len(s.Watches("configmaps")); w != 0 {
				t.Fatalf("a server has %d watches after its cluster was removed", w)
			}
		}
		if g2 := bubbleGoroutines(); g2 != g0 {
			t.Errorf("%d goroutines after every cluster was removed, %d before they were added", g2, g0)
		}
		runtime.KeepAlive(servers)
	})
}
