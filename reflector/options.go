package reflector

import (
	"context"
	"log/slog"
	"time"

	"github.com/informerkit/informerkit/meta"
)

// Defaults of Options. They are client-go's values where client-go has one.
const (
	// DefaultPageSize is the limit of paged LIST requests.
	DefaultPageSize = 500
	// DefaultMinWatchTimeout is the lower bound of a watch's timeoutSeconds; the value sent is
	// random in [MinWatchTimeout, 2×MinWatchTimeout] to spread reconnects over time.
	DefaultMinWatchTimeout = 5 * time.Minute
	// DefaultStallTimeout is how long a watch may go without any event or bookmark before
	// it is considered stalled and re-opened. The kube-apiserver sends a bookmark about every
	// minute to watches that allow them, so three minutes means three missed bookmarks.
	DefaultStallTimeout = 3 * time.Minute
	// DefaultWatchListTimeout is how long the reflector waits for the first initial event
	// (or the end bookmark) of a streaming list before deciding that the server ignored
	// sendInitialEvents. A kube-apiserver may first wait for its cache to catch up.
	DefaultWatchListTimeout = 30 * time.Second
	// DefaultWatchListGap is how long the initial events of a streaming list may pause once
	// they have begun. A kube-apiserver sends them, and then the end bookmark, from memory
	// without a pause: a longer one means that the server ignored sendInitialEvents (it sent
	// the current objects as an old server does for a watch from "", and no end bookmark
	// will come), and the reflector falls back to LIST then, not a WatchListTimeout later.
	DefaultWatchListGap = 5 * time.Second
	// DefaultWatchListReprobe is how long WatchListAuto keeps using LIST after the server
	// refused or ignored a streaming list, before trying one again.
	DefaultWatchListReprobe = time.Hour
	// VeryShortWatch is the duration under which a watch that closes without delivering any
	// event is treated as a failure (ErrVeryShortWatch) and leads to a relist.
	VeryShortWatch = time.Second
)

// WatchListMode selects how the reflector obtains the initial state and relists.
type WatchListMode int

const (
	// WatchListAuto (the default) uses a streaming list (a WATCH with sendInitialEvents=true)
	// and falls back to LIST when the server refuses it (400/422) or ignores it (no end
	// bookmark within WatchListTimeout, or a non-initial event first). The fallback is
	// remembered for WatchListReprobe, so a server without WatchList costs one failed
	// attempt per WatchListReprobe, not one per relist. A stream that merely breaks before
	// its end bookmark falls back to LIST for that attempt only.
	WatchListAuto WatchListMode = iota
	// WatchListOn tries a streaming list for every (re)list and falls back to LIST for that
	// attempt when it fails; nothing is remembered (client-go with the WatchListClient gate).
	WatchListOn
	// WatchListOff always uses LIST then WATCH.
	WatchListOff
)

// String returns "auto", "on" or "off".
func (m WatchListMode) String() string {
	switch m {
	case WatchListAuto:
		return "auto"
	case WatchListOn:
		return "on"
	case WatchListOff:
		return "off"
	}
	return "WatchListMode(?)"
}

// Backoff configures the delay between failed attempts: a relist after a failed list or a
// watch that needs one, and a re-watch after a watch could not be opened or was refused (429,
// Retry-After). The delay starts at Initial, is multiplied by Factor at every failure up to
// Max, and gets a random extra of up to Jitter × itself. A server's Retry-After is honoured:
// the delay is never shorter than what it asked for.
//
// The zero Backoff is client-go's reflector backoff: 800 ms, ×2, jitter 1.0, cap 30 s (so
// delays settle in [30 s, 60 s) against a server that stays down). A Backoff with any field
// set is read as a wait.Backoff is: Jitter 0 (or negative) means no jitter, and the other
// zero fields take the values above.
//
// The delay returns to Initial once the reflector has been healthy (a list completed, a watch
// opened or delivered an event or bookmark) for at least as long as the last delay, or when no
// delay was needed for Reset (default 2 min, client-go's only rule). client-go keeps growing
// the delay from one fault to the next unless two minutes pass between them; here a second
// fault a little while after recovering from the first starts again from Initial, while a
// server that fails again as soon as it answers still sees the delay grow.
type Backoff struct {
	Initial time.Duration
	Factor  float64
	Jitter  float64
	Max     time.Duration
	Reset   time.Duration
}

// Options configure a Reflector. ListerWatcher and Store are required; every other field has
// a documented default.
type Options[T meta.Object] struct {
	// Name identifies the reflector in logs, errors and Stats. Default: the ListerWatcher's
	// String() if it has one, else its GroupVersionResource() ("configmaps.v1" for an
	// apiclient.Resource), else the Go type of T.
	Name string

	// ResyncPeriod is the period of Store.Resync calls while watching; 0 disables resyncs.
	ResyncPeriod time.Duration
	// ShouldResync, if set, is asked at every resync tick; Resync is called only when it
	// returns true (the shared informer uses it for per-handler resync periods).
	ShouldResync func() bool

	// PageSize is the limit of paged LIST requests. 0 follows client-go: pages of
	// DefaultPageSize when listing at resourceVersion "" or "0" (or always, once the first
	// list at "0" came back paged), and an unpaged list at the last synced resourceVersion so
	// that the server's watch cache can serve it. A positive value pages every list with that
	// limit; a negative value never pages.
	PageSize int64
	// WatchList selects streaming lists; see WatchListMode. Default WatchListAuto.
	WatchList WatchListMode
	// WatchListTimeout: see DefaultWatchListTimeout.
	WatchListTimeout time.Duration
	// WatchListGap: see DefaultWatchListGap; never longer than WatchListTimeout.
	WatchListGap time.Duration
	// WatchListReprobe: see DefaultWatchListReprobe; a negative value never re-probes.
	WatchListReprobe time.Duration

	// MinWatchTimeout: see DefaultMinWatchTimeout. Unlike client-go, small values are
	// honoured (tests use them).
	MinWatchTimeout time.Duration
	// StallTimeout: see DefaultStallTimeout; a negative value disables stall detection.
	StallTimeout time.Duration
	// Backoff configures delays between attempts; see Backoff.
	Backoff Backoff
	// MaxInternalErrorRetryDuration, if positive, makes a watch that ends with a 500
	// InternalError re-open from the last synced resourceVersion (after the backoff delay)
	// instead of relisting, as long as the first 500 of the current run of them is at most
	// this long ago; a run ends after a minute without one. 0 (the default, as in client-go)
	// relists at once. client-go re-watches without a delay; kube-apiserver's own reflectors
	// use 30 s.
	MaxInternalErrorRetryDuration time.Duration

	// ResumeFrom, if set, says that the store already holds the collection as of this
	// resourceVersion (the store of an earlier reflector over the same collection): the
	// first cycle watches from it instead of listing. A watch that cannot start there (410)
	// relists as usual. Default "": list first.
	ResumeFrom string

	// WatchErrorHandler, if set, is called with every error that ends a list or a watch
	// (always a *Error), including those the reflector recovers from without a relist (429,
	// connection refused, stall), but not for clean closes or cancellation. It runs on the
	// reflector's goroutine and must return quickly. The reflector logs the error itself
	// whether or not a handler is set.
	WatchErrorHandler func(ctx context.Context, err error)
	// Logger receives the reflector's log lines (default slog.Default()), with the attribute
	// reflector=Name. Errors are logged as returned by apiclient, which never includes
	// credentials.
	Logger *slog.Logger
}

// config is Options with defaults applied.
type config[T meta.Object] struct {
	Options[T]
	backoff Backoff
}

func (o Options[T]) withDefaults() config[T] {
	if o.WatchListTimeout <= 0 {
		o.WatchListTimeout = DefaultWatchListTimeout
	}
	if o.WatchListGap <= 0 {
		o.WatchListGap = DefaultWatchListGap
	}
	o.WatchListGap = min(o.WatchListGap, o.WatchListTimeout)
	if o.WatchListReprobe == 0 {
		o.WatchListReprobe = DefaultWatchListReprobe
	}
	if o.MinWatchTimeout <= 0 {
		o.MinWatchTimeout = DefaultMinWatchTimeout
	}
	if o.StallTimeout == 0 {
		o.StallTimeout = DefaultStallTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	b := o.Backoff
	if b == (Backoff{}) {
		b.Jitter = 1
	}
	if b.Initial <= 0 {
		b.Initial = 800 * time.Millisecond
	}
	if b.Factor < 1 {
		b.Factor = 2
	}
	b.Jitter = max(b.Jitter, 0)
	if b.Max <= 0 {
		b.Max = 30 * time.Second
	}
	if b.Max < b.Initial {
		b.Max = b.Initial
	}
	if b.Reset <= 0 {
		b.Reset = 2 * time.Minute
	}
	return config[T]{Options: o, backoff: b}
}
