package ring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/leaderelection"
	"github.com/informerkit/informerkit/sharding"
)

// LabelRing is the label that names the ring on each member's Lease.
const LabelRing = "sharding.informerkit.io/ring"

// LeaseVerbs are the API verbs a member uses on Leases in the ring's namespace: those of
// its own Lease's elector (leaderelection.LeaseVerbs) and list, to read the other members'.
var LeaseVerbs = append([]string{"list"}, leaderelection.LeaseVerbs...)

// AnnotationClaimed is the annotation of a member's Lease that lists the hash ranges the
// member works on or is about to work on ("0x…-0x…" pairs, comma-separated, end exclusive;
// "" for none). Another member starts a range only when no live member claims it.
const AnnotationClaimed = "sharding.informerkit.io/claimed"

// Options are a Ring's optional settings.
type Options struct {
	// Field is the field hashed to shard objects (default sharding.FieldUID). uid spreads
	// objects evenly; namespace keeps a namespace (an owner and its children) on one
	// replica but spreads as unevenly as the namespaces' sizes.
	Field sharding.Field
	// Buckets is the number of equal slices of the hash space dealt to members (a power of
	// two; default DefaultBuckets). Every member of a ring must use the same value.
	Buckets int
	// LeaseDuration, RenewDeadline and RetryPeriod time the member Leases as in
	// leaderelection.Config (defaults 15 s, 10 s, 2 s). RetryPeriod is also the period at
	// which a member reads the ring's Leases. A member that cannot renew stops working
	// (its work context is cancelled) at RenewDeadline; the others take its ranges once
	// its Lease has not changed for LeaseDuration on their clocks, so work must stop within
	// LeaseDuration - RenewDeadline of the cancellation.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Drain is called when the member gives up ranges, after the work begun on them with
	// Begin has been done: Owns and Begin already answer false for them, and Drain must
	// return once no other work on them is in flight (work checked with Owns rather than
	// Begin). Only then does the member publish that it released them. Default: nothing
	// more to wait for.
	Drain func(ctx context.Context, lost []sharding.Range) error
	// OnChange, if set, is called (from the ring's goroutine) after the held ranges changed,
	// with the selector for the new ranges (ok false when the member holds nothing).
	OnChange func(sel sharding.Selector, ok bool)
	// Logger receives the ring's logs (default slog.Default()).
	Logger *slog.Logger
}

// Ring is one replica's membership of a sharding ring: it holds the replica's Lease,
// reads the others', and maintains the set of hash ranges this replica may work on
// (Held). See docs/sharding.md for the protocol.
type Ring struct {
	client          *apiclient.Client
	namespace, name string
	identity        string
	opts            Options
	leases          *apiclient.Resource[*leaderelection.Lease]
	log             *slog.Logger
	leaseName       string
	shift           uint
	buckets         int
	mu              sync.Mutex
	held            []bool // bucket -> this member may work on it
	members         []string
	view            map[string]*observed // lease name -> observation
	changed         chan struct{}        // closed when held changes, then replaced
	inflight        []int                // bucket -> works begun and not done (Begin)
	settled         chan struct{}        // closed when a work ends, then replaced
}

// observed is what a member knows of another member's Lease.
type observed struct {
	holder  string
	renew   string // the record whose change proves liveness
	at      time.Time
	dur     time.Duration
	claimed []sharding.Range
}

// New returns the member identity of ring name, its Lease in namespace. client must be
// built with MaxRetries -1 (each attempt a single request, as the Manager's elector).
func New(client *apiclient.Client, namespace, name, identity string, opts Options) (*Ring, error) {
	if client == nil {
		panic("ring.New: nil client")
	}
	var errs []error
	if namespace == "" || name == "" || identity == "" {
		errs = append(errs, fmt.Errorf("namespace, name and identity are required (got %q, %q, %q)", namespace, name, identity))
	}
	if opts.Field == "" {
		opts.Field = sharding.FieldUID
	}
	if !opts.Field.Valid() {
		errs = append(errs, fmt.Errorf("unsupported Field %q", opts.Field))
	}
	a, err := Assign(nil, opts.Buckets)
	if err != nil {
		errs = append(errs, err)
	}
	if opts.LeaseDuration == 0 {
		opts.LeaseDuration = 15 * time.Second
	}
	if opts.RenewDeadline == 0 {
		opts.RenewDeadline = 10 * time.Second
	}
	if opts.RetryPeriod == 0 {
		opts.RetryPeriod = 2 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("ring: invalid options: %w", errors.Join(errs...))
	}
	r := &Ring{
		client: client, namespace: namespace, name: name, identity: identity, opts: opts,
		leases:    apiclient.NewResource[*leaderelection.Lease](client, leaderelection.LeaseGVR).Namespace(namespace),
		log:       opts.Logger.With("ring", name, "identity", identity),
		leaseName: name + "-" + identity,
		buckets:   a.Buckets(),
		shift:     a.shift,
		held:      make([]bool, a.Buckets()),
		view:      map[string]*observed{},
		changed:   make(chan struct{}),
		inflight:  make([]int, a.Buckets()),
		settled:   make(chan struct{}),
	}
	// Validate the elector's timing now rather than at Run.
	if _, err := r.elector(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Ring) elector() (*leaderelection.Elector, error) {
	return leaderelection.New(leaderelection.Config{
		Client: r.client, Namespace: r.namespace, Name: r.leaseName, Identity: r.identity,
		Labels:        map[string]string{LabelRing: r.name},
		LeaseDuration: r.opts.LeaseDuration, RenewDeadline: r.opts.RenewDeadline, RetryPeriod: r.opts.RetryPeriod,
		ReleaseOnCancel: true,
		Callbacks:       leaderelection.Callbacks{OnStartedLeading: r.member},
		Logger:          r.opts.Logger,
	})
}

// Identity returns the member's identity.
func (r *Ring) Identity() string { return r.identity }

// Owns reports whether this member may work on an object whose Field hashes to h.
func (r *Ring) Owns(h uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held[r.bucket(h)]
}

// OwnsObject reports whether this member may work on the object with this uid and namespace.
func (r *Ring) OwnsObject(uid, namespace string) bool {
	if r.opts.Field == sharding.FieldNamespace {
		return r.Owns(sharding.Hash(namespace))
	}
	return r.Owns(sharding.Hash(uid))
}

// Begin starts a piece of work (a reconcile) on an object whose Field hashes to h, if the
// member holds h: ok is false otherwise, and the work must not run. done must be called when
// the work has ended. When the member gives a range up, it waits for the work begun on it to
// be done (then calls Options.Drain) before it tells the others, so a worker that checks
// with Begin needs no Drain of its own.
func (r *Ring) Begin(h uint64) (done func(), ok bool) {
	b := r.bucket(h)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.held[b] {
		return nil, false
	}
	r.inflight[b]++
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			r.inflight[b]--
			close(r.settled)
			r.settled = make(chan struct{})
			r.mu.Unlock()
		})
	}, true
}

// BeginObject is Begin for the object with this uid and namespace.
func (r *Ring) BeginObject(uid, namespace string) (done func(), ok bool) {
	if r.opts.Field == sharding.FieldNamespace {
		return r.Begin(sharding.Hash(namespace))
	}
	return r.Begin(sharding.Hash(uid))
}

// waitWork waits until no work begun on the buckets of lost is in flight.
func (r *Ring) waitWork(ctx context.Context, lost []bool) error {
	for {
		r.mu.Lock()
		busy := false
		for b, l := range lost {
			busy = busy || (l && r.inflight[b] > 0)
		}
		ch := r.settled
		r.mu.Unlock()
		if !busy {
			return nil
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-ch:
		}
	}
}

// Held returns the ranges this member may work on now.
func (r *Ring) Held() []sharding.Range {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rangesOf(r.held)
}

// Selector returns Held as a shard selector on Field; ok is false when nothing is held.
func (r *Ring) Selector() (sharding.Selector, bool) {
	h := r.Held()
	if len(h) == 0 {
		return sharding.Selector{}, false
	}
	return sharding.NewSelector(r.opts.Field, h...), true
}

// Changed returns a channel that is closed at the next change of the held ranges.
func (r *Ring) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

// Snapshot returns Held together with the channel closed at their next change (what a
// sharded ListerWatcher, package sharding/listwatch, follows: a *Ring is a listwatch.Share).
func (r *Ring) Snapshot() (held []sharding.Range, changed <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rangesOf(r.held), r.changed
}

// Buckets returns the number of buckets the ring deals out (Options.Buckets): with Members,
// what Assign needs to compute the assignment this member computes.
func (r *Ring) Buckets() int { return r.buckets }

// Field returns the field the ring hashes.
func (r *Ring) Field() sharding.Field { return r.opts.Field }

// Members returns the live members this member last computed its assignment from.
func (r *Ring) Members() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.members)
}

func (r *Ring) bucket(h uint64) int {
	if r.shift >= 64 {
		return 0
	}
	return int(h >> r.shift)
}

func (r *Ring) bucketRange(b int) sharding.Range {
	if r.shift >= 64 {
		return sharding.FullRange
	}
	return sharding.Range{Start: uint64(b) << r.shift, End: uint64(b+1) << r.shift}
}

func (r *Ring) rangesOf(set []bool) []sharding.Range {
	var out []sharding.Range
	for b, in := range set {
		if !in {
			continue
		}
		br := r.bucketRange(b)
		if n := len(out); n > 0 && out[n-1].End == br.Start && br.Start != 0 {
			out[n-1].End = br.End
			continue
		}
		out = append(out, br)
	}
	return out
}
