package apitest

import (
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/informerkit/informerkit/apitest/internal/negotiation"
)

// A watcher is one open watch: what it selects, where it writes, what it has sent (for
// WatchInfo) and the faults waiting to act on it.

// WatchInfo describes an open (or closed) watch.
type WatchInfo struct {
	ID       int64
	Resource string
	// Client is the client that opened the watch: its User-Agent (see Clients).
	Client    string
	Namespace string
	Query     url.Values
	// Protocol is "HTTP/1.1", "HTTP/2.0" or "websocket".
	Protocol string
	// MediaType is the media type of the stream's events: "application/json" or
	// "application/vnd.kubernetes.protobuf" (negotiated from the Accept header).
	MediaType string
	Opened    time.Time
	// StartRV is the resourceVersion the watch asked for ("" or "0": the current state).
	StartRV string
	// EventsSent counts ADDED/MODIFIED/DELETED events written so far; LastRV is the
	// resourceVersion of the last event or bookmark written.
	EventsSent int64
	LastRV     uint64
	// BookmarkTicks counts the times a bookmark was due (allowWatchBookmarks: every
	// BookmarkInterval and before the timeout), and BookmarksSent those that were written
	// (a bookmark is skipped when there is nothing newer to confirm). Tests wait on
	// BookmarkTicks to know that bookmark intervals have passed without sleeping.
	BookmarkTicks int64
	BookmarksSent int64
}

// watcher is one open watch stream.
type watcher struct {
	id       int64
	s        *Server
	client   string // the User-Agent of the watch request (clients.go)
	res      *resource
	version  string // the version the watch names (crdserve.go's atVersion)
	f        *filter
	info     WatchInfo
	sent     atomic.Int64
	lastRV   atomic.Uint64
	bmTicks  atomic.Int64
	bmSent   atomic.Int64
	sink     sink
	bookmark bool
	// partitioned: a PartitionWatches is in progress; a WebSocket watch stops answering pings.
	partitioned atomic.Bool

	ctlMu sync.Mutex
	ctl   []watchCtl
	wake  chan struct{}

	cutAfter int64 // >0: end the stream when sent reaches it

	// out is the negotiated representation of events (watchenc.go); headersSent records
	// that a Table watch has sent its column definitions (only the first event has them).
	out         negotiation.Output
	headersSent bool
}

func (w *watcher) push(c watchCtl) {
	w.ctlMu.Lock()
	w.ctl = append(w.ctl, c)
	w.ctlMu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// hasCtl reports whether faults are waiting to be applied.
func (w *watcher) hasCtl() bool {
	w.ctlMu.Lock()
	defer w.ctlMu.Unlock()
	return len(w.ctl) > 0
}

func (w *watcher) takeCtl() []watchCtl {
	w.ctlMu.Lock()
	defer w.ctlMu.Unlock()
	c := w.ctl
	w.ctl = nil
	return c
}

func (w *watcher) snapshotInfo() WatchInfo {
	i := w.info
	i.Query = cloneValues(i.Query)
	i.Client = w.client
	i.EventsSent = w.sent.Load()
	i.LastRV = w.lastRV.Load()
	i.BookmarkTicks = w.bmTicks.Load()
	i.BookmarksSent = w.bmSent.Load()
	i.MediaType = negotiation.MediaJSON
	if w.out.Format == negotiation.Protobuf {
		i.MediaType = negotiation.MediaProtobuf
	}
	return i
}
