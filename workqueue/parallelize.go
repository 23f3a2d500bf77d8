package workqueue

import (
	"context"
	"sync"
	"sync/atomic"
)

// DoWorkPieceFunc processes piece number piece (0 <= piece < pieces) for ParallelizeUntil.
type DoWorkPieceFunc func(piece int)

// ParallelizeOptions are the optional settings of ParallelizeUntilWithOptions (client-go's
// workqueue.Options).
type ParallelizeOptions struct {
	// ChunkSize makes each worker take ChunkSize consecutive pieces at a time instead of one,
	// which lowers the coordination cost when pieces are very cheap. Default (0 or less): 1.
	ChunkSize int
}

// ParallelizeUntil calls doWorkPiece for every piece in [0, pieces) from up to workers
// goroutines and returns when all of them have finished. Workers take chunks of pieces in
// increasing order (see ParallelizeOptions.ChunkSize). Once ctx is done no further piece is started, so some
// pieces may never run; ParallelizeUntil still waits for the pieces already running. A nil ctx
// means context.Background(); workers below 1 mean 1.
//
// If doWorkPiece panics, the other workers stop starting pieces and, once they have returned,
// ParallelizeUntil panics with the same value in the caller's goroutine (client-go crashes the
// process from the worker goroutine instead).
func ParallelizeUntil(ctx context.Context, workers, pieces int, doWorkPiece DoWorkPieceFunc) {
	ParallelizeUntilWithOptions(ctx, workers, pieces, doWorkPiece, ParallelizeOptions{})
}

// ParallelizeUntilWithOptions is ParallelizeUntil with a chunk size.
func ParallelizeUntilWithOptions(ctx context.Context, workers, pieces int, doWorkPiece DoWorkPieceFunc, opts ParallelizeOptions) {
	if pieces <= 0 {
		return
	}
	if ctx == nil {
		ctx = context.Background()
	}
	chunk := max(opts.ChunkSize, 1)
	chunks := (pieces-1)/chunk + 1
	workers = min(max(workers, 1), chunks)

	var (
		next     atomic.Int64 // next chunk to hand out
		stopped  atomic.Bool  // a worker panicked
		panicked any
		once     sync.Once
		wg       sync.WaitGroup
	)
	done := ctx.Done()
	work := func() {
		defer func() {
			if r := recover(); r != nil {
				once.Do(func() { panicked = r })
				stopped.Store(true)
			}
		}()
		for {
			c := int(next.Add(1) - 1)
			if c >= chunks {
				return
			}
			start := c * chunk
			end := min(start+chunk, pieces)
			for p := start; p < end; p++ {
				if stopped.Load() {
					return
				}
				if done != nil {
					select {
					case <-done:
						return
					default:
					}
				}
				doWorkPiece(p)
			}
		}
	}
	wg.Add(workers)
	for range workers {
		go func() {
			defer wg.Done()
			work()
		}()
	}
	wg.Wait()
	if stopped.Load() {
		panic(panicked)
	}
}
