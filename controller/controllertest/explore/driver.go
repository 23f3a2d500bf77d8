package explore

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller/controllertest"
)

// One run, inside a synctest bubble: a fresh server, the controller's process (and its
// standby), the workload step by step. Every event the server sends a process waits behind
// a hold of that process's view (its gate) and is delivered one at a time, once everything
// has settled (synctest.Wait): what the controller sees, and in which order, depends on the
// run's perturbation only, not on the scheduler.

// proc is one process of the controller.
type proc struct {
	name    string
	run     *controllertest.Running
	gate    *apitest.Hold
	gateRV  uint64
	standby bool
	dead    bool
	// crashDue: a write hook killed it; the driver finishes the crash.
	crashDue bool
	// stale: the view of a restart against a lagging server (Crash.Lag), released after
	// staleLeft more writes.
	stale     *apitest.Hold
	staleRV   uint64
	staleLeft int
	watched   map[string]bool // resources it has had events of
}

// held is an active Lag or Coalesce.
type held struct {
	p          *proc
	atom       Atom
	resource   string // the server's name; "" for every resource
	h          *apitest.Hold
	rv         uint64
	writesLeft int // Lag
	events     int // Coalesce: release once this many are held
	since      time.Time
	due        bool
}

type writeRec struct {
	seq    int // the order of trace entries
	n      int
	proc   string
	w      apitest.Write
	at     time.Duration
	step   int
	view   map[string]uint64 // resource → the resourceVersion the process's view of it was at
	action apitest.WriteAction
}

type deliveryRec struct {
	seq  int
	n    int
	proc string
	ev   apitest.HeldEvent
	at   time.Duration
}

type runner struct {
	x     *explorer
	pert  Perturbation
	t     *testing.T
	env   *controllertest.Env
	jr    *journal
	start time.Time
	step  int

	mu         sync.Mutex // the write hooks run on the server's goroutines
	procs      []*proc
	writes     []writeRec
	deliveries []deliveryRec
	holds      []*held
	drains     []*drain
	fired      map[int]bool // atoms done (by index)
	trace      []entry
	seq        int // numbers trace entries, writes and deliveries

	fail  *Failure
	codes map[int64]int
	// released is when a hold was last released: the controller's answer to what it then
	// sees (a requeue after a conflict, say) must have IdleWindow to come, as a change.
	released time.Time
}

type entry struct {
	seq  int
	at   time.Duration
	text string
}

func (r *runner) now() time.Duration { return time.Since(r.start) }

func (r *runner) note(format string, args ...any) {
	e := entry{at: r.now(), text: fmt.Sprintf(format, args...)}
	r.mu.Lock()
	r.seq++
	e.seq = r.seq
	r.trace = append(r.trace, e)
	r.mu.Unlock()
}

func (r *runner) failed(f *Failure) {
	if r.fail == nil {
		f.At = r.now()
		r.fail = f
		r.note("FAILED: %s", f.Summary())
	}
}

// drive runs the workload and settles; the caller checks the end state.
func (r *runner) drive() {
	r.start = time.Now()
	r.jr = newJournal(r.env.Server)
	r.jr.poll(nil) // the system objects of a fresh server: not checked
	r.startProc(false, 0)
	if r.x.cfg.Target.Standby {
		r.startProc(true, 0)
	}
	for i, st := range r.x.cfg.Workload {
		r.quiesce()
		if r.fail != nil {
			return
		}
		r.setStep(i)
		r.note("step %d: %s", i+1, st.Name)
		switch {
		case st.Do != nil:
			if err := st.Do(r.env); err != nil {
				r.failed(&Failure{Oracle: "workload", Details: []string{fmt.Sprintf("step %d (%s): %v", i+1, st.Name, err)}})
				return
			}
		case st.Settle:
			r.settle(false)
		case st.Wait > 0:
			r.wait(st.Wait)
		}
	}
	r.setStep(len(r.x.cfg.Workload))
	r.settle(true)
}

func (r *runner) setStep(i int) {
	r.mu.Lock()
	r.step = i
	r.mu.Unlock()
}

// quiesce lets everything settle, delivers the next event the controller has to see, and
// again, until none is left; due perturbations act in between.
func (r *runner) quiesce() {
	for r.fail == nil {
		synctest.Wait()
		r.poll()
		if r.fail != nil || !r.deliverOne() {
			return
		}
	}
}

// wait lets d pass on the fake clock, quiescing in between.
func (r *runner) wait(d time.Duration) {
	end := time.Now().Add(d)
	q := 50 * time.Millisecond
	for r.fail == nil && time.Now().Before(end) {
		r.quiesce()
		time.Sleep(min(q, time.Until(end)))
		q = min(2*q, 2*time.Second)
	}
}

// settle waits until the run is quiet for IdleWindow (no change but Leases and Events, no
// perturbation pending); after MaxSettle it fails for liveness. last: the end of the run,
// when the holds still active are released (a lagging cache catches up).
func (r *runner) settle(last bool) {
	begin := time.Now()
	q := 50 * time.Millisecond
	var active time.Time
	for r.fail == nil {
		r.quiesce()
		if r.fail != nil {
			return
		}
		last0 := r.jr.lastActive
		if r.released.After(last0) {
			last0 = r.released
		}
		if last0 != active {
			active, q = last0, 50*time.Millisecond
		}
		quiet := time.Since(last0) >= r.x.cfg.IdleWindow
		if quiet && last && r.releaseAll() {
			continue
		}
		if quiet && !r.pendingCrash() {
			return
		}
		if time.Since(begin) > r.x.cfg.MaxSettle {
			r.failed(&Failure{Oracle: "liveness", Details: []string{fmt.Sprintf(
				"the run did not settle within %v: changes kept coming, the last at %v", r.x.cfg.MaxSettle, r.jr.lastActive.Sub(r.start))}})
			return
		}
		time.Sleep(q)
		q = min(2*q, 2*time.Second)
	}
}

// poll reads the server's changes (checking the invariants after each), finishes crashes
// and releases the holds that are due.
func (r *runner) poll() {
	err := r.jr.poll(func(c apitest.Change) {
		if r.fail != nil {
			return
		}
		st := &State{j: r.jr, change: c}
		for _, inv := range r.x.cfg.Invariants {
			if err := inv.Check(st); err != nil {
				r.failed(&Failure{Oracle: "invariant", Details: []string{fmt.Sprintf("%s, after %s %s %s (rv %d): %v",
					inv.Name, c.Type, c.Resource, objectName(c.Namespace, c.Name), c.RV, err)}, Change: &c})
				return
			}
		}
	})
	if err != nil {
		r.failed(&Failure{Oracle: "journal", Details: []string{err.Error()}})
		return
	}
	r.mu.Lock()
	var crashed []*proc
	for _, p := range r.procs {
		if p.crashDue && !p.dead {
			p.dead = true
			crashed = append(crashed, p)
		}
	}
	r.mu.Unlock()
	for _, p := range crashed {
		r.finishCrash(p)
	}
	r.releaseDue()
}

func (r *runner) pendingCrash() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.procs {
		if p.crashDue && !p.dead {
			return true
		}
	}
	return false
}

// startProc starts a process of the controller: a Manager on a client of its own, its
// view behind a gate at the server's resourceVersion (or, with staleRV, at that older one).
func (r *runner) startProc(standby bool, staleRV uint64) *proc {
	srv := r.env.Server
	name := r.env.NextClient()
	p := &proc{name: name, standby: standby, watched: map[string]bool{}}
	var err error
	if staleRV > 0 {
		// The gate starts at the stale view too, so that once the stale hold is released
		// the events after it are delivered one at a time, as every other.
		if p.gate, err = srv.Clients().HoldAt(name, "", uintString(staleRV)); err == nil {
			p.stale, err = srv.Clients().HoldAt(name, "", uintString(staleRV))
			p.staleRV = staleRV
		}
	} else {
		p.gate, err = srv.Clients().Hold(name, "")
	}
	if err != nil {
		r.failed(&Failure{Oracle: "start", Details: []string{err.Error()}})
		return p
	}
	p.gateRV, _ = strconv.ParseUint(p.gate.RV(), 10, 64)
	srv.Clients().OnWrite(name, r.hook(p))
	r.mu.Lock()
	r.procs = append(r.procs, p)
	r.mu.Unlock()
	opts := r.x.cfg.Target.Manager
	if opts.LeaderElection && opts.LeaderElectionIdentity == "" {
		opts.LeaderElectionIdentity = name
	}
	what := "process"
	if standby {
		what = "standby"
	}
	view := p.gateRV
	if p.stale != nil {
		view = p.staleRV
	}
	r.note("start %s %s (its view at rv %d)", what, name, view)
	p.run = r.env.StartManager(opts, r.x.cfg.Target.Setup)
	return p
}

// hook is the write hook of a process: it counts the controller's writes, records what the
// process's view held, and acts for the atoms due at this write.
func (r *runner) hook(p *proc) apitest.WriteHook {
	return func(w apitest.Write) apitest.WriteAction {
		if !controllertest.ControllerWrite(w) {
			return apitest.WriteProceed
		}
		watched := r.watchedBy(p)
		r.mu.Lock()
		defer r.mu.Unlock()
		n := len(r.writes) + 1
		r.seq++
		rec := writeRec{seq: r.seq, n: n, proc: p.name, w: w, at: r.now(), step: r.step, view: r.viewLocked(p, watched)}
		act := apitest.WriteProceed
		for i, a := range r.pert {
			switch a := a.(type) {
			case Crash:
				if a.AfterWrite == n && !r.fired[i] {
					r.fired[i] = true
					act = apitest.WriteKillAfter
					p.crashDue = true
				}
			case FailWrite:
				if a.Write == n && !r.fired[i] {
					r.fired[i] = true
					act = a.Action
				}
			}
		}
		for _, h := range r.holds {
			if h.p == p && h.writesLeft > 0 {
				if h.writesLeft--; h.writesLeft == 0 {
					h.due = true
				}
			}
		}
		if p.stale != nil && p.staleLeft > 0 {
			p.staleLeft--
		}
		rec.action = act
		r.writes = append(r.writes, rec)
		return act
	}
}

// watchedBy returns the resources p watches now.
func (r *runner) watchedBy(p *proc) []string {
	var out []string
	for _, w := range r.env.Server.Watches("") {
		if w.Client == p.name {
			out = append(out, w.Resource)
		}
	}
	return out
}

// viewLocked returns, per resource the process watches (or has had events of), the
// resourceVersion its view was at: the gate's, or an older hold's.
func (r *runner) viewLocked(p *proc, watched []string) map[string]uint64 {
	out := map[string]uint64{}
	all := map[string]bool{}
	for res := range p.watched {
		all[res] = true
	}
	for _, res := range watched {
		all[res] = true
	}
	for res := range all {
		rv := p.gateRV
		if p.stale != nil && p.staleRV < rv {
			rv = p.staleRV
		}
		for _, h := range r.holds {
			if h.p == p && (h.resource == "" || h.resource == res) && h.rv < rv {
				rv = h.rv
			}
		}
		for _, d := range r.drains {
			if d.p == p && (d.resource == "" || d.resource == res) && d.rv < rv {
				rv = d.rv
			}
		}
		out[res] = rv
	}
	return out
}

// live returns the processes alive, in start order.
func (r *runner) live() []*proc {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*proc
	for _, p := range r.procs {
		if !p.dead && !p.crashDue {
			out = append(out, p)
		}
	}
	return out
}

// deliverOne delivers the oldest event a live process has yet to see, after the atoms due
// before it; it reports whether anything happened.
func (r *runner) deliverOne() bool {
	var best *proc
	var ev apitest.HeldEvent
	var bestRV uint64
	for _, p := range r.live() {
		pend := p.gate.Pending()
		if len(pend) == 0 {
			continue
		}
		rv, _ := strconv.ParseUint(pend[0].RV, 10, 64)
		if best == nil || rv < bestRV {
			best, ev, bestRV = p, pend[0], rv
		}
	}
	dr, dev, drRV, ok := r.nextDrained()
	if ok && (best == nil || drRV < bestRV) {
		best, ev, bestRV = dr.p, dev, drRV
	} else {
		dr = nil
	}
	if best == nil {
		return false
	}
	if !r.jr.quiet[ev.Resource] {
		if r.beforeDelivery(best, len(r.deliveries)+1) {
			return true // a hold or a fault changed what is pending
		}
		r.mu.Lock()
		best.watched[ev.Resource] = true
		r.seq++
		r.deliveries = append(r.deliveries, deliveryRec{seq: r.seq, n: len(r.deliveries) + 1, proc: best.name, ev: ev, at: r.now()})
		r.mu.Unlock()
	}
	h, at := best.gate, &best.gateRV
	if dr != nil {
		h, at = dr.h, &dr.rv
	}
	if err := h.Advance(ev.RV, apitest.InOrder); err != nil {
		r.failed(&Failure{Oracle: "driver", Details: []string{err.Error()}})
		return false
	}
	r.mu.Lock()
	*at = bestRV
	r.mu.Unlock()
	return true
}

// stop ends every live process (gracefully) and waits for them.
func (r *runner) stop() {
	for _, p := range r.procs {
		if p.run != nil {
			p.run.Stop()
		}
	}
}
