package informer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/reflector"
)

// The convergence property: whatever the schedule of writes and server faults, once the
// server is quiet the informer's cache equals the server's state, and so does the view every
// handler rebuilt from its notifications (a fast one, a deliberately slow one whose
// notifications coalesce, and one added half-way); no handler is ever told about an update or
// a delete of a key it was not told exists, and every update's old object is the state the
// handler saw last.
//
// Schedules vary the DeltaFIFO mode, the list protocol (WatchList or LIST, unpaged or paged
// with tiny pages so that lists span several requests and faults hit them mid-way) and, in
// one schedule out of four, turn the incremental relist off: the faults that force relists
// (compaction, 410, 5xx on LIST, corrupt frames, very short watches) exercise the
// incremental replacement, its aborts and the whole-list Replace.
//
// ConvergenceSchedules seeds run in `make test` (as the seed corpus of FuzzInformerConvergence);
// `make fuzz` explores more.
const convergenceSchedules = 200

var debugConvergence = false

func FuzzInformerConvergence(f *testing.F) {
	for seed := range uint64(convergenceSchedules) {
		f.Add(seed)
	}
	var total convergenceFigures
	f.Cleanup(func() {
		if testing.Verbose() {
			f.Logf("convergence: %+v", total.snapshot())
		}
	})
	f.Fuzz(func(t *testing.T, seed uint64) {
		runConvergence(t, seed, &total)
	})
}

type convergenceFigures struct {
	schedules, ops, faults, coalesced, relists, incrementalLists, incrementalAborts, listRequests atomic.Int64
}

func (c *convergenceFigures) snapshot() map[string]int64 {
	return map[string]int64{"schedules": c.schedules.Load(), "ops": c.ops.Load(), "faults": c.faults.Load(),
		"coalesced": c.coalesced.Load(), "relists": c.relists.Load(), "incrementalLists": c.incrementalLists.Load(), "incrementalAborts": c.incrementalAborts.Load(),
		"listRequests": c.listRequests.Load()}
}

// viewer rebuilds the state its notifications describe and checks every call against it.
type viewer struct {
	t     *testing.T
	name  string
	mu    sync.Mutex
	view  map[string]string // key → resourceVersion
	calls int
	// Slow viewers take a token from gate before each call until gate's owner closes open.
	gate chan struct{}
	open chan struct{}
	// done is set after the registration stopped: any call then is a violation.
	done atomic.Bool
}

func newViewer(t *testing.T, name string) *viewer {
	return &viewer{t: t, name: name, view: map[string]string{}}
}

func (v *viewer) slowdown() {
	if v.gate == nil {
		return
	}
	select {
	case <-v.gate:
	case <-v.open:
	}
}

func (v *viewer) check(ok bool, format string, args ...any) {
	if !ok {
		v.t.Errorf("%s: "+format, append([]any{v.name}, args...)...)
	}
}

func (v *viewer) OnAdd(o *testobj.ConfigMap, _ bool) {
	v.slowdown()
	v.mu.Lock()
	defer v.mu.Unlock()
	v.check(!v.done.Load(), "call after the registration stopped")
	k := o.Namespace + "/" + o.Name
	_, exists := v.view[k]
	v.check(!exists, "add of %s, which it already has", k)
	v.view[k] = o.ResourceVersion
	v.calls++
}

func (v *viewer) OnUpdate(old, o *testobj.ConfigMap) {
	v.slowdown()
	v.mu.Lock()
	defer v.mu.Unlock()
	v.check(!v.done.Load(), "call after the registration stopped")
	k := o.Namespace + "/" + o.Name
	rv, exists := v.view[k]
	v.check(exists, "update of %s, which it was never told about", k)
	v.check(rv == old.ResourceVersion, "update of %s from %s, but it saw %s last", k, old.ResourceVersion, rv)
	v.view[k] = o.ResourceVersion
	v.calls++
}

func (v *viewer) OnDelete(o *testobj.ConfigMap, _ bool) {
	v.slowdown()
	v.mu.Lock()
	defer v.mu.Unlock()
	v.check(!v.done.Load(), "call after the registration stopped")
	k := o.Namespace + "/" + o.Name
	_, exists := v.view[k]
	v.check(exists, "delete of %s, which it was never told about", k)
	delete(v.view, k)
	v.calls++
}

func (v *viewer) equals(want map[string]string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.view) != len(want) {
		return false
	}
	for k, rv := range want {
		if v.view[k] != rv {
			return false
		}
	}
	return true
}

func (v *viewer) snapshot() map[string]string {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make(map[string]string, len(v.view))
	for k, rv := range v.view {
		out[k] = rv
	}
	return out
}

func runConvergence(t *testing.T, seed uint64, figures *convergenceFigures) {
	rnd := rand.New(rand.NewPCG(seed, 0x1f0))
	s := newServerWithOptions(t, apitest.Options{HistorySize: 8 + rnd.IntN(40), BookmarkInterval: time.Duration(5+rnd.IntN(30)) * time.Millisecond})
	// The client keeps its default retries; the reflector turns them off for its own
	// requests, so failures go straight to it (its backoff is short in these tests).
	c, err := apiclient.New(s.Config())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	opts := fastOptions(t)
	opts.Logger = discardLogger()
	opts.mode = []fifoMode{fifoCoalescing, fifoInOrder, fifoAtomic}[rnd.IntN(3)]
	opts.WatchList = []reflector.WatchListMode{reflector.WatchListAuto, reflector.WatchListOff}[rnd.IntN(2)]
	opts.BatchSize = 1 + rnd.IntN(8)
	opts.StallTimeout = time.Duration(50+rnd.IntN(100)) * time.Millisecond
	opts.PageSize = []int64{0, 0, 1, 2, 3}[rnd.IntN(5)] // 0: unpaged relists at a resourceVersion
	opts.disableIncrementalRelist = rnd.IntN(4) == 0
	inf := New(configMaps(c), opts)
	if rnd.IntN(2) == 0 {
		// Faults in the middle of lists: the transform runs on the reflector's goroutine as
		// each object is queued, so a fault it injects lands between two objects of a list
		// (or two watch events): the next LIST page fails, or the stream of a streaming list
		// is cut before its end bookmark. Incremental replacements are then aborted.
		if err := inf.SetTransform(midListFaults(t, s, seed)); err != nil {
			t.Fatal(err)
		}
	}

	fast := newViewer(t, "fast")
	slow := newViewer(t, "slow")
	slow.gate, slow.open = make(chan struct{}, 64), make(chan struct{})
	removed := newViewer(t, "removed")
	regFast, _ := inf.AddEventHandler(fast)
	regSlow, _ := inf.AddEventHandlerWithOptions(slow, HandlerOptions{Name: "slow", BufferSize: 1 + rnd.IntN(3)})
	regRemoved, _ := inf.AddEventHandler(removed)

	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		<-inf.Done()
	}()
	// Some objects exist before the informer starts.
	namespaces := []string{"default", "kube-system"}
	const names = 4
	exists := map[string]bool{}
	for i := range rnd.IntN(5) {
		ns, name := namespaces[i%2], fmt.Sprint("o", i)
		mkCM(t, s, ns, name, nil)
		exists[ns+"/"+name] = true
	}
	go inf.Run(ctx)
	// settle waits until the informer has received everything the server has now (not
	// necessarily processed it), so that the next writes and faults hit an open watch.
	settle := func() {
		target, _ := strconv.ParseUint(s.ResourceVersion(), 10, 64)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		deadline := time.After(testTimeout)
		for {
			rv, _ := strconv.ParseUint(inf.LastSyncResourceVersion(), 10, 64)
			if rv >= target {
				return
			}
			select {
			case <-tick.C:
			case <-deadline:
				t.Fatalf("seed %d: the informer does not catch up with the server (rv %d < %d)", seed, rv, target)
			}
		}
	}
	if rnd.IntN(2) == 0 {
		wait(t, regFast.Synced(), "the first sync")
	}

	var late *viewer
	var regLate *Registration[*testobj.ConfigMap]
	var releases []func()
	ops := 30 + rnd.IntN(60)
	faults := 0
	for step := range ops {
		if step == ops/2 {
			late = newViewer(t, "late")
			regLate, _ = inf.AddEventHandler(late)
		}
		if step == ops*3/4 {
			if err := inf.RemoveEventHandlerAndWait(ctxT(t), regRemoved); err != nil {
				t.Fatal(err)
			}
			removed.done.Store(true)
		}
		// Let the slow handler make a little progress now and then.
		for range rnd.IntN(2) {
			select {
			case slow.gate <- struct{}{}:
			default:
			}
		}
		if rnd.IntN(3) == 0 {
			settle()
		}
		if rnd.IntN(4) == 0 {
			faults++
			releases = append(releases, injectFault(t, s, rnd))
		}
		ns, name := namespaces[rnd.IntN(2)], fmt.Sprint("o", rnd.IntN(names))
		key := ns + "/" + name
		switch {
		case !exists[key]:
			mkCM(t, s, ns, name, map[string]string{"step": strconv.Itoa(step)})
			exists[key] = true
		case rnd.IntN(3) == 0:
			if err := s.Delete("configmaps", ns, name); err != nil {
				t.Fatal(err)
			}
			exists[key] = false
		default:
			setData(t, s, ns, name, "step", strconv.Itoa(step))
		}
	}
	for _, r := range releases {
		if r != nil {
			r()
		}
	}
	close(slow.open)

	// Quiescence: the server is quiet now; wait until the informer and every handler agree
	// with it, checking after each tick.
	objs, serverRV, err := s.List("configmaps", "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, o := range objs {
		want[o.Namespace()+"/"+o.Name()] = o.ResourceVersion()
	}
	target, _ := strconv.ParseUint(serverRV, 10, 64)
	viewers := []*viewer{fast, slow, late}
	regs := []*Registration[*testobj.ConfigMap]{regFast, regSlow, regLate}
	converged := func() bool {
		rv, _ := strconv.ParseUint(inf.LastSyncResourceVersion(), 10, 64)
		if rv < target || inf.Stats().Queued != 0 {
			return false
		}
		if !cacheEquals(inf, want) {
			return false
		}
		for i, v := range viewers {
			if regs[i].Backlog().Pending != 0 || !v.equals(want) {
				return false
			}
		}
		return true
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(testTimeout)
	for !converged() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("seed %d (mode %v, watchList %v, pageSize %d, incremental %v): no convergence.\nserver %v (rv %s)\ninformer rv %s, cache %v\nfast %v\nslow %v\nlate %v\nstats %+v",
				seed, opts.mode, opts.WatchList, opts.PageSize, !opts.disableIncrementalRelist, want, serverRV, inf.LastSyncResourceVersion(), cacheSnapshot(inf),
				fast.snapshot(), slow.snapshot(), late.snapshot(), inf.Stats())
		}
	}
	if debugConvergence {
		for _, r := range s.Requests() {
			t.Logf("%s %s %s %d rv=%s watch=%s sie=%s", r.Time.Format("05.000"), r.Verb, r.Resource, r.Code, r.Param("resourceVersion"), r.Param("watch"), r.Param("sendInitialEvents"))
		}
		for _, f := range s.Faults().Records() {
			t.Logf("fault %s %s %s %d", f.Time.Format("05.000"), f.Kind, f.Verb, f.Code)
		}
		t.Logf("stats %+v", inf.Stats())
	}
	for _, r := range regs {
		if !r.HasSynced() {
			t.Fatalf("registration %s not synced after convergence", r.Name())
		}
	}
	figures.schedules.Add(1)
	figures.ops.Add(int64(ops))
	figures.faults.Add(int64(faults))
	figures.coalesced.Add(int64(regSlow.Backlog().Coalesced))
	figures.relists.Add(int64(inf.Stats().Reflector.Relists))
	figures.incrementalLists.Add(int64(inf.incrementalLists.Load()))
	figures.incrementalAborts.Add(int64(inf.incrementalAborts.Load()))
	figures.listRequests.Add(int64(inf.Stats().Reflector.ListRequests))
	if opts.disableIncrementalRelist == (inf.incrementalLists.Load() != 0) {
		t.Fatalf("seed %d: %d lists handed over incrementally with disableIncrementalRelist %v", seed, inf.incrementalLists.Load(), opts.disableIncrementalRelist)
	}
}

// midListFaults returns a transform (the default one, DropManagedFields) that injects a
// fault every few objects, at most eight times.
func midListFaults(t *testing.T, s *apitest.Server, seed uint64) func(*testobj.ConfigMap) (*testobj.ConfigMap, error) {
	rnd := rand.New(rand.NewPCG(seed, 0x11a)) // used on the reflector's goroutine only
	every, calls, left := 1+rnd.IntN(4), 0, 8
	return func(o *testobj.ConfigMap) (*testobj.ConfigMap, error) {
		if calls++; left > 0 && calls%every == 0 {
			left--
			var err error
			switch rnd.IntN(3) {
			case 0:
				err = s.Faults().FailRequests(apitest.VerbList, "configmaps", 1, http.StatusInternalServerError, 0)
			case 1:
				_, err = s.Faults().CutWatches("configmaps")
			case 2:
				_, err = s.Faults().AbortWatches("configmaps")
			}
			if err != nil {
				t.Error(err)
			}
		}
		return DropManagedFields(o)
	}
}

func cacheEquals(inf *Informer[*testobj.ConfigMap], want map[string]string) bool {
	if inf.GetStore().Len() != len(want) {
		return false
	}
	ok := true
	inf.GetStore().Range(func(key string, o *testobj.ConfigMap) bool {
		ok = want[key] == o.ResourceVersion
		return ok
	})
	return ok
}

func cacheSnapshot(inf *Informer[*testobj.ConfigMap]) map[string]string {
	out := map[string]string{}
	inf.GetStore().Range(func(key string, o *testobj.ConfigMap) bool {
		out[key] = o.ResourceVersion
		return true
	})
	return out
}

// injectFault makes the server misbehave in one random way. It returns a release function
// for faults that last until released (nil otherwise).
func injectFault(t *testing.T, s *apitest.Server, rnd *rand.Rand) func() {
	t.Helper()
	var err error
	switch rnd.IntN(9) {
	case 0:
		_, err = s.Faults().CutWatches("configmaps")
	case 1:
		_, err = s.Faults().AbortWatches("configmaps")
	case 2:
		_, err = s.Faults().ExpireWatches("configmaps")
	case 3:
		var release func()
		release, _, err = s.Faults().StallWatches("configmaps", time.Duration(rnd.IntN(60))*time.Millisecond)
		return release
	case 4:
		err = s.Compact("configmaps")
	case 5:
		verb := []apitest.Verb{apitest.VerbList, apitest.VerbWatch}[rnd.IntN(2)]
		code := []int{http.StatusInternalServerError, http.StatusServiceUnavailable, http.StatusTooManyRequests, http.StatusGone}[rnd.IntN(4)]
		err = s.Faults().FailRequests(verb, "configmaps", 1+rnd.IntN(3), code, 0)
	case 6:
		_, err = s.Faults().SendCorruptFrame("configmaps")
	case 7:
		_, err = s.Faults().CutWatchesAfter("configmaps", 1+rnd.IntN(3))
	case 8:
		err = s.Compact("configmaps")
		if err == nil {
			_, err = s.Faults().CutWatches("configmaps")
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return nil
}
