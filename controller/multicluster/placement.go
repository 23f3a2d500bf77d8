package multicluster

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"

	"github.com/informerkit/informerkit/sharding/ring"
)

// placeOf is where cluster name sits in the ring's hash space: the first 8 bytes of the
// SHA-256 of its name. Not sharding.Hash (FNV-1a): the ring's buckets are the hash's top
// bits, and FNV-1a of names that differ in their last characters ("cluster-001",
// "cluster-002", ...) differ in their low bits only, which put 1,000 such names in 11 of
// 256 buckets.
func placeOf(name string) uint64 {
	s := sha256.Sum256([]byte(name))
	return binary.BigEndian.Uint64(s[:8])
}

// placer decides the role of clusters on this replica at one step of the Fleet's loop,
// from one reading of the ring.
type placer struct {
	f       *Fleet
	self    string
	members []string
	owners  *ring.Assignment            // the assignment of the live members (nil: none known)
	next    map[string]*ring.Assignment // owner -> the assignment without it
}

func (f *Fleet) newPlacer() *placer {
	p := &placer{f: f}
	if f.ring == nil || f.opts.Standby != StandbyNext {
		return p
	}
	p.self = f.ring.Identity()
	p.members = f.ring.Members()
	if len(p.members) > 0 {
		if a, err := ring.Assign(p.members, f.ring.Buckets()); err == nil {
			p.owners = a
			p.next = map[string]*ring.Assignment{}
		}
	}
	return p
}

// role returns what this replica does with cluster name: everything without a ring;
// otherwise reconcile it while the ring holds it, and keep it on standby as Options.Standby
// says.
func (p *placer) role(name string) role {
	r := p.f.ring
	if r == nil {
		return roleActive
	}
	h := placeOf(name)
	if r.Owns(h) {
		return roleActive
	}
	switch p.f.opts.Standby {
	case StandbyAll:
		return roleStandby
	case StandbyNone:
		return roleNone
	}
	if p.owners == nil {
		return roleNone
	}
	owner := p.owners.Owner(h)
	if owner == p.self {
		return roleStandby // being handed over to this replica: warm up
	}
	a, ok := p.next[owner]
	if !ok {
		rest := slices.DeleteFunc(slices.Clone(p.members), func(m string) bool { return m == owner })
		if len(rest) > 0 {
			a, _ = ring.Assign(rest, p.f.ring.Buckets())
		}
		p.next[owner] = a
	}
	if a != nil && a.Owner(h) == p.self {
		return roleStandby
	}
	return roleNone
}
