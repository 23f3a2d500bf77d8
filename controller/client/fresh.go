package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/informerkit/informerkit/apiclient"
	"github.com/informerkit/informerkit/meta"
)

// ErrStaleObject: a guarded write's object, as the caller read it from the cache, is older
// than the server's (see StaleObjectError).
var ErrStaleObject = errors.New("the cached object is older than the server's")

// StaleObjectError is the error of a guarded write (DeleteGuarded, UpdateGuarded) whose
// cache was staler than the bound, and whose live read found the object changed since the
// version the caller decided from. Nothing was written; the caller usually returns the
// error and is retried once the cache has caught up.
type StaleObjectError struct {
	// Resource and Key name the object ("namespace/name").
	Resource, Key string
	// Cached is the resourceVersion the caller's object has; Live the server's ("" if the
	// object is gone).
	Cached, Live string
	// Staleness is the informer's staleness that made the write read live.
	Staleness time.Duration
}

// Error says which versions differ.
func (e *StaleObjectError) Error() string {
	live := "resourceVersion " + e.Live
	if e.Live == "" {
		live = "no object"
	}
	return fmt.Sprintf("client: %s %s: %v: decided from resourceVersion %s, the server has %s (the cache was %v stale)",
		e.Resource, e.Key, ErrStaleObject, e.Cached, live, e.Staleness.Round(time.Millisecond))
}

// Unwrap returns ErrStaleObject.
func (e *StaleObjectError) Unwrap() error { return ErrStaleObject }

// WaitFresh waits until T's cache has caught up with resourceVersion rv (of a write, a live
// read or a list): informer.Informer.WaitFresh, on the informer reads use (started as Get
// starts it). KEP-5647's "wait until the cache reaches a resourceVersion" before acting.
func (t *Typed[T]) WaitFresh(ctx context.Context, rv string) error {
	inf, err := t.informer(ctx)
	if err != nil {
		return err
	}
	return inf.WaitFresh(ctx, rv)
}

// DeleteGuarded is Delete for a decision taken from the cache (KEP-5647's stale controller
// handling): the delete carries obj's uid and resourceVersion as preconditions, so the
// server refuses it (409 Conflict, meta.IsConflict) if the object changed since the
// version the caller read; and if T's informer is staler than maxStaleness (its Staleness:
// no list, event or bookmark for that long), DeleteGuarded first reads the object live and
// returns a *StaleObjectError, deleting nothing, if the server's version differs. Preconditions
// the caller set in opts are kept.
func (t *Typed[T]) DeleteGuarded(ctx context.Context, obj T, maxStaleness time.Duration, opts DeleteOptions) error {
	if err := t.guard(ctx, obj, maxStaleness); err != nil {
		return err
	}
	if opts.Preconditions == nil {
		rv := obj.GetResourceVersion()
		p := &Preconditions{}
		if rv != "" {
			p.ResourceVersion = &rv
		}
		if u, ok := any(obj).(interface{ GetUID() string }); ok && u.GetUID() != "" {
			uid := u.GetUID()
			p.UID = &uid
		}
		opts.Preconditions = p
	}
	return t.Delete(ctx, obj, opts)
}

// UpdateGuarded is Update for a decision taken from the cache: obj's resourceVersion
// already makes the server refuse an update of a changed object (409 Conflict); in addition,
// if T's informer is staler than maxStaleness, UpdateGuarded first reads the object live and
// returns a *StaleObjectError, writing nothing, if the server's version differs.
func (t *Typed[T]) UpdateGuarded(ctx context.Context, obj T, maxStaleness time.Duration, opts UpdateOptions) (T, error) {
	if err := t.guard(ctx, obj, maxStaleness); err != nil {
		var zero T
		return zero, err
	}
	return t.Update(ctx, obj, opts)
}

// guard reads obj live if T's informer is staler than maxStaleness, and fails if the
// server's version of it is not obj's.
func (t *Typed[T]) guard(ctx context.Context, obj T, maxStaleness time.Duration) error {
	inf, err := t.informer(ctx)
	if err != nil {
		return err
	}
	staleness := inf.Staleness()
	if staleness <= maxStaleness && inf.IsFresh(inf.Stats().Reflector.LastSyncResourceVersion) {
		return nil // the cache is recent and has applied all its watch delivered
	}
	st, err := t.resolve()
	if err != nil {
		return err
	}
	ns, name := obj.GetNamespace(), obj.GetName()
	gvr := st.info.GroupVersionResource()
	live, err := st.res.Namespace(ns).Get(ctx, name, apiclient.GetOptions{}) // "": a quorum read, not the watch cache
	liveRV := ""
	switch {
	case err == nil:
		liveRV = live.GetResourceVersion()
	case !meta.IsNotFound(err):
		return fmt.Errorf("client: live read of %s %s for a guarded write: %w", gvr, objectKey(ns, name), err)
	}
	if liveRV != obj.GetResourceVersion() {
		return &StaleObjectError{Resource: gvr.String(), Key: objectKey(ns, name), Cached: obj.GetResourceVersion(), Live: liveRV, Staleness: staleness}
	}
	return nil
}
