package reflector

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// The first LIST is at resourceVersion 0 with limit 500; the WATCH starts at the list's
// resourceVersion with bookmarks and a timeout in [300, 600] s.
func TestFirstListAtZeroThenWatchFromListRV(t *testing.T) {
	storeKinds(t, func(t *testing.T, rec *recStore, store Store[*testobj.ConfigMap]) {
		e := newEnv(t)
		for _, n := range []string{"a", "b", "c"} {
			e.create(n)
		}
		r := e.run(e.options(store))
		rv := synced(t, rec, 1)
		if got, want := storeContent(rec), e.serverContent(); !sameContent(got, want) {
			t.Fatalf("store %v, server %v", got, want)
		}
		lists := e.waitRequests(apitest.VerbList, 0, 1)
		if l := lists[0]; l.Param("resourceVersion") != "0" || l.Param("limit") != "500" || l.HasParam("continue") {
			t.Fatalf("first LIST %s, want resourceVersion=0&limit=500", l.Query.Encode())
		}
		e.waitWatch(0)
		w := e.waitRequests(apitest.VerbWatch, 0, 1)[0]
		if w.Param("resourceVersion") != rv || w.Param("allowWatchBookmarks") != "true" || !watchTimeoutOK(w) ||
			w.HasParam("sendInitialEvents") {
			t.Fatalf("WATCH %s, want resourceVersion=%s, allowWatchBookmarks=true, timeoutSeconds in [300,600]", w.Query.Encode(), rv)
		}
		if got := r.LastSyncResourceVersion(); got != rv {
			t.Fatalf("LastSyncResourceVersion = %q, want the list's %q", got, rv)
		}
		if st := r.Stats(); st.Lists != 1 || st.Relists != 0 || st.ListRequests != 1 || st.ListedItems != 3 || st.LastSync.IsZero() {
			t.Fatalf("stats %+v", st)
		}
		if store, ok := store.(incrStore); ok {
			ops, _ := store.snapshot()
			if got := opsOf(ops, "begin", "finish", "abort", "replace"); len(got) != 2 || got[0].Kind != "begin" || got[1].Kind != "finish" || got[1].Items != 3 {
				t.Fatalf("incremental store calls %v, want begin, 3 adds, finish", ops)
			}
		}
	})
}

// Watch events reach the store in order, and the last synced resourceVersion follows them.
func TestWatchEventsAdvanceLastSyncRV(t *testing.T) {
	e := newEnv(t)
	e.create("a")
	rec := newRecStore()
	r := e.run(e.options(rec))
	synced(t, rec, 1)
	e.waitWatch(0)
	rvAdd := e.create("x")
	rvUpd := e.update("x", "1")
	rvDel := e.remove("x")
	rec.waitFor(t, "resourceVersion of the delete", func(s *recStore) bool { o, ok := lastOp(s.ops, "rv"); return ok && o.RV == rvDel })
	ops, _ := rec.snapshot()
	got := opsOf(ops, "add", "update", "delete")
	want := []op{{Kind: "add", Key: "default/x", RV: rvAdd}, {Kind: "update", Key: "default/x", RV: rvUpd}, {Kind: "delete", Key: "default/x", RV: rvDel}}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("store calls %v, want %v", got, want)
	}
	if r.LastSyncResourceVersion() != rvDel || rec.lastRV() != rvDel {
		t.Fatalf("LastSyncResourceVersion %q (store told %q), want %q", r.LastSyncResourceVersion(), rec.lastRV(), rvDel)
	}
	if st := r.Stats(); st.Events != 3 || st.LastEvent.IsZero() || st.Watches != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// The ResourceVersionUpdater hears of every list's resourceVersion (client-go: only of events
// and bookmarks), right after the store got the list, and of every event's, in order.
func TestResourceVersionUpdaterHearsListsAndEvents(t *testing.T) {
	e := newEnv(t)
	e.create("a")
	rec := newRecStore()
	e.run(e.options(rec))
	listRV := synced(t, rec, 1)
	e.waitWatch(0)
	rvX := e.create("x")
	rec.waitFor(t, "x", func(s *recStore) bool { o, ok := lastOp(s.ops, "rv"); return ok && o.RV == rvX })
	e.must(e.srv.Faults().ExpireWatches(cms))
	relistRV := synced(t, rec, 2)
	ops, _ := rec.snapshot()
	got := opsOf(ops, "replace", "add", "rv")
	want := []op{{Kind: "replace", RV: listRV, Items: 1}, {Kind: "rv", RV: listRV}, {Kind: "add", Key: "default/x", RV: rvX}, {Kind: "rv", RV: rvX},
		{Kind: "replace", RV: relistRV, Items: 2}, {Kind: "rv", RV: relistRV}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("store calls %v, want %v", got, want)
	}
}

// BOOKMARK events advance the last synced resourceVersion (and tell the store).
func TestBookmarksAdvanceLastSyncRV(t *testing.T) {
	e := newEnvWithOptions(t, apitest.Options{BookmarkInterval: 20 * time.Millisecond, ProgressNotify: true})
	e.create("a")
	rec := newRecStore()
	r := e.run(e.options(rec))
	listRV := synced(t, rec, 1)
	e.waitWatch(0)
	// A write to another resource moves the server's resourceVersion; only a bookmark can
	// bring it to the configmap watch.
	if _, err := e.srv.Create("secrets", map[string]any{"metadata": map[string]any{"name": "s", "namespace": "default"}}); err != nil {
		t.Fatal(err)
	}
	target := e.srv.ResourceVersion()
	if target == listRV {
		t.Fatal("server resourceVersion did not move")
	}
	rec.waitFor(t, "bookmark at "+target, func(s *recStore) bool { o, ok := lastOp(s.ops, "rv"); return ok && o.RV == target })
	if r.LastSyncResourceVersion() != target {
		t.Fatalf("LastSyncResourceVersion %q, want %q", r.LastSyncResourceVersion(), target)
	}
	st := r.Stats()
	if st.Bookmarks == 0 || st.LastBookmark.IsZero() || st.Events != 0 {
		t.Fatalf("stats %+v", st)
	}
	if n := rec.count("add") + rec.count("update"); n != 0 {
		t.Fatalf("bookmarks reached the store as %d objects", n)
	}
}

// Paging: a positive PageSize pages every list, even a relist at a resourceVersion (the
// first list, at "0", is served whole: the watch cache ignores limit there). Continue pages
// carry no resourceVersion; one Replace (or one incremental replacement) takes all pages.
func TestPagedList(t *testing.T) {
	storeKinds(t, func(t *testing.T, rec *recStore, store Store[*testobj.ConfigMap]) {
		e := newEnv(t)
		for _, n := range []string{"a", "b", "c", "d", "e"} {
			e.create(n)
		}
		opts := e.options(store)
		opts.PageSize = 2
		e.run(opts)
		rv := synced(t, rec, 1)
		if l := e.requests(apitest.VerbList, 0); len(l) != 1 || l[0].Param("limit") != "2" || l[0].Param("resourceVersion") != "0" {
			t.Fatalf("first list\n%s", e.describeRequests())
		}
		e.waitWatch(0)
		seq := e.srv.LastRequestSeq()
		e.must(e.srv.Faults().ExpireWatches(cms))
		synced(t, rec, 2)
		lists := e.requests(apitest.VerbList, seq)
		if len(lists) != 3 {
			t.Fatalf("relist took %d requests, want 3 pages\n%s", len(lists), e.describeRequests())
		}
		if lists[0].Param("resourceVersion") != rv || lists[0].Param("limit") != "2" || lists[0].HasParam("continue") {
			t.Fatalf("first page %s, want resourceVersion=%s&limit=2", lists[0].Query.Encode(), rv)
		}
		for _, l := range lists[1:] {
			if l.Param("continue") == "" || l.Param("limit") != "2" || l.HasParam("resourceVersion") {
				t.Fatalf("continue page %s, want continue, limit=2 and no resourceVersion", l.Query.Encode())
			}
		}
		if got, want := storeContent(rec), e.serverContent(); !sameContent(got, want) {
			t.Fatalf("store %v, server %v", got, want)
		}
		ops, _ := rec.snapshot()
		if syncs := opsOf(ops, "replace", "finish"); len(syncs) != 2 || syncs[1].Items != 5 {
			t.Fatalf("store syncs %v, want the relist as one of 5 items", syncs)
		}
	})
}

// Compaction while the watch is down: the re-watch from the last synced resourceVersion
// gets ERROR 410, and the reflector relists at that resourceVersion (not at ""), which also
// removes what was deleted meanwhile. If that list gets 410 too, it lists at once at "".
func TestCompactionLeadsToRelistAtLastRV(t *testing.T) {
	for _, listExpired := range []bool{false, true} {
		name := "list-ok"
		if listExpired {
			name = "list-410-then-empty-rv"
		}
		t.Run(name, func(t *testing.T) {
			storeKinds(t, func(t *testing.T, rec *recStore, store Store[*testobj.ConfigMap]) {
				e := newEnv(t)
				e.create("a")
				e.create("b")
				r := e.run(e.options(store))
				synced(t, rec, 1)
				e.waitWatch(0)
				// Hold the reflector inside Add(x), with its stream cut after x.
				entered, release := rec.gate("default/x")
				defer release()
				e.must(e.srv.Faults().CutWatchesAfter(cms, 1))
				rvX := e.create("x")
				<-entered
				// Meanwhile: a delete the reflector never sees as an event, and compaction.
				e.remove("b")
				e.create("y")
				if err := e.srv.Compact(cms); err != nil {
					t.Fatal(err)
				}
				if listExpired {
					if err := e.srv.Faults().FailRequests(apitest.VerbList, cms, 1, http.StatusGone, 0); err != nil {
						t.Fatal(err)
					}
				}
				seq := e.srv.LastRequestSeq()
				release()
				relistRV := synced(t, rec, 2)
				e.waitContent(rec)
				rewatch := e.waitRequests(apitest.VerbWatch, seq, 1)[0]
				if rewatch.Param("resourceVersion") != rvX {
					t.Fatalf("re-watch %s, want resourceVersion=%s", rewatch.Query.Encode(), rvX)
				}
				e.waitError("410 Expired", meta.IsResourceExpired)
				lists := e.requests(apitest.VerbList, seq)
				if l := lists[0]; l.Param("resourceVersion") != rvX || l.HasParam("limit") {
					t.Fatalf("relist %s, want resourceVersion=%s without limit\n%s", l.Query.Encode(), rvX, e.describeRequests())
				}
				if listExpired {
					if len(lists) != 2 || lists[0].Code != http.StatusGone || lists[1].HasParam("resourceVersion") || lists[1].Param("limit") != "500" {
						t.Fatalf("after a 410 list, want one list at \"\" with limit 500\n%s", e.describeRequests())
					}
				} else if len(lists) != 1 {
					t.Fatalf("want one relist\n%s", e.describeRequests())
				}
				// The watch goes on from the relist's resourceVersion.
				w := e.waitRequests(apitest.VerbWatch, lists[len(lists)-1].Seq, 1)[0]
				if w.Param("resourceVersion") != relistRV {
					t.Fatalf("watch after relist %s, want resourceVersion=%s", w.Query.Encode(), relistRV)
				}
				if st := r.Stats(); st.Relists != 1 || st.Lists != 2 {
					t.Fatalf("stats %+v", st)
				}
			})
		})
	}
}

// A clean close of the stream re-watches from the last synced resourceVersion, no relist.
func TestCleanCloseRewatchesWithoutRelist(t *testing.T) {
	e := newEnv(t)
	e.create("a")
	rec := newRecStore()
	r := e.run(e.options(rec))
	synced(t, rec, 1)
	e.waitWatch(0)
	seq := e.srv.LastRequestSeq()
	e.must(e.srv.Faults().CutWatchesAfter(cms, 1))
	rvX := e.create("x")
	w := e.waitRequests(apitest.VerbWatch, seq, 1)[0]
	if w.Param("resourceVersion") != rvX {
		t.Fatalf("re-watch %s, want resourceVersion=%s", w.Query.Encode(), rvX)
	}
	rvY := e.create("y")
	rec.waitFor(t, "resourceVersion of y", func(s *recStore) bool { o, ok := lastOp(s.ops, "rv"); return ok && o.RV == rvY })
	if n := len(e.requests(apitest.VerbList, 0)); n != 1 {
		t.Fatalf("%d LISTs, want 1 (no relist)\n%s", n, e.describeRequests())
	}
	if st := r.Stats(); st.Relists != 0 || st.Watches != 2 || st.WatchErrors != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// A watch that closes within a second without any event leads to a relist.
func TestVeryShortWatchRelists(t *testing.T) {
	e := newEnv(t)
	e.create("a")
	rec := newRecStore()
	r := e.run(e.options(rec))
	rv := synced(t, rec, 1)
	e.waitWatch(0)
	seq := e.srv.LastRequestSeq()
	e.must(e.srv.Faults().CutWatches(cms))
	synced(t, rec, 2)
	l := e.requests(apitest.VerbList, seq)[0]
	if l.Param("resourceVersion") != rv {
		t.Fatalf("relist %s, want resourceVersion=%s", l.Query.Encode(), rv)
	}
	err := e.waitError("very short watch", isErr(ErrVeryShortWatch))
	var re *Error
	if !errors.As(err, &re) || re.Op != "watch" || re.Reflector != "configmaps.v1" {
		t.Fatalf("error %#v", err)
	}
	if st := r.Stats(); st.Relists != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// A watch with no event and no bookmark for StallTimeout is re-opened from the last synced
// resourceVersion, without a relist; the stall is counted and logged once.
func TestStallRewatchesWithoutRelist(t *testing.T) {
	e := newEnvWithOptions(t, apitest.Options{BookmarkInterval: 20 * time.Millisecond, ProgressNotify: true})
	e.create("a")
	rec := newRecStore()
	opts := e.options(rec)
	opts.StallTimeout = 750 * time.Millisecond
	r := e.run(opts)
	synced(t, rec, 1)
	e.waitWatch(0)
	// A healthy watch: writes to another resource move the server's resourceVersion, so the
	// configmap watch gets bookmarks (and nothing else) for twice the stall timeout. The
	// ticker paces the load; it synchronises nothing.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i, start := 0, time.Now(); time.Since(start) < 2*opts.StallTimeout; i++ {
		<-tick.C
		if _, err := e.srv.Create("secrets", map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("s%d", i), "namespace": "default"}}); err != nil {
			t.Fatal(err)
		}
	}
	target := e.srv.ResourceVersion()
	rec.waitFor(t, "bookmark at "+target, func(s *recStore) bool { o, ok := lastOp(s.ops, "rv"); return ok && o.RV == target })
	if st := r.Stats(); st.Stalls != 0 || st.Watches != 1 || st.Bookmarks == 0 || st.Events != 0 {
		t.Fatalf("healthy watch: stats %+v", st)
	}
	seq := e.srv.LastRequestSeq()
	release, n, err := e.srv.Faults().StallWatches(cms, 0)
	if err != nil || n != 1 {
		t.Fatalf("StallWatches = %d, %v", n, err)
	}
	defer release()
	if _, err := e.srv.Create("secrets", map[string]any{"metadata": map[string]any{"name": "during-stall", "namespace": "default"}}); err != nil {
		t.Fatal(err)
	}
	w := e.waitRequests(apitest.VerbWatch, seq, 1)[0]
	if w.Param("resourceVersion") != target {
		t.Fatalf("re-watch %s, want resourceVersion=%s", w.Query.Encode(), target)
	}
	e.waitError("stall", isErr(ErrWatchStalled))
	if n := len(e.requests(apitest.VerbList, 0)); n != 1 {
		t.Fatalf("%d LISTs, want 1 (no relist)\n%s", n, e.describeRequests())
	}
	if st := r.Stats(); st.Stalls != 1 || st.Relists != 0 {
		t.Fatalf("stats %+v", st)
	}
	if n := e.log.count("watch stalled"); n != 1 {
		t.Fatalf("stall logged %d times, want once:\n%s", n, e.log.all())
	}
}

// A watch whose connection breaks without a clean end (the server side drops it: TCP close
// mid-stream over HTTP/1.1, a reset stream over HTTP/2, no close frame over WebSocket) is
// counted (ConnectionsLost, WatchErrors), reported as ErrConnectionLost with the transport
// error, and re-opened at once from the last synced resourceVersion, without a relist.
func TestLostConnectionIsReportedAndRewatchesWithoutRelist(t *testing.T) {
	for _, tc := range []struct {
		name  string
		proto apiclient.WatchProtocol
		opts  apitest.Options
	}{
		{"http1", apiclient.WatchChunked, apitest.Options{}},
		{"http2", apiclient.WatchChunked, apitest.Options{TLS: true}},
		{"websocket", apiclient.WatchWebSocket, apitest.Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnvProto(t, tc.proto, tc.opts)
			e.create("a")
			rec := newRecStore()
			r := e.run(e.options(rec))
			synced(t, rec, 1)
			first := e.waitWatch(0)
			// One event first, so that the broken watch is not a "very short" one.
			rvX := e.create("x")
			rec.waitFor(t, "x", func(s *recStore) bool { o, ok := lastOp(s.ops, "rv"); return ok && o.RV == rvX })
			seq := e.srv.LastRequestSeq()
			e.must(e.srv.Faults().AbortWatches(cms))
			err := e.waitError("connection lost", isErr(ErrConnectionLost))
			var re *Error
			if !errors.As(err, &re) || re.Op != "watch" || !strings.Contains(err.Error(), "watch connection lost: ") {
				t.Fatalf("error %v, want a watch *Error wrapping ErrConnectionLost and the transport error", err)
			}
			w := e.waitRequests(apitest.VerbWatch, seq, 1)[0]
			if w.Param("resourceVersion") != rvX {
				t.Fatalf("re-watch %s, want resourceVersion=%s", w.Query.Encode(), rvX)
			}
			e.waitWatch(first.ID)
			rvY := e.create("y")
			rec.waitFor(t, "y", func(s *recStore) bool { o, ok := lastOp(s.ops, "rv"); return ok && o.RV == rvY })
			if n := len(e.requests(apitest.VerbList, 0)); n != 1 {
				t.Fatalf("%d LISTs, want 1 (no relist)\n%s", n, e.describeRequests())
			}
			if st := r.Stats(); st.ConnectionsLost != 1 || st.WatchErrors != 1 || st.Relists != 0 || st.Watches != 2 {
				t.Fatalf("stats %+v", st)
			}
			if n := e.log.count("watch connection lost"); n != 1 {
				t.Fatalf("logged %d times, want once:\n%s", n, e.log.all())
			}
		})
	}
}

// The backoff does not carry over from one outage to the next: once the watch has worked for
// as long as the last delay, a new failure waits Initial again. (client-go resets only after
// two minutes without a failure: the second outage would wait 25 s here.)
func TestBackoffStartsOverAfterARecovery(t *testing.T) {
	e := newEnv(t)
	e.create("a")
	rec := newRecStore()
	opts := e.options(rec)
	opts.Backoff = Backoff{Initial: 10 * time.Millisecond, Factor: 50, Max: time.Minute} // no jitter
	r := e.run(opts)
	synced(t, rec, 1)
	first := e.waitWatch(0)
	// Outage 1: two 503s when re-opening the watch (delays 10 ms, then 500 ms).
	if err := e.srv.Faults().FailRequests(apitest.VerbWatch, cms, 2, http.StatusServiceUnavailable, 0); err != nil {
		t.Fatal(err)
	}
	seq := e.srv.LastRequestSeq()
	e.must(e.srv.Faults().CutWatchesAfter(cms, 1)) // after an event: a watch cut before any is "very short"
	e.create("b")
	ws := e.waitRequests(apitest.VerbWatch, seq, 3)
	if ws[0].Code != http.StatusServiceUnavailable || ws[1].Code != http.StatusServiceUnavailable || ws[2].Code != http.StatusOK {
		t.Fatalf("want two refused watches, then one open\n%s", e.describeRequests())
	}
	if gap := ws[2].Time.Sub(ws[1].Time); gap < 500*time.Millisecond {
		t.Fatalf("second delay %v, want the grown 500 ms", gap)
	}
	second := e.waitOnlyWatch(first.ID)
	// Healthy for longer than the last delay: events flow (the ticker paces the writes; it
	// synchronises nothing).
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var rv string
	for i, start := 0, time.Now(); time.Since(start) < 700*time.Millisecond; i++ {
		<-tick.C
		rv = e.create(fmt.Sprintf("x%d", i))
	}
	rec.waitFor(t, "the last write", func(s *recStore) bool { o, ok := lastOp(s.ops, "rv"); return ok && o.RV == rv })
	// Outage 2: one 503. The delay is Initial again, not 500 ms × 50.
	if err := e.srv.Faults().FailRequests(apitest.VerbWatch, cms, 1, http.StatusServiceUnavailable, 0); err != nil {
		t.Fatal(err)
	}
	seq = e.srv.LastRequestSeq()
	e.must(e.srv.Faults().CutWatchesAfter(cms, 1))
	e.create("c")
	ws = e.waitRequests(apitest.VerbWatch, seq, 2)
	if ws[0].Code != http.StatusServiceUnavailable || ws[1].Code != http.StatusOK {
		t.Fatalf("want one refused watch, then one open\n%s", e.describeRequests())
	}
	if gap := ws[1].Time.Sub(ws[0].Time); gap > 5*time.Second {
		t.Fatalf("delay after the second outage %v: the backoff carried over from the first", gap)
	}
	e.waitWatch(second.ID)
	if st := r.Stats(); st.Relists != 0 || st.Backoffs != 3 {
		t.Fatalf("stats %+v", st)
	}
}

// Options.MaxInternalErrorRetryDuration: a watch that ends with a 500 re-opens from the last
// synced resourceVersion while the 500s last no longer than it; 0 (client-go's default)
// relists at the first one.
func TestMaxInternalErrorRetryDuration(t *testing.T) {
	internalError := &meta.Status{Status: "Failure", Code: http.StatusInternalServerError,
		Reason: meta.StatusReasonInternalError, Message: "Internal error occurred: etcd hiccup"}
	for _, retry := range []time.Duration{0, time.Minute} {
		t.Run(fmt.Sprint(retry), func(t *testing.T) {
			e := newEnv(t)
			e.create("a")
			rec := newRecStore()
			opts := e.options(rec)
			opts.MaxInternalErrorRetryDuration = retry
			r := e.run(opts)
			synced(t, rec, 1)
			w := e.waitWatch(0)
			rv := e.create("x") // an event, so that the watch is not "very short"
			rec.waitFor(t, "x", func(s *recStore) bool { o, ok := lastOp(s.ops, "rv"); return ok && o.RV == rv })
			seq := e.srv.LastRequestSeq()
			e.must(e.srv.Faults().SendWatchError(cms, internalError))
			e.waitError("500", meta.IsInternalError)
			if retry == 0 {
				synced(t, rec, 2)
				if ls := e.requests(apitest.VerbList, seq); len(ls) != 1 || ls[0].Param("resourceVersion") != rv {
					t.Fatalf("want a relist at %s\n%s", rv, e.describeRequests())
				}
				return
			}
			// Twice: both re-open the watch where it was.
			for range 2 {
				ws := e.waitRequests(apitest.VerbWatch, seq, 1)
				if ws[0].Param("resourceVersion") != rv {
					t.Fatalf("re-watch %s, want resourceVersion=%s", ws[0].Query.Encode(), rv)
				}
				w = e.waitOnlyWatch(w.ID)
				seq = e.srv.LastRequestSeq()
				rv = e.create("y" + rv)
				rec.waitFor(t, rv, func(s *recStore) bool { o, ok := lastOp(s.ops, "rv"); return ok && o.RV == rv })
				e.must(e.srv.Faults().SendWatchError(cms, internalError))
			}
			e.waitRequests(apitest.VerbWatch, seq, 1)
			e.waitWatch(w.ID)
			if n := len(e.requests(apitest.VerbList, 0)); n != 1 {
				t.Fatalf("%d LISTs, want 1 (no relist)\n%s", n, e.describeRequests())
			}
			if st := r.Stats(); st.Relists != 0 || st.WatchErrors != 3 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// 429 (and 503) with Retry-After on a re-watch: back off at least Retry-After and re-watch
// from the last synced resourceVersion, without a relist.
func TestRetryAfterHonouredOnWatch(t *testing.T) {
	for _, code := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			e := newEnv(t)
			e.create("a")
			rec := newRecStore()
			r := e.run(e.options(rec))
			synced(t, rec, 1)
			e.waitWatch(0)
			if err := e.srv.Faults().FailRequests(apitest.VerbWatch, cms, 1, code, time.Second); err != nil {
				t.Fatal(err)
			}
			seq := e.srv.LastRequestSeq()
			e.must(e.srv.Faults().CutWatchesAfter(cms, 1))
			rvX := e.create("x")
			ws := e.waitRequests(apitest.VerbWatch, seq, 2)
			if ws[0].Code != code || ws[1].Code != http.StatusOK {
				t.Fatalf("watches after the cut\n%s", e.describeRequests())
			}
			for _, w := range ws {
				if w.Param("resourceVersion") != rvX {
					t.Fatalf("re-watch %s, want resourceVersion=%s", w.Query.Encode(), rvX)
				}
			}
			// The backoff is 1-5 ms: only Retry-After explains a second's gap.
			if gap := ws[1].Time.Sub(ws[0].Time); gap < time.Second {
				t.Fatalf("re-watch %v after the %d, want at least the Retry-After of 1s", gap, code)
			}
			if n := len(e.requests(apitest.VerbList, 0)); n != 1 {
				t.Fatalf("%d LISTs, want 1 (no relist)\n%s", n, e.describeRequests())
			}
			if st := r.Stats(); st.Relists != 0 || st.WatchErrors != 1 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// 429 with Retry-After on the LIST: the next attempt waits at least Retry-After.
func TestRetryAfterHonouredOnList(t *testing.T) {
	e := newEnv(t)
	e.create("a")
	if err := e.srv.Faults().FailRequests(apitest.VerbList, cms, 1, http.StatusTooManyRequests, time.Second); err != nil {
		t.Fatal(err)
	}
	rec := newRecStore()
	e.run(e.options(rec))
	synced(t, rec, 1)
	ls := e.requests(apitest.VerbList, 0)
	if len(ls) != 2 || ls[0].Code != http.StatusTooManyRequests {
		t.Fatalf("lists\n%s", e.describeRequests())
	}
	if gap := ls[1].Time.Sub(ls[0].Time); gap < time.Second {
		t.Fatalf("second LIST %v after the 429, want at least 1s", gap)
	}
	e.waitError("429", meta.IsTooManyRequests)
}

// A watch that cannot be opened because the server is unreachable or failing (no answer: a
// connection reset as behind a proxy whose API server is down; or a 5xx without Retry-After)
// is opened again from the last synced resourceVersion after the backoff, without a relist.
// An answer that says the request itself is wrong (403 here) relists, as client-go does.
func TestWatchOpenFailureRewatchesUnlessTheAnswerSaysRelist(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fail   func(*apitest.Server) error
		code   int
		relist bool
	}{
		{"reset", func(s *apitest.Server) error { return s.Faults().ResetRequests(apitest.VerbWatch, cms, 2) }, apitest.CodeDropped, false},
		{"500", func(s *apitest.Server) error {
			return s.Faults().FailRequests(apitest.VerbWatch, cms, 2, http.StatusInternalServerError, 0)
		}, http.StatusInternalServerError, false},
		{"502", func(s *apitest.Server) error {
			return s.Faults().FailRequests(apitest.VerbWatch, cms, 2, http.StatusBadGateway, 0)
		}, http.StatusBadGateway, false},
		{"403", func(s *apitest.Server) error {
			return s.Faults().FailRequests(apitest.VerbWatch, cms, 1, http.StatusForbidden, 0)
		}, http.StatusForbidden, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.create("a")
			rec := newRecStore()
			r := e.run(e.options(rec))
			synced(t, rec, 1)
			e.waitWatch(0)
			if err := tc.fail(e.srv); err != nil {
				t.Fatal(err)
			}
			seq := e.srv.LastRequestSeq()
			e.must(e.srv.Faults().CutWatchesAfter(cms, 1))
			rvX := e.create("x")
			err := e.waitError(tc.name, func(err error) bool {
				var re *Error
				return errors.As(err, &re) && re.Op == "watch"
			})
			if !strings.Contains(err.Error(), "configmaps.v1") {
				t.Fatalf("error %v does not name the resource", err)
			}
			if tc.relist {
				synced(t, rec, 2)
				ls := e.requests(apitest.VerbList, 0)
				if len(ls) != 2 || ls[1].Param("resourceVersion") != rvX {
					t.Fatalf("want a relist at %s\n%s", rvX, e.describeRequests())
				}
				if st := r.Stats(); st.Relists != 1 || st.WatchErrors != 1 {
					t.Fatalf("stats %+v", st)
				}
				return
			}
			// Two failed attempts, then the watch opens: all at x's resourceVersion.
			ws := e.waitRequests(apitest.VerbWatch, seq, 3)
			for i, w := range ws {
				want := tc.code
				if i == 2 {
					want = http.StatusOK
				}
				if w.Code != want || w.Param("resourceVersion") != rvX {
					t.Fatalf("want two failed watches (%d) then one open, all at %s\n%s", tc.code, rvX, e.describeRequests())
				}
			}
			rvY := e.create("y")
			rec.waitFor(t, "y", func(s *recStore) bool { o, ok := lastOp(s.ops, "rv"); return ok && o.RV == rvY })
			if n := len(e.requests(apitest.VerbList, 0)); n != 1 {
				t.Fatalf("%d LISTs, want 1 (no relist)\n%s", n, e.describeRequests())
			}
			// Go's HTTP transport retries a request that a reused connection dropped before
			// answering, once, by itself: two resets may reach the reflector as one error.
			st := r.Stats()
			if st.Relists != 0 || st.WatchErrors == 0 || st.WatchErrors > 2 || st.Backoffs != st.WatchErrors ||
				(tc.code != apitest.CodeDropped && st.WatchErrors != 2) {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// A frame that does not decode ends the watch with an error: relist.
func TestCorruptFrameRelists(t *testing.T) {
	e := newEnv(t)
	e.create("a")
	rec := newRecStore()
	e.run(e.options(rec))
	synced(t, rec, 1)
	e.waitWatch(0)
	e.must(e.srv.Faults().SendCorruptFrame(cms))
	synced(t, rec, 2)
	e.waitError("decode error", func(err error) bool { return errors.Is(err, apiclient.ErrMalformedEvent) })
}

// The resync timer calls Store.Resync when ShouldResync agrees, and sends nothing to the
// server.
func TestResyncCallsStoreResync(t *testing.T) {
	e := newEnv(t)
	e.create("a")
	rec := newRecStore()
	var asked atomic.Int64
	opts := e.options(rec)
	opts.ResyncPeriod = 5 * time.Millisecond
	opts.ShouldResync = func() bool { return asked.Add(1)%2 == 0 }
	r := e.run(opts)
	synced(t, rec, 1)
	rec.waitFor(t, "3 resyncs", func(s *recStore) bool {
		n := 0
		for _, o := range s.ops {
			if o.Kind == "resync" {
				n++
			}
		}
		return n >= 3
	})
	resyncs := rec.count("resync")
	if a := asked.Load(); a < int64(2*resyncs) {
		t.Fatalf("ShouldResync asked %d times for %d resyncs: it was not consulted", a, resyncs)
	}
	if l, w := len(e.requests(apitest.VerbList, 0)), len(e.requests(apitest.VerbWatch, 0)); l != 1 || w != 1 {
		t.Fatalf("resync caused requests\n%s", e.describeRequests())
	}
	if r.Stats().Resyncs == 0 {
		t.Fatalf("stats %+v", r.Stats())
	}
}

// A failing Resync ends the watch with an error and a relist.
func TestResyncErrorRelists(t *testing.T) {
	e := newEnv(t)
	rec := newRecStore()
	rec.failResync = errors.New("store broken")
	opts := e.options(rec)
	opts.ResyncPeriod = 5 * time.Millisecond
	e.run(opts)
	synced(t, rec, 2)
	err := e.waitError("resync error", func(err error) bool {
		var re *Error
		return errors.As(err, &re) && re.Op == "resync"
	})
	if !strings.Contains(err.Error(), "store broken") {
		t.Fatalf("error %v", err)
	}
}

// Errors name the resource; the bearer token never reaches the log.
func TestErrorsNameResourceAndLogsHideToken(t *testing.T) {
	const token = "tok-0123456789-very-secret"
	e := newEnvWithOptions(t, apitest.Options{Token: token})
	if err := e.srv.Faults().FailRequests(apitest.VerbList, cms, 2, http.StatusInternalServerError, 0); err != nil {
		t.Fatal(err)
	}
	rec := newRecStore()
	e.run(e.options(rec))
	synced(t, rec, 1)
	err := e.waitError("list 500", meta.IsInternalError)
	var re *Error
	if !errors.As(err, &re) || re.Reflector != "configmaps.v1" || re.Op != "list" ||
		!strings.HasPrefix(err.Error(), "reflector configmaps.v1: list: ") {
		t.Fatalf("error %q (%#v)", err, err)
	}
	e.waitWatch(0)
	e.must(e.srv.Faults().ExpireWatches(cms))
	synced(t, rec, 2)
	if logs := e.log.all(); strings.Contains(logs, token) || !strings.Contains(logs, "configmaps.v1") {
		t.Fatalf("logs leak the token or do not name the resource:\n%s", logs)
	}
}

// Staleness is bounded by the time since the last sign of life.
func TestStaleness(t *testing.T) {
	e := newEnv(t)
	rec := newRecStore()
	before := time.Now()
	r := e.run(e.options(rec))
	synced(t, rec, 1)
	if s := r.Staleness(); s > time.Since(before) || s < 0 {
		t.Fatalf("Staleness %v after a sync, more than the %v since the start", s, time.Since(before))
	}
	e.waitWatch(0)
	mark := time.Now()
	e.create("x")
	rec.waitFor(t, "add of x", func(s *recStore) bool { _, ok := lastOp(s.ops, "add"); return ok && len(opsOf(s.ops, "rv")) >= 2 })
	if s := r.Staleness(); s > time.Since(mark) {
		t.Fatalf("Staleness %v after an event, more than the %v since it was sent", s, time.Since(mark))
	}
	if st := r.Stats(); st.LastEvent.Before(st.LastSync) {
		t.Fatalf("stats %+v", st)
	}
}

// ListAndWatch returns nil when its context is cancelled, and refuses to run twice.
func TestListAndWatchCancel(t *testing.T) {
	e := newEnv(t)
	rec := newRecStore()
	r := e.options(rec).new()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.ListAndWatch(ctx) }()
	synced(t, rec, 1)
	e.waitWatch(0)
	if err := r.ListAndWatch(ctx); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("second ListAndWatch = %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("ListAndWatch after cancel = %v", err)
	}
}

// A 410 on a continue page (the pages' snapshot was compacted) falls back to one unpaged
// list, at the snapshot's resourceVersion so the store cannot go back in time. The
// incremental store is held inside the relist's first page while the server compacts.
func TestContinueExpiredFallsBackToFullList(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		e.create(n)
	}
	rec := newRecStore()
	opts := e.options(incrStore{rec})
	opts.PageSize = 2
	r := e.run(opts)
	synced(t, rec, 1)
	e.waitWatch(0)
	entered, release := rec.gate("default/a")
	defer release()
	seq := e.srv.LastRequestSeq()
	e.must(e.srv.Faults().ExpireWatches(cms))
	<-entered
	snapshot := e.srv.ResourceVersion()
	e.create("f")
	if err := e.srv.Compact(cms); err != nil {
		t.Fatal(err)
	}
	release()
	synced(t, rec, 2)
	e.waitContent(rec)
	ls := e.requests(apitest.VerbList, seq)
	if len(ls) != 3 || ls[1].Param("continue") == "" || ls[1].Code != http.StatusGone ||
		ls[2].HasParam("continue") || ls[2].HasParam("limit") || ls[2].Param("resourceVersion") != snapshot {
		t.Fatalf("want page 1, an expired continue page, one unpaged list at %s\n%s", snapshot, e.describeRequests())
	}
	ops, _ := rec.snapshot()
	got := opsOf(ops, "begin", "finish", "abort")
	if len(got) != 6 || got[2].Kind != "begin" || got[3].Kind != "abort" || got[4].Kind != "begin" ||
		got[5].Kind != "finish" || got[5].Items != 6 {
		t.Fatalf("store calls %v, want (after the first sync) begin, abort, begin, finish(6)", ops)
	}
	if st := r.Stats(); st.Lists != 2 || st.ListRequests != 4 {
		t.Fatalf("stats %+v", st)
	}
}

// While the server is down (connection refused) the reflector keeps re-watching from its
// last synced resourceVersion with backoff, instead of relisting. When a fresh server comes
// back on the same address, older than that resourceVersion ("too large"), it relists at "".
func TestConnectionRefusedRewatchesThenTooLargeRelists(t *testing.T) {
	a := apitest.NewServer()
	defer a.Close()
	addr := strings.TrimPrefix(a.URL, "http://")
	cfg := a.Config()
	cfg.MaxRetries = -1
	cfg.WatchProtocol = apiclient.WatchChunked
	c, err := apiclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	e := &env{t: t, srv: a, log: &logRecorder{}, errsCh: make(chan struct{}),
		res: apiclient.NewResource[*testobj.ConfigMap](c, meta.GroupVersionResource{Version: "v1", Resource: cms})}
	for _, n := range []string{"a1", "a2", "a3"} {
		e.create(n)
	}
	rec := newRecStore()
	r := e.run(e.options(rec))
	synced(t, rec, 1)
	e.waitWatch(0)
	lastRV := e.create("a4") // one event, so the closing watch is not "very short"
	rec.waitFor(t, "a4", func(s *recStore) bool { o, ok := lastOp(s.ops, "rv"); return ok && o.RV == lastRV })

	a.Close()
	e.waitError("connection refused", isErr(syscall.ECONNREFUSED))
	b, err := apitest.Start(apitest.Options{Addr: addr, TooLargeResourceVersionWait: -1})
	if err != nil {
		t.Fatalf("restart on %s: %v", addr, err)
	}
	defer b.Close()
	e.srv = b
	e.create("b-only")
	synced(t, rec, 2)
	e.waitContent(rec)
	reqs := b.RequestsMatching(apitest.RequestFilter{Resource: cms})
	if len(reqs) < 3 || reqs[0].Verb != apitest.VerbWatch || reqs[0].Param("resourceVersion") != lastRV ||
		reqs[1].Verb != apitest.VerbList || reqs[1].Param("resourceVersion") != lastRV || reqs[1].Code != http.StatusGatewayTimeout ||
		reqs[2].Verb != apitest.VerbList || reqs[2].HasParam("resourceVersion") {
		t.Fatalf("want WATCH at %s (too large), LIST at %s (504), LIST at \"\"\n%s", lastRV, lastRV, e.describeRequests())
	}
	if st := r.Stats(); st.Relists != 1 || st.Backoffs == 0 {
		t.Fatalf("stats %+v", st)
	}
}

// A "too large resourceVersion" answer to a relist, in the words of any kube-apiserver
// version, leads to a list at "" at once (before 1.18.6 the answer had no typed cause, and a
// client that misses it keeps relisting at a resourceVersion the server does not have).
func TestTooLargeResourceVersionOfEveryServerVersionListsAtEmpty(t *testing.T) {
	msg := "Too large resource version: 999, current: 5"
	for _, tc := range []struct {
		name    string
		details *meta.StatusDetails
	}{
		{"1.18.6+", &meta.StatusDetails{RetryAfterSeconds: 1, Causes: []meta.StatusCause{{Type: meta.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}}},
		{"1.17-1.18.5", &meta.StatusDetails{RetryAfterSeconds: 1, Causes: []meta.StatusCause{{Message: "Too large resource version"}}}},
		{"before-1.17", &meta.StatusDetails{RetryAfterSeconds: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.create("a")
			rec := newRecStore()
			e.run(e.options(rec))
			rv := synced(t, rec, 1)
			e.waitWatch(0)
			st := &meta.Status{Status: "Failure", Code: http.StatusGatewayTimeout, Reason: meta.StatusReasonTimeout,
				Message: msg, Details: tc.details}
			if err := e.srv.Faults().FailRequestsWithStatus(apitest.VerbList, cms, 1, st); err != nil {
				t.Fatal(err)
			}
			seq := e.srv.LastRequestSeq()
			e.must(e.srv.Faults().ExpireWatches(cms))
			synced(t, rec, 2)
			ls := e.requests(apitest.VerbList, seq)
			if len(ls) != 2 || ls[0].Param("resourceVersion") != rv || ls[0].Code != http.StatusGatewayTimeout ||
				ls[1].HasParam("resourceVersion") || ls[1].Code != http.StatusOK {
				t.Fatalf("want a relist at %s (504), then one at \"\"\n%s", rv, e.describeRequests())
			}
		})
	}
}

// The reflector's LIST goes out with the client's retries off: a failing LIST reaches the
// reflector (its WatchErrorHandler) before any second LIST is sent, and the second one is the
// reflector's own attempt after its backoff. With the client's retries (5 attempts from
// 250 ms, the default Config this env uses) the 500 would have been absorbed by the client.
func TestFailingListReachesTheReflectorAtOnce(t *testing.T) {
	e := newEnv(t)
	e.create("a")
	if err := e.srv.Faults().FailRequests(apitest.VerbList, cms, 1, http.StatusInternalServerError, 0); err != nil {
		t.Fatal(err)
	}
	listsWhenReported := make(chan int, 10)
	rec := newRecStore()
	opts := e.options(rec)
	opts.WatchErrorHandler = func(ctx context.Context, err error) {
		if meta.IsInternalError(err) {
			listsWhenReported <- len(e.requests(apitest.VerbList, 0))
		}
		e.handleError(ctx, err)
	}
	r := e.run(opts)
	synced(t, rec, 1)
	var seen int
	select {
	case seen = <-listsWhenReported:
	default:
		t.Fatal("the 500 never reached the WatchErrorHandler: the client retried it")
	}
	if seen != 1 {
		t.Fatalf("the reflector learnt of the 500 after %d LIST requests, want 1 (no client retry)\n%s", seen, e.describeRequests())
	}
	ls := e.requests(apitest.VerbList, 0)
	if len(ls) != 2 || ls[0].Code != http.StatusInternalServerError || ls[1].Code != http.StatusOK {
		t.Fatalf("want LIST 500 then LIST 200\n%s", e.describeRequests())
	}
	var re *Error
	if err := e.waitError("500", meta.IsInternalError); !errors.As(err, &re) || re.Op != "list" {
		t.Fatalf("error %v", err)
	}
	if st := r.Stats(); st.ListErrors != 1 || st.ListRequests != 2 || st.Backoffs == 0 {
		t.Fatalf("stats %+v", st)
	}
}

// If the first list at resourceVersion 0 comes back paged, the server has no watch cache
// (the watch cache ignores limit at "0"): later lists are paged too, because an unpaged list
// at a resourceVersion would be served whole from storage. With a watch cache the first list
// comes back whole and relists at the last resourceVersion are unpaged.
func TestPagedFirstListKeepsLaterListsPaged(t *testing.T) {
	for _, watchCache := range []bool{false, true} {
		t.Run(fmt.Sprintf("watchCache=%v", watchCache), func(t *testing.T) {
			storeKinds(t, func(t *testing.T, rec *recStore, store Store[*testobj.ConfigMap]) {
				e := newEnvWithOptions(t, apitest.Options{NoWatchCache: !watchCache})
				const n = DefaultPageSize + 1
				for i := range n {
					e.create(fmt.Sprintf("cm-%04d", i))
				}
				e.run(e.options(store))
				rv := synced(t, rec, 1)
				first := e.requests(apitest.VerbList, 0)
				wantPages := 2
				if watchCache {
					wantPages = 1
				}
				if len(first) != wantPages || first[0].Param("resourceVersion") != "0" || first[0].Param("limit") != "500" {
					t.Fatalf("first list: want %d pages from resourceVersion=0&limit=500\n%s", wantPages, e.describeRequests())
				}
				e.waitWatch(0)
				seq := e.srv.LastRequestSeq()
				e.must(e.srv.Faults().ExpireWatches(cms))
				synced(t, rec, 2)
				relist := e.requests(apitest.VerbList, seq)
				if relist[0].Param("resourceVersion") != rv {
					t.Fatalf("relist %s, want resourceVersion=%s", relist[0].Query.Encode(), rv)
				}
				if watchCache {
					if len(relist) != 1 || relist[0].HasParam("limit") {
						t.Fatalf("with a watch cache, want one unpaged relist\n%s", e.describeRequests())
					}
				} else if len(relist) != 2 || relist[0].Param("limit") != "500" || relist[1].Param("continue") == "" {
					t.Fatalf("without a watch cache, want the relist paged like the first list\n%s", e.describeRequests())
				}
				if got := len(storeContent(rec)); got != n {
					t.Fatalf("store holds %d objects, want %d", got, n)
				}
			})
		})
	}
}

// With ResumeFrom the first cycle watches from that resourceVersion without listing; a
// watch that cannot start there (410) relists.
func TestResumeFromWatchesWithoutListing(t *testing.T) {
	e := newEnv(t)
	e.create("a")
	rv := e.srv.ResourceVersion()
	rvB := e.create("b")
	rec := newRecStore()
	opts := e.options(rec)
	opts.ResumeFrom = rv
	r := e.run(opts)
	rec.waitFor(t, "b from the watch", func(s *recStore) bool {
		o, ok := lastOp(s.ops, "add")
		return ok && o.Key == "default/b" && o.RV == rvB
	})
	if lists := e.requests(apitest.VerbList, 0); len(lists) != 0 {
		t.Fatalf("a resumed reflector listed:\n%s", e.describeRequests())
	}
	if w := e.waitRequests(apitest.VerbWatch, 0, 1)[0]; w.Param("resourceVersion") != rv {
		t.Fatalf("first watch %s, want resourceVersion=%s", w.Query.Encode(), rv)
	}
	if got := r.LastSyncResourceVersion(); got != rvB {
		t.Fatalf("LastSyncResourceVersion %q, want %q", got, rvB)
	}

	// Resumed from a compacted resourceVersion: 410, then a list.
	e2 := newEnv(t)
	old := e2.create("x")
	e2.create("y")
	if err := e2.srv.Compact(cms); err != nil {
		t.Fatal(err)
	}
	rec2 := newRecStore()
	opts2 := e2.options(rec2)
	opts2.ResumeFrom = old
	e2.run(opts2)
	synced(t, rec2, 1)
	e2.waitError("410 Expired", meta.IsResourceExpired)
	if lists := e2.requests(apitest.VerbList, 0); len(lists) == 0 {
		t.Fatalf("no relist after the 410:\n%s", e2.describeRequests())
	}
}
