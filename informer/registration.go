package informer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// HandlerOptions configure one handler registration.
type HandlerOptions struct {
	// Name identifies the handler in logs (default: its Go type).
	Name string
	// ResyncPeriod is how often the handler gets OnUpdate(obj, obj) for every cached object:
	// 0 means the informer's DefaultResyncPeriod, a negative value never. Positive values
	// below MinimumResyncPeriod are raised to it.
	ResyncPeriod time.Duration
	// BufferSize is how many notifications the handler may fall behind by before they are
	// coalesced by key (default: the informer's BufferSize, itself DefaultBufferSize).
	BufferSize int
	// Logger receives the listener's log lines (handler panics); default the informer's.
	Logger *slog.Logger
}

// Registration is the handle of one handler added to an informer.
type Registration[T any] struct {
	l   *listener[T]
	own any // the informer the registration belongs to
}

// HasSynced reports whether the informer has synced and this handler has processed every
// object of the initial list (for a handler added late: every object cached when it was
// added). Unlike client-go's informer-level HasSynced, it is never true before the handler
// ran.
func (r *Registration[T]) HasSynced() bool { return r.l.hasSynced() }

// Synced returns a channel closed when HasSynced becomes true. It is never closed for a
// registration removed (or an informer stopped) before that.
func (r *Registration[T]) Synced() <-chan struct{} { return r.l.synced }

// Done returns a channel closed once the handler has stopped for good: after
// ErrForeignRegistration is the error of RemoveEventHandler (and RemoveEventHandlerAndWait)
// given a nil registration or one that another informer returned. client-go returns nil and
// removes nothing, which hides the mistake: the handler goes on running on the other informer.
var ErrForeignRegistration = errors.New("the registration is not from this informer")

// RemoveEventHandler or the informer's stop, when the call in progress, if any, has
// returned. Pending notifications are dropped.
func (r *Registration[T]) Done() <-chan struct{} { return r.l.done }

// Backlog returns the state of the handler's delivery queue.
func (r *Registration[T]) Backlog() Backlog { return r.l.backlog() }

// Name returns the handler's name, as used in logs.
func (r *Registration[T]) Name() string { return r.l.name }

// ResyncPeriod returns the handler's effective resync period (0: none).
func (r *Registration[T]) ResyncPeriod() time.Duration { return r.l.resyncPeriod }

// AddEventHandler registers handler with the informer's default resync period. See
// AddEventHandlerWithOptions.
func (inf *Informer[T]) AddEventHandler(handler ResourceEventHandler[T]) (*Registration[T], error) {
	return inf.AddEventHandlerWithOptions(handler, HandlerOptions{})
}

// AddEventHandlerWithResyncPeriod registers handler with its own resync period (0: none).
func (inf *Informer[T]) AddEventHandlerWithResyncPeriod(handler ResourceEventHandler[T], resyncPeriod time.Duration) (*Registration[T], error) {
	if resyncPeriod == 0 {
		resyncPeriod = -1
	}
	return inf.AddEventHandlerWithOptions(handler, HandlerOptions{ResyncPeriod: resyncPeriod})
}

// AddEventHandlerWithOptions registers handler. It may be called before or after Run, but
// not once the informer stopped.
//
// A handler added after the informer started first gets OnAdd(obj, true) for every object
// in the cache at that moment, then every later change: it sees the same sequence of states
// as a handler that was there from the start, minus the history before it joined.
func (inf *Informer[T]) AddEventHandlerWithOptions(handler ResourceEventHandler[T], opts HandlerOptions) (*Registration[T], error) {
	if handler == nil {
		return nil, errors.New("informer: nil handler")
	}
	inf.mu.Lock()
	defer inf.mu.Unlock()
	if inf.stopped {
		return nil, fmt.Errorf("informer %s: handler not added: %w", inf.name, ErrStopped)
	}
	size := opts.BufferSize
	if size <= 0 {
		size = inf.opts.BufferSize
	}
	logger := opts.Logger
	if logger == nil {
		logger = inf.logger
	}
	l := newListener(handler, opts.Name, logger, size)
	l.observe = inf.opts.Observe
	if l.info != nil && !inf.stampArrivals {
		inf.stampArrivals = true
		if inf.fifo != nil {
			inf.fifo.StampArrivals(true)
		}
	}
	period := opts.ResyncPeriod
	if period == 0 {
		period = inf.opts.DefaultResyncPeriod
	}
	if period > 0 && period < MinimumResyncPeriod {
		l.logger.Info("informer: resync period raised to the minimum", "requested", period, "minimum", MinimumResyncPeriod)
		period = MinimumResyncPeriod
	}
	if period > 0 {
		l.resyncPeriod = period
		l.nextResync = time.Now().Add(period)
	}

	inf.deliverMu.Lock()
	defer inf.deliverMu.Unlock()
	if inf.started {
		inf.cache.Range(func(key string, obj T) bool {
			l.add(key, notification[T]{kind: kindAdd, new: obj, initial: true})
			return true
		})
		if inf.synced {
			l.setUpstreamSynced()
		}
		l.start()
	}
	inf.listeners = append(inf.listeners, l)
	if period > 0 {
		select {
		case inf.resyncKick <- struct{}{}:
		default:
		}
	}
	return &Registration[T]{l: l, own: inf}, nil
}

// RemoveEventHandler unregisters the handler of reg: it gets no further notification, its
// pending ones are dropped, and reg.Done() is closed once the call in progress, if any,
// returns. It does not wait, so a handler may remove itself; to wait, receive from
// reg.Done() (or use RemoveEventHandlerAndWait). Removing a registration twice is not an
// error.
func (inf *Informer[T]) RemoveEventHandler(reg *Registration[T]) error {
	if reg == nil || reg.own != inf {
		return fmt.Errorf("informer %s: RemoveEventHandler: %w", inf.name, ErrForeignRegistration)
	}
	inf.deliverMu.Lock()
	for i, l := range inf.listeners {
		if l == reg.l {
			inf.listeners = append(inf.listeners[:i], inf.listeners[i+1:]...)
			break
		}
	}
	inf.deliverMu.Unlock()
	reg.l.stop()
	return nil
}

// RemoveEventHandlerAndWait is RemoveEventHandler followed by a wait for reg.Done(), or for
// ctx. It must not be called from the handler itself (it would wait for its own return).
func (inf *Informer[T]) RemoveEventHandlerAndWait(ctx context.Context, reg *Registration[T]) error {
	if err := inf.RemoveEventHandler(reg); err != nil {
		return err
	}
	select {
	case <-reg.Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// resyncLoop delivers resyncs: each handler with a resync period gets OnUpdate(obj, obj) for
// every cached object when its period is due. It runs from the sync point until ctx is done.
//
// client-go drives resyncs through the DeltaFIFO (Sync deltas, every resyncCheckPeriod, the
// smallest handler period) and then filters them per handler. Here the informer enqueues them
// from its cache straight into the due handlers' listeners, under the same lock as
// handleDeltas, so each handler is resynced on its own schedule and the resync is consistent
// with everything the handler was told before.
func (inf *Informer[T]) resyncLoop(ctx context.Context) {
	for {
		inf.deliverMu.Lock()
		var next time.Time
		for _, l := range inf.listeners {
			if l.resyncPeriod > 0 && (next.IsZero() || l.nextResync.Before(next)) {
				next = l.nextResync
			}
		}
		inf.deliverMu.Unlock()
		var timer *time.Timer
		var fire <-chan time.Time
		if !next.IsZero() {
			timer = time.NewTimer(time.Until(next))
			fire = timer.C
		}
		select {
		case <-ctx.Done():
		case <-inf.resyncKick:
		case <-fire:
			inf.resync()
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// resync sends a resync to every handler whose period is due.
func (inf *Informer[T]) resync() {
	inf.deliverMu.Lock()
	defer inf.deliverMu.Unlock()
	now := time.Now()
	var due []*listener[T]
	for _, l := range inf.listeners {
		if l.resyncPeriod > 0 && !now.Before(l.nextResync) {
			due = append(due, l)
			l.nextResync = now.Add(l.resyncPeriod)
		}
	}
	if len(due) == 0 {
		return
	}
	inf.cache.Range(func(key string, obj T) bool {
		for _, l := range due {
			if inf.opts.Observe != nil {
				inf.opts.Observe(Observation[T]{Stage: StageResync, Key: key, Object: obj, Old: obj, Handler: l.name, Notification: "update"})
			}
			l.add(key, notification[T]{kind: kindUpdate, old: obj, new: obj})
		}
		return true
	})
}
