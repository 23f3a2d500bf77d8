package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/informer"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/sharding"
	"github.com/informerkit/informerkit/sharding/listwatch"
	"github.com/informerkit/informerkit/sharding/ring"
)

// ErrNoRing: a controller with Options.Sharded needs a Manager with ManagerOptions.Sharding.
var ErrNoRing = errors.New("controller: Options.Sharded needs a Manager with ManagerOptions.Sharding.Ring")

// ShardingOptions make a Manager a member of a sharding ring (package sharding/ring): its
// sharded controllers (Options.Sharded) run on every replica at once, each on its share of
// the objects, with caches of about 1/N of them. docs/sharding.md has the design. The zero
// value is no ring.
type ShardingOptions struct {
	// Ring names the ring; every replica of the controller gives the same name, and each
	// holds the Lease "<Ring>-<Identity>". Default "": no sharding.
	Ring string
	// Namespace holds the member Leases (default: LeaderElectionNamespace, or the client
	// configuration's namespace, else "default").
	Namespace string
	// Identity names this replica in the ring (default: LeaderElectionIdentity, or
	// hostname_<random>). It must be unique among the replicas.
	Identity string
	// Field places the objects of a namespaced primary type: sharding.FieldUID (the default)
	// spreads them evenly and the children they own follow by their controller owner
	// reference, filtered on the client; sharding.FieldNamespace keeps a namespace on one
	// replica, which the server selects for the children too (docs/sharding.md, "Owned
	// objects"). Cluster-scoped primary types are placed by uid.
	Field sharding.Field
	// Buckets is the number of slices of the hash space (ring.Options.Buckets; default
	// ring.DefaultBuckets). Every replica must use the same value.
	Buckets int
	// LeaseDuration, RenewDeadline and RetryPeriod time the member Leases (defaults 15 s,
	// 10 s, 2 s). A replica that dies without leaving has its share taken over after about
	// LeaseDuration + RetryPeriod; one that shuts down hands it over at once.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// setupSharding creates the Manager's ring member. identity is the replica's default
// identity.
func (m *Manager) setupSharding(cfg *apiclient.Config, identity string) error {
	o := &m.opts.Sharding
	if o.Namespace == "" {
		o.Namespace = m.opts.LeaderElectionNamespace
	}
	if o.Namespace == "" {
		o.Namespace = cfg.Namespace
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.Identity == "" {
		o.Identity = identity
	}
	if o.Field == "" {
		o.Field = sharding.FieldUID
	}
	c, err := m.coordinationClient(cfg)
	if err != nil {
		return err
	}
	r, err := ring.New(c, o.Namespace, o.Ring, o.Identity, ring.Options{
		Field: o.Field, Buckets: o.Buckets,
		LeaseDuration: durationOr(o.LeaseDuration, DefaultLeaseDuration),
		RenewDeadline: durationOr(o.RenewDeadline, DefaultRenewDeadline),
		RetryPeriod:   durationOr(o.RetryPeriod, DefaultRetryPeriod),
		Logger:        m.log,
	})
	if err != nil {
		return fmt.Errorf("controller: NewManager: sharding: %w", err)
	}
	m.ring = r
	return nil
}

func durationOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Ring returns the Manager's ring member (nil without ManagerOptions.Sharding): its Held
// ranges, its Members, Begin for work of your own outside the sharded controllers.
func (m *Manager) Ring() *ring.Ring { return m.ring }

// shardGate lets a sharded controller's workers reconcile a Request only while the
// Manager's ring holds its object, and keeps the ring from handing a range over while a
// reconcile of it runs (ring.Begin).
type shardGate struct {
	ring *ring.Ring
	// byNamespace: the Request's namespace places it. Otherwise its object's uid does, read
	// from the primary informer's cache (uidOf) or remembered from its deletion (gone).
	byNamespace bool
	uidOf       func(Request) (string, bool)

	mu   sync.Mutex
	seq  uint64                // deletions recorded so far: orders them against reconciles
	gone map[Request]tombstone // objects deleted from the cache, until reconciled
}

// tombstone is a deleted primary object's uid and the order of its deletion (seq).
type tombstone struct {
	uid string
	seq uint64
}

// hash returns the hash that places req, if known.
func (g *shardGate) hash(req Request) (uint64, bool) {
	if g.byNamespace {
		return sharding.Hash(req.Namespace), true
	}
	if uid, ok := g.uidOf(req); ok {
		return sharding.Hash(uid), true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if t, ok := g.gone[req]; ok {
		return sharding.Hash(t.uid), true
	}
	return 0, false
}

// deleted remembers the uid of a primary object that left the cache, so that the reconcile
// of its deletion can still be placed.
func (g *shardGate) deleted(req Request, uid string) {
	if g.byNamespace || uid == "" {
		return
	}
	g.mu.Lock()
	g.seq++
	g.gone[req] = tombstone{uid: uid, seq: g.seq}
	g.mu.Unlock()
}

// forget drops what the gate remembers of req's deletion: its object came back.
func (g *shardGate) forget(req Request) {
	if g.byNamespace {
		return
	}
	g.mu.Lock()
	delete(g.gone, req)
	g.mu.Unlock()
}

// mark returns the order of the last deletion recorded, for forgetBefore.
func (g *shardGate) mark() uint64 {
	if g.byNamespace {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seq
}

// forgetBefore drops req's deletion if it was recorded no later than mark: a Request
// handled after mark saw it. A deletion recorded later (while the Request was reconciled)
// is kept: its event enqueued req again, and that reconcile must still be placed, though
// the object has left the cache.
func (g *shardGate) forgetBefore(req Request, mark uint64) {
	if g.byNamespace {
		return
	}
	g.mu.Lock()
	if t, ok := g.gone[req]; ok && t.seq <= mark {
		delete(g.gone, req)
	}
	g.mu.Unlock()
}

// begin gates a Request: ok is false when this replica does not hold it (another
// replica's, or one whose object is neither cached nor remembered as deleted): the replica
// that holds it gets the same events through its own informers, and a range this replica
// gains brings its objects as new events. Otherwise end must be called with the reconcile's
// outcome; the ring gives the range up only after it was.
func (g *shardGate) begin(req Request) (end func(Result, error), ok bool) {
	mark := g.mark()
	h, ok := g.hash(req)
	if !ok {
		return nil, false
	}
	done, ok := g.ring.Begin(h)
	if !ok {
		g.forgetBefore(req, mark)
		return nil, false
	}
	return func(res Result, err error) {
		if err == nil && !res.Requeue && res.RequeueAfter == 0 {
			g.forgetBefore(req, mark)
		}
		done()
	}, true
}

// shardPrimary shards the Manager's informers of the primary resource gvr and returns the
// gate of the controller's Requests, with the sharding its owned types follow.
func shardPrimary[T meta.Object](b *Builder, gvr meta.GroupVersionResource, info kinds.Info) (*shardGate, listwatch.Options, error) {
	m := b.mgr
	if m.ring == nil {
		return nil, listwatch.Options{}, ErrNoRing
	}
	opts := listwatch.Options{Field: sharding.FieldUID}
	if info.Namespaced && m.opts.Sharding.Field == sharding.FieldNamespace {
		opts.Field = sharding.FieldNamespace
	}
	if err := listwatch.Check[T](opts); err != nil {
		return nil, opts, fmt.Errorf("controller: sharding %s: %w", gvr, err)
	}
	if err := m.factory.Shard(gvr, m.ring, opts); err != nil {
		return nil, opts, err
	}
	g := &shardGate{ring: m.ring, byNamespace: opts.Field == sharding.FieldNamespace, gone: map[Request]tombstone{}}
	children := listwatch.Options{ByOwner: true}
	if g.byNamespace {
		// A namespaced owner's children live in its namespace: the server selects them.
		children = opts
	}
	return g, children, nil
}

// bindUIDs gives the gate its reads of the primary informer's cache.
func (g *shardGate) bindUIDs(uidOf func(Request) (string, bool)) { g.uidOf = uidOf }

// cachedUID returns a function reading the uid of a Request's object from inf's cache.
func cachedUID[T meta.Object](inf *informer.Informer[T]) func(Request) (string, bool) {
	return func(req Request) (string, bool) {
		o, ok, err := inf.GetIndexer().GetByKey(req.String())
		if err != nil || !ok {
			return "", false
		}
		u, ok := any(o).(interface{ GetUID() string })
		if !ok {
			return "", false
		}
		return u.GetUID(), true
	}
}

// gateDeletions wraps the primary's handler so that the gate learns the uid of each object
// deleted from the cache before its Request is enqueued.
func gateDeletions[T meta.Object](g *shardGate, h EventHandler[T]) EventHandler[T] {
	return EventHandlerFuncs[T]{
		CreateFunc: func(ctx context.Context, e CreateEvent[T], q Queue) {
			if !isNil(e.Object) {
				g.forget(RequestFor(e.Object))
			}
			h.Create(ctx, e, q)
		},
		UpdateFunc: h.Update,
		DeleteFunc: func(ctx context.Context, e DeleteEvent[T], q Queue) {
			if u, ok := any(e.Object).(interface{ GetUID() string }); ok && !isNil(e.Object) {
				g.deleted(RequestFor(e.Object), u.GetUID())
			}
			h.Delete(ctx, e, q)
		},
		GenericFunc: h.Generic,
	}
}

// shardOwned shards the Manager's informers of an owned resource as the primary's children.
func shardOwned[T meta.Object](b *Builder, gvr meta.GroupVersionResource) error {
	if b.shard == nil {
		return nil
	}
	if err := listwatch.Check[T](b.children); err != nil {
		return fmt.Errorf("controller: sharding %s: %w", gvr, err)
	}
	return b.mgr.factory.Shard(gvr, b.mgr.ring, b.children)
}
