package workqueue

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

func TestParallelizeUntilRunsEveryPieceOnce(t *testing.T) {
	for _, tc := range []struct{ workers, pieces, chunk int }{
		{1, 1, 1}, {4, 1000, 1}, {4, 1000, 7}, {3, 10, 100}, {16, 5, 1}, {0, 10, 1}, {-3, 10, 0}, {2, 1001, 10},
	} {
		t.Run(fmt.Sprintf("workers=%d/pieces=%d/chunk=%d", tc.workers, tc.pieces, tc.chunk), func(t *testing.T) {
			counts := make([]atomic.Int32, tc.pieces)
			ParallelizeUntilWithOptions(context.Background(), tc.workers, tc.pieces, func(p int) {
				counts[p].Add(1)
			}, ParallelizeOptions{ChunkSize: tc.chunk})
			for p := range counts {
				if n := counts[p].Load(); n != 1 {
					t.Fatalf("piece %d ran %d times", p, n)
				}
			}
		})
	}
}

func TestParallelizeUntilNoPiecesReturnsAtOnce(t *testing.T) {
	ParallelizeUntil(context.Background(), 4, 0, func(int) { t.Fatal("called") })
	ParallelizeUntil(context.Background(), 4, -1, func(int) { t.Fatal("called") })
}

func TestParallelizeUntilUsesAtMostWorkersGoroutines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var running, peak atomic.Int32
		release := make(chan struct{})
		done := make(chan struct{})
		go func() {
			ParallelizeUntil(context.Background(), 3, 30, func(int) {
				n := running.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				<-release
				running.Add(-1)
			})
			close(done)
		}()
		synctest.Wait()
		if got := running.Load(); got != 3 {
			t.Fatalf("%d pieces running at once, want 3", got)
		}
		close(release)
		<-done
		if peak.Load() != 3 {
			t.Fatalf("peak concurrency %d, want 3", peak.Load())
		}
	})
}

func TestParallelizeUntilStopsStartingPiecesWhenContextDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		var ran atomic.Int32
		gate := make(chan struct{})
		done := make(chan struct{})
		go func() {
			ParallelizeUntilWithOptions(ctx, 2, 100, func(int) {
				ran.Add(1)
				<-gate
			}, ParallelizeOptions{ChunkSize: 10})
			close(done)
		}()
		synctest.Wait()
		cancel()
		close(gate)
		<-done
		if n := ran.Load(); n != 2 {
			t.Fatalf("%d pieces ran, want 2 (the ones running when ctx was cancelled)", n)
		}
	})
}

func TestParallelizeUntilNilContext(t *testing.T) {
	var n atomic.Int32
	//lint:ignore SA1012 a nil context is documented to mean Background
	ParallelizeUntil(nil, 2, 10, func(int) { n.Add(1) })
	if n.Load() != 10 {
		t.Fatalf("ran %d pieces, want 10", n.Load())
	}
}

func TestParallelizeUntilPanicReachesCaller(t *testing.T) {
	var mu sync.Mutex
	var ran []int
	defer func() {
		r := recover()
		if r != "boom at 3" {
			t.Fatalf("recovered %v, want the worker's panic", r)
		}
	}()
	ParallelizeUntil(context.Background(), 1, 10, func(p int) {
		mu.Lock()
		ran = append(ran, p)
		mu.Unlock()
		if p == 3 {
			panic(fmt.Sprintf("boom at %d", p))
		}
	})
	t.Fatal("ParallelizeUntil returned after a panic")
}
