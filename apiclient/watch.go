package apiclient

import (
	"context"
	"net/url"
	"strconv"

	"github.com/informerkit/informerkit/meta"
)

// EventType is the type of a watch event as the API server writes it.
type EventType string

// The watch event types.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
	// Bookmark events carry only metadata.resourceVersion (and, at the end of the initial
	// events of a streaming list, the InitialEventsEndAnnotation).
	Bookmark EventType = "BOOKMARK"
	// Error events carry no object; Event.Err holds the server's *Status or a decoding error.
	// The watch ends after an Error event.
	Error EventType = "ERROR"
	// Skipped events carry no object: apiclient's watchers make them for an event the server
	// sent whose object the client refused, an object of another kind than the resource's
	// (Event.Err wraps ErrWrongKind). The watch goes on. The API server never sends this
	// type.
	Skipped EventType = "SKIPPED"
)

// InitialEventsEndAnnotation marks the bookmark that ends the initial events of a watch
// opened with SendInitialEvents.
const InitialEventsEndAnnotation = "k8s.io/initial-events-end"

// ResourceVersionMatch values for ListOptions.ResourceVersionMatch.
const (
	ResourceVersionMatchNotOlderThan = "NotOlderThan"
	ResourceVersionMatchExact        = "Exact"
)

// Event is one watch event. For Added, Modified, Deleted and Bookmark, Object is the decoded
// object (for Deleted, its last state). For Error, Object is the zero value and Err says why
// the watch ended: a *Status from the server (IsGone/IsResourceExpired for a compacted
// resourceVersion) or an error describing a stream that could not be decoded.
type Event[T any] struct {
	Type   EventType
	Object T
	Err    error
}

// Watcher is an open watch. ResultChan is closed when the watch ends: after an Error event,
// when the server closes the stream (a clean close carries no Error event), when Stop is
// called, or when the context the watch was opened with is done. Stop may be called any
// number of times from any goroutine; once it returns, the watch holds no goroutine and no
// connection.
type Watcher[T any] interface {
	ResultChan() <-chan Event[T]
	Stop()
}

// ListOptions are the query parameters of LIST and WATCH requests.
type ListOptions struct {
	LabelSelector        string
	FieldSelector        string
	ResourceVersion      string
	ResourceVersionMatch string
	// Limit and Continue page a LIST; both are ignored by WATCH.
	Limit    int64
	Continue string
	// AllowWatchBookmarks asks the server for periodic BOOKMARK events on a WATCH.
	AllowWatchBookmarks bool
	// SendInitialEvents asks a WATCH to start with the current state as ADDED events,
	// ended by a bookmark annotated with InitialEventsEndAnnotation (a streaming list).
	SendInitialEvents *bool
	// TimeoutSeconds bounds the duration of the request on the server.
	TimeoutSeconds *int64
	// ShardSelector limits a LIST or WATCH to the objects whose uid or namespace hashes into
	// the given ranges, e.g. "shardRange(object.metadata.uid, '0x0000000000000000',
	// '0x8000000000000000')" (package sharding builds and parses it). kube-apiserver 1.36
	// honours it only with the alpha feature gate ShardedListAndWatch; without the gate it
	// ignores the parameter and answers the whole collection. A list the server filtered
	// carries ListMeta.ShardInfo.
	ShardSelector string
	// DisableRetries sends a LIST once, whatever Config.MaxRetries says, so that a caller
	// with a backoff of its own (the reflector) sees the first failure, with the server's
	// Retry-After in the *Status, at once. Client-side: not sent to the server. WATCH
	// requests are never retried. Default: a LIST is retried up to Config.MaxRetries times.
	DisableRetries bool
}

// Query returns the options as URL query parameters; watch adds watch=true.
func (o ListOptions) Query(watch bool) url.Values {
	q := url.Values{}
	if watch {
		q.Set("watch", "true")
	}
	if o.LabelSelector != "" {
		q.Set("labelSelector", o.LabelSelector)
	}
	if o.FieldSelector != "" {
		q.Set("fieldSelector", o.FieldSelector)
	}
	if o.ResourceVersion != "" {
		q.Set("resourceVersion", o.ResourceVersion)
	}
	if o.ResourceVersionMatch != "" {
		q.Set("resourceVersionMatch", o.ResourceVersionMatch)
	}
	if !watch {
		if o.Limit > 0 {
			q.Set("limit", strconv.FormatInt(o.Limit, 10))
		}
		if o.Continue != "" {
			q.Set("continue", o.Continue)
		}
	}
	if watch && o.AllowWatchBookmarks {
		q.Set("allowWatchBookmarks", "true")
	}
	if o.SendInitialEvents != nil {
		q.Set("sendInitialEvents", strconv.FormatBool(*o.SendInitialEvents))
	}
	if o.TimeoutSeconds != nil {
		q.Set("timeoutSeconds", strconv.FormatInt(*o.TimeoutSeconds, 10))
	}
	if o.ShardSelector != "" {
		q.Set("shardSelector", o.ShardSelector)
	}
	return q
}

// ListerWatcher lists and watches one collection (a resource, optionally in one namespace
// and filtered by selectors). The reflector drives it; apiclient provides one per resource,
// and tests may provide their own.
type ListerWatcher[T any] interface {
	// List returns one page (opts.Limit, opts.Continue) of the collection.
	List(ctx context.Context, opts ListOptions) (*meta.List[T], error)
	// Watch opens a watch; it ends when ctx is done or the returned Watcher is stopped.
	Watch(ctx context.Context, opts ListOptions) (Watcher[T], error)
}
