package reflector

import (
	"net/http"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// isWatchList reports whether a request is a streaming list.
func isWatchList(r apitest.Request) bool {
	return r.Verb == apitest.VerbWatch && r.Param("sendInitialEvents") == "true"
}

// With a server that supports it, the initial state comes from a streaming list (no LIST at
// all) and the same stream goes on as the watch.
func TestWatchListUsedWhenSupported(t *testing.T) {
	storeKinds(t, func(t *testing.T, rec *recStore, store Store[*testobj.ConfigMap]) {
		e := newEnv(t)
		for _, n := range []string{"a", "b", "c"} {
			e.create(n)
		}
		opts := e.options(store)
		opts.WatchList = WatchListAuto
		r := e.run(opts)
		rv := synced(t, rec, 1)
		if rv != e.srv.ResourceVersion() {
			t.Fatalf("synced at %s, want the end bookmark's %s", rv, e.srv.ResourceVersion())
		}
		if got, want := storeContent(rec), e.serverContent(); !sameContent(got, want) {
			t.Fatalf("store %v, server %v", got, want)
		}
		w := e.waitRequests(apitest.VerbWatch, 0, 1)[0]
		if !isWatchList(w) || w.Param("resourceVersionMatch") != "NotOlderThan" || w.HasParam("resourceVersion") ||
			w.Param("allowWatchBookmarks") != "true" || !watchTimeoutOK(w) {
			t.Fatalf("streaming list %s, want sendInitialEvents=true, resourceVersionMatch=NotOlderThan, no resourceVersion, bookmarks, timeout", w.Query.Encode())
		}
		rvX := e.create("x")
		rec.waitFor(t, "x on the same stream", func(s *recStore) bool { o, ok := lastOp(s.ops, "rv"); return ok && o.RV == rvX })
		if l, ws := len(e.requests(apitest.VerbList, 0)), len(e.requests(apitest.VerbWatch, 0)); l != 0 || ws != 1 {
			t.Fatalf("want one streaming list and nothing else\n%s", e.describeRequests())
		}
		if st := r.Stats(); st.WatchListSyncs != 1 || st.Lists != 1 || st.ListedItems != 3 || st.Events != 1 || st.WatchListFallbacks != 0 {
			t.Fatalf("stats %+v", st)
		}
		if _, ok := store.(incrStore); ok {
			ops, _ := rec.snapshot()
			got := opsOf(ops, "begin", "radd", "finish", "abort", "replace")
			if len(got) != 5 || got[0].Kind != "begin" || got[4].Kind != "finish" || got[4].Items != 3 {
				t.Fatalf("incremental store calls %v", got)
			}
		}
	})
}

// A relist by streaming list asks for the last synced resourceVersion.
func TestWatchListRelistAtLastRV(t *testing.T) {
	e := newEnv(t)
	e.create("a")
	rec := newRecStore()
	opts := e.options(rec)
	opts.WatchList = WatchListAuto
	r := e.run(opts)
	synced(t, rec, 1)
	e.waitWatch(0)
	rvX := e.create("x")
	rec.waitFor(t, "x", func(s *recStore) bool { o, ok := lastOp(s.ops, "rv"); return ok && o.RV == rvX })
	seq := e.srv.LastRequestSeq()
	e.must(e.srv.Faults().ExpireWatches(cms))
	synced(t, rec, 2)
	w := e.waitRequests(apitest.VerbWatch, seq, 1)[0]
	if !isWatchList(w) || w.Param("resourceVersion") != rvX {
		t.Fatalf("relist %s, want a streaming list at %s", w.Query.Encode(), rvX)
	}
	if len(e.requests(apitest.VerbList, 0)) != 0 || r.Stats().WatchListSyncs != 2 {
		t.Fatalf("stats %+v\n%s", r.Stats(), e.describeRequests())
	}
}

// A server that refuses sendInitialEvents (422): LIST at "0" then WATCH, and the refusal is
// remembered (WatchListAuto) or not (WatchListOn).
func TestWatchListRefusedFallsBackToList(t *testing.T) {
	for _, mode := range []WatchListMode{WatchListAuto, WatchListOn} {
		t.Run(mode.String(), func(t *testing.T) {
			e := newEnvWithOptions(t, apitest.Options{InitialEvents: apitest.InitialEventsRefused})
			e.create("a")
			rec := newRecStore()
			opts := e.options(rec)
			opts.WatchList = mode
			r := e.run(opts)
			listRV := synced(t, rec, 1)
			e.waitWatch(0)
			all := e.srv.RequestsMatching(apitest.RequestFilter{Resource: cms})
			if len(all) != 3 || !isWatchList(all[0]) || all[0].Code != http.StatusUnprocessableEntity ||
				all[1].Verb != apitest.VerbList || all[1].Param("resourceVersion") != "0" || all[1].Param("limit") != "500" ||
				all[2].Verb != apitest.VerbWatch || isWatchList(all[2]) || all[2].Param("resourceVersion") != listRV {
				t.Fatalf("want refused streaming list, LIST at 0, WATCH at %s\n%s", listRV, e.describeRequests())
			}
			e.waitError("unsupported", isErr(ErrWatchListUnsupported))
			seq := e.srv.LastRequestSeq()
			e.must(e.srv.Faults().ExpireWatches(cms))
			synced(t, rec, 2)
			next := e.srv.RequestsMatching(apitest.RequestFilter{Resource: cms, After: seq})[0]
			if mode == WatchListAuto && next.Verb != apitest.VerbList {
				t.Fatalf("auto: the refusal was not remembered\n%s", e.describeRequests())
			}
			if mode == WatchListOn && !isWatchList(next) {
				t.Fatalf("on: the relist did not try a streaming list\n%s", e.describeRequests())
			}
			want := uint64(1)
			if mode == WatchListOn {
				want = 2
			}
			if st := r.Stats(); st.WatchListFallbacks != want || st.WatchListSyncs != 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// WatchListReprobe: after it, WatchListAuto tries a streaming list again.
func TestWatchListReprobe(t *testing.T) {
	e := newEnvWithOptions(t, apitest.Options{InitialEvents: apitest.InitialEventsRefused})
	rec := newRecStore()
	opts := e.options(rec)
	opts.WatchList = WatchListAuto
	opts.WatchListReprobe = time.Nanosecond
	e.run(opts)
	synced(t, rec, 1)
	e.waitWatch(0)
	seq := e.srv.LastRequestSeq()
	e.must(e.srv.Faults().ExpireWatches(cms))
	synced(t, rec, 2)
	if next := e.srv.RequestsMatching(apitest.RequestFilter{Resource: cms, After: seq})[0]; !isWatchList(next) {
		t.Fatalf("no new streaming list after the reprobe interval\n%s", e.describeRequests())
	}
}

// A server that ignores sendInitialEvents (no end bookmark): fall back to LIST after
// WatchListTimeout without progress. What the incremental store got from the ignored
// stream is aborted, then replaced by the LIST.
func TestWatchListIgnoredFallsBackAfterTimeout(t *testing.T) {
	storeKinds(t, func(t *testing.T, rec *recStore, store Store[*testobj.ConfigMap]) {
		e := newEnvWithOptions(t, apitest.Options{InitialEvents: apitest.InitialEventsIgnored})
		e.create("a")
		e.create("b")
		opts := e.options(store)
		opts.WatchList = WatchListAuto
		opts.WatchListTimeout = 200 * time.Millisecond
		r := e.run(opts)
		listRV := synced(t, rec, 1)
		e.waitContent(rec)
		e.waitRequests(apitest.VerbWatch, 0, 2)
		all := e.srv.RequestsMatching(apitest.RequestFilter{Resource: cms})
		if len(all) < 3 || !isWatchList(all[0]) || all[1].Verb != apitest.VerbList || all[1].Param("resourceVersion") != "0" ||
			all[2].Verb != apitest.VerbWatch || all[2].Param("resourceVersion") != listRV {
			t.Fatalf("want ignored streaming list, LIST at 0, WATCH at %s\n%s", listRV, e.describeRequests())
		}
		if gap := all[1].Time.Sub(all[0].Time); gap < opts.WatchListTimeout {
			t.Fatalf("fell back after %v, before the WatchListTimeout of %v", gap, opts.WatchListTimeout)
		}
		e.waitError("unsupported", isErr(ErrWatchListUnsupported))
		ops, _ := rec.snapshot()
		if _, ok := store.(incrStore); ok {
			got := opsOf(ops, "begin", "finish", "abort", "replace")
			if len(got) != 4 || got[0].Kind != "begin" || got[1].Kind != "abort" || got[2].Kind != "begin" || got[3].Kind != "finish" {
				t.Fatalf("incremental store calls %v, want begin, abort, begin, finish", got)
			}
		} else if got := opsOf(ops, "add", "update", "delete", "replace"); len(got) != 1 {
			t.Fatalf("store calls %v, want only the LIST's replace", got)
		}
		if st := r.Stats(); st.WatchListFallbacks != 1 || st.WatchListSyncs != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// A streaming list that fails for another reason (here 500) falls back to LIST for this
// sync only: the next relist tries a streaming list again.
func TestWatchListFailureNotRemembered(t *testing.T) {
	e := newEnv(t)
	if err := e.srv.Faults().FailRequests(apitest.VerbWatch, cms, 1, http.StatusInternalServerError, 0); err != nil {
		t.Fatal(err)
	}
	rec := newRecStore()
	opts := e.options(rec)
	opts.WatchList = WatchListAuto
	r := e.run(opts)
	synced(t, rec, 1)
	e.waitWatch(0)
	all := e.srv.RequestsMatching(apitest.RequestFilter{Resource: cms})
	if !isWatchList(all[0]) || all[0].Code != http.StatusInternalServerError || all[1].Verb != apitest.VerbList {
		t.Fatalf("want a failed streaming list then LIST\n%s", e.describeRequests())
	}
	seq := e.srv.LastRequestSeq()
	e.must(e.srv.Faults().ExpireWatches(cms))
	synced(t, rec, 2)
	if next := e.srv.RequestsMatching(apitest.RequestFilter{Resource: cms, After: seq})[0]; !isWatchList(next) {
		t.Fatalf("a transient failure disabled streaming lists\n%s", e.describeRequests())
	}
	if st := r.Stats(); st.WatchListFallbacks != 1 || st.WatchListSyncs != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// A streaming list at an expired resourceVersion is retried at once at "".
func TestWatchListExpiredRetriesAtEmptyRV(t *testing.T) {
	e := newEnv(t)
	e.create("a")
	rec := newRecStore()
	opts := e.options(rec)
	opts.WatchList = WatchListAuto
	r := e.run(opts)
	rv := synced(t, rec, 1)
	e.waitWatch(0)
	if err := e.srv.Faults().FailRequests(apitest.VerbWatch, cms, 1, http.StatusGone, 0); err != nil {
		t.Fatal(err)
	}
	seq := e.srv.LastRequestSeq()
	e.must(e.srv.Faults().ExpireWatches(cms))
	synced(t, rec, 2)
	ws := e.requests(apitest.VerbWatch, seq)
	if len(ws) != 2 || !isWatchList(ws[0]) || ws[0].Param("resourceVersion") != rv || ws[0].Code != http.StatusGone ||
		!isWatchList(ws[1]) || ws[1].HasParam("resourceVersion") {
		t.Fatalf("want a streaming list at %s (410), then one at \"\"\n%s", rv, e.describeRequests())
	}
	if len(e.requests(apitest.VerbList, 0)) != 0 || r.Stats().WatchListFallbacks != 0 {
		t.Fatalf("fell back to LIST\n%s", e.describeRequests())
	}
}

// 429 with Retry-After on a streaming list: back off at least that long, then stream again.
func TestWatchListRetryAfter(t *testing.T) {
	e := newEnv(t)
	e.create("a")
	if err := e.srv.Faults().FailRequests(apitest.VerbWatch, cms, 1, http.StatusTooManyRequests, time.Second); err != nil {
		t.Fatal(err)
	}
	rec := newRecStore()
	opts := e.options(rec)
	opts.WatchList = WatchListAuto
	e.run(opts)
	synced(t, rec, 1)
	ws := e.requests(apitest.VerbWatch, 0)
	if len(ws) != 2 || ws[0].Code != http.StatusTooManyRequests || !isWatchList(ws[1]) {
		t.Fatalf("want a 429 then a streaming list\n%s", e.describeRequests())
	}
	if gap := ws[1].Time.Sub(ws[0].Time); gap < time.Second {
		t.Fatalf("retried after %v, before the Retry-After of 1s", gap)
	}
	if len(e.requests(apitest.VerbList, 0)) != 0 {
		t.Fatalf("fell back to LIST\n%s", e.describeRequests())
	}
	e.waitError("429", meta.IsTooManyRequests)
}
