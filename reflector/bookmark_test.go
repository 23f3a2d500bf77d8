package reflector

import (
	"errors"
	"testing"
	"testing/synctest"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
)

// endAnnotation is the annotation of the bookmark that ends a streaming list's initial events.
var endAnnotation = map[string]any{apiclient.InitialEventsEndAnnotation: "true"}

// TestAMalformedEndBookmarkNeverBecomesTheSyncPoint: a streaming list whose initial events
// end with a bookmark the reflector cannot use fails, is reported, and the reflector lists
// instead: the store is synced by the LIST, at the LIST's resourceVersion. An end bookmark
// without a resourceVersion used to be accepted as the sync point at "", so that a later
// break of the stream resumed from "" and could miss deletions (client-go accepts it; a
// difference written in docs/hostile-servers.md). The server here ignores
// sendInitialEvents and the test sends the bookmark itself, as a broken server does.
func TestAMalformedEndBookmarkNeverBecomesTheSyncPoint(t *testing.T) {
	cases := []struct {
		name   string
		object map[string]any // nil: "object": null
		want   error
	}{
		{"end bookmark without a resourceVersion", map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"annotations": endAnnotation}}, ErrBadBookmark},
		{"end bookmark with an empty resourceVersion", map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"resourceVersion": "", "annotations": endAnnotation}}, ErrBadBookmark},
		{"bookmark without the annotation", map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"resourceVersion": "1"}}, ErrWatchListUnsupported},
		{"annotation other than true", map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"resourceVersion": "1", "annotations": map[string]any{apiclient.InitialEventsEndAnnotation: "false"}}}, ErrWatchListUnsupported},
		{"null bookmark", nil, ErrWatchListIncomplete},
	}
	for _, tc := range transports {
		for _, c := range cases {
			t.Run(tc.name+"/"+c.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					e, _ := newNetEnv(t, tc, apitest.Options{InitialEvents: apitest.InitialEventsIgnored}, nil)
					e.create("a")
					e.create("b")
					rec := newRecStore()
					opts := e.options(incrStore{rec})
					opts.WatchList = WatchListAuto
					r := e.run(opts)
					w := e.waitWatch(0)
					if w.Query.Get("sendInitialEvents") != "true" {
						t.Fatalf("first watch %v is not a streaming list", w.Query)
					}
					synctest.Wait() // the initial events are out
					e.must(e.srv.Faults().SendWatchEvent(cms, apiclient.Bookmark, c.object))
					err := e.waitError(c.name, isErr(c.want))
					if !errors.Is(err, ErrWatchListUnsupported) && !errors.Is(err, ErrWatchListIncomplete) {
						t.Errorf("err = %v, want a failed streaming list", err)
					}
					e.waitContent(rec)
					e.waitRequests(apitest.VerbList, 0, 1)
					synctest.Wait() // the resourceVersion and the counters move after the store has the list
					// Nothing was written since: the LIST is at the server's resourceVersion.
					if rv := r.LastSyncResourceVersion(); rv != e.srv.ResourceVersion() {
						t.Errorf("synced at %q, want the LIST's resourceVersion %q", rv, e.srv.ResourceVersion())
					}
					st := r.Stats()
					if st.WatchListSyncs != 0 || st.WatchListFallbacks != 1 || st.Lists != 1 || st.Fallbacks != 1 {
						t.Errorf("stats: %d streaming syncs, %d streaming fallbacks, %d lists, %d fallbacks; want 0, 1, 1, 1",
							st.WatchListSyncs, st.WatchListFallbacks, st.Lists, st.Fallbacks)
					}
					want := uint64(0)
					if errors.Is(c.want, ErrBadBookmark) {
						want = 1
					}
					if st.BadResourceVersions != want {
						t.Errorf("BadResourceVersions = %d, want %d", st.BadResourceVersions, want)
					}
				})
			})
		}
	}
}

// TestABookmarkWithoutAResourceVersionIsSkipped: in the watch phase, a bookmark without a
// resourceVersion is reported and skipped; the next watch starts from the last usable
// resourceVersion, not from "" (client-go takes "" from it, and its next watch from ""
// receives the current objects as ADDED and none of the deletions since).
func TestABookmarkWithoutAResourceVersionIsSkipped(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e, _ := newNetEnv(t, tc, apitest.Options{}, nil)
				e.create("a")
				rec := newRecStore()
				opts := e.options(rec)
				opts.WatchList = WatchListOff
				r := e.run(opts)
				e.waitContent(rec)
				w := e.waitWatch(0)
				rv := r.LastSyncResourceVersion()
				e.must(e.srv.Faults().SendWatchEvent(cms, apiclient.Bookmark, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{}}))
				e.waitError("bad bookmark", isErr(ErrBadBookmark))
				if got := r.LastSyncResourceVersion(); got != rv {
					t.Errorf("after the bookmark: resourceVersion %q, want %q still", got, rv)
				}
				e.must(e.srv.Faults().CutWatches(cms))
				next := e.waitWatch(w.ID)
				if next.StartRV != rv {
					t.Errorf("re-watched from %q, want %q", next.StartRV, rv)
				}
				synctest.Wait()
				if st := r.Stats(); st.BadResourceVersions != 1 || st.Bookmarks != 0 {
					t.Errorf("stats: %d bad resourceVersions, %d bookmarks; want 1, 0", st.BadResourceVersions, st.Bookmarks)
				}
			})
		})
	}
}
