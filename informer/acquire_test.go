package informer

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/reflector"
)

// expectPrefix fails unless h's next call starts with want.
func expectPrefix(t *testing.T, h *calls, want string) {
	t.Helper()
	if got := h.next(t); !strings.HasPrefix(got, want) {
		t.Fatalf("handler call = %q, want %q…", got, want)
	}
}

// isListed reports whether inf is one of f's informers.
func isListed(f *Factory, inf AnyInformer) bool {
	return slices.Contains(f.Informers(), inf)
}

func TestAcquireLastReleaseStopsAndDropsTheInformer(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	mkCM(t, s, "default", "a", nil)
	f := testFactory(t, c, FactoryOptions{})
	ctx := ctxT(t)

	r1 := Acquire[*testobj.ConfigMap](f, testobj.ConfigMapGVR)
	r2 := Acquire[*testobj.ConfigMap](f, testobj.ConfigMapGVR)
	inf := r1.Informer()
	if r2.Informer() != inf {
		t.Fatal("two references to the same key: two informers")
	}
	if l, ok := Lookup[*testobj.ConfigMap](f, testobj.ConfigMapGVR); !ok || l != inf {
		t.Fatal("Lookup does not find the acquired informer")
	}
	h := newCalls()
	reg, err := inf.AddEventHandler(h)
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx)
	if err := f.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}
	expectPrefix(t, h, "add default/a ")
	if _, err := s.WaitForWatches(ctx, "configmaps", 1); err != nil {
		t.Fatal(err)
	}

	// One holder leaves: the informer runs on for the other.
	r1.Release()
	r1.Release() // a second release of the same reference must not drop r2's
	if inf.IsStopped() || !isListed(f, inf) {
		t.Fatal("the informer stopped while a reference is held")
	}
	mkCM(t, s, "default", "b", nil)
	expectPrefix(t, h, "add default/b ")

	// The last one leaves: stopped, handlers done, cache empty, out of the factory, and its
	// watch gone from the server.
	if err := r2.ReleaseAndWait(ctx); err != nil {
		t.Fatal(err)
	}
	if !inf.IsStopped() {
		t.Fatal("the informer runs after its last release")
	}
	select {
	case <-reg.Done():
	default:
		t.Fatal("the handler was not stopped")
	}
	if n := inf.GetStore().Len(); n != 0 {
		t.Fatalf("the released informer still caches %d objects", n)
	}
	if isListed(f, inf) {
		t.Fatal("the released informer is still listed by the factory")
	}
	if _, ok := Lookup[*testobj.ConfigMap](f, testobj.ConfigMapGVR); ok {
		t.Fatal("Lookup finds the released informer")
	}
	if _, err := inf.AddEventHandler(newCalls()); err == nil {
		t.Fatal("a handler was added to a released informer")
	}
	if err := s.WaitFor(ctx, func() bool { return len(s.Watches("configmaps")) == 0 }); err != nil {
		t.Fatalf("the released informer's watch is still open: %v", s.Watches("configmaps"))
	}

	// Asking again gives a fresh informer, which lists again.
	lists := s.CountRequests(apitest.VerbList, "configmaps")
	r3 := Acquire[*testobj.ConfigMap](f, testobj.ConfigMapGVR)
	defer r3.Release()
	if r3.Informer() == inf {
		t.Fatal("Acquire after the last release returned the stopped informer")
	}
	f.Start(ctx)
	if err := f.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r3.Informer().Lister().Get("default", "b"); err != nil {
		t.Fatal(err)
	}
	if s.CountRequests(apitest.VerbList, "configmaps") == lists && len(s.RequestsFor(apitest.VerbWatch, "configmaps")) == 0 {
		t.Fatal("the fresh informer did not list")
	}
}

func TestInformerForPinsAgainstRelease(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	f := testFactory(t, c, FactoryOptions{})
	ctx := ctxT(t)
	ref := Acquire[*testobj.ConfigMap](f, testobj.ConfigMapGVR)
	pinned := InformerFor[*testobj.ConfigMap](f, testobj.ConfigMapGVR)
	if pinned != ref.Informer() {
		t.Fatal("InformerFor and Acquire of one key: two informers")
	}
	f.Start(ctx)
	if err := ref.ReleaseAndWait(ctx); err != nil {
		t.Fatal(err)
	}
	if pinned.IsStopped() || !isListed(f, pinned) {
		t.Fatal("releasing the last reference stopped an informer InformerFor handed out")
	}
	if err := f.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestReleaseBeforeStart(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s)
	f := testFactory(t, c, FactoryOptions{})
	ref := Acquire[*testobj.ConfigMap](f, testobj.ConfigMapGVR)
	inf := ref.Informer()
	reg, err := inf.AddEventHandler(newCalls())
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.ReleaseAndWait(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-inf.Done():
	default:
		t.Fatal("an informer released before it ran is not done")
	}
	select {
	case <-reg.Done():
	default:
		t.Fatal("its handler is not done")
	}
	f.Start(ctxT(t)) // must not run the released informer
	if inf.HasSynced() || len(f.Informers()) != 0 {
		t.Fatal("Start ran a released informer")
	}
	if got := s.CountRequests(apitest.VerbList, "configmaps"); got != 0 {
		t.Fatalf("%d LIST requests for an informer released before Start", got)
	}
}

// TestAcquireReleaseCyclesLeakNothing runs 1,000 acquire, start, sync, handle, release
// cycles on one factory and checks that goroutines and the live heap come back to where
// they were after the first 100 (warm-up: connection pools, the decoder's compiled plans).
// BenchmarkAcquireRelease measures a cycle (bench/README.md, "Informer lifecycle").
func TestAcquireReleaseCyclesLeakNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 informer lifetimes")
	}
	// A small request log: the server's log of 1,000 cycles' requests is not the client's heap.
	s := newServerWithOptions(t, apitest.Options{RequestLogSize: 16})
	c := unlimitedClient(t, s)
	for _, n := range []string{"a", "b", "c"} {
		mkCM(t, s, "default", n, map[string]string{"k": n})
	}
	f := testFactory(t, c, FactoryOptions{WatchList: reflector.WatchListOff, Logger: discardLogger()})
	ctx := ctxT(t)
	cycle := func() {
		ref := Acquire[*testobj.ConfigMap](f, testobj.ConfigMapGVR)
		h := newCalls()
		if _, err := ref.Informer().AddEventHandler(h); err != nil {
			t.Fatal(err)
		}
		f.Start(ctx)
		if err := f.WaitForCacheSync(ctx); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			h.next(t)
		}
		if err := ref.ReleaseAndWait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	const warm, total = 100, 1000
	for range warm {
		cycle()
	}
	goroutines, heap := settle(t, ctx, -1)
	for range total - warm {
		cycle()
	}
	gAfter, hAfter := settle(t, ctx, goroutines)
	grown := int64(hAfter) - int64(heap)
	t.Logf("after %d cycles: goroutines %d → %d, live heap %d → %d bytes (%+d, %+.0f B per cycle)",
		total-warm, goroutines, gAfter, heap, hAfter, grown, float64(grown)/(total-warm))
	// 256 B per cycle would be 230 KiB over the run: far above the noise of a settled heap
	// (a few KiB), far below what one leaked informer costs (its cache, reflector, listener
	// and buffers: tens of KiB).
	if grown > 256*(total-warm) {
		t.Fatalf("live heap grew by %d bytes over %d cycles", grown, total-warm)
	}
	if len(f.Informers()) != 0 {
		t.Fatalf("the factory still holds %d informers", len(f.Informers()))
	}
}

// unlimitedClient is a client of s without the client-side rate limit, which would
// otherwise space the cycles' requests (50 per second after a burst) and be all a cycle
// measures.
func unlimitedClient(t testing.TB, s *apitest.Server) *apiclient.Client {
	t.Helper()
	cfg := s.Config()
	cfg.QPS = -1
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// settle waits until the number of goroutines is at most want (any, if negative), then
// returns it and the live heap after a collection.
func settle(t *testing.T, ctx context.Context, want int) (goroutines int, heap uint64) {
	t.Helper()
	for {
		runtime.GC()
		n := runtime.NumGoroutine()
		if want < 0 || n <= want {
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			return n, ms.HeapAlloc
		}
		// Goroutines of a released informer end after its Done (the HTTP transport's
		// readers of a closed stream); wait for them, bounded by the test's context.
		select {
		case <-ctx.Done():
			t.Fatalf("goroutines stay at %d, above %d:\n%s", n, want, goroutineDump())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func goroutineDump() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

// BenchmarkAcquireRelease measures one informer lifetime on a factory: Acquire, a handler,
// Start, the sync of 10 ConfigMaps, the handler's 10 adds, ReleaseAndWait. retained-B/op is
// the growth of the live heap per cycle (after a collection), which a leak would show.
func BenchmarkAcquireRelease(b *testing.B) {
	s, err := apitest.Start(apitest.Options{RequestLogSize: 16})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for i := range 10 {
		mkCM(b, s, "default", fmt.Sprint("cm-", i), map[string]string{"k": "v"})
	}
	c := unlimitedClient(b, s)
	f := NewFactoryWithOptions(c, FactoryOptions{WatchList: reflector.WatchListOff, Logger: discardLogger()})
	defer f.Shutdown()
	ctx := context.Background()
	cycle := func() {
		ref := Acquire[*testobj.ConfigMap](f, testobj.ConfigMapGVR)
		h := &calls{ch: make(chan string, 16)}
		if _, err := ref.Informer().AddEventHandler(h); err != nil {
			b.Fatal(err)
		}
		f.Start(ctx)
		if err := f.WaitForCacheSync(ctx); err != nil {
			b.Fatal(err)
		}
		for range 10 {
			<-h.ch
		}
		if err := ref.ReleaseAndWait(ctx); err != nil {
			b.Fatal(err)
		}
	}
	for range 20 {
		cycle()
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for b.Loop() {
		cycle()
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(b.N), "retained-B/op")
}

// A resource that answers 404 is logged only once the 404s have lasted the grace period, and
// anything the reflector receives in between starts the count again: a CRD being deleted,
// whose informer its users release within the second, logs nothing.
func TestNotFoundIsLoggedAfterTheGracePeriod(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &logBuffer{}
		inf := New(apiclient.NewResource[*testobj.ConfigMap](nil, testobj.WidgetGVR),
			Options[*testobj.ConfigMap]{Logger: logs.logger(), NotFoundLogInterval: time.Minute})
		notFound := &meta.Status{Code: 404, Reason: meta.StatusReasonNotFound, Message: "404 page not found"}
		store := inf.reflectorStore(inf.newFIFO()).(reflector.ResourceVersionUpdater)
		ctx := context.Background()
		logged := func() int { return logs.count("not served") }

		inf.onWatchError(ctx, notFound)
		time.Sleep(DefaultNotFoundGracePeriod - time.Second)
		inf.onWatchError(ctx, notFound)
		if n := logged(); n != 0 {
			t.Fatalf("%d lines within the grace period:\n%s", n, logs.String())
		}
		// The resource answered: the next 404 starts a new run.
		store.UpdateResourceVersion("7")
		time.Sleep(2 * time.Second)
		inf.onWatchError(ctx, notFound)
		if n := logged(); n != 0 {
			t.Fatalf("%d lines after the resource answered:\n%s", n, logs.String())
		}
		time.Sleep(DefaultNotFoundGracePeriod)
		inf.onWatchError(ctx, notFound)
		if n := logged(); n != 1 {
			t.Fatalf("%d lines once the 404s lasted the grace period, want 1:\n%s", n, logs.String())
		}
		time.Sleep(30 * time.Second)
		inf.onWatchError(ctx, notFound)
		if n := logged(); n != 1 {
			t.Fatalf("%d lines within NotFoundLogInterval, want 1", n)
		}
		time.Sleep(31 * time.Second)
		inf.onWatchError(ctx, notFound)
		if n := logged(); n != 2 {
			t.Fatalf("%d lines after NotFoundLogInterval, want 2", n)
		}
	})
}
