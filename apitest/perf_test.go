package apitest_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/informerkit/informerkit/apitest"
)

func seed(tb testing.TB, s *apitest.Server, n int) {
	tb.Helper()
	for i := range n {
		_, err := s.Create("configmaps", map[string]any{
			"metadata": map[string]any{"name": fmt.Sprintf("cm-%06d", i), "namespace": "default", "labels": map[string]any{"app": "bench", "shard": strconv.Itoa(i % 10)}},
			"data":     map[string]any{"key": "value-" + strconv.Itoa(i), "other": "0123456789abcdef0123456789abcdef"},
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkList100k measures one LIST of 100,000 configmaps over HTTP (the whole body read),
// in one response and in pages of 500.
func BenchmarkList100k(b *testing.B) {
	s := apitest.NewServer()
	defer s.Close()
	seed(b, s, 100_000)
	hc := s.Client()
	defer hc.CloseIdleConnections()
	get := func(url string) (int64, string) {
		resp, err := hc.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
		// Find the continue token without decoding the whole body.
		br := bufio.NewReaderSize(resp.Body, 64<<10)
		head, _ := br.Peek(512)
		cont := ""
		if i := indexOf(head, `"continue":"`); i >= 0 {
			rest := head[i+len(`"continue":"`):]
			if j := indexOf(rest, `"`); j >= 0 {
				cont = string(rest[:j])
			}
		}
		n, err := io.Copy(io.Discard, br)
		if err != nil {
			b.Fatal(err)
		}
		return n, cont
	}
	base := s.URL + "/api/v1/namespaces/default/configmaps"
	b.Run("full", func(b *testing.B) {
		b.ReportAllocs()
		var bytes int64
		for b.Loop() {
			n, _ := get(base + "?resourceVersion=0")
			bytes = n
		}
		b.SetBytes(bytes)
	})
	b.Run("pages=500", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var total int64
			n, cont := get(base + "?limit=500")
			total += n
			for cont != "" {
				n, cont = get(base + "?limit=500&continue=" + cont)
				total += n
			}
			b.SetBytes(total)
		}
	})
	b.Run("selector", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			get(base + "?labelSelector=shard%3D3")
		}
	})
}

func indexOf(b []byte, s string) int {
	for i := 0; i+len(s) <= len(b); i++ {
		if string(b[i:i+len(s)]) == s {
			return i
		}
	}
	return -1
}

// fanout opens watchers raw chunked watches, produces events at rate per second (0: as fast
// as possible) and returns the delivered events per second per watcher and the largest lag
// (events produced but not yet received by the slowest watcher) seen while producing.
func fanout(tb testing.TB, s *apitest.Server, watchers, events, rate int) (perSec float64, maxLag int64) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hc := s.Client()
	defer hc.CloseIdleConnections()
	received := make([]atomic.Int64, watchers)
	var wg sync.WaitGroup
	rv := s.ResourceVersion()
	for i := range watchers {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion="+rv, nil)
		resp, err := hc.Do(req)
		if err != nil {
			tb.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				if received[i].Add(1) == int64(events) {
					return
				}
			}
		}()
	}
	if _, err := s.WaitForWatches(ctx, "configmaps", watchers); err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	var tick *time.Ticker
	batch := events
	if rate > 0 {
		tick = time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		batch = max(1, rate/100)
	}
	produced := 0
	for produced < events {
		if tick != nil {
			<-tick.C
		}
		for j := 0; j < batch && produced < events; j++ {
			if _, err := s.Create("configmaps", map[string]any{"metadata": map[string]any{"name": "e-" + strconv.Itoa(produced), "namespace": "default"}, "data": map[string]any{"k": "v"}}); err != nil {
				tb.Fatal(err)
			}
			produced++
		}
		for i := range received {
			if l := int64(produced) - received[i].Load(); l > maxLag {
				maxLag = l
			}
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	return float64(events) / elapsed.Seconds(), maxLag
}

// BenchmarkWatchFanout sends events to 20 watchers at 10,000 events/s and as fast as
// possible, and reports the delivered rate per watcher and the worst lag in events.
func BenchmarkWatchFanout(b *testing.B) {
	for _, rate := range []int{10_000, 0} {
		name := "rate=" + strconv.Itoa(rate)
		if rate == 0 {
			name = "rate=max"
		}
		b.Run(name+"/watchers=20", func(b *testing.B) {
			s := apitest.NewServerWithOptions(apitest.Options{HistorySize: 10_000})
			defer s.Close()
			b.ReportAllocs()
			b.ResetTimer()
			perSec, lag := fanout(b, s, 20, max(b.N, 1000), rate)
			b.ReportMetric(perSec, "events/s")
			b.ReportMetric(float64(lag), "max-lag-events")
			if n := len(s.Faults().RecordsOf(apitest.FaultSlowWatcherClosed)); n > 0 {
				b.Fatalf("%d watchers fell out of the history window", n)
			}
		})
	}
}

// TestWatchFanoutKeepsUp checks, without timing assertions, that 20 watchers receive every
// event of a steady stream and none falls out of the history window.
func TestWatchFanoutKeepsUp(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	s := apitest.NewServerWithOptions(apitest.Options{HistorySize: 10_000})
	defer s.Close()
	_, lag := fanout(t, s, 20, 3000, 3000)
	if n := len(s.Faults().RecordsOf(apitest.FaultSlowWatcherClosed)); n > 0 {
		t.Fatalf("%d watchers fell out of the history window", n)
	}
	if lag >= 10_000 {
		t.Fatalf("a watcher lagged %d events, more than the history window", lag)
	}
	t.Logf("max lag %d events", lag)
}
