package controller

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/informerkit/informerkit/internal/promtest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// TestManagerExportsThePipelineMetrics: /metrics has every stage of the pipeline, one series
// per informer, handler and controller: the reflector's lists, watches and events, the
// cache, the handler's backlog, the event-to-reconcile latency and the API requests.
func TestManagerExportsThePipelineMetrics(t *testing.T) {
	srv := newTestServer(t)
	for _, n := range []string{"a", "b"} {
		if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": n}}); err != nil {
			t.Fatal(err)
		}
	}
	m := newManager(t, srv, ManagerOptions{})
	got := make(chan Request, 10)
	configMapController(t, m, "cm", forward(got))
	startManager(t, m)
	next(t, got)
	next(t, got)
	if _, err := srv.Create("configmaps", map[string]any{"metadata": map[string]any{"namespace": "default", "name": "c"}}); err != nil {
		t.Fatal(err)
	}
	expect(t, got, Request{"default", "c"}, "new object")
	name := map[string]string{"name": "configmaps.v1"}
	inf := map[string]string{"informer": "configmaps.v1"}
	handler := map[string]string{"informer": "configmaps.v1", "handler": "controller:informer configmaps.v1"}
	host := strings.TrimPrefix(srv.Config().Host, "http://")
	rows := []struct {
		metric string
		labels map[string]string
		min    float64
		max    float64
	}{
		{"informerkit_controller_event_to_reconcile_seconds_count", map[string]string{"controller": "cm"}, 1, 1},
		{"reflector_lists_total", name, 1, 1},
		{"reflector_watches_total", name, 1, 100},
		{"informerkit_reflector_relists_total", name, 0, 0},
		{"informerkit_reflector_events_total", name, 1, 100},
		{"reflector_last_resource_version", name, 1, 1e12},
		{"informerkit_reflector_resource_version_lag", name, 0, 0},
		{"informerkit_informer_cached_objects", inf, 3, 3},
		{"informerkit_informer_queued_deltas", inf, 0, 100},
		{"informerkit_informer_handler_pending", handler, 0, 3},
		{"informerkit_informer_handler_coalesced_total", handler, 0, 0},
		{"informerkit_informer_handler_delivered_total", handler, 3, 3},
		{"informerkit_informer_handler_panics_total", handler, 0, 0},
	}
	// Each stage counts on its own goroutine, after it handed the object on: the reflector
	// counts an event after the store took it, so a reconcile may be counted first. Wait for
	// the state asserted, every row of it, not for one signal that comes before the others.
	var fams map[string]*promtest.Family
	var wrong []string
	check := func() bool {
		var err error
		if fams, err = promtest.Parse(scrapeText(t, m)); err != nil {
			t.Fatal(err)
		}
		wrong = wrong[:0]
		for _, c := range rows {
			if v, ok := sampleValue(fams, c.metric, c.labels); !ok || v < c.min || v > c.max {
				wrong = append(wrong, fmt.Sprintf("%s%v = %v (present %v), want in [%v, %v]", c.metric, c.labels, v, ok, c.min, c.max))
			}
		}
		// The informer lists and watches (one GET at least: a streaming list is one watch),
		// and the manager checks its permissions (POSTs).
		gets := 0.0
		if f := fams["rest_client_requests_total"]; f != nil {
			for _, s := range f.Samples {
				if s.Labels["method"] == "GET" && s.Labels["host"] == host && (s.Labels["code"] == "200" || s.Labels["code"] == "101") {
					gets += s.Value
				}
			}
		}
		if gets < 1 {
			wrong = append(wrong, fmt.Sprintf("rest_client_requests_total: %v successful GETs, want the informer's list or watch", gets))
		}
		if v, _ := sampleValue(fams, "rest_client_request_duration_seconds_count", map[string]string{"verb": "GET", "host": host}); v < gets {
			wrong = append(wrong, fmt.Sprintf("rest_client_request_duration_seconds count = %v, want at least %v", v, gets))
		}
		return len(wrong) == 0
	}
	deadline := time.Now().Add(testTimeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("the metrics never reached the pipeline's state:\n%s", strings.Join(wrong, "\n"))
		}
		<-tick.C
	}
	promtest.CheckHistograms(t, fams)
	for _, counter := range []string{"reflector_lists_total", "informerkit_informer_handler_delivered_total", "rest_client_requests_total"} {
		if f := fams[counter]; f.Type != "counter" {
			t.Errorf("%s is a %s, want a counter", counter, f.Type)
		}
	}
}

// sampleValue returns the value of the sample name{labels} (exactly those labels).
func sampleValue(fams map[string]*promtest.Family, name string, labels map[string]string) (float64, bool) {
	for _, f := range fams {
		for _, s := range f.Samples {
			if s.Name == name && maps.Equal(s.Labels, labels) {
				return s.Value, true
			}
		}
	}
	return 0, false
}

func scrapeText(t *testing.T, m *Manager) string {
	t.Helper()
	var b strings.Builder
	if err := m.Registry().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestPipelineMetricsNameEachInformerOnce: two informers of one resource (other Go types)
// get distinct series.
func TestPipelineMetricsNameEachInformerOnce(t *testing.T) {
	srv := newTestServer(t)
	m := newManager(t, srv, ManagerOptions{})
	mustInformer[*testobj.ConfigMap](t, m)
	// Another view of configmaps: the resource exception.
	if _, err := InformerForWithOptions[*meta.Unstructured](m, InformerOptions{Resource: testobj.ConfigMapGVR}); err != nil {
		t.Fatal(err)
	}
	fams, err := promtest.Parse(scrapeText(t, m))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range fams["informerkit_informer_cached_objects"].Samples {
		names = append(names, s.Labels["informer"])
	}
	if want := []string{"configmaps.v1", "configmaps.v1 #2"}; !slices.Equal(names, want) {
		t.Fatalf("informers %v, want %v", names, want)
	}
}
