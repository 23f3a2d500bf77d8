// Package client is the client of controllers: it reads objects from informer caches and
// writes them to the API server (controller-runtime's client). TypedFor[T] gives the client of a
// Go type registered with package kinds; reads start the type's informer on first use
// (Options.DisableStartOnRead to fail instead), return deep copies the caller may change,
// and select by namespace, label selector or cache index. PatchFrom writes the merge,
// strategic merge or JSON patch made from two objects, optimistic lock optional.
//
// # Read your writes
//
// An informer's cache lags behind the API server. A reconciler that writes an object, is
// woken again at once, and reads the object from the cache may see the version from before
// its own write: it then recomputes from stale state, writes again (a 409 Conflict at best, a
// duplicate child at worst) or reports a stale status. This client remembers, per object, the
// resourceVersion its last write produced, and a read of that object waits until the cache
// shows a version at least that new (or has applied an event at least that new, so that
// whatever it holds, possibly nothing, is newer). The wait is bounded by
// Options.ReadYourWritesTimeout: past it the read fails with a *StaleCacheError, which a
// controller returns to be retried with backoff. A delete is waited for the same way: the
// cache no longer holds the deleted object. Lists wait for the writes of the namespace they
// read. Writes made before a type's informer exists raise a floor the new informer must reach.
//
// docs/read-your-writes.md explains the design and compares it with client-go 1.36's
// consistency store and controller-runtime's read-your-own-write client.
// The cache's progress comes from informer.Informer's AppliedResourceVersion, which advances
// with every applied event and list, and to the reflector's resourceVersion (bookmarks
// included) whenever the informer has applied everything it was given. Writes outside the
// factory's namespace are not tracked (the cache never holds them); a write of an object the
// informer's selectors exclude is shown once the watch has moved past it (an event or a
// bookmark). WaitFresh and DeleteGuarded/UpdateGuarded check freshness (docs/freshness.md).
package client
