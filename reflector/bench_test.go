package reflector

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/internal/testobj"
	"github.com/informerkit/informerkit/meta"
)

// peakStore is an in-place map store for BenchmarkRelistPeakHeap. Replace builds the new map
// before dropping the old one (as an indexer must, to stay readable during the swap);
// the incremental replacement updates in place and deletes unseen keys at the end. At the
// points where the heap is largest it measures the live heap (after a forced GC).
type peakStore struct {
	mu      sync.Mutex
	objs    map[string]*testobj.ConfigMap
	seen    map[string]struct{}
	added   int
	probing bool
	peak    uint64
}

func (s *peakStore) probeLocked() {
	if !s.probing {
		return
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s.peak = max(s.peak, ms.HeapAlloc)
}

func (s *peakStore) Add(o *testobj.ConfigMap) error    { return s.put(o) }
func (s *peakStore) Update(o *testobj.ConfigMap) error { return s.put(o) }
func (s *peakStore) Resync() error                     { return nil }
func (s *peakStore) Delete(o *testobj.ConfigMap) error {
	s.mu.Lock()
	delete(s.objs, key(o))
	s.mu.Unlock()
	return nil
}

func (s *peakStore) put(o *testobj.ConfigMap) error {
	s.mu.Lock()
	s.objs[key(o)] = o
	s.mu.Unlock()
	return nil
}

func (s *peakStore) Replace(list []*testobj.ConfigMap, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := make(map[string]*testobj.ConfigMap, len(list))
	for _, o := range list {
		m[key(o)] = o
	}
	s.probeLocked() // old content, new list and new map all alive
	s.objs = m
	return nil
}

func (s *peakStore) BeginReplace() (Replacement[*testobj.ConfigMap], error) {
	s.mu.Lock()
	s.seen = make(map[string]struct{}, len(s.objs))
	s.added = 0
	s.mu.Unlock()
	return peakReplacement{s}, nil
}

type peakReplacement struct{ s *peakStore }

func (r peakReplacement) Add(o *testobj.ConfigMap) error {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(o)
	s.seen[k] = struct{}{}
	s.objs[k] = o
	if s.added++; s.added%DefaultPageSize == 0 {
		s.probeLocked()
	}
	return nil
}

func (r peakReplacement) Finish(string) error {
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.probeLocked()
	for k := range s.objs {
		if _, ok := s.seen[k]; !ok {
			delete(s.objs, k)
		}
	}
	s.seen = nil
	return nil
}

func (r peakReplacement) Abort() {
	r.s.mu.Lock()
	r.s.seen = nil
	r.s.mu.Unlock()
}

// replaceOnly hides peakStore's IncrementalReplacer, so the reflector uses Replace.
type replaceOnly struct{ s *peakStore }

func (r replaceOnly) Add(o *testobj.ConfigMap) error                  { return r.s.Add(o) }
func (r replaceOnly) Update(o *testobj.ConfigMap) error               { return r.s.Update(o) }
func (r replaceOnly) Delete(o *testobj.ConfigMap) error               { return r.s.Delete(o) }
func (r replaceOnly) Replace(l []*testobj.ConfigMap, rv string) error { return r.s.Replace(l, rv) }
func (r replaceOnly) Resync() error                                   { return nil }

// BenchmarkRelistPeakHeap measures how much live heap a relist of N objects needs on top of
// the steady state (the cache, the apitest server's own copy, the client): the figure
// "extra-B/obj" is (peak live heap during the relist − live heap before it) / N. With
// Replace it is about one whole decoded list (client-go's doubling); with an
// IncrementalReplacer store it is about one page (paged LIST) or nearly nothing (WatchList).
// An unpaged LIST (the default for relists at a resourceVersion) still decodes the whole
// response at once unless the ListerWatcher implements StreamingLister.
func BenchmarkRelistPeakHeap(b *testing.B) {
	const n = 10000
	srv := apitest.NewServerWithOptions(apitest.Options{Logger: slog.New(slog.DiscardHandler)})
	defer srv.Close()
	data := strings.Repeat("x", 1024) // ~1.3 KB objects, a small pod's size
	for i := range n {
		if _, err := srv.Create(cms, map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("cm-%05d", i), "namespace": "default",
				"labels": map[string]any{"app": "bench", "shard": fmt.Sprint(i % 16)}},
			"data": map[string]any{"payload": data},
		}); err != nil {
			b.Fatal(err)
		}
	}
	cfg := srv.Config()
	if os.Getenv("BENCH_CHUNKED") != "" {
		cfg.WatchProtocol = apiclient.WatchChunked
	}
	c, err := apiclient.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	res := apiclient.NewResource[*testobj.ConfigMap](c, meta.GroupVersionResource{Version: "v1", Resource: cms})

	for _, v := range []struct {
		name        string
		incremental bool
		watchList   bool
		pageSize    int64
	}{
		{"list-unpaged/store=replace", false, false, -1},
		{"list-paged/store=replace", false, false, DefaultPageSize},
		{"watchlist/store=replace", false, true, 0},
		{"list-unpaged/store=incremental", true, false, -1},
		{"list-paged/store=incremental", true, false, DefaultPageSize},
		{"watchlist/store=incremental", true, true, 0},
	} {
		b.Run(v.name, func(b *testing.B) {
			ps := &peakStore{objs: map[string]*testobj.ConfigMap{}}
			var store Store[*testobj.ConfigMap] = replaceOnly{ps}
			if v.incremental {
				store = ps
			}
			mode := WatchListOff
			if v.watchList {
				mode = WatchListOn
			}
			r := New(res, store, Options[*testobj.ConfigMap]{WatchList: mode, PageSize: v.pageSize,
				Logger: slog.New(slog.DiscardHandler)})
			ctx := context.Background()
			sync := func() {
				if v.watchList {
					w, err := r.watchList(ctx)
					if err != nil {
						b.Fatal(err)
					}
					w.Stop()
					return
				}
				if err := r.list(ctx); err != nil {
					b.Fatal(err)
				}
			}
			sync() // the cache is full: what follows are relists
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			base := ms.HeapAlloc
			worst := uint64(0)
			b.ResetTimer()
			for range b.N {
				ps.mu.Lock()
				ps.probing, ps.peak = true, 0
				ps.mu.Unlock()
				sync()
				ps.mu.Lock()
				ps.probing = false
				worst = max(worst, ps.peak)
				ps.mu.Unlock()
			}
			b.StopTimer()
			if len(ps.objs) != n {
				b.Fatalf("store holds %d objects, want %d", len(ps.objs), n)
			}
			extra := float64(0)
			if worst > base {
				extra = float64(worst - base)
			}
			b.ReportMetric(extra/n, "extra-B/obj")
			b.ReportMetric(extra/(1<<20), "extra-MiB")
			b.ReportMetric(float64(base)/(1<<20), "base-MiB")
		})
	}
}
