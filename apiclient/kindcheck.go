package apiclient

import (
	"fmt"
	"strings"

	"github.com/informerkit/informerkit/meta"
)

// The kind check: every object a Resource decodes from a watch or a list must be of the
// resource's kind, so that an object of another kind (a Pod on a ConfigMap watch) never
// reaches a cache. The kind is WithKind's, else the built-in kind of the resource (the
// schema table), else the one its first list named (kind "WidgetList": "Widget").

// kindCheck carries a list decoder's expected kind and the list kind it found.
type kindCheck struct {
	want string // the kind of the items ("" : no check)
	got  string // the list's own kind, as the body names it
}

// listKind checks a list's kind against the expected item kind.
func (k *kindCheck) listKind(kind string, off int64) error {
	if k == nil {
		return nil
	}
	k.got = kind
	if k.want == "" || kind == "" || kind == k.want+"List" {
		return nil
	}
	return &DecodeError{Err: ErrWrongKind, Offset: off, Detail: fmt.Sprintf("want a %sList, got %q", k.want, truncate(kind, 64))}
}

// itemKind checks the kind of one item, if the item names one (items of a typed list
// usually do not; those of a custom resource's list do).
func (k *kindCheck) itemKind(item []byte, index int, off int64) error {
	if k == nil || k.want == "" {
		return nil
	}
	if got, ok := topLevelString(item, "kind"); ok && got != k.want {
		return &DecodeError{Err: ErrWrongKind, Offset: off, Detail: fmt.Sprintf("items[%d]: want kind %q, got %q", index, k.want, truncate(got, 64))}
	}
	return nil
}

// expectedKind returns the kind of r's objects, or "" when the client does not know it.
func (r *Resource[T]) expectedKind() string {
	if r.kind != "" {
		return r.kind
	}
	if pk := resourceKinds()[r.gvr]; pk != nil {
		return pk.kind
	}
	if k, ok := r.c.learnedKinds.Load(r.gvr); ok {
		return k.(string)
	}
	return ""
}

// learnKind records the kind of gvr from the kind of one of its lists, when the client did
// not know it: a custom resource's first list tells the kind its later watches must have.
func (c *Client) learnKind(gvr meta.GroupVersionResource, listKind string) {
	if kind, ok := strings.CutSuffix(listKind, "List"); ok && kind != "" {
		c.learnedKinds.LoadOrStore(gvr, kind)
	}
}
