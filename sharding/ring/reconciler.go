package ring

import (
	"context"

	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/sharding"
)

// Reconciler gates a controller's reconciler with the member's share: a Request is handed to
// inner only while the member holds its object's hash, and the member gives a range up only
// after the reconciles begun on it have returned (Begin). A Request outside the share
// returns at once without error: the replica that holds it gets the same event through its
// own sharded informer.
//
// uidOf returns the uid of the Request's object, from the informer's cache; it is used when
// the ring shards by uid (with FieldNamespace the Request's namespace is hashed). A Request
// whose object is not in the cache (another replica's, or deleted) is not reconciled under
// uid sharding, because its range cannot be told: a controller that must act on deletion
// uses a finalizer (the object stays until it is reconciled) or shards by namespace.
func Reconciler(r *Ring, uidOf func(controller.Request) (uid string, ok bool), inner controller.Reconciler) controller.Reconciler {
	if r == nil || inner == nil || (uidOf == nil && r.Field() == sharding.FieldUID) {
		panic("ring.Reconciler: nil Ring, Reconciler or (sharding by uid) uidOf")
	}
	return controller.ReconcilerFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		var h uint64
		if r.Field() == sharding.FieldNamespace {
			h = sharding.Hash(req.Namespace)
		} else {
			uid, ok := uidOf(req)
			if !ok {
				return controller.Result{}, nil
			}
			h = sharding.Hash(uid)
		}
		done, ok := r.Begin(h)
		if !ok {
			return controller.Result{}, nil
		}
		defer done()
		return inner.Reconcile(ctx, req)
	})
}
