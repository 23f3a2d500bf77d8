package controller

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/promtest"
)

// TestManagerExportsTheReflectorsFallbacksDeadlinesAndBadResourceVersions: what a server
// makes the reflector give up, time out on or skip is on /metrics, one series per
// reflector: a WebSocket watch refused (a fallback to chunked HTTP), a bookmark without a
// resourceVersion, a re-watch that is never answered (the watch header deadline).
func TestManagerExportsTheReflectorsFallbacksDeadlinesAndBadResourceVersions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newTestServerWithOptions(t, apitest.Options{InMemory: true, RefuseWebSocket: true})
		if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "a"}}); err != nil {
			t.Fatal(err)
		}
		cfg := srv.Config()
		cfg.WatchResponseHeaderTimeout = 5 * time.Second
		// Without gzip, so that the streaming list asks for WebSocket first (a client asking
		// gzip sends it over chunked HTTP at once, and nothing falls back).
		cfg.Compression = apiclient.CompressionNone
		m := newManagerWithConfig(t, cfg, ManagerOptions{})
		got := make(chan Request, 10)
		configMapController(t, m, "cm", forward(got))
		startManager(t, m)
		expect(t, got, Request{"default", "a"}, "the listed object")
		name := map[string]string{"name": "configmaps.v1"}
		want := func(fallbacks, deadlines, bad float64) {
			t.Helper()
			synctest.Wait()
			// A scrape reuses Stats read at most statsCacheFor ago; the bubble's
			// clock moves only when told.
			time.Sleep(2 * statsCacheFor)
			fams, err := promtest.Parse(scrapeText(t, m))
			if err != nil {
				t.Fatal(err)
			}
			var wrong []string
			for _, c := range []struct {
				metric string
				want   float64
			}{
				{"informerkit_reflector_fallbacks_total", fallbacks},
				{"informerkit_reflector_deadlines_total", deadlines},
				{"informerkit_reflector_bad_resource_versions_total", bad},
			} {
				if v, ok := sampleValue(fams, c.metric, name); !ok || v != c.want {
					wrong = append(wrong, fmt.Sprintf("%s = %v (present %v), want %v", c.metric, v, ok, c.want))
				} else if f := fams[c.metric]; f.Type != "counter" {
					wrong = append(wrong, fmt.Sprintf("%s is a %s, want a counter", c.metric, f.Type))
				}
			}
			if len(wrong) > 0 {
				t.Fatalf("%s\nrequests:\n%s", strings.Join(wrong, "\n"), describeRequests(srv))
			}
		}
		// The first watch asked for WebSocket, was refused, and went over chunked HTTP.
		want(1, 0, 0)

		if n, err := srv.Faults().SendWatchEvent("configmaps", apiclient.Bookmark,
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{}}); n != 1 || err != nil {
			t.Fatalf("bookmark sent on %d watches (%v), want 1", n, err)
		}
		want(1, 0, 1)

		// The next watch is never answered: after the watch header deadline the reflector
		// gives up on it and watches again (over chunked HTTP directly: no new fallback).
		if err := srv.Faults().HangRequests(apitest.VerbWatch, "configmaps", 1); err != nil {
			t.Fatal(err)
		}
		rewatched := srv.NextWatch("configmaps")
		if _, err := srv.Faults().CutWatches("configmaps"); err != nil {
			t.Fatal(err)
		}
		select {
		case <-rewatched:
		case <-time.After(testTimeout):
			t.Fatalf("no watch after the hung one\n%s", describeRequests(srv))
		}
		want(1, 1, 1)
	})
}

// describeRequests lists the server's requests, one a line, for a failure message.
func describeRequests(srv *apitest.Server) string {
	var b strings.Builder
	for _, r := range srv.Requests() {
		fmt.Fprintf(&b, "%v %s %s %d\n", r.Verb, r.Resource, r.Query.Encode(), r.Code)
	}
	return b.String()
}
