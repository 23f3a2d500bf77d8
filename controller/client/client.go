package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// Defaults of Options.
const (
	// DefaultReadYourWritesTimeout bounds the wait of a cache read for the client's own
	// earlier write of the object to reach the cache.
	DefaultReadYourWritesTimeout = 10 * time.Second
	// DefaultCacheSyncTimeout bounds the wait of a first read of a type for the informer it
	// starts to sync.
	DefaultCacheSyncTimeout = 2 * time.Minute
)

// Errors of the client's reads; the errors returned wrap them.
var (
	// ErrStaleCache: the cache did not show the client's own write of the object within
	// ReadYourWritesTimeout (see StaleCacheError).
	ErrStaleCache = errors.New("the cache has not seen this client's last write yet")
	// ErrNoInformer: with DisableStartOnRead, a read of a type without an informer.
	ErrNoInformer = errors.New("no informer for this type")
	// ErrNotStarted: a read before Start (the Manager's Start) of a type whose informer
	// has not synced: nothing runs it yet.
	ErrNotStarted = errors.New("the client's caches are not started")
)

// StaleCacheError is the error of a cache read that waited ReadYourWritesTimeout for the
// client's own write of the object and did not see it: the informer is behind (a slow or
// stalled watch). The caller usually returns it and is retried with backoff.
type StaleCacheError struct {
	// Resource and Key name the object ("namespace/name").
	Resource, Key string
	// Written is the resourceVersion the client's write produced ("" for a delete);
	// Cached the resourceVersion the cache holds ("" if none), Applied the newest the cache
	// has applied.
	Written, Cached, Applied string
	// Waited is how long the read waited.
	Waited time.Duration
}

// Error says what the cache is missing.
func (e *StaleCacheError) Error() string {
	what := "write at resourceVersion " + e.Written
	if e.Written == "" {
		what = "delete"
	}
	key := e.Key
	if key == "" {
		key = "(writes made before its informer started)"
	}
	return fmt.Sprintf("client: %s %s: %v: waited %v for its %s; the cache holds resourceVersion %q and has applied up to %q",
		e.Resource, key, ErrStaleCache, e.Waited.Round(time.Millisecond), what, e.Cached, e.Applied)
}

// Unwrap returns ErrStaleCache.
func (e *StaleCacheError) Unwrap() error { return ErrStaleCache }

// Options are the optional settings of a Client. The zero value of each field is its
// default.
type Options struct {
	// Registry maps Go types to their kinds and resources (default kinds.Default).
	Registry *kinds.Registry
	// ReadYourWritesTimeout bounds the wait of a cache read for this client's own earlier
	// write of the object (default DefaultReadYourWritesTimeout); past it the read fails with
	// a *StaleCacheError. Negative turns read-your-writes off: reads return what the cache
	// holds, as controller-runtime's do.
	ReadYourWritesTimeout time.Duration
	// DisableStartOnRead makes a read of a type that has no informer fail with ErrNoInformer
	// instead of starting one (controller-runtime's ReaderFailOnMissingInformer).
	DisableStartOnRead bool
	// AdmitStartOnRead, if set, is asked before a read starts the informer of a type that
	// has none; an error refuses the read (wrapped). The Manager sets it to its informer
	// budget (ManagerOptions.InformerBudget). Default nil: every such read starts one.
	AdmitStartOnRead func(gvr meta.GroupVersionResource, typ reflect.Type) error
	// CacheSyncTimeout bounds the wait of a read for an informer it started to sync
	// (default DefaultCacheSyncTimeout).
	CacheSyncTimeout time.Duration
	// Logger receives the client's log lines (default slog.Default()).
	Logger *slog.Logger
}

// Client reads objects from the informer caches of a factory and writes them to the API
// server: controller-runtime's client, with reads that see the client's own writes. It is
// safe for concurrent use. Typed access goes through TypedFor (or TypedForKind):
//
//	pods := client.TypedFor[*Pod](c)
//	pod, err := pods.Get(ctx, "default", "web-1", client.GetOptions{})
type Client struct {
	api     *apiclient.Client
	factory *informer.Factory
	opts    Options
	log     *slog.Logger

	mu       sync.Mutex
	startCtx context.Context // set by Start
	trackers map[trackerKey]any
	// readStarted holds the informers reads created (startonread.go).
	readStarted []informer.AnyInformer
}

type trackerKey struct {
	typ reflect.Type
	gvr meta.GroupVersionResource
}

// New returns a client that writes through api and reads through the informers of factory
// (which must list and watch through the same API server). The Manager creates one
// (Manager.Client).
func New(api *apiclient.Client, factory *informer.Factory, opts Options) (*Client, error) {
	if api == nil {
		panic("client.New: nil apiclient.Client")
	}
	if factory == nil {
		panic("client.New: nil informer.Factory")
	}
	if opts.CacheSyncTimeout < 0 {
		return nil, errors.New("client: New: CacheSyncTimeout is negative")
	}
	if opts.Registry == nil {
		opts.Registry = kinds.Default
	}
	if opts.ReadYourWritesTimeout == 0 {
		opts.ReadYourWritesTimeout = DefaultReadYourWritesTimeout
	}
	if opts.CacheSyncTimeout == 0 {
		opts.CacheSyncTimeout = DefaultCacheSyncTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Client{api: api, factory: factory, opts: opts, log: opts.Logger, trackers: map[trackerKey]any{}}, nil
}

// Start lets reads start the informers they need: until ctx is done, a read of a type whose
// informer is not running starts it on the factory and waits for it to sync. The Manager
// calls it when its caches start. Informers created before Start (TypedFor, Informer) are started
// by whoever starts the factory.
func (c *Client) Start(ctx context.Context) {
	c.mu.Lock()
	c.startCtx = ctx
	c.mu.Unlock()
}

// APIClient returns the API client the writes go through.
func (c *Client) APIClient() *apiclient.Client { return c.api }

// Registry returns the type registry the client resolves kinds with.
func (c *Client) Registry() *kinds.Registry { return c.opts.Registry }

// Factory returns the informer factory the reads go through.
func (c *Client) Factory() *informer.Factory { return c.factory }

// inScope reports whether objects of info in namespace ns are in the factory's informers
// (a factory restricted to a namespace sees no other).
func (c *Client) inScope(info kinds.Info, ns string) bool {
	fns := c.factory.Namespace()
	return fns == "" || !info.Namespaced || ns == fns
}

func (c *Client) started() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.startCtx
}

// tracker returns the write tracker of T's informer for gvr, shared by every Typed[T].
func tracker[T meta.Object](c *Client, gvr meta.GroupVersionResource) *writes[T] {
	k := trackerKey{typ: reflect.TypeFor[T](), gvr: gvr}
	c.mu.Lock()
	defer c.mu.Unlock()
	if w, ok := c.trackers[k]; ok {
		return w.(*writes[T])
	}
	w := newWrites[T]()
	c.trackers[k] = w
	return w
}
