package explore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/informerkit/informerkit/apitest"
)

// A Perturbation is what one run changes in the controller's world: one or more atoms,
// each acting at a point of the run (the controller's k-th write, the n-th event delivered
// to it). Its String is what -explore.replay reads back.
type Perturbation []Atom

// String is the perturbation in the form ParsePerturbation reads: atoms joined by " + "
// ("none" for none).
func (p Perturbation) String() string {
	if len(p) == 0 {
		return "none"
	}
	parts := make([]string, len(p))
	for i, a := range p {
		parts[i] = a.String()
	}
	return strings.Join(parts, " + ")
}

// Kinds returns the Sieve kinds of bug the perturbation's atoms provoke.
func (p Perturbation) Kinds() []Kind {
	var out []Kind
	for _, a := range p {
		if k := a.Kind(); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// Kind is a kind of perturbation, after the kinds of bugs Sieve found.
type Kind string

// The kinds of perturbation.
const (
	// Intermediate: the process dies between two writes and restarts (or a standby takes
	// over) from the state it left.
	Intermediate Kind = "intermediate"
	// Stale: the controller acts on a view behind the server: a restart against a lagging
	// cache, one informer behind the others.
	Stale Kind = "stale"
	// Unobserved: states between two the controller sees are coalesced away.
	Unobserved Kind = "unobserved"
	// Faults: API errors on writes, watches cut or expired.
	Faults Kind = "faults"
)

// An Atom is one perturbation: Crash, Lag, Coalesce, FailWrite or WatchFault.
type Atom interface {
	// Kind is the kind of bug the atom provokes.
	Kind() Kind
	// String is the atom as ParsePerturbation reads it.
	String() string
}

// Crash kills the controller's process right after its AfterWrite-th write (committed,
// never answered) and restarts it with empty caches. With Standby, no process is restarted:
// the standby replica (Target.Standby) takes over once the dead leader's Lease expires (if
// the standby died before, the process restarts as without Standby).
// With Lag > 0 the restarted process lists and watches a view Lag changes behind the
// server (of the resources the controller watches), as after a restart against a lagging
// kube-apiserver, until it has made LagWrites writes (at least 1).
type Crash struct {
	AfterWrite int
	Standby    bool
	Lag        int
	LagWrites  int
}

// Kind is Intermediate, or Stale with a lag.
func (c Crash) Kind() Kind {
	if c.Lag > 0 {
		return Stale
	}
	return Intermediate
}

func (c Crash) String() string {
	s := "crash(after-write=" + strconv.Itoa(c.AfterWrite)
	if c.Standby {
		s += ",standby"
	}
	if c.Lag > 0 {
		s += fmt.Sprintf(",lag=%d,lag-writes=%d", c.Lag, max(1, c.LagWrites))
	}
	return s + ")"
}

// Lag holds the controller's view of Resource ("" for every resource) from just before the
// FromDelivery-th event delivered to it, while the others (and the server) move on, until it
// has made Writes more writes; then the held events arrive in order. One informer behind
// the others: a cache that has not seen the controller's own last write, events of
// different resources reordered.
type Lag struct {
	Resource     string
	FromDelivery int
	Writes       int
}

// Kind is Stale.
func (Lag) Kind() Kind { return Stale }

func (l Lag) String() string {
	return fmt.Sprintf("lag(resource=%s,from-delivery=%d,writes=%d)", resourceOrAll(l.Resource), l.FromDelivery, max(1, l.Writes))
}

// Coalesce holds the controller's view of Resource ("" for every resource) from just before
// the FromDelivery-th event delivered to it until Events events are held (or the run goes
// quiet), then delivers only the latest state of each object (apitest.Merged), or makes the
// controller relist (Relist: apitest.Relist): the states in between are never seen.
type Coalesce struct {
	Resource     string
	FromDelivery int
	Events       int
	Relist       bool
}

// Kind is Unobserved.
func (Coalesce) Kind() Kind { return Unobserved }

func (c Coalesce) String() string {
	how := "merged"
	if c.Relist {
		how = "relist"
	}
	return fmt.Sprintf("coalesce(resource=%s,from-delivery=%d,events=%d,%s)", resourceOrAll(c.Resource), c.FromDelivery, max(2, c.Events), how)
}

// FailWrite answers the controller's Write-th write with Action (apitest.WriteConflict,
// WriteInternalError, WriteTimeout or WriteLostAnswer).
type FailWrite struct {
	Write  int
	Action apitest.WriteAction
}

// Kind is Faults.
func (FailWrite) Kind() Kind { return Faults }

func (f FailWrite) String() string {
	return fmt.Sprintf("fail(write=%d,%s)", f.Write, f.Action)
}

// WatchFault cuts the controller's watches (Expire: ends them with 410 Expired, so that it
// relists) just before the AtDelivery-th event delivered to it.
type WatchFault struct {
	AtDelivery int
	Expire     bool
}

// Kind is Faults.
func (WatchFault) Kind() Kind { return Faults }

func (w WatchFault) String() string {
	how := "cut"
	if w.Expire {
		how = "expire"
	}
	return fmt.Sprintf("watch(at-delivery=%d,%s)", w.AtDelivery, how)
}

func resourceOrAll(r string) string {
	if r == "" {
		return "*"
	}
	return r
}

// ParsePerturbation reads a Perturbation's String.
func ParsePerturbation(s string) (Perturbation, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return nil, nil
	}
	var p Perturbation
	for _, part := range strings.Split(s, "+") {
		a, err := parseAtom(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("explore: perturbation %q: %w", s, err)
		}
		p = append(p, a)
	}
	return p, nil
}

func parseAtom(s string) (Atom, error) {
	name, args, ok := strings.Cut(s, "(")
	if !ok || !strings.HasSuffix(args, ")") {
		return nil, fmt.Errorf("%q is not name(arguments)", s)
	}
	kv := map[string]string{}
	var flags []string
	for _, f := range strings.Split(strings.TrimSuffix(args, ")"), ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(f), "="); ok {
			kv[k] = v
		} else if f != "" {
			flags = append(flags, strings.TrimSpace(f))
		}
	}
	num := func(k string) int { n, _ := strconv.Atoi(kv[k]); return n }
	res := func() string {
		if r := kv["resource"]; r != "*" {
			return r
		}
		return ""
	}
	has := func(f string) bool { return slices.Contains(flags, f) }
	switch name {
	case "crash":
		return Crash{AfterWrite: num("after-write"), Standby: has("standby"), Lag: num("lag"), LagWrites: num("lag-writes")}, nil
	case "lag":
		return Lag{Resource: res(), FromDelivery: num("from-delivery"), Writes: num("writes")}, nil
	case "coalesce":
		return Coalesce{Resource: res(), FromDelivery: num("from-delivery"), Events: num("events"), Relist: has("relist")}, nil
	case "fail":
		for a := apitest.WriteConflict; a <= apitest.WriteLostAnswer; a++ {
			if has(a.String()) {
				return FailWrite{Write: num("write"), Action: a}, nil
			}
		}
		return nil, fmt.Errorf("%q names no write failure (conflict, internal-error, timeout, lost-answer)", s)
	case "watch":
		return WatchFault{AtDelivery: num("at-delivery"), Expire: has("expire")}, nil
	}
	return nil, fmt.Errorf("unknown perturbation %q", name)
}

// space is what a reference run offers to perturb: its controller writes and the events
// delivered to the controller, by resource.
type space struct {
	writes     int
	deliveries []string // the resource of each delivery, in order
	standby    bool     // the target runs a standby replica
	kinds      []Kind
}

// generate draws the perturbation of seed from the space: deterministic in (space, seed).
func (sp space) generate(seed int64) Perturbation {
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(seed)^0x9e3779b97f4a7c15))
	n := 1
	if rng.IntN(5) == 0 {
		n = 2
	}
	var p Perturbation
	for range n {
		if a := sp.atom(rng); a != nil {
			p = append(p, a)
		}
	}
	return p
}

func (sp space) atom(rng *rand.Rand) Atom {
	kinds := sp.kinds
	if len(kinds) == 0 {
		kinds = []Kind{Intermediate, Stale, Unobserved, Faults}
	}
	switch k := kinds[rng.IntN(len(kinds))]; {
	case k == Intermediate && sp.writes > 0:
		return Crash{AfterWrite: 1 + rng.IntN(sp.writes), Standby: sp.standby && rng.IntN(2) == 0}
	case k == Stale && sp.writes > 0 && (len(sp.deliveries) == 0 || rng.IntN(2) == 0):
		return Crash{AfterWrite: 1 + rng.IntN(sp.writes), Lag: 1 + rng.IntN(5), LagWrites: 1 + rng.IntN(3)}
	case k == Stale && len(sp.deliveries) > 0:
		d := rng.IntN(len(sp.deliveries))
		return Lag{Resource: sp.resourceAt(rng, d), FromDelivery: d + 1, Writes: 1 + rng.IntN(3)}
	case k == Unobserved && len(sp.deliveries) > 0:
		d := rng.IntN(len(sp.deliveries))
		return Coalesce{Resource: sp.resourceAt(rng, d), FromDelivery: d + 1, Events: 2 + rng.IntN(5), Relist: rng.IntN(4) == 0}
	case k == Faults && sp.writes > 0 && (len(sp.deliveries) == 0 || rng.IntN(3) > 0):
		actions := []apitest.WriteAction{apitest.WriteConflict, apitest.WriteInternalError, apitest.WriteTimeout, apitest.WriteLostAnswer}
		return FailWrite{Write: 1 + rng.IntN(sp.writes), Action: actions[rng.IntN(len(actions))]}
	case k == Faults && len(sp.deliveries) > 0:
		return WatchFault{AtDelivery: 1 + rng.IntN(len(sp.deliveries)), Expire: rng.IntN(2) == 0}
	}
	return nil
}

// resourceAt is the resource of delivery d, or (one time in four) every resource.
func (sp space) resourceAt(rng *rand.Rand, d int) string {
	if rng.IntN(4) == 0 {
		return ""
	}
	return sp.deliveries[d]
}

// shrinkCandidates returns smaller perturbations than p, most promising first: each atom
// alone, then each atom made smaller.
func shrinkCandidates(p Perturbation) []Perturbation {
	var out []Perturbation
	if len(p) > 1 {
		for _, a := range p {
			out = append(out, Perturbation{a})
		}
	}
	for i, a := range p {
		for _, smaller := range smallerAtoms(a) {
			q := slices.Clone(p)
			q[i] = smaller
			out = append(out, q)
		}
	}
	return out
}

func smallerAtoms(a Atom) []Atom {
	var out []Atom
	switch a := a.(type) {
	case Crash:
		if a.Lag > 0 {
			out = append(out, Crash{AfterWrite: a.AfterWrite, Standby: a.Standby})
		}
		if a.Lag > 1 {
			out = append(out, Crash{AfterWrite: a.AfterWrite, Lag: a.Lag - 1, LagWrites: a.LagWrites})
		}
		if a.LagWrites > 1 {
			out = append(out, Crash{AfterWrite: a.AfterWrite, Lag: a.Lag, LagWrites: 1})
		}
	case Lag:
		if a.Writes > 1 {
			out = append(out, Lag{Resource: a.Resource, FromDelivery: a.FromDelivery, Writes: a.Writes - 1})
		}
	case Coalesce:
		if a.Events > 2 {
			out = append(out, Coalesce{Resource: a.Resource, FromDelivery: a.FromDelivery, Events: a.Events - 1, Relist: a.Relist})
		}
	}
	return out
}
