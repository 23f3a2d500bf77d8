// Package admission is what apitest does to a write of a built-in kind between reading
// the body and storing the object, in the kube-apiserver's order:
//
//  1. Decode: the object becomes what Go's encoding/json makes of the kind's Go type (a
//     wrong JSON type is a 400; unknown fields are dropped with a warning or, with
//     fieldValidation=Strict, a 400), with the defaults set (kubeschema's table, plus the
//     defaults that copy other fields).
//  2. The server's field manager records the write (not here: managedFields see the
//     object after defaulting and before the strategy, as in the kube-apiserver).
//  3. Chain.Admit: the registry strategy (PrepareForCreate, PrepareForUpdate), the
//     default admission plugins' mutations (DefaultTolerationSeconds, Priority), then
//     validation: required fields and the common rules of pods, workloads, services,
//     configmaps, secrets and events, in the kube-apiserver's paths and words (422).
//
// ValidateObjectMeta is the generic registry's check of every kind's metadata, custom
// resources' too; PrepareForStatusUpdate is what an update of /status keeps. Custom
// resources are otherwise stored as sent, and not every rule of the kube-apiserver's
// validation is here (docs/apitest.md lists the differences).
package admission

import (
	"github.com/informerkit/informerkit/apitest/internal/apierr"
	"github.com/informerkit/informerkit/apitest/internal/jsonobj"
	"github.com/informerkit/informerkit/internal/kubeschema"
	"github.com/informerkit/informerkit/meta"
)

// Chain admits the writes of one server. Its zero value is ready to use. It is not safe
// for concurrent use: it holds the allocations of Services' cluster IPs and node ports,
// and the server calls it under its lock.
type Chain struct {
	serviceIPs, nodePorts int
}

// schemaType is the kubeschema type of a built-in kind's objects (nil for other kinds).
func schemaType(gvk meta.GroupVersionKind) *kubeschema.Type {
	k, ok := kubeschema.ForKind(gvk.Group, gvk.Version, gvk.Kind)
	if !ok {
		return nil
	}
	return k.Type
}

// groupKind is the "group/Kind" the strategies and validations are chosen by.
func groupKind(gvk meta.GroupVersionKind) string { return gvk.Group + "/" + gvk.Kind }

// kindKey is the kind as kubeschema.Field.DefaultKinds names it ("v1/Pod",
// "apps/v1/Deployment").
func kindKey(gvk meta.GroupVersionKind) string {
	if gvk.Group == "" {
		return gvk.Version + "/" + gvk.Kind
	}
	return gvk.Group + "/" + gvk.Version + "/" + gvk.Kind
}

// Decode decodes and defaults obj, an object of the built-in kind gvk as the request
// sent it, with its apiVersion and kind set (obj of another kind is returned as it is). fieldValidation is the request's
// parameter ("", "Ignore", "Warn" or "Strict"). It returns the object to go on with and
// the warnings to send, or the error to answer.
func Decode(gvk meta.GroupVersionKind, obj map[string]any, fieldValidation string) (map[string]any, []string, *meta.Status) {
	t := schemaType(gvk)
	if t == nil {
		return obj, nil, nil
	}
	norm, unknown, st := decodeTyped(gvk, t, obj)
	if st != nil {
		return nil, nil, st
	}
	warnings, st := checkUnknown(gvk, fieldValidation, unknown)
	if st != nil {
		return nil, nil, st
	}
	applyDefaults(t, norm, kindKey(gvk))
	derivedDefaults(groupKind(gvk), t, norm)
	return norm, warnings, nil
}

// Admit runs the strategy, the admission plugins and validation on obj, a decoded
// object of the built-in kind gvk, for a create (old nil) or an update of the stored
// object old. It returns the object to store or the error to answer (422 Invalid).
func (c *Chain) Admit(gvk meta.GroupVersionKind, obj, old map[string]any) (map[string]any, *meta.Status) {
	t := schemaType(gvk)
	if t == nil {
		return obj, nil
	}
	if old == nil {
		c.prepareForCreate(groupKind(gvk), obj)
	} else {
		c.prepareForUpdate(groupKind(gvk), obj, old)
	}
	// What the strategy set is Go values too: a reset status is written with its zero
	// fields ({"replicas":0}).
	norm, _, st := decodeTyped(gvk, t, obj)
	if st != nil {
		return nil, st
	}
	if errs := validate(groupKind(gvk), t, norm, old); len(errs) > 0 {
		group := gvk.Group
		if group == "events.k8s.io" {
			group = "" // validated as the internal core Event, and named so
		}
		return nil, apierr.Invalid(gvk.Kind, group, jsonobj.Str(jsonobj.Meta(norm), "name"), errs)
	}
	return norm, nil
}
