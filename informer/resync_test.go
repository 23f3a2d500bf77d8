package informer

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/deltafifo"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// resyncCounter counts the resync updates (old and new with the same resourceVersion) and
// the other calls it gets.
type resyncCounter struct {
	mu      sync.Mutex
	resyncs map[string]int
	others  int
}

func (r *resyncCounter) OnAdd(*testobj.ConfigMap, bool) {}
func (r *resyncCounter) OnUpdate(old, o *testobj.ConfigMap) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old.ResourceVersion == o.ResourceVersion {
		if r.resyncs == nil {
			r.resyncs = map[string]int{}
		}
		r.resyncs[o.Name]++
	} else {
		r.others++
	}
}
func (r *resyncCounter) OnDelete(*testobj.ConfigMap, bool) {}

func (r *resyncCounter) get() (map[string]int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.resyncs {
		out[k] = v
	}
	return out, r.others
}

func cm(name, rv string) *testobj.ConfigMap {
	return &testobj.ConfigMap{ObjectMeta: meta.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv}}
}

// TestResyncIsPerHandler drives an informer's cache by hand (handleDeltas; it is never Run,
// so no network is involved) and checks with synctest's clock that each handler is resynced
// on its own period, that periods below a second are raised to one, that handlers without a
// period get nothing, and that an unchanged object from a relist reaches no handler.
func TestResyncIsPerHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := apiclient.New(&apiclient.Config{Host: "http://127.0.0.1:1"})
		if err != nil {
			t.Fatal(err)
		}
		opts := Options[*testobj.ConfigMap]{Logger: discardLogger(), DefaultResyncPeriod: 2 * time.Second}
		inf := New(configMaps(c), opts)
		inf.mu.Lock()
		inf.started = true // drive by hand, as Run would after starting the reflector
		inf.mu.Unlock()

		fast, slow, none, dflt := &resyncCounter{}, &resyncCounter{}, &resyncCounter{}, &resyncCounter{}
		regFast, _ := inf.AddEventHandlerWithResyncPeriod(fast, 300*time.Millisecond)
		regSlow, _ := inf.AddEventHandlerWithResyncPeriod(slow, 3*time.Second)
		regNone, _ := inf.AddEventHandlerWithResyncPeriod(none, 0)
		regDflt, _ := inf.AddEventHandler(dflt)
		if regFast.ResyncPeriod() != MinimumResyncPeriod || regNone.ResyncPeriod() != 0 || regDflt.ResyncPeriod() != 2*time.Second {
			t.Fatalf("periods: %v %v %v", regFast.ResyncPeriod(), regNone.ResyncPeriod(), regDflt.ResyncPeriod())
		}
		for _, o := range []*testobj.ConfigMap{cm("a", "1"), cm("b", "2")} {
			if err := inf.handleDeltas(deltafifo.Deltas[*testobj.ConfigMap]{{Type: deltafifo.Replaced, Object: o}}, true); err != nil {
				t.Fatal(err)
			}
		}
		inf.markSynced()
		ctx, cancel := context.WithCancel(context.Background())
		loopDone := make(chan struct{})
		go func() { inf.resyncLoop(ctx); close(loopDone) }()

		time.Sleep(3*time.Second + 500*time.Millisecond)
		synctest.Wait()
		check := func(name string, h *resyncCounter, want int) {
			t.Helper()
			got, others := h.get()
			if got["a"] != want || got["b"] != want || others != 0 {
				t.Errorf("%s: resyncs %v (others %d), want %d per object", name, got, others, want)
			}
		}
		check("fast (1s)", fast, 3)
		check("slow (3s)", slow, 1)
		check("none", none, 0)
		check("default (2s)", dflt, 1)

		// A relist that returns an unchanged object is not an update for anyone.
		if err := inf.handleDeltas(deltafifo.Deltas[*testobj.ConfigMap]{{Type: deltafifo.Replaced, Object: cm("a", "1")}}, false); err != nil {
			t.Fatal(err)
		}
		// A changed one is, for everyone.
		if err := inf.handleDeltas(deltafifo.Deltas[*testobj.ConfigMap]{{Type: deltafifo.Updated, Object: cm("b", "3")}}, false); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		for _, h := range []*resyncCounter{fast, slow, none, dflt} {
			if _, others := h.get(); others != 1 {
				t.Errorf("handler got %d real updates, want 1", others)
			}
		}

		// A handler added later is scheduled at once.
		late := &resyncCounter{}
		regLate, _ := inf.AddEventHandlerWithResyncPeriod(late, time.Second)
		time.Sleep(time.Second)
		synctest.Wait()
		check("late (1s)", late, 1)

		cancel()
		<-loopDone
		for _, r := range []*Registration[*testobj.ConfigMap]{regFast, regSlow, regNone, regDflt, regLate} {
			if err := inf.RemoveEventHandler(r); err != nil {
				t.Fatal(err)
			}
			<-r.Done()
		}
	})
}
