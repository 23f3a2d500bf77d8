package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/informerkit/informerkit/controller/rbac"
	"github.com/informerkit/informerkit/kinds"
	"github.com/informerkit/informerkit/leaderelection"
	"github.com/informerkit/informerkit/meta"
	"github.com/informerkit/informerkit/sharding/ring"
)

// Rule is an API permission a controller declares (Options.Permissions): verbs on a
// resource of a group, in a namespace or all (package controller/rbac's Rule).
type Rule = rbac.Rule

// Permissions returns the API permissions the controller declares: those the Builder
// derived from its inputs (For: get, list, watch, and get, update, patch of the status
// subresource when the kind has one, and update of its finalizers subresource with Owns,
// for owner references that block deletion; Owns: get, list, watch, create, update, patch,
// delete; Watches: get, list, watch) and Options.Permissions. A controller made with New
// declares only Options.Permissions; its sources' informers are declared by the Manager.
func (c *Controller) Permissions() []rbac.Rule {
	c.mu.Lock()
	defer c.mu.Unlock()
	return rbac.Merge(append(slices.Clone(c.declared), c.opts.Permissions...)...)
}

// declare adds permissions derived by a Builder.
func (c *Controller) declare(rules ...rbac.Rule) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.declared = append(c.declared, rules...)
}

// builderPermissions are the rules a Builder derives from its inputs (see
// Controller.Permissions); ns is the namespace its informers watch ("" for all).
func builderPermissions(primary *kinds.Info, owned, watched []meta.GroupVersionResource, ns string) []rbac.Rule {
	var rules []rbac.Rule
	if primary != nil {
		rules = append(rules, rbac.Rule{Group: primary.Group, Resource: primary.Resource, Verbs: rbac.ReadVerbs, Namespace: ns})
		if primary.StatusSubresource {
			rules = append(rules, rbac.Rule{Group: primary.Group, Resource: primary.Resource + "/status", Verbs: rbac.StatusVerbs, Namespace: ns})
		}
		if len(owned) > 0 {
			rules = append(rules, rbac.Rule{Group: primary.Group, Resource: primary.Resource + "/finalizers", Verbs: []string{"update"}, Namespace: ns})
		}
	}
	for _, gvr := range owned {
		rules = append(rules, rbac.Rule{Group: gvr.Group, Resource: gvr.Resource, Verbs: append(slices.Clone(rbac.ReadVerbs), rbac.WriteVerbs...), Namespace: ns})
	}
	for _, gvr := range watched {
		rules = append(rules, rbac.Rule{Group: gvr.Group, Resource: gvr.Resource, Verbs: rbac.ReadVerbs, Namespace: ns})
	}
	return rules
}

// AddPermissions declares permissions the Manager's runnables need beyond those of its
// controllers and informers (a Runnable that writes objects, say). Call it before Start.
func (m *Manager) AddPermissions(rules ...rbac.Rule) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.permissions = append(m.permissions, rules...)
}

// Permissions returns every API permission the Manager needs, merged (rbac.Merge): get,
// list and watch of the resource of each informer of its factory (in the factory's or the
// informer's namespace), what each controller declares (Controller.Permissions), list and
// watch of CustomResourceDefinitions when a controller follows its resources, create and
// patch of core events once EventRecorderFor has been called, the verbs leader election
// uses on leases in its namespace (leaderelection.LeaseVerbs, watch included) and those of a
// sharding ring's member in the ring's (ring.LeaseVerbs), and AddPermissions. Call it once the
// controllers are built; rbac.Manifest writes the roles that grant them.
func (m *Manager) Permissions() []rbac.Rule {
	var rules []rbac.Rule
	for _, inf := range m.factory.Informers() {
		gvr, ok := m.factory.ResourceOf(inf)
		if !ok {
			continue
		}
		ns, _ := m.factory.NamespaceOf(inf)
		rules = append(rules, rbac.Rule{Group: gvr.Group, Resource: gvr.Resource, Verbs: rbac.ReadVerbs, Namespace: ns})
	}
	m.mu.Lock()
	runnables := slices.Clone(m.runnables)
	rules = append(rules, m.permissions...)
	m.mu.Unlock()
	for _, r := range runnables {
		if c, ok := r.(*Controller); ok {
			rules = append(rules, c.Permissions()...)
		}
	}
	if m.recordsEvents.Load() {
		ev := kinds.Event.GroupVersionResource()
		rules = append(rules, rbac.Rule{Group: ev.Group, Resource: ev.Resource, Verbs: []string{"create", "patch"}})
	}
	m.follow.mu.Lock()
	following := m.follow.tracker != nil
	m.follow.mu.Unlock()
	if following {
		// The resource tracker of controllers that follow their resources watches CRDs.
		rules = append(rules, rbac.Rule{Group: crdsGVR.Group, Resource: crdsGVR.Resource, Verbs: []string{"list", "watch"}})
	}
	if m.opts.LeaderElection {
		lease := kinds.Lease.GroupVersionResource()
		rules = append(rules, rbac.Rule{Group: lease.Group, Resource: lease.Resource, Verbs: leaderelection.LeaseVerbs,
			Namespace: m.opts.LeaderElectionNamespace})
	}
	if m.ring != nil {
		lease := kinds.Lease.GroupVersionResource()
		rules = append(rules, rbac.Rule{Group: lease.Group, Resource: lease.Resource, Verbs: ring.LeaseVerbs,
			Namespace: m.opts.Sharding.Namespace})
	}
	return rbac.Merge(rules...)
}

// Roles returns the RBAC manifest that grants Permissions (rbac.Manifest): a ClusterRole
// for what spans every namespace, a Role per namespace for the rest (the Lease's), named
// name, with their bindings to opts.ServiceAccount if set. Any program that builds its
// controllers on a Manager can print its roles this way, without a server (the Manager is
// set up, never started):
//
//	if *printRoles { // after Setup of every controller
//		y, err := mgr.Roles("widgets", rbac.ManifestOptions{ServiceAccount: "widgets", ServiceAccountNamespace: "widgets-system"})
//		...
//	}
//
// cmd/controller-manager -rbac is this for the controllers of that one program (through
// runner.Runner.Permissions, which sets up its named controllers without a server).
func (m *Manager) Roles(name string, opts rbac.ManifestOptions) ([]byte, error) {
	return rbac.Manifest(name, m.Permissions(), opts)
}

// checkPermissions asks the API server whether the Manager may do what Permissions lists
// (ManagerOptions.SkipPermissionCheck turns it off). Only missing permissions stop Start,
// with one error naming each verb and resource; a server that cannot answer is logged.
func (m *Manager) checkPermissions(ctx context.Context) error {
	err := rbac.Check(ctx, m.client, m.Permissions(), rbac.CheckOptions{})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rbac.ErrMissingPermissions):
		return fmt.Errorf("controller: %w", err)
	case ctx.Err() != nil:
		return nil
	}
	m.log.Warn("the permissions were not checked at start", "err", err)
	return nil
}
