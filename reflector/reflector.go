package reflector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/meta"
)

// Reflector keeps a Store in step with one collection on the API server: it lists (or
// stream-lists) the collection into the store, then watches it from the list's
// resourceVersion and applies every event, re-watching and relisting as the server requires.
// Create it with New and start it with Run.
type Reflector[T meta.Object] struct {
	cfg       config[T]
	name      string
	lw        apiclient.ListerWatcher[T]
	store     Store[T]
	incr      IncrementalReplacer[T]
	rvUpdater ResourceVersionUpdater
	streamLW  StreamingLister[T]
	recovery  RecoveryAwaiter
	log       *slog.Logger
	backoff   backoffState
	created   time.Time
	running   atomic.Bool
	resumed   bool // the first cycle used ResumeFrom (touched by the running goroutine only)
	// lastAttempt is when the last request was sent (nanoseconds since created).
	lastAttempt atomic.Int64

	// mu guards the fields below it.
	mu sync.Mutex
	// lastSyncRV is the resourceVersion of the last list, event or bookmark applied.
	lastSyncRV string
	// rvUnavailable: the last request at lastSyncRV failed with 410 or "too large", so the
	// next list or streaming list is at "" (a consistent read).
	rvUnavailable bool
	// paginatedResult: the first list at "0" came back paged (no watch cache); keep paging.
	paginatedResult bool
	// watchListOffUntil: WatchListAuto fell back to LIST; do not try again before this time
	// (zero: try; far future: never again).
	watchListOffUntil time.Time

	st counters
}

// counters are the figures behind Stats. Times are nanoseconds since created (monotonic),
// 0 meaning never.
type counters struct {
	lists, relists, listRequests, listErrors, listedItems     atomic.Uint64
	watchListSyncs, watchListFallbacks                        atomic.Uint64
	watches, watchErrors, events, bookmarks, stalls, resyncs  atomic.Uint64
	connectionsLost, skipped, fallbacks, deadlines, badRVs    atomic.Uint64
	backoffs, recoveries                                      atomic.Uint64
	lastSync, lastEvent, lastBookmark, lastContact, lastError atomic.Int64
}

// New returns a Reflector that lists and watches the collection of lw (apiclient provides
// one per resource, namespace and selectors) into store. If store implements
// IncrementalReplacer, relists are streamed into it; if it implements
// ResourceVersionUpdater, it is told every new resourceVersion. Every option has a default
// and none can be invalid. New panics if lw or store is nil: a programming error, not a
// runtime condition.
func New[T meta.Object](lw apiclient.ListerWatcher[T], store Store[T], opts Options[T]) *Reflector[T] {
	if lw == nil || store == nil {
		panic("reflector.New: nil ListerWatcher or Store")
	}
	cfg := opts.withDefaults()
	name := cfg.Name
	if name == "" {
		name = DefaultName(lw)
	}
	r := &Reflector[T]{
		cfg:     cfg,
		name:    name,
		lw:      lw,
		store:   store,
		log:     cfg.Logger.With("reflector", name),
		backoff: backoffState{cfg: cfg.backoff},
		created: time.Now(),
	}
	r.incr, _ = store.(IncrementalReplacer[T])
	r.rvUpdater, _ = store.(ResourceVersionUpdater)
	r.streamLW, _ = lw.(StreamingLister[T])
	r.recovery, _ = lw.(RecoveryAwaiter)
	if cfg.WatchList == WatchListOff {
		r.watchListOffUntil = farFuture
	}
	return r
}

// DefaultName returns the name a reflector (or an informer) of lw gets when its options name
// none: lw's String() if it has one, else its resource ("configmaps.v1" for an
// *apiclient.Resource), else the Go type of T.
func DefaultName[T meta.Object](lw apiclient.ListerWatcher[T]) string {
	switch lw := lw.(type) {
	case fmt.Stringer:
		return lw.String()
	case interface {
		GroupVersionResource() meta.GroupVersionResource
	}:
		return lw.GroupVersionResource().String()
	}
	return reflect.TypeFor[T]().String()
}

var farFuture = time.Unix(1<<62, 0)

// Name returns the reflector's name (Options.Name or its default).
func (r *Reflector[T]) Name() string { return r.name }

// Run lists and watches until ctx is done: it calls ListAndWatch, reports the error it
// returns (log and WatchErrorHandler), waits for the backoff delay (at least the server's
// Retry-After) and starts again. It returns when ctx is done, once no goroutine it started is
// left. Run must not be called twice at the same time, nor together with ListAndWatch.
func (r *Reflector[T]) Run(ctx context.Context) {
	if !r.running.CompareAndSwap(false, true) {
		panic("reflector " + r.name + ": Run or ListAndWatch is already running")
	}
	defer r.running.Store(false)
	r.log.Debug("reflector starting", "resyncPeriod", r.cfg.ResyncPeriod, "watchList", r.cfg.WatchList.String())
	for ctx.Err() == nil {
		err := r.listAndWatch(ctx)
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			r.report(ctx, err)
		}
		var d time.Duration
		if isExpired(err) {
			// The server answered, and asked for a relist: no backoff in front of it,
			// unless the relists come too fast (see nextExpired).
			d = r.backoff.nextExpired(retryAfter(err))
		} else {
			d = r.backoff.next(retryAfter(err))
		}
		if !r.wait(ctx, d, err) {
			break
		}
	}
	r.log.Debug("reflector stopped")
}

// ListAndWatch lists the collection into the store (by streaming list or LIST), then
// watches it until something requires a new list. It re-watches by itself after a clean
// close, a stall, 429, Retry-After or connection refused (with backoff for the last three);
// it returns a *Error when a relist is needed (410 Gone, a very short watch, any other
// failure), and nil only when ctx is done.
//
// Run calls it in a loop; call it directly only to drive one cycle yourself.
func (r *Reflector[T]) ListAndWatch(ctx context.Context) error {
	if !r.running.CompareAndSwap(false, true) {
		return &Error{Reflector: r.name, Op: "list", Err: errors.New("Run or ListAndWatch is already running")}
	}
	defer r.running.Store(false)
	return r.listAndWatch(ctx)
}

func (r *Reflector[T]) listAndWatch(ctx context.Context) error {
	if rv := r.cfg.ResumeFrom; rv != "" && !r.resumed {
		r.resumed = true
		r.setLastSyncRV(rv)
		return r.watchWithResync(ctx, nil)
	}
	var w apiclient.Watcher[T]
	if r.tryWatchList() {
		var err error
		w, err = r.watchList(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			r.watchListFailed(ctx, err)
			w = nil
		}
	}
	if w == nil {
		if err := r.list(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	return r.watchWithResync(ctx, w)
}

// report logs err and hands it to the WatchErrorHandler.
func (r *Reflector[T]) report(ctx context.Context, err error) {
	r.st.lastError.Store(r.sinceCreated())
	switch {
	case errors.Is(err, apiclient.ErrTimeout):
		// The client logged the deadline at Warn when it passed, naming its setting.
		r.st.deadlines.Add(1)
		r.log.Debug("a request's deadline passed, trying again", "err", err)
	case isExpired(err):
		r.log.Info("resourceVersion expired, relisting", "err", err)
	case errors.Is(err, ErrWatchStalled):
		r.st.deadlines.Add(1)
		r.log.Warn("watch stalled, re-opening it", "err", err, "stallTimeout", r.cfg.StallTimeout, "setting", "reflector.Options.StallTimeout")
	case errors.Is(err, ErrConnectionLost):
		r.log.Warn("watch connection lost, re-opening it", "err", err)
	case errors.Is(err, ErrBadBookmark):
		r.log.Warn("bookmark without a resourceVersion skipped", "err", err)
	case errors.Is(err, apiclient.ErrWrongKind):
		r.log.Error("watch event of another kind than the resource's skipped", "err", err)
	case retryWithoutRelist(err):
		r.log.Info("server busy or unreachable, backing off", "err", err)
	default:
		r.log.Warn("list/watch failed", "err", err)
	}
	if h := r.cfg.WatchErrorHandler; h != nil {
		h(ctx, err)
	}
}

func (r *Reflector[T]) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) && e.Reflector == r.name {
		return err
	}
	return &Error{Reflector: r.name, Op: op, Err: err}
}

// LastSyncResourceVersion returns the resourceVersion of the last list, watch event or
// bookmark the reflector applied to the store ("" before the first list).
func (r *Reflector[T]) LastSyncResourceVersion() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastSyncRV
}

func (r *Reflector[T]) setLastSyncRV(rv string) {
	r.mu.Lock()
	r.lastSyncRV = rv
	r.mu.Unlock()
	if r.rvUpdater != nil {
		r.rvUpdater.UpdateResourceVersion(rv)
	}
}

// relistRV is the resourceVersion of the next LIST: "0" the first time (the server may serve
// it from its watch cache), the last synced one later, "" after a 410 or too-large error.
func (r *Reflector[T]) relistRV() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.rvUnavailable:
		return ""
	case r.lastSyncRV == "":
		return "0"
	}
	return r.lastSyncRV
}

// rewatchRV is the resourceVersion of the next streaming list: the last synced one, or ""
// (a consistent read of the newest state) the first time and after a 410 or too-large error.
func (r *Reflector[T]) rewatchRV() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rvUnavailable {
		return ""
	}
	return r.lastSyncRV
}

func (r *Reflector[T]) setRVUnavailable(v bool) {
	r.mu.Lock()
	r.rvUnavailable = v
	r.mu.Unlock()
}

func (r *Reflector[T]) sinceCreated() int64 {
	n := int64(time.Since(r.created))
	if n <= 0 {
		n = 1 // 0 means "never"
	}
	return n
}

func (r *Reflector[T]) timeAt(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return r.created.Add(time.Duration(n))
}

// Stats are the figures of a reflector. Counters only grow. Read them with Reflector.Stats;
// a metrics exporter can turn them into counters and gauges on every scrape.
type Stats struct {
	// Name is the reflector's name.
	Name string
	// LastSyncResourceVersion is as returned by Reflector.LastSyncResourceVersion.
	LastSyncResourceVersion string
	// Lists counts completed syncs of the whole collection (LIST or streaming list);
	// Relists counts those after the first one. Both move after the store already has the
	// new list (after Replace or Replacement.Finish returned): a consumer of the store may
	// see the list's effects before the counters do.
	Lists, Relists uint64
	// ListRequests counts LIST requests (every page); ListErrors the lists that failed.
	ListRequests, ListErrors uint64
	// ListedItems counts objects received by lists and the initial events of streaming lists.
	ListedItems uint64
	// WatchListSyncs counts syncs done by streaming list; WatchListFallbacks the streaming
	// lists that failed and fell back to LIST.
	WatchListSyncs, WatchListFallbacks uint64
	// Watches counts WATCH requests (streaming lists included); WatchErrors the watches that
	// failed to open or ended with an error (clean closes are not errors).
	Watches, WatchErrors uint64
	// Events counts ADDED, MODIFIED and DELETED events applied from watches (not the
	// initial events of a streaming list); Bookmarks counts BOOKMARK events.
	Events, Bookmarks uint64
	// Stalls counts watches re-opened because of StallTimeout.
	Stalls uint64
	// ConnectionsLost counts watches whose connection broke without a clean end
	// (ErrConnectionLost); they are counted in WatchErrors too.
	ConnectionsLost uint64
	// Skipped counts watch events whose object the ListerWatcher refused (apiclient's
	// Skipped events: an object of another kind than the resource's); nothing of them
	// reached the store.
	Skipped uint64
	// Fallbacks counts the times the reflector, or the ListerWatcher for one of its
	// requests, gave up a way of doing something for another: a streaming list for a LIST
	// (WatchListFallbacks counts these alone), a paged list whose continue token expired for
	// one full list, a WebSocket watch for a chunked one, protobuf for JSON (apiclient's
	// watchers report those two through a Fallbacks method). Each is logged at Info with
	// the setting that decides it.
	Fallbacks uint64
	// Deadlines counts the deadlines that passed on the reflector's requests: the client's
	// (an *apiclient.TimeoutError: dial, TLS handshake, headers, body, exec plugin; the
	// client logs each), StallTimeout (Stalls counts these alone), WatchListTimeout and
	// WatchListGap.
	Deadlines uint64
	// BadResourceVersions counts bookmarks and events the reflector could not take a
	// resourceVersion from (none): an end-of-initial-events bookmark without one fails its
	// streaming list (ErrBadBookmark), a later bookmark without one is skipped, an event
	// without one is applied but does not move LastSyncResourceVersion.
	BadResourceVersions uint64
	// Resyncs counts Store.Resync calls.
	Resyncs uint64
	// Backoffs counts waits between attempts; Recoveries the waits cut short because the
	// server, unreachable before, answered again (see RecoveryAwaiter).
	Backoffs, Recoveries uint64
	// LastSync is when the last list completed; LastEvent when the last event or bookmark
	// arrived; LastBookmark when the last bookmark arrived; LastError when the last error was
	// reported. Zero means never.
	LastSync, LastEvent, LastBookmark, LastError time.Time
}

// Stats returns the reflector's current figures. It is cheap and safe to call at any time.
func (r *Reflector[T]) Stats() Stats {
	return Stats{
		Name:                    r.name,
		LastSyncResourceVersion: r.LastSyncResourceVersion(),
		Lists:                   r.st.lists.Load(),
		Relists:                 r.st.relists.Load(),
		ListRequests:            r.st.listRequests.Load(),
		ListErrors:              r.st.listErrors.Load(),
		ListedItems:             r.st.listedItems.Load(),
		WatchListSyncs:          r.st.watchListSyncs.Load(),
		WatchListFallbacks:      r.st.watchListFallbacks.Load(),
		Watches:                 r.st.watches.Load(),
		WatchErrors:             r.st.watchErrors.Load(),
		Events:                  r.st.events.Load(),
		Bookmarks:               r.st.bookmarks.Load(),
		Stalls:                  r.st.stalls.Load(),
		ConnectionsLost:         r.st.connectionsLost.Load(),
		Skipped:                 r.st.skipped.Load(),
		Fallbacks:               r.st.fallbacks.Load(),
		Deadlines:               r.st.deadlines.Load(),
		BadResourceVersions:     r.st.badRVs.Load(),
		Resyncs:                 r.st.resyncs.Load(),
		Backoffs:                r.st.backoffs.Load(),
		Recoveries:              r.st.recoveries.Load(),
		LastSync:                r.timeAt(r.st.lastSync.Load()),
		LastEvent:               r.timeAt(r.st.lastEvent.Load()),
		LastBookmark:            r.timeAt(r.st.lastBookmark.Load()),
		LastError:               r.timeAt(r.st.lastError.Load()),
	}
}

// Staleness returns how long ago the reflector last had evidence that its store is current:
// the end of a list, a watch event, a bookmark, or a watch (re)opened from the last synced
// resourceVersion. With bookmarks (about one a minute from a kube-apiserver) and stall
// detection, a healthy reflector's staleness stays below StallTimeout; compare it with a
// threshold in a readiness check. Before the first list it is the time since New.
func (r *Reflector[T]) Staleness() time.Duration {
	last := r.st.lastContact.Load()
	return time.Since(r.created) - time.Duration(last)
}

// touch records evidence that the server works and the store is current (a list completed,
// a watch opened from the last synced resourceVersion, an event or a bookmark arrived): it
// moves Staleness and tells the backoff.
func (r *Reflector[T]) touch() { r.touchAt(r.sinceCreated()) }

func (r *Reflector[T]) touchAt(now int64) {
	r.st.lastContact.Store(now)
	r.backoff.healthy()
}

// markSynced records a completed sync of the whole collection at rv.
func (r *Reflector[T]) markSynced(rv string, watchList bool) {
	r.setRVUnavailable(false)
	if r.st.lists.Add(1) > 1 {
		r.st.relists.Add(1)
	}
	if watchList {
		r.st.watchListSyncs.Add(1)
	}
	now := r.sinceCreated()
	r.st.lastSync.Store(now)
	r.touchAt(now)
	r.log.Debug("store synced", "resourceVersion", rv, "watchList", watchList)
	r.setLastSyncRV(rv) // last: the ResourceVersionUpdater sees the figures already updated
}
