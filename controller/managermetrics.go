package controller

import (
	"strconv"
	"sync"
	"time"

	"github.com/informerkit/informerkit/informer"
)

// The metrics of the informer pipeline: the reflector (lists, watches, relists, events,
// resourceVersion lag), the informer's DeltaFIFO and cache, and every handler's delivery
// queue, computed at each scrape from the informers' Stats. Names are client-go's where it
// has one (reflector_lists_total, reflector_watches_total, reflector_last_resource_version,
// with its label name); the others are informerkit_. Labels are informer and handler
// names: one series per informer or registered handler, never per object.

// statsCacheFor is how long one scrape reuses the informers' Stats across metric families.
const statsCacheFor = 100 * time.Millisecond

// informerStats memoises the Stats of the factory's informers for one scrape.
type informerStats struct {
	list func() []informer.AnyInformer

	mu    sync.Mutex
	at    time.Time
	stats []informer.Stats
}

func (s *informerStats) get() []informer.Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stats == nil || time.Since(s.at) > statsCacheFor {
		// A new slice: a scrape still reading the old one keeps it.
		s.stats = make([]informer.Stats, 0, len(s.stats))
		seen := map[string]int{}
		for _, inf := range s.list() {
			st := inf.Stats()
			st.Name = inf.Name()
			// Two informers of one resource with other Go types share a name: number them,
			// so that no two series have the same labels.
			if seen[st.Name]++; seen[st.Name] > 1 {
				st.Name += " #" + strconv.Itoa(seen[st.Name])
			}
			s.stats = append(s.stats, st)
		}
		s.at = time.Now()
	}
	return s.stats
}

// registerPipelineMetrics registers the informer, reflector and handler metrics in the
// manager's registry.
func (m *Manager) registerPipelineMetrics() {
	st := &informerStats{list: m.factory.Informers}
	reg := m.registry
	perInformer := func(value func(s *informer.Stats) (float64, bool)) func(emit func(float64, ...string)) {
		return func(emit func(float64, ...string)) {
			stats := st.get()
			for i := range stats {
				if v, ok := value(&stats[i]); ok {
					emit(v, stats[i].Name)
				}
			}
		}
	}
	counters := []struct {
		name, help string
		value      func(s *informer.Stats) uint64
	}{
		{"reflector_lists_total", "Total number of API lists done by the reflectors (LIST or streaming list, to completion).", func(s *informer.Stats) uint64 { return s.Reflector.Lists }},
		{"informerkit_reflector_relists_total", "Lists after the first one, per reflector.", func(s *informer.Stats) uint64 { return s.Reflector.Relists }},
		{"informerkit_reflector_list_errors_total", "Lists that failed, per reflector.", func(s *informer.Stats) uint64 { return s.Reflector.ListErrors }},
		{"reflector_watches_total", "Total number of API watches done by the reflectors.", func(s *informer.Stats) uint64 { return s.Reflector.Watches }},
		{"informerkit_reflector_watch_errors_total", "Watches that failed to open or ended with an error, per reflector.", func(s *informer.Stats) uint64 { return s.Reflector.WatchErrors }},
		{"informerkit_reflector_events_total", "Watch events (ADDED, MODIFIED, DELETED) applied, per reflector.", func(s *informer.Stats) uint64 { return s.Reflector.Events }},
		{"informerkit_reflector_bookmarks_total", "Watch bookmarks received, per reflector.", func(s *informer.Stats) uint64 { return s.Reflector.Bookmarks }},
		{"informerkit_reflector_stalls_total", "Watches re-opened because nothing arrived for the stall timeout, per reflector.", func(s *informer.Stats) uint64 { return s.Reflector.Stalls }},
		{"informerkit_reflector_fallbacks_total", "Ways of doing a request given up for another (streaming list for LIST, WebSocket for chunked HTTP, protobuf for JSON, an expired continue token for a full list), per reflector.", func(s *informer.Stats) uint64 { return s.Reflector.Fallbacks }},
		{"informerkit_reflector_deadlines_total", "Deadlines that passed on the reflector's requests (the client's timeouts, the stall timeout, the streaming list's), per reflector.", func(s *informer.Stats) uint64 { return s.Reflector.Deadlines }},
		{"informerkit_reflector_bad_resource_versions_total", "Bookmarks and events without a resourceVersion the reflector could use, per reflector.", func(s *informer.Stats) uint64 { return s.Reflector.BadResourceVersions }},
	}
	for _, c := range counters {
		reg.NewCounterFunc(c.name, c.help, []string{"name"}, perInformer(func(s *informer.Stats) (float64, bool) {
			return float64(c.value(s)), true
		}))
	}
	reg.NewGaugeFunc("reflector_last_resource_version", "Last resource version seen for the reflectors (those that are integers, as etcd's).",
		[]string{"name"}, perInformer(func(s *informer.Stats) (float64, bool) {
			rv, err := strconv.ParseUint(s.Reflector.LastSyncResourceVersion, 10, 64)
			return float64(rv), err == nil
		}))
	reg.NewGaugeFunc("informerkit_reflector_resource_version_lag",
		"How far the reflector's last resourceVersion is behind the highest one any reflector of this manager has seen (integer resourceVersions; meaningful for resources stored in one etcd): a reflector whose watch is stalled or slow falls behind.",
		[]string{"name"}, func(emit func(float64, ...string)) {
			stats := st.get()
			rvs := make([]uint64, len(stats))
			var top uint64
			for i := range stats {
				rv, err := strconv.ParseUint(stats[i].Reflector.LastSyncResourceVersion, 10, 64)
				if err != nil {
					rv = 0
				}
				rvs[i], top = rv, max(top, rv)
			}
			for i := range stats {
				if rvs[i] != 0 {
					emit(float64(top-rvs[i]), stats[i].Name)
				}
			}
		})
	reg.NewGaugeFunc("informerkit_informer_cached_objects", "Objects in the informer's cache.",
		[]string{"informer"}, perInformer(func(s *informer.Stats) (float64, bool) { return float64(s.Cached), true }))
	reg.NewGaugeFunc("informerkit_informer_queued_deltas", "Queue positions of the informer's DeltaFIFO not yet processed.",
		[]string{"informer"}, perInformer(func(s *informer.Stats) (float64, bool) { return float64(s.Queued), true }))
	m.registerHandlerMetrics(st)
}

// registerHandlerMetrics registers the metrics of every handler's delivery queue.
func (m *Manager) registerHandlerMetrics(st *informerStats) {
	perHandler := func(value func(b *informer.HandlerBacklog) float64) func(emit func(float64, ...string)) {
		return func(emit func(float64, ...string)) {
			for _, s := range st.get() {
				for i := range s.HandlerBacklogs {
					emit(value(&s.HandlerBacklogs[i]), s.Name, s.HandlerBacklogs[i].Name)
				}
			}
		}
	}
	labels := []string{"informer", "handler"}
	m.registry.NewGaugeFunc("informerkit_informer_handler_pending",
		"Notifications waiting for the handler (its backlog; a merged notification counts once).",
		labels, perHandler(func(b *informer.HandlerBacklog) float64 { return float64(b.Pending) }))
	m.registry.NewCounterFunc("informerkit_informer_handler_coalesced_total",
		"Notifications merged into a pending one because the handler fell behind.",
		labels, perHandler(func(b *informer.HandlerBacklog) float64 { return float64(b.Coalesced) }))
	m.registry.NewCounterFunc("informerkit_informer_handler_delivered_total",
		"Handler calls made.",
		labels, perHandler(func(b *informer.HandlerBacklog) float64 { return float64(b.Delivered) }))
	m.registry.NewCounterFunc("informerkit_informer_handler_panics_total",
		"Handler calls that panicked (recovered).",
		labels, perHandler(func(b *informer.HandlerBacklog) float64 { return float64(b.Panics) }))
}
