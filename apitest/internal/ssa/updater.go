package ssa

import (
	"sort"

	"github.com/informerkit/informerkit/apitest/internal/fieldpath"
	"github.com/informerkit/informerkit/apitest/internal/mergeschema"
)

// updater applies configurations and records updates at the level of field sets: it does
// not know about metadata, times or which fields are the server's (FieldManager does).
type updater struct {
	schema mergeschema.Type
	// ignore are the fields no manager owns here (the strategy resets them: status on the
	// main resource, spec on /status).
	ignore *fieldpath.Set
}

func (u *updater) filter(s *fieldpath.Set) *fieldpath.Set {
	if u.ignore.Empty() || !touches(s, u.ignore) {
		return s
	}
	return s.RecursiveDifference(u.ignore)
}

// touches reports whether s has anything at or under one of ignore's top-level elements
// (the reset fields are few and shallow: "status", "spec", "metadata.labels").
func touches(s, ignore *fieldpath.Set) bool {
	has := func(pe fieldpath.PathElement) bool {
		return s.Has(fieldpath.Path{pe}) || !s.WithPrefix(pe).Empty()
	}
	for _, m := range ignore.Members() {
		if has(m) {
			return true
		}
	}
	found := false
	ignore.Children(func(pe fieldpath.PathElement, _ *fieldpath.Set) {
		found = found || has(pe)
	})
	return found
}

// reconcile takes the change from live to next away from every manager but self: the
// fields next changes or adds, from their owners (a conflict unless force), and the
// fields next removes, from everyone.
func (u *updater) reconcile(live, next any, managers map[ManagerKey]Owned, self ManagerKey, force bool) (*Comparison, error) {
	c := Compare(live, next, u.schema)
	c.Added, c.Modified, c.Removed = u.filter(c.Added), u.filter(c.Modified), u.filter(c.Removed)
	others := len(managers)
	if _, ok := managers[self]; ok {
		others--
	}
	if others == 0 {
		return c, nil
	}
	changed := c.Modified.Union(c.Added)
	var conflicts []Conflict
	taken := map[ManagerKey]*fieldpath.Set{}
	for k, o := range managers {
		if k == self {
			continue
		}
		if in := o.Set.Intersection(changed); !in.Empty() {
			taken[k] = in
			for _, p := range in.Paths() {
				conflicts = append(conflicts, Conflict{Manager: k, Path: p})
			}
		}
	}
	if !force && len(conflicts) > 0 {
		sort.SliceStable(conflicts, func(i, j int) bool {
			a, b := conflicts[i].Manager, conflicts[j].Manager
			if a != b {
				return a.less(b)
			}
			return false
		})
		return nil, &ConflictError{Conflicts: conflicts}
	}
	for k, o := range managers {
		if k == self {
			continue
		}
		s := o.Set
		if in := taken[k]; in != nil {
			s = s.Difference(in)
		}
		if !c.Removed.Empty() {
			s = s.Difference(c.Removed)
		}
		if s.Empty() {
			delete(managers, k)
			continue
		}
		o.Set = s
		managers[k] = o
	}
	return c, nil
}

// update records that manager changed live into next: it owns what it changed or added,
// no longer what it removed, and others lose what it changed.
func (u *updater) update(live, next any, version string, managers map[ManagerKey]Owned, manager ManagerKey) error {
	c, err := u.reconcile(live, next, managers, manager, true)
	if err != nil {
		return err
	}
	prev := fieldpath.NewSet()
	if o, ok := managers[manager]; ok {
		prev = o.Set
	}
	set := u.filter(prev.Difference(c.Removed).Union(c.Modified).Union(c.Added))
	if set.Empty() {
		delete(managers, manager)
		return nil
	}
	managers[manager] = Owned{Set: set, APIVersion: version}
	return nil
}

// apply merges config into live for manager: it returns the new object (changed false if
// it equals live), or the conflicts. Fields the manager applied before, no longer applies
// and nobody else owns are removed.
func (u *updater) apply(live, config any, version string, managers map[ManagerKey]Owned, manager ManagerKey, force bool) (any, bool, error) {
	merged := Merge(live, config, u.schema)
	last, hadLast := managers[manager]
	managers[manager] = Owned{Set: u.filter(FieldSet(config, u.schema)), APIVersion: version, Applied: true}
	if hadLast && !last.Set.Empty() {
		merged = u.prune(merged, managers, last.Set)
	}
	if _, err := u.reconcile(live, merged, managers, manager, force); err != nil {
		return nil, false, err
	}
	return merged, !Equal(live, merged), nil
}

// prune removes from merged the fields the applier owned before (last) that nobody owns
// now: the fields it stopped applying, unless another manager also owns them.
func (u *updater) prune(merged any, managers map[ManagerKey]Owned, last *fieldpath.Set) any {
	owned := fieldpath.NewSet()
	for _, o := range managers {
		owned = owned.Union(o.Set)
	}
	gone := withNamedFields(last, u.schema).Difference(withNamedFields(owned, u.schema))
	if gone.Empty() {
		return merged
	}
	return RemoveFields(merged, gone, u.schema)
}
