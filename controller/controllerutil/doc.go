// Package controllerutil has the helpers a reconciler needs around the objects it manages,
// as controller-runtime's controllerutil: finalizers (AddFinalizer, RemoveFinalizer,
// ContainsFinalizer), owner references with the garbage collector's rules
// (SetControllerReference, SetOwnerReference, GetControllerOf), and CreateOrUpdate and
// CreateOrPatch, which write an object only when a mutate function changed it.
//
// The helpers take meta.Accessor: the pointer to any struct embedding
// meta.ObjectMeta, or an *meta.Unstructured. Owner references take the owner's
// apiVersion and kind from the type registry (package kinds), so the owner's Go type must be
// registered (or the object must carry its apiVersion and kind).
package controllerutil
