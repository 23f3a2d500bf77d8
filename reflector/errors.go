package reflector

import (
	"errors"
	"net/http"
	"syscall"
	"time"

	"github.com/informerkit/informerkit/meta"
)

// Sentinel errors, wrapped in *Error; test with errors.Is.
var (
	// ErrVeryShortWatch: a watch closed less than VeryShortWatch after it was opened without
	// delivering any event. Something is wrong with the server or a proxy; the reflector
	// relists (client-go's VeryShortWatchError).
	ErrVeryShortWatch = errors.New("very short watch: closed within a second without any event")
	// ErrWatchStalled: a watch delivered no event and no bookmark for StallTimeout. The
	// reflector re-opens it from the last synced resourceVersion, without a relist.
	ErrWatchStalled = errors.New("watch stalled: no event or bookmark within the stall timeout")
	// ErrConnectionLost: a watch's connection broke without a clean end of the stream (reset,
	// unexpected EOF, or a dead connection found by the WebSocket read deadline or HTTP/2
	// pings). The reflector re-watches from the last synced resourceVersion without a relist,
	// as after a clean close, and counts it in Stats().ConnectionsLost.
	ErrConnectionLost = errors.New("watch connection lost")
	// ErrWatchListUnsupported: the server refused a streaming list (400/422) or ignored
	// sendInitialEvents. The reflector falls back to LIST (see WatchListMode).
	ErrWatchListUnsupported = errors.New("streaming list (sendInitialEvents) not supported by the server")
	// ErrBadBookmark: a bookmark the reflector cannot use, one without a resourceVersion. At
	// the end of a streaming list's initial events it fails the streaming list (wrapped
	// with ErrWatchListUnsupported: WatchListAuto then lists for WatchListReprobe); later in
	// a watch it is reported and skipped, and the watch goes on from the last usable
	// resourceVersion. client-go takes "" as the resourceVersion in both cases.
	ErrBadBookmark = errors.New("bookmark without a resourceVersion")
	// ErrWatchListIncomplete: a streaming list ended before its initial-events-end bookmark.
	// The reflector falls back to LIST for this attempt.
	ErrWatchListIncomplete = errors.New("streaming list ended before the initial-events-end bookmark")
)

// Error is the error type of ListAndWatch and of WatchErrorHandler: it names the reflector
// (usually the resource) and the operation that failed. Err may be an *meta.Status (use
// meta.IsResourceExpired and friends on the *Error directly), a transport error or one of
// the sentinels of this package.
type Error struct {
	// Reflector is the reflector's name (Options.Name).
	Reflector string
	// Op is "list", "watch", "watch-list" or "resync".
	Op string
	// Err is the cause.
	Err error
}

// Error returns "reflector <name>: <op>: <cause>".
func (e *Error) Error() string {
	return "reflector " + e.Reflector + ": " + e.Op + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// isExpired reports a 410: the resourceVersion (or continue token) is compacted away.
func isExpired(err error) bool {
	return meta.IsResourceExpired(err) || meta.IsGone(err)
}

// needsFreshList reports errors after which the last synced resourceVersion cannot be used
// and the reflector must list at "" (a consistent read of the newest state).
func needsFreshList(err error) bool {
	return isExpired(err) || meta.IsTooLargeResourceVersion(err)
}

// retryWithoutRelist reports errors on which a watch is re-opened from the last synced
// resourceVersion after a backoff, instead of relisting: the server is overloaded (429, or any
// answer carrying Retry-After, typically 503) or unreachable (connection refused). A relist
// would only add load; the resourceVersion is still good.
//
// "Too large resourceVersion" also carries Retry-After (1 s) but is not one of these: the
// resourceVersion may never come (a restored etcd), so it leads to a list at "".
func retryWithoutRelist(err error) bool {
	if needsFreshList(err) {
		return false
	}
	if meta.IsTooManyRequests(err) || errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	_, ok := meta.RetryAfter(err)
	return ok
}

// errNoWatcher: a ListerWatcher returned neither a Watcher nor an error.
var errNoWatcher = errors.New("watch returned no watcher")

// watchOpenRetriable reports whether a watch that could not be opened is opened again from the
// last synced resourceVersion after a backoff, instead of relisting: always, except when the
// server's answer says that the resourceVersion is unusable (410 Gone or Expired, too large) or
// that the request itself is wrong (a 4xx other than 429: 400, 401, 403, 404, 422...). So
// transport errors (connection refused or reset, unexpected EOF, timeouts), 429 and 5xx back
// off and re-watch.
//
// client-go re-watches only after connection refused and 429, and relists after anything
// else, once its REST layer has retried the watch request itself (up to 10 times, a second
// apart, on a reset, an EOF or a timeout, or on 5xx with Retry-After). Behind a proxy whose
// API server is down that means a relist per informer per outage.
func watchOpenRetriable(err error) bool {
	switch {
	case needsFreshList(err), errors.Is(err, errNoWatcher):
		return false
	case retryWithoutRelist(err):
		return true
	}
	if s, ok := meta.AsStatus(err); ok {
		return s.Code >= 500 || s.Code == http.StatusTooManyRequests
	}
	return true
}

// retryAfterOf returns the delay the server asked for in err, or 0.
func retryAfterOf(err error) time.Duration {
	if d, ok := meta.RetryAfter(err); ok {
		return d
	}
	return 0
}

// isRefusal reports a server answer that means "I do not support this request": 400 or 422.
func isRefusal(err error) bool {
	if meta.IsBadRequest(err) || meta.IsInvalid(err) {
		return true
	}
	s, ok := meta.AsStatus(err)
	return ok && (s.Code == http.StatusBadRequest || s.Code == http.StatusUnprocessableEntity)
}
