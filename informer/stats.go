package informer

import (
	"context"
	"log/slog"
	"time"

	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/reflector"
)

// Stats are an informer's figures.
type Stats struct {
	// Name is the informer's name.
	Name string
	// Synced is HasSynced.
	Synced bool
	// Cached is the number of objects in the cache; Queued the number of DeltaFIFO queue
	// positions not yet processed.
	Cached, Queued int
	// Handlers is the number of registered handlers; HandlerBacklogs their delivery queues,
	// in the order they were added.
	Handlers        int
	HandlerBacklogs []HandlerBacklog
	// NotFound counts list/watch attempts answered 404 (the resource is not served).
	NotFound uint64
	// Reflector holds the reflector's figures (zero before Run).
	Reflector reflector.Stats
	// Sharing holds the structural sharing figures.
	Sharing SharingStats
	// CacheMutations counts the changes to cached objects the mutation detector found (0
	// without the detector).
	CacheMutations uint64
}

// Stats returns the informer's figures.
func (inf *Informer[T]) Stats() Stats {
	inf.mu.Lock()
	refl, fifo, sh := inf.refl, inf.fifo, inf.sharer
	inf.mu.Unlock()
	s := Stats{Name: inf.name, Synced: inf.HasSynced(), Cached: inf.cache.Len(), NotFound: inf.notFound.Load(), Sharing: sharingStats(sh),
		CacheMutations: cacheMutations(inf.cache)}
	if refl != nil {
		s.Reflector = refl.Stats()
	}
	if fifo != nil {
		s.Queued = fifo.Len()
	}
	inf.deliverMu.Lock()
	s.Handlers = len(inf.listeners)
	s.HandlerBacklogs = make([]HandlerBacklog, len(inf.listeners))
	for i, l := range inf.listeners {
		s.HandlerBacklogs[i] = HandlerBacklog{Name: l.name, Backlog: l.backlog()}
	}
	inf.deliverMu.Unlock()
	return s
}

// HandlerBacklog is the delivery queue of one registered handler (see Registration.Backlog).
type HandlerBacklog struct {
	// Name is the handler's name (HandlerOptions.Name, or its Go type).
	Name string
	Backlog
}

// onWatchError counts 404s and, once they have lasted NotFoundGracePeriod, logs them at most
// once per NotFoundLogInterval (the reflector's own log line is filtered out by
// quietNotFound), then calls the user's handler.
func (inf *Informer[T]) onWatchError(ctx context.Context, err error) {
	if meta.IsNotFound(err) {
		n := inf.notFound.Add(1)
		now := time.Now().UnixNano()
		since := inf.notFoundSince.Load()
		if since == 0 && inf.notFoundSince.CompareAndSwap(0, now) {
			since = now
		}
		last := inf.lastNotFound.Load()
		if time.Duration(now-since) >= inf.opts.NotFoundGracePeriod && (last == 0 || time.Duration(now-last) >= inf.opts.NotFoundLogInterval) &&
			inf.lastNotFound.CompareAndSwap(last, now) {
			inf.logger.Warn("informer: the resource is not served (404); retrying with backoff until it is",
				"err", err, "attempts", n, "nextLogIn", inf.opts.NotFoundLogInterval)
		}
	}
	inf.mu.Lock()
	h := inf.watchErrorHandler
	inf.mu.Unlock()
	if h != nil {
		h(ctx, err)
	}
}

// quietNotFound is a slog.Handler that drops records carrying an "err" attribute for which
// meta.IsNotFound holds: the informer logs those itself, rate-limited.
type quietNotFound struct {
	inner slog.Handler
}

func (q *quietNotFound) Enabled(ctx context.Context, l slog.Level) bool {
	return q.inner.Enabled(ctx, l)
}

func (q *quietNotFound) Handle(ctx context.Context, r slog.Record) error {
	drop := false
	r.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Any().(error); ok && a.Key == "err" && meta.IsNotFound(err) {
			drop = true
			return false
		}
		return true
	})
	if drop {
		return nil
	}
	return q.inner.Handle(ctx, r)
}

func (q *quietNotFound) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &quietNotFound{inner: q.inner.WithAttrs(attrs)}
}

func (q *quietNotFound) WithGroup(name string) slog.Handler {
	return &quietNotFound{inner: q.inner.WithGroup(name)}
}
