package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/informerkit/informerkit/deepcopy"
	"github.com/informerkit/informerkit/internal/patchgen"
)

// PatchFromOptions are the optional settings of a patch made from two objects (MergePatch,
// Typed.MakePatch, Typed.PatchFrom).
type PatchFromOptions struct {
	// OptimisticLock makes the patch carry from's resourceVersion, so that the server
	// refuses it with 409 Conflict (meta.IsConflict) if the object changed since from was
	// read, instead of applying it over a change it never saw (controller-runtime's
	// MergeFromWithOptimisticLock). Default false: the patch applies to the object as it is
	// now, and concurrent changes of other fields are kept.
	OptimisticLock bool
	// Options are those of the PATCH request (Typed.PatchFrom). Default none.
	Options PatchOptions
}

// ErrNoStrategicPatch is wrapped by the error of a strategic merge patch that cannot be
// made: a custom resource's (the API server accepts none), or a change no strategic merge
// patch can say (a list item without its merge key, a merge key twice). Use MergePatchType.
var ErrNoStrategicPatch = errors.New("client: no strategic merge patch")

// MergePatch returns the JSON merge patch (RFC 7386) that turns from into to, two values
// of one type that marshal to JSON objects (controller-runtime's MergeFrom): to's new and
// changed fields, null for those it removes; lists are replaced whole. A field to sets to
// null counts as removed.
func MergePatch(from, to any, opts PatchFromOptions) ([]byte, error) {
	a, b, err := jsonPair(from, to)
	if err != nil {
		return nil, err
	}
	p := patchgen.Merge(a, b)
	if opts.OptimisticLock && len(p) > 0 {
		lock(p, a)
	}
	return json.Marshal(p)
}

// MakePatch returns the patch of type pt that turns from into to: MergePatchType (see
// MergePatch), StrategicMergePatchType (a built-in kind's lists merged by their merge key,
// as kubectl's patches: a changed container is named by its name instead of the list being
// replaced) or JSONPatchType (RFC 6902 operations; the lock is a replace of
// metadata.resourceVersion, which makes a changed object a 409 as well). An empty patch
// ("{}", "[]") means that nothing changed.
func (t *Typed[T]) MakePatch(pt PatchType, from, to T, opts PatchFromOptions) ([]byte, error) {
	a, b, err := jsonPair(from, to)
	if err != nil {
		return nil, err
	}
	switch pt {
	case MergePatchType:
		p := patchgen.Merge(a, b)
		if opts.OptimisticLock && len(p) > 0 {
			lock(p, a)
		}
		return json.Marshal(p)
	case StrategicMergePatchType:
		info := t.Info()
		p, err := patchgen.StrategicForKind(info.Group, info.Version, info.Kind, a, b)
		if err != nil {
			return nil, fmt.Errorf("%w: %v: %w", ErrNoStrategicPatch, info, err)
		}
		if opts.OptimisticLock && len(p) > 0 {
			lock(p, a)
		}
		return json.Marshal(p)
	case JSONPatchType:
		ops := patchgen.JSON(a, b)
		if opts.OptimisticLock && len(ops) > 0 {
			ops = append([]patchgen.Op{{Op: "replace", Path: "/metadata/resourceVersion", Value: resourceVersionOf(a)}}, ops...)
		}
		if ops == nil {
			ops = []patchgen.Op{}
		}
		return json.Marshal(ops)
	}
	return nil, fmt.Errorf("client: MakePatch: patch type %q is not made from two objects (merge, strategic merge or JSON patch)", pt)
}

// PatchFrom patches the object to names (its namespace and name) with MakePatch(pt, from,
// to, opts) and returns the server's version; when nothing changed it sends nothing and
// returns from. Reads through this client then see the result (read your writes). A patch
// that changes something also sets the traceparent annotation a reconcile's context asks for
// (Create's).
//
//	node, _ := nodes.Get(ctx, "", name, client.GetOptions{})
//	changed := client.DeepCopy(node)
//	changed.Labels["pool"] = "gpu"
//	node, err = nodes.PatchFrom(ctx, client.MergePatchType, node, changed, client.PatchFromOptions{OptimisticLock: true})
func (t *Typed[T]) PatchFrom(ctx context.Context, pt PatchType, from, to T, opts PatchFromOptions) (T, error) {
	data, err := t.MakePatch(pt, from, to, opts)
	if err != nil {
		var zero T
		return zero, err
	}
	if empty(data) {
		return from, nil
	}
	if annotateTraceparent(ctx, to) { // a change is written: it carries the trace too
		if data, err = t.MakePatch(pt, from, to, opts); err != nil {
			var zero T
			return zero, err
		}
	}
	return t.Patch(ctx, to.GetNamespace(), to.GetName(), pt, data, opts.Options)
}

// PatchFrom is Typed.PatchFrom through the status subresource: what changed in the status
// is written (the server ignores the rest).
func (s *StatusWriter[T]) PatchFrom(ctx context.Context, pt PatchType, from, to T, opts PatchFromOptions) (T, error) {
	data, err := s.t.MakePatch(pt, from, to, opts)
	if err != nil {
		var zero T
		return zero, err
	}
	if empty(data) {
		return from, nil
	}
	return s.Patch(ctx, to.GetNamespace(), to.GetName(), pt, data, opts.Options)
}

func empty(data []byte) bool {
	d := bytes.TrimSpace(data)
	return bytes.Equal(d, []byte("{}")) || bytes.Equal(d, []byte("[]"))
}

// lock adds from's resourceVersion to a merge or strategic merge patch.
func lock(p, from map[string]any) {
	md, _ := p["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		p["metadata"] = md
	}
	md["resourceVersion"] = resourceVersionOf(from)
}

func resourceVersionOf(obj map[string]any) any {
	md, _ := obj["metadata"].(map[string]any)
	return md["resourceVersion"]
}

// jsonPair encodes two values as the JSON objects a patch is computed from.
func jsonPair(from, to any) (a, b map[string]any, err error) {
	if a, err = jsonObject(from); err == nil {
		b, err = jsonObject(to)
	}
	return a, b, err
}

func jsonObject(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("client: encoding %T: %w", v, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("client: %T does not encode to a JSON object", v)
	}
	return m, nil
}

// DeepCopy returns a deep copy of v (package deepcopy's Copy): the object to change before
// PatchFrom, while the one read stays as it was.
func DeepCopy[T any](v T) T { return deepcopy.Copy(v) }
