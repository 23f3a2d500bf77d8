// Package expectations rebuilds kube-controller-manager's ControllerExpectations
// (pkg/controller/controller_utils.go) for any key type: how a controller that creates or
// deletes children avoids acting twice on a cache that has not caught up with its own writes.
//
// Before creating n children of an owner, the controller records ExpectCreations(owner, n);
// the child informer's handlers call CreationObserved(owner) for every child they see
// arrive. Until every expected child has been seen (or the expectations expire, after TTL),
// SatisfiedExpectations(owner) is false and the reconciler must not count children from the
// cache: it would see too few and create them again. Deletions work the same way; UIDTracking
// counts a deleted child once by its uid, however many times its deletion is observed (a
// graceful deletion, then the delete, then a tombstone).
//
// controller.OwnedWithOptions wires the observations from a Builder's Owns:
//
//	exp := expectations.NewUIDTracking[controller.Request](expectations.Options{})
//	pods := controller.OwnedWithOptions[*Pod](controller.OwnedOptions[*Pod]{Expectations: exp})
//
// Where it differs from upstream: the key is any comparable type (controller.Request,
// not a "namespace/name" string), the methods cannot fail (upstream's store errors do not
// exist here), and UIDTracking tracks deletions by uid (upstream uses pod keys).
package expectations

import (
	"log/slog"
	"sync"
	"time"
)

// DefaultTTL is how long unfulfilled expectations hold (kube-controller-manager's
// ExpectationsTimeout): a watch event lost for good cannot block an owner for longer.
const DefaultTTL = 5 * time.Minute

// Options are the optional settings of New and NewUIDTracking.
type Options struct {
	// TTL is how long after they were set unfulfilled expectations count as satisfied
	// anyway (default DefaultTTL); negative: they never expire.
	TTL time.Duration
	// Logger receives a debug line when expectations expire unfulfilled (default
	// slog.Default()).
	Logger *slog.Logger
}

// Pending is the state of one key's expectations.
type Pending struct {
	// Add and Del are the creations and deletions still expected (zero or less: none).
	Add, Del int64
	// Set is when the expectations were last set (ExpectCreations, ExpectDeletions,
	// SetExpectations); the TTL counts from it.
	Set time.Time
}

// Fulfilled reports whether nothing more is expected.
func (p Pending) Fulfilled() bool { return p.Add <= 0 && p.Del <= 0 }

// Expectations counts the creations and deletions a controller expects to observe, per key
// (kube-controller-manager's ControllerExpectations). It is safe for concurrent use.
type Expectations[K comparable] struct {
	ttl    time.Duration
	logger *slog.Logger
	mu     sync.Mutex
	m      map[K]*Pending
}

// New returns empty expectations.
func New[K comparable](opts Options) *Expectations[K] {
	if opts.TTL == 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Expectations[K]{ttl: opts.TTL, logger: opts.Logger, m: map[K]*Pending{}}
}

// Get returns key's expectations, if any are recorded.
func (e *Expectations[K]) Get(key K) (Pending, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, ok := e.m[key]
	if !ok {
		return Pending{}, false
	}
	return *p, true
}

// SetExpectations replaces key's expectations with add creations and del deletions, and
// starts their TTL.
func (e *Expectations[K]) SetExpectations(key K, add, del int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.m[key] = &Pending{Add: int64(add), Del: int64(del), Set: time.Now()}
}

// ExpectCreations replaces key's expectations with n creations (call it before creating).
func (e *Expectations[K]) ExpectCreations(key K, n int) { e.SetExpectations(key, n, 0) }

// ExpectDeletions replaces key's expectations with n deletions (call it before deleting).
func (e *Expectations[K]) ExpectDeletions(key K, n int) { e.SetExpectations(key, 0, n) }

// RaiseExpectations adds to key's recorded expectations; without any, it does nothing.
func (e *Expectations[K]) RaiseExpectations(key K, add, del int) {
	e.adjust(key, int64(add), int64(del))
}

// LowerExpectations takes from key's recorded expectations (a create that failed will never
// be observed); without any, it does nothing.
func (e *Expectations[K]) LowerExpectations(key K, add, del int) {
	e.adjust(key, -int64(add), -int64(del))
}

func (e *Expectations[K]) adjust(key K, add, del int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.m[key]; ok {
		p.Add += add
		p.Del += del
	}
}

// CreationObserved records that a child of key was seen created.
func (e *Expectations[K]) CreationObserved(key K) { e.LowerExpectations(key, 1, 0) }

// DeletionObserved records that a child of key was seen deleted.
func (e *Expectations[K]) DeletionObserved(key K) { e.LowerExpectations(key, 0, 1) }

// SatisfiedExpectations reports whether the controller may trust the cache about key's
// children: no expectations recorded (a new owner, or a restarted controller), all of them
// observed, or set longer than TTL ago (logged: a watch event was probably lost).
func (e *Expectations[K]) SatisfiedExpectations(key K) bool {
	e.mu.Lock()
	p, ok := e.m[key]
	var pending Pending
	if ok {
		pending = *p
	}
	e.mu.Unlock()
	switch {
	case !ok, pending.Fulfilled():
		return true
	case e.ttl > 0 && time.Since(pending.Set) > e.ttl:
		e.logger.Debug("expectations expired unfulfilled", "key", key, "add", pending.Add, "del", pending.Del, "ttl", e.ttl)
		return true
	}
	return false
}

// DeleteExpectations forgets key's expectations (its owner is gone).
func (e *Expectations[K]) DeleteExpectations(key K) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}

// Len returns the number of keys with recorded expectations.
func (e *Expectations[K]) Len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.m)
}

// UIDTracking is Expectations whose deletions are tracked by the deleted children's uids
// (kube-controller-manager's UIDTrackingControllerExpectations): a deletion is counted once
// per expected uid, however many times it is observed, and never for a uid not expected. It
// is safe for concurrent use, and implements controller.ExpectationsObserver for K =
// controller.Request.
type UIDTracking[K comparable] struct {
	counts *Expectations[K]
	mu     sync.Mutex
	uids   map[K]map[string]struct{}
}

// NewUIDTracking returns empty expectations that track deletions by uid.
func NewUIDTracking[K comparable](opts Options) *UIDTracking[K] {
	return &UIDTracking[K]{counts: New[K](opts), uids: map[K]map[string]struct{}{}}
}

// ExpectCreations replaces key's expectations with n creations, and forgets the uids of
// expected deletions.
func (u *UIDTracking[K]) ExpectCreations(key K, n int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.uids, key)
	u.counts.ExpectCreations(key, n)
}

// ExpectDeletions replaces key's expectations with the deletions of the children whose uids
// are given (call it before deleting them).
func (u *UIDTracking[K]) ExpectDeletions(key K, uids []string) {
	set := make(map[string]struct{}, len(uids))
	for _, uid := range uids {
		set[uid] = struct{}{}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.uids[key] = set
	u.counts.ExpectDeletions(key, len(set))
}

// CreationObserved records that a child of key was seen created.
func (u *UIDTracking[K]) CreationObserved(key K) { u.counts.CreationObserved(key) }

// LowerExpectations takes add creations from key's expectations (creates that failed).
func (u *UIDTracking[K]) LowerExpectations(key K, add int) { u.counts.LowerExpectations(key, add, 0) }

// DeletionObserved records that the child uid of key was seen deleted (or being deleted);
// it counts only if uid is expected and not counted yet. Call it too for a delete that
// failed with NotFound, or that will not happen.
func (u *UIDTracking[K]) DeletionObserved(key K, uid string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	set := u.uids[key]
	if _, ok := set[uid]; !ok {
		return
	}
	delete(set, uid)
	u.counts.LowerExpectations(key, 0, 1)
}

// PendingDeletions returns the uids of key's children whose deletion has not been observed.
func (u *UIDTracking[K]) PendingDeletions(key K) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]string, 0, len(u.uids[key]))
	for uid := range u.uids[key] {
		out = append(out, uid)
	}
	return out
}

// SatisfiedExpectations is Expectations.SatisfiedExpectations.
func (u *UIDTracking[K]) SatisfiedExpectations(key K) bool {
	return u.counts.SatisfiedExpectations(key)
}

// Get returns key's counts, if any are recorded.
func (u *UIDTracking[K]) Get(key K) (Pending, bool) { return u.counts.Get(key) }

// DeleteExpectations forgets key's expectations and uids (its owner is gone).
func (u *UIDTracking[K]) DeleteExpectations(key K) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.uids, key)
	u.counts.DeleteExpectations(key)
}
