package controllerutil

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/informerkit/informerkit/controller/client"
	"github.com/informerkit/informerkit/meta"
)

// OperationResult is what CreateOrUpdate or CreateOrPatch did.
type OperationResult string

// The results, with controller-runtime's values.
const (
	// OperationResultNone: the object existed and mutate changed nothing; nothing was
	// written.
	OperationResultNone OperationResult = "unchanged"
	// OperationResultCreated: the object did not exist and was created (with its status,
	// through the status subresource, if mutate set one).
	OperationResultCreated OperationResult = "created"
	// OperationResultUpdated: the object (not its status) was written.
	OperationResultUpdated OperationResult = "updated"
	// OperationResultUpdatedStatus: the object and its status were written.
	OperationResultUpdatedStatus OperationResult = "updatedStatus"
	// OperationResultUpdatedStatusOnly: only the status was written.
	OperationResultUpdatedStatusOnly OperationResult = "updatedStatusOnly"
)

// ErrMutateChangedKey is the error of a mutate function that changed the object's name or
// namespace.
var ErrMutateChangedKey = errors.New("controllerutil: the mutate function changed the object's name or namespace")

// CreateOrUpdate makes the object namespace/name of obj what mutate says, writing only if
// mutate changed something (controller-runtime's CreateOrUpdate):
//
//   - it reads the object through c (from the cache, seeing c's own earlier writes);
//   - if there is none, it calls mutate(obj) and creates obj;
//   - otherwise it calls mutate on a copy of the existing object, and writes what changed:
//     the object with Update, its status with Status().Update when the kind has a status
//     subresource, nothing if mutate changed nothing.
//
// Updates carry the resourceVersion read, so a concurrent change makes them fail with a 409
// Conflict (meta.IsConflict): return the error and reconcile again. It returns the
// object as last written (or read, if unchanged) and what it did.
func CreateOrUpdate[T meta.Accessor](ctx context.Context, c *client.Typed[T], obj T, mutate func(T) error) (T, OperationResult, error) {
	return createOr(ctx, c, obj, mutate, writeMode{})
}

// CreateOrPatch is CreateOrUpdate writing JSON merge patches of what mutate changed instead
// of whole objects (controller-runtime's CreateOrPatch): the object's changes, then its
// status's through the status subresource. A patch carries no resourceVersion, so it does
// not conflict with concurrent changes of other fields; it overwrites a concurrent change
// of a field it sets (CreateOrPatchWithOptions with OptimisticLock refuses to).
func CreateOrPatch[T meta.Accessor](ctx context.Context, c *client.Typed[T], obj T, mutate func(T) error) (T, OperationResult, error) {
	return CreateOrPatchWithOptions(ctx, c, obj, mutate, CreateOrPatchOptions{})
}

// CreateOrPatchOptions are the optional settings of CreateOrPatchWithOptions.
type CreateOrPatchOptions struct {
	// OptimisticLock makes each patch carry the resourceVersion it was computed from
	// (client.PatchFromOptions.OptimisticLock): if the object changed since it was read, the
	// patch fails with 409 Conflict (meta.IsConflict; return it and reconcile again)
	// instead of overwriting the change. Default false.
	OptimisticLock bool
}

// CreateOrPatchWithOptions is CreateOrPatch with options.
func CreateOrPatchWithOptions[T meta.Accessor](ctx context.Context, c *client.Typed[T], obj T, mutate func(T) error, opts CreateOrPatchOptions) (T, OperationResult, error) {
	return createOr(ctx, c, obj, mutate, writeMode{patch: true, lock: opts.OptimisticLock})
}

// writeMode is how createOr writes: whole objects, or merge patches (with the lock).
type writeMode struct{ patch, lock bool }

func createOr[T meta.Accessor](ctx context.Context, c *client.Typed[T], obj T, mutate func(T) error, mode writeMode) (T, OperationResult, error) {
	var zero T
	if reflect.ValueOf(&obj).Elem().IsZero() || mutate == nil {
		return zero, OperationResultNone, errors.New("controllerutil: CreateOrUpdate needs an object and a mutate function")
	}
	ns, name := obj.GetNamespace(), obj.GetName()
	withStatus := c.Info().StatusSubresource
	cur, err := c.Get(ctx, ns, name, client.GetOptions{})
	if err != nil && !meta.IsNotFound(err) {
		return zero, OperationResultNone, err
	}
	if err != nil { // not found: create
		if err := mutateKeepingKey(mutate, obj, ns, name); err != nil {
			return zero, OperationResultNone, err
		}
		wanted, err := toJSONMap(obj)
		if err != nil {
			return zero, OperationResultNone, err
		}
		created, err := c.Create(ctx, obj, client.CreateOptions{})
		if err != nil {
			return zero, OperationResultNone, err
		}
		if !withStatus {
			return created, OperationResultCreated, nil
		}
		// The create dropped the status (a subresource): write it if mutate set one.
		got, err := toJSONMap(created)
		if err != nil || jsonEqual(wanted["status"], got["status"]) || isEmptyJSON(wanted["status"]) {
			return created, OperationResultCreated, err
		}
		out, err := writeStatus(ctx, c, created, wanted["status"], mode, got["status"])
		if err != nil {
			return created, OperationResultCreated, fmt.Errorf("controllerutil: created %s, but writing its status: %w", key(created), err)
		}
		return out, OperationResultCreated, nil
	}

	before, err := toJSONMap(cur)
	if err != nil {
		return zero, OperationResultNone, err
	}
	if err := mutateKeepingKey(mutate, cur, ns, name); err != nil {
		return zero, OperationResultNone, err
	}
	after, err := toJSONMap(cur)
	if err != nil {
		return zero, OperationResultNone, err
	}
	statusChanged := withStatus && !jsonEqual(before["status"], after["status"])
	restChanged := !jsonEqual(withoutStatus(before, withStatus), withoutStatus(after, withStatus))
	out := cur
	if restChanged {
		if mode.patch {
			data, err := client.MergePatch(withoutStatus(before, withStatus), withoutStatus(after, withStatus), client.PatchFromOptions{OptimisticLock: mode.lock})
			if err != nil {
				return zero, OperationResultNone, err
			}
			out, err = c.Patch(ctx, ns, name, client.MergePatchType, data, client.PatchOptions{})
			if err != nil {
				return zero, OperationResultNone, err
			}
		} else {
			// A changed status rides along and the server ignores it (a subresource): it is
			// written below.
			out, err = c.Update(ctx, cur, client.UpdateOptions{})
			if err != nil {
				return zero, OperationResultNone, err
			}
		}
	}
	if !statusChanged {
		if restChanged {
			return out, OperationResultUpdated, nil
		}
		return out, OperationResultNone, nil
	}
	out, err = writeStatus(ctx, c, out, after["status"], mode, before["status"])
	if err != nil {
		res := OperationResultNone
		if restChanged {
			res = OperationResultUpdated
		}
		return out, res, err
	}
	if restChanged {
		return out, OperationResultUpdatedStatus, nil
	}
	return out, OperationResultUpdatedStatusOnly, nil
}

// writeStatus writes status (JSON) as the status of base through the status subresource: an
// update of base with that status (carrying base's resourceVersion), or a merge patch from
// oldStatus (carrying it with the lock).
func writeStatus[T meta.Accessor](ctx context.Context, c *client.Typed[T], base T, status any, mode writeMode, oldStatus any) (T, error) {
	if mode.patch {
		md := map[string]any{"resourceVersion": base.GetResourceVersion()}
		data, err := client.MergePatch(map[string]any{"metadata": md, "status": oldStatus}, map[string]any{"metadata": md, "status": status},
			client.PatchFromOptions{OptimisticLock: mode.lock})
		if err != nil {
			var zero T
			return zero, err
		}
		return c.Status().Patch(ctx, base.GetNamespace(), base.GetName(), client.MergePatchType, data, client.PatchOptions{})
	}
	m, err := toJSONMap(base)
	if err != nil {
		var zero T
		return zero, err
	}
	m["status"] = status
	obj, err := fromJSONMap[T](m)
	if err != nil {
		var zero T
		return zero, err
	}
	return c.Status().Update(ctx, obj, client.UpdateOptions{})
}

func mutateKeepingKey[T meta.Accessor](mutate func(T) error, obj T, ns, name string) error {
	if err := mutate(obj); err != nil {
		return err
	}
	if obj.GetNamespace() != ns || obj.GetName() != name {
		return fmt.Errorf("%w: %s/%s became %s/%s", ErrMutateChangedKey, ns, name, obj.GetNamespace(), obj.GetName())
	}
	return nil
}

// toJSONMap is obj as the API sees it: its JSON, decoded with exact numbers.
func toJSONMap(obj any) (map[string]any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("controllerutil: encoding %T: %w", obj, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("controllerutil: %T does not encode to a JSON object: %w", obj, err)
	}
	return m, nil
}

func fromJSONMap[T any](m map[string]any) (T, error) {
	var out T
	data, err := json.Marshal(m)
	if err != nil {
		return out, err
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return out, fmt.Errorf("controllerutil: decoding %T: %w", out, err)
	}
	return out, nil
}

func withoutStatus(m map[string]any, drop bool) map[string]any {
	if !drop {
		return m
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != "status" {
			out[k] = v
		}
	}
	return out
}

func jsonEqual(a, b any) bool {
	if isEmptyJSON(a) && isEmptyJSON(b) {
		return true
	}
	return reflect.DeepEqual(a, b)
}

// isEmptyJSON: absent, null or {} (a status struct with omitzero and nothing set).
func isEmptyJSON(v any) bool {
	if v == nil {
		return true
	}
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}
