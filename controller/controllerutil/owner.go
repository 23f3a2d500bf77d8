package controllerutil

import (
	"errors"
	"fmt"

	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/meta"
)

// Errors of SetControllerReference and SetOwnerReference for owners the API server's
// garbage collector would not honour. The errors wrap them with the names involved.
var (
	// ErrCrossNamespaceOwner: a namespaced owner must be in its dependent's namespace (the
	// garbage collector treats an owner in another namespace as absent and deletes the
	// dependent).
	ErrCrossNamespaceOwner = errors.New("cross-namespace owner references are disallowed")
	// ErrNamespacedOwnerOfClusterScoped: a cluster-scoped object cannot be owned by a
	// namespaced one.
	ErrNamespacedOwnerOfClusterScoped = errors.New("a cluster-scoped object must not have a namespace-scoped owner")
	// ErrOwnerNotPersisted: the owner has no uid (it was never read back from the API), so
	// the reference could not name it.
	ErrOwnerNotPersisted = errors.New("the owner has no uid: use the object the API returned")
)

// AlreadyOwnedError is the error of SetControllerReference when the object already has
// another controller.
type AlreadyOwnedError struct {
	// Object names the dependent ("namespace/name").
	Object string
	// Owner is its current controller reference.
	Owner meta.OwnerReference
}

// Error names the object and its controller.
func (e *AlreadyOwnedError) Error() string {
	return fmt.Sprintf("controllerutil: object %s is already owned by another %s controller %s", e.Object, e.Owner.Kind, e.Owner.Name)
}

// OwnerReferenceOptions are the optional settings of SetControllerReferenceWithOptions and
// SetOwnerReferenceWithOptions.
type OwnerReferenceOptions struct {
	// Registry gives the owner's apiVersion and kind (default kinds.Default). The owner's Go
	// type must be registered, or carry its apiVersion and kind.
	Registry *kinds.Registry
	// BlockOwnerDeletion sets blockOwnerDeletion: with foreground deletion the owner is
	// deleted only after this dependent. Default: true for a controller reference, unset
	// for a plain owner reference (as controller-runtime).
	BlockOwnerDeletion *bool
}

// SetControllerReference makes owner the managing controller of object: it adds (or
// updates) an owner reference to owner with controller=true and blockOwnerDeletion=true, as
// controller-runtime's SetControllerReference. The garbage collector deletes object when
// owner is deleted, and controllers find object's owner through it (GetControllerOf).
//
// It fails, changing nothing, if owner is namespaced and object is in another namespace
// (ErrCrossNamespaceOwner) or cluster-scoped (ErrNamespacedOwnerOfClusterScoped), if owner
// has no uid (ErrOwnerNotPersisted), if owner's kind is unknown (kinds.ErrNotRegistered),
// or if object already has another controller (*AlreadyOwnedError).
func SetControllerReference(owner, object meta.Accessor) error {
	return SetControllerReferenceWithOptions(owner, object, OwnerReferenceOptions{})
}

// SetControllerReferenceWithOptions is SetControllerReference with options.
func SetControllerReferenceWithOptions(owner, object meta.Accessor, opts OwnerReferenceOptions) error {
	ref, err := ownerReference(owner, object, opts)
	if err != nil {
		return err
	}
	yes := true
	ref.Controller = &yes
	if ref.BlockOwnerDeletion == nil {
		ref.BlockOwnerDeletion = &yes
	}
	if existing := GetControllerOf(object); existing != nil && !sameObject(*existing, ref) {
		return &AlreadyOwnedError{Object: key(object), Owner: *existing}
	}
	upsertOwnerReference(object, ref)
	return nil
}

// SetOwnerReference adds (or updates) an owner reference from object to owner without
// making owner its controller: the garbage collector deletes object once all its owners are
// gone. The rules and errors are SetControllerReference's, but for the existing-controller
// check. As in controller-runtime, a reference to the same owner (same group, kind and
// name) is replaced, losing its controller flag.
func SetOwnerReference(owner, object meta.Accessor) error {
	return SetOwnerReferenceWithOptions(owner, object, OwnerReferenceOptions{})
}

// SetOwnerReferenceWithOptions is SetOwnerReference with options.
func SetOwnerReferenceWithOptions(owner, object meta.Accessor, opts OwnerReferenceOptions) error {
	ref, err := ownerReference(owner, object, opts)
	if err != nil {
		return err
	}
	upsertOwnerReference(object, ref)
	return nil
}

// GetControllerOf returns a copy of object's controller reference, or nil.
func GetControllerOf(object meta.Object) *meta.OwnerReference {
	refs, ok := ownerReferencesOf(object)
	if !ok {
		return nil
	}
	for _, r := range refs {
		if r.IsController() {
			return &r
		}
	}
	return nil
}

// HasControllerReference reports whether object has a controller reference.
func HasControllerReference(object meta.Object) bool { return GetControllerOf(object) != nil }

// IsControlledBy reports whether owner is object's controller (by uid).
func IsControlledBy(object meta.Object, owner meta.Accessor) bool {
	ref := GetControllerOf(object)
	return ref != nil && ref.UID == owner.GetUID()
}

// HasOwnerReference reports whether object has an owner reference to owner (by uid),
// controller or not.
func HasOwnerReference(owner, object meta.Accessor) bool {
	uid := owner.GetUID()
	for _, r := range object.GetOwnerReferences() {
		if uid != "" && r.UID == uid {
			return true
		}
	}
	return false
}

// RemoveOwnerReference removes object's owner references to owner (by uid), and reports
// whether there were any.
func RemoveOwnerReference(owner, object meta.Accessor) bool {
	uid := owner.GetUID()
	refs := object.GetOwnerReferences()
	out := make([]meta.OwnerReference, 0, len(refs))
	for _, r := range refs {
		if uid == "" || r.UID != uid {
			out = append(out, r)
		}
	}
	if len(out) == len(refs) {
		return false
	}
	if len(out) == 0 {
		out = nil
	}
	object.SetOwnerReferences(out)
	return true
}

// ownerReference validates owner and object and returns the reference to owner.
func ownerReference(owner, object meta.Accessor, opts OwnerReferenceOptions) (meta.OwnerReference, error) {
	if owner == nil || object == nil {
		return meta.OwnerReference{}, errors.New("controllerutil: nil owner or object")
	}
	if ns := owner.GetNamespace(); ns != "" {
		switch objNS := object.GetNamespace(); {
		case objNS == "":
			return meta.OwnerReference{}, fmt.Errorf("controllerutil: %w: object %s, owner's namespace %s", ErrNamespacedOwnerOfClusterScoped, object.GetName(), ns)
		case objNS != ns:
			return meta.OwnerReference{}, fmt.Errorf("controllerutil: %w: owner %s/%s, object %s/%s", ErrCrossNamespaceOwner, ns, owner.GetName(), objNS, object.GetName())
		}
	}
	if owner.GetUID() == "" || owner.GetName() == "" {
		return meta.OwnerReference{}, fmt.Errorf("controllerutil: owner %s: %w", key(owner), ErrOwnerNotPersisted)
	}
	ref, err := referenceTo(owner, opts.Registry)
	if err != nil {
		return ref, err
	}
	ref.UID = owner.GetUID()
	ref.BlockOwnerDeletion = opts.BlockOwnerDeletion
	return ref, nil
}

// referenceTo is a reference to owner with its apiVersion, kind and name.
func referenceTo(owner meta.Accessor, registry *kinds.Registry) (meta.OwnerReference, error) {
	if registry == nil {
		registry = kinds.Default
	}
	info, err := registry.InfoOf(owner)
	if err != nil {
		return meta.OwnerReference{}, fmt.Errorf("controllerutil: the owner's kind: %w", err)
	}
	return meta.OwnerReference{APIVersion: info.APIVersion(), Kind: info.Kind, Name: owner.GetName()}, nil
}

// upsertOwnerReference replaces the reference to the same object as ref, or appends ref.
// The slice is copied: object's may be shared with a cache.
func upsertOwnerReference(object meta.Accessor, ref meta.OwnerReference) {
	refs := append([]meta.OwnerReference(nil), object.GetOwnerReferences()...)
	for i := range refs {
		if sameObject(refs[i], ref) {
			refs[i] = ref
			object.SetOwnerReferences(refs)
			return
		}
	}
	object.SetOwnerReferences(append(refs, ref))
}

// sameObject reports whether two references point to the same object: same group (any
// version), kind and name, as controller-runtime compares them.
func sameObject(a, b meta.OwnerReference) bool {
	ga, err := meta.ParseGroupVersion(a.APIVersion)
	if err != nil {
		return false
	}
	gb, err := meta.ParseGroupVersion(b.APIVersion)
	if err != nil {
		return false
	}
	return ga.Group == gb.Group && a.Kind == b.Kind && a.Name == b.Name
}

func ownerReferencesOf(object meta.Object) ([]meta.OwnerReference, bool) {
	o, ok := object.(interface {
		GetOwnerReferences() []meta.OwnerReference
	})
	if !ok || o == nil {
		return nil, false
	}
	return o.GetOwnerReferences(), true
}

func key(o meta.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}
