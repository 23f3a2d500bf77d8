package controller

import (
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
)

// settleHeap waits until the goroutines are at most want (any, if negative), then returns
// their number and the live heap after a collection.
func settleHeap(t *testing.T, want int) (int, uint64) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		runtime.GC()
		n := runtime.NumGoroutine()
		if want < 0 || n <= want {
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			return n, ms.HeapAlloc
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines stay at %d, above %d:\n%s", n, want, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond) // polls the goroutines of the stopped life
	}
}

// TestFollowCyclesLeakNothing runs a following controller through CRD create/delete cycles
// and checks that goroutines and the live heap come back to where they were after the
// warm-up: each life's queue, workers, sources, informers and metrics go with it.
func TestFollowCyclesLeakNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("200 controller lives")
	}
	// Small server-side logs and histories: the server shares the heap measured.
	srv := newTestServerWithOptions(t, apitest.Options{CRDWatchTeardownDelay: -1, RequestLogSize: 16, HistorySize: 16})
	// The log keeps warnings only: 200 lives' Info lines would be most of the growth measured.
	log := &levelLog{warnOnly: true}
	_, ctl, got := followingWidgets(t, srv, testobj.WidgetGVR, log)
	waitFor(t, "the controller to wait", func() bool { return len(ctl.Waiting()) == 1 })
	cycle := func() {
		t.Helper()
		if _, err := srv.Create(crdsName, widgetCRD(false, false)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the controller to start", ctl.Running)
		if _, err := srv.Create("widgets", widget("default", "w")); err != nil {
			t.Fatal(err)
		}
		expect(t, got, Request{Namespace: "default", Name: "w"}, "a widget")
		if err := srv.Delete(crdsName, "", "widgets.example.com"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the controller to stop", func() bool { return !ctl.Running() && len(ctl.Waiting()) == 1 })
		for len(got) > 0 {
			<-got
		}
	}
	const warm, total = 20, 220
	for range warm {
		cycle()
	}
	g0, h0 := settleHeap(t, -1)
	for i := range total - warm {
		cycle()
		if i == (total-warm)/2-1 {
			g, h := settleHeap(t, g0)
			t.Logf("half-way: goroutines %d, live heap %+d", g, int64(h)-int64(h0))
		}
	}
	g1, h1 := settleHeap(t, g0)
	grown := int64(h1) - int64(h0)
	t.Logf("after %d cycles: goroutines %d → %d, live heap %d → %d bytes (%+d, %+.0f B per cycle)",
		total-warm, g0, g1, h0, h1, grown, float64(grown)/(total-warm))
	if grown > 512*(total-warm) {
		t.Fatalf("live heap grew by %d bytes over %d cycles", grown, total-warm)
	}
	if bad := log.above(slog.LevelWarn); len(bad) > 0 {
		t.Fatalf("warnings or errors logged:\n%s", strings.Join(bad, "\n"))
	}
}
