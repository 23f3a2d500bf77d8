package apitest_test

import (
	"testing"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
)

// TestAWatchFromZeroIsAStreamingList: as the kube-apiserver defaults it (WatchList on), a
// watch from "" or "0" without sendInitialEvents sends the objects and, with bookmarks, the
// initial-events-end bookmark; a server emulating one without WatchList sends no bookmark.
func TestAWatchFromZeroIsAStreamingList(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mode      apitest.InitialEventsMode
		rv        string
		bookmarks bool
		wantEnd   bool
	}{
		{"rv=0 with bookmarks", apitest.InitialEventsSupported, "0", true, true},
		{"rv= with bookmarks", apitest.InitialEventsSupported, "", true, true},
		{"rv=0 without bookmarks", apitest.InitialEventsSupported, "0", false, false},
		{"rv=0, no WatchList", apitest.InitialEventsIgnored, "0", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnvWithOptions(t, apitest.Options{InitialEvents: tc.mode})
			for _, n := range []string{"a", "b"} {
				if _, err := e.s.Create("configmaps", cm(n, nil, nil)); err != nil {
					t.Fatal(err)
				}
			}
			w, err := e.cms.Watch(e.ctx, apiclient.ListOptions{ResourceVersion: tc.rv, AllowWatchBookmarks: tc.bookmarks})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			for range 2 {
				if ev := next(t, w); ev.Type != apiclient.Added {
					t.Fatalf("event %s, want the objects first", ev.Type)
				}
			}
			// A live event marks the end: the end bookmark, if any, comes before it.
			live, _ := e.s.Create("configmaps", cm("live", nil, nil))
			ev := next(t, w)
			gotEnd := ev.Type == apiclient.Bookmark && ev.Object.Annotations[apiclient.InitialEventsEndAnnotation] == "true"
			if gotEnd != tc.wantEnd {
				t.Fatalf("after the objects: %s %v, want the end bookmark %v", ev.Type, ev.Object.Annotations, tc.wantEnd)
			}
			if gotEnd {
				ev = next(t, w)
			}
			if ev.Type != apiclient.Added || ev.Object.ResourceVersion != live.ResourceVersion() {
				t.Fatalf("event %s at %s, want ADDED at %s", ev.Type, ev.Object.ResourceVersion, live.ResourceVersion())
			}
		})
	}
}
