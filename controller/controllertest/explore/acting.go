package explore

import (
	"slices"
	"strconv"
	"time"

	"github.com/informerkit/informerkit/apitest"
)

// The atoms of a perturbation acting on a run: the holds of a view (Lag, Coalesce) and
// their release, watch faults, and the crash of a process and its restart.

// beforeDelivery starts the atoms due before the n-th delivery; it reports whether one did.
func (r *runner) beforeDelivery(p *proc, n int) bool {
	acted := false
	for i, a := range r.pert {
		if !r.fire(i, a, n) {
			continue
		}
		acted = true
		switch a := a.(type) {
		case Lag:
			r.hold(p, a, a.Resource, max(1, a.Writes), 0)
		case Coalesce:
			r.hold(p, a, a.Resource, 0, max(2, a.Events))
		case WatchFault:
			r.watchFault(p, a)
		}
	}
	return acted
}

// fire marks atom i done if it acts before delivery n, and reports whether it does.
func (r *runner) fire(i int, a Atom, n int) bool {
	at := 0
	switch a := a.(type) {
	case Lag:
		at = a.FromDelivery
	case Coalesce:
		at = a.FromDelivery
	case WatchFault:
		at = a.AtDelivery
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if at != n || r.fired[i] {
		return false
	}
	r.fired[i] = true
	return true
}

func (r *runner) hold(p *proc, a Atom, resource string, writes, events int) {
	res := r.jr.name(resource)
	h, err := r.env.Server.Clients().HoldAt(p.name, res, uintString(p.gateRV))
	if err != nil {
		r.failed(&Failure{Oracle: "driver", Details: []string{err.Error()}})
		return
	}
	r.mu.Lock()
	r.holds = append(r.holds, &held{p: p, atom: a, resource: res, h: h, rv: p.gateRV, writesLeft: writes, events: events, since: time.Now()})
	r.mu.Unlock()
	r.note("perturb: %s: %s's view of %s held at rv %d", a, p.name, resourceOrAll(res), p.gateRV)
}

func (r *runner) watchFault(p *proc, a WatchFault) {
	srv := r.env.Server
	if !a.Expire {
		n, _ := srv.Clients().CutWatches(p.name, "")
		r.note("perturb: %s: %d watches of %s cut", a, n, p.name)
		return
	}
	h, err := srv.Clients().HoldAt(p.name, "", uintString(p.gateRV))
	if err == nil {
		h.Release(apitest.Relist)
	}
	r.note("perturb: %s: the watches of %s expired (410), it relists", a, p.name)
}

// releaseDue releases the holds whose time has come: their writes made, their events held,
// or MaxHold passed; and the stale view of a restarted process after its writes.
func (r *runner) releaseDue() {
	r.mu.Lock()
	hs := slices.Clone(r.holds)
	r.mu.Unlock()
	for _, h := range hs {
		if h.events > 0 && len(h.h.Pending()) >= h.events {
			r.mu.Lock()
			h.due = true
			r.mu.Unlock()
		}
	}
	r.mu.Lock()
	var due []*held
	keep := r.holds[:0]
	for _, h := range r.holds {
		if h.due || h.p.dead || time.Since(h.since) >= r.x.cfg.MaxHold {
			due = append(due, h)
			continue
		}
		keep = append(keep, h)
	}
	r.holds = keep
	var stale []*proc
	for _, p := range r.procs {
		if p.stale != nil && (p.staleLeft == 0 || p.dead) {
			stale = append(stale, p)
		}
	}
	r.mu.Unlock()
	for _, h := range due {
		r.release(h)
	}
	for _, p := range stale {
		p.stale.Release(apitest.InOrder)
		r.released = time.Now()
		r.mu.Lock()
		p.stale = nil
		r.mu.Unlock()
		r.note("release: %s's stale view catches up", p.name)
	}
}

func (r *runner) release(h *held) {
	d := apitest.InOrder
	if c, ok := h.atom.(Coalesce); ok {
		d = apitest.Merged
		if c.Relist {
			d = apitest.Relist
		}
	}
	n := len(h.h.Pending())
	r.released = time.Now()
	if d != apitest.Relist && n > 0 && !h.p.dead && !h.p.crashDue {
		// The process's gate has moved past the hold: released at once, what the hold kept
		// back would reach the process in one burst, and what it does with it would depend
		// on the scheduler. A second hold at the same resourceVersion takes over, and
		// deliverOne advances it one event at a time (a Merged window's stand-ins too).
		step, err := r.env.Server.Clients().HoldAt(h.p.name, h.resource, uintString(h.rv))
		if err == nil {
			h.h.Release(d)
			r.mu.Lock()
			r.drains = append(r.drains, &drain{p: h.p, h: step, resource: h.resource, rv: h.rv})
			r.mu.Unlock()
			r.note("release: %s's view of %s (%s, %d events held, delivered one at a time)", h.p.name, resourceOrAll(h.resource), d, n)
			return
		}
	}
	h.h.Release(d)
	r.note("release: %s's view of %s (%s, %d events held)", h.p.name, resourceOrAll(h.resource), d, n)
}

// drain is a released Lag or Coalesce whose held events still reach the process, one at a
// time, through a hold of their own (see release).
type drain struct {
	p        *proc
	h        *apitest.Hold
	resource string
	rv       uint64
}

// nextDrained returns the oldest event a drain has yet to deliver to a live process, and
// ends the drains that are done (nothing pending, or their process dead).
func (r *runner) nextDrained() (*drain, apitest.HeldEvent, uint64, bool) {
	r.mu.Lock()
	ds := slices.Clone(r.drains)
	r.mu.Unlock()
	var best *drain
	var ev apitest.HeldEvent
	var bestRV uint64
	var done []*drain
	for _, d := range ds {
		pend := d.h.Pending()
		if len(pend) == 0 || d.p.dead || d.p.crashDue {
			done = append(done, d)
			continue
		}
		rv, _ := strconv.ParseUint(pend[0].RV, 10, 64)
		if best == nil || rv < bestRV {
			best, ev, bestRV = d, pend[0], rv
		}
	}
	for _, d := range done {
		d.h.Release(apitest.InOrder)
	}
	r.mu.Lock()
	r.drains = slices.DeleteFunc(r.drains, func(d *drain) bool { return slices.Contains(done, d) })
	r.mu.Unlock()
	return best, ev, bestRV, best != nil
}

// releaseAll releases every hold at the end of the run; it reports whether there was one.
func (r *runner) releaseAll() bool {
	r.mu.Lock()
	hs := r.holds
	r.holds = nil
	var stale []*proc
	for _, p := range r.procs {
		if p.stale != nil {
			stale = append(stale, p)
			p.staleLeft = 0
		}
	}
	r.mu.Unlock()
	for _, h := range hs {
		r.release(h)
	}
	if len(stale) > 0 {
		r.releaseDue()
	}
	return len(hs)+len(stale) > 0
}

// finishCrash ends a process a write hook killed and, unless a standby takes over,
// restarts it (with a lagging view for a Crash with Lag).
func (r *runner) finishCrash(p *proc) {
	p.run.Crash()
	var c Crash
	for _, a := range r.pert {
		if x, ok := a.(Crash); ok && x.AfterWrite == r.writeOf(p) {
			c = x
		}
	}
	r.note("crash: %s killed after its write %d (%s)", p.name, r.writeOf(p), c)
	if c.Standby && r.x.cfg.Target.Standby {
		if len(r.live()) > 0 {
			return // the standby takes over when the Lease expires
		}
		// The standby died before (a second Crash with Standby): none is left to take
		// over, and a run with no process alive would fail for the explorer's sake only.
		r.note("crash: no standby is left: %s restarts", p.name)
	}
	var staleRV uint64
	if c.Lag > 0 {
		staleRV = r.lagRV(p, c.Lag)
	}
	np := r.startProc(false, staleRV)
	if c.Lag > 0 && np.stale != nil {
		r.mu.Lock()
		np.staleLeft = max(1, c.LagWrites)
		np.watched = p.watched
		r.mu.Unlock()
		r.note("perturb: %s: %s restarts on a view at rv %d, %d changes behind", c, np.name, np.staleRV, c.Lag)
	}
}

// writeOf is the number of the last write of p.
func (r *runner) writeOf(p *proc) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.writes) - 1; i >= 0; i-- {
		if r.writes[i].proc == p.name {
			return r.writes[i].n
		}
	}
	return 0
}

// lagRV is the resourceVersion lag changes (of the resources p watched) before the server's.
func (r *runner) lagRV(p *proc, lag int) uint64 {
	chs := r.jr.between(0, r.jr.last, p.watched)
	if len(chs) == 0 {
		return 0
	}
	i := max(0, len(chs)-lag)
	return chs[i].RV - 1
}
