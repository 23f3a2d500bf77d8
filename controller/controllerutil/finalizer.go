package controllerutil

import (
	"slices"

	"github.com/informerkit/informerkit/meta"
)

// Finalizers are names in metadata.finalizers: while an object has any, deleting it only
// sets its deletionTimestamp, and the controllers that added them clean up and remove them.

// AddFinalizer adds finalizer to object's finalizers unless it is there, and reports whether
// it added it (the object then needs an update). The list is copied, not changed in place:
// object's may be shared with a cache.
func AddFinalizer(object meta.Accessor, finalizer string) bool {
	f := object.GetFinalizers()
	if slices.Contains(f, finalizer) {
		return false
	}
	object.SetFinalizers(append(slices.Clip(f), finalizer))
	return true
}

// RemoveFinalizer removes every occurrence of finalizer from object's finalizers, and
// reports whether there was one. The list is copied, not changed in place.
func RemoveFinalizer(object meta.Accessor, finalizer string) bool {
	f := object.GetFinalizers()
	if !slices.Contains(f, finalizer) {
		return false
	}
	out := make([]string, 0, len(f)-1)
	for _, x := range f {
		if x != finalizer {
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		out = nil
	}
	object.SetFinalizers(out)
	return true
}

// ContainsFinalizer reports whether object has finalizer.
func ContainsFinalizer(object meta.Accessor, finalizer string) bool {
	return slices.Contains(object.GetFinalizers(), finalizer)
}

// IsBeingDeleted reports whether object has a deletionTimestamp: it was deleted and waits
// for its finalizers.
func IsBeingDeleted(object meta.Accessor) bool { return object.GetDeletionTimestamp() != nil }
