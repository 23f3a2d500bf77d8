package explore

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/informerkit/informerkit/apitest"
	"github.com/informerkit/informerkit/controller"
	"github.com/informerkit/informerkit/controller/controllertest"
)

// The flags of go test that steer an exploration (every test that calls Run reads them).
var (
	flagSeed   = flag.Int64("explore.seed", 0, "replay the perturbed run of this seed only (a report's seed)")
	flagReplay = flag.String("explore.replay", "", "replay this perturbation only (a report's shrunk perturbation)")
	flagRuns   = flag.Int("explore.runs", 0, "the number of perturbed runs (default: Config.Runs)")
	flagTime   = flag.Duration("explore.time", 0, "explore for this long (wall clock), however many runs that takes")
	flagFirst  = flag.Int64("explore.first", 0, "the seed of the first perturbed run (default: Config.Seed, else 1)")
	flagLog    = flag.Bool("explore.v", false, "log every run: its perturbation and outcome")
)

// Target is the controller under test.
type Target struct {
	// Setup wires the controllers on a Manager (a Setup(*controller.Manager) error of
	// yours). It is called once per process: at the start, and again at each restart.
	Setup func(*controller.Manager) error
	// Manager are the options of each process's Manager. With Standby they need
	// LeaderElection (the explorer names each replica's identity after its client).
	Manager controller.ManagerOptions
	// Standby runs a second replica beside the first, which takes over when the leader
	// dies (Crash with Standby).
	Standby bool
	// Env are the options of the run's workbench: CRDs, simulated nodes, the garbage
	// collector. The server is always in memory (each run is a synctest bubble).
	Env controllertest.Options
	// NoGarbageCollector runs without apitest's garbage collector of owner references
	// (by default one runs, with a delay of 10 ms, as kube-controller-manager's).
	NoGarbageCollector bool
}

// Config is an exploration: the target, its workload, the invariants, the budget.
type Config struct {
	Target   Target
	Workload Workload
	// Invariants are checked after every change the server commits, in every run.
	Invariants []Invariant
	// Runs is the number of perturbed runs (default 30; -explore.runs, -explore.time).
	Runs int
	// Seed is the seed of the first perturbed run (default 1; -explore.first): run i uses
	// Seed+i, which decides its perturbation from the reference run.
	Seed int64
	// Kinds restricts the perturbations to these kinds (default all).
	Kinds []Kind
	// Cases are perturbations run before the seeded ones, every time: the regression
	// cases of bugs found before (a report's shrunk perturbation, ParsePerturbation).
	Cases []Perturbation
	// Ignore lists resources whose end state is not compared (Events and Leases never are).
	Ignore []string
	// Normalize changes objects further before end states are compared.
	Normalize Normalizer
	// NoHistory turns off the history oracle: an object the controller deleted more often
	// than in the reference run (a deletion undone by a re-creation leaves the end state
	// alike; deletions by the workload or the garbage collector, and of objects with
	// generated names, are not counted).
	NoHistory bool
	// IdleWindow is how long a run must go without a change (but Leases and Events) to be
	// quiet (default 30 s of fake time); longer than any delay the workload relies on.
	IdleWindow time.Duration
	// MaxSettle bounds the wait for a run to be quiet, after the workload and at each
	// Settle step (default 10 min of fake time): past it the run fails for liveness.
	MaxSettle time.Duration
	// MaxHold bounds how long a view is held (Lag, Coalesce) if what releases it never
	// comes (default 30 s of fake time).
	MaxHold time.Duration
}

func (c *Config) setDefaults() {
	if c.Runs <= 0 {
		c.Runs = 30
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.IdleWindow <= 0 {
		c.IdleWindow = 30 * time.Second
	}
	if c.MaxSettle <= 0 {
		c.MaxSettle = 10 * time.Minute
	}
	if c.MaxHold <= 0 {
		c.MaxHold = 30 * time.Second
	}
}

type explorer struct {
	t      *testing.T
	cfg    Config
	ignore map[string]bool
	ref    *runResult
	// name and pkg are the test's name and package directory, for the replay command.
	name, pkg string
}

// callerPackage is the directory of the test that called Run or Find, relative to its
// module's root ("./examples/widgets"), or "." if it cannot tell.
func callerPackage() string {
	for skip := 2; skip < 6; skip++ {
		_, file, _, ok := runtime.Caller(skip)
		if !ok {
			break
		}
		if filepath.Dir(file) == thisDir() && !strings.HasSuffix(file, "_test.go") {
			continue // Run calling Find
		}
		dir := filepath.Dir(file)
		for root := dir; ; {
			if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
				rel, err := filepath.Rel(root, dir)
				if err != nil || rel == "." {
					return "."
				}
				return "./" + filepath.ToSlash(rel)
			}
			up := filepath.Dir(root)
			if up == root {
				return "."
			}
			root = up
		}
	}
	return "."
}

func thisDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Run explores cfg: a reference run to quiescence, then perturbed runs, each from its
// seed, until the budget is spent or one fails an oracle; a failure is shrunk, replayed
// and reported on t (t.Error), with the command that replays it. It returns the report.
// Run must not be called inside a synctest bubble: each run is one.
func Run(t *testing.T, cfg Config) *Report {
	t.Helper()
	rep := Find(t, cfg)
	if rep.Finding != nil {
		t.Error(rep.String())
	}
	return rep
}

// Find is Run without failing t for what it finds: for tests of controllers whose bugs are
// known (and of the explorer itself). A reference run that fails still fails t.
func Find(t *testing.T, cfg Config) *Report {
	t.Helper()
	cfg.setDefaults()
	if cfg.Target.Setup == nil {
		t.Fatal("explore: Config.Target.Setup is nil")
	}
	if cfg.Target.Standby && !cfg.Target.Manager.LeaderElection {
		t.Fatal("explore: Target.Standby needs Target.Manager.LeaderElection")
	}
	x := &explorer{t: t, cfg: cfg, ignore: map[string]bool{}, name: t.Name(), pkg: callerPackage()}
	began := time.Now()
	rep := &Report{}
	x.ref = x.run(nil)
	if x.ref.fail != nil {
		t.Fatalf("explore: the reference run (no perturbation) fails: %s\n%s", x.ref.fail, x.render(x.ref))
	}
	for _, res := range cfg.Ignore {
		x.ignore[x.ref.names(res)] = true
	}
	x.ref.end, x.ref.deleted = x.ref.jr.endState(x.ignore, cfg.Normalize), x.ref.deletions(x.ignore)
	again := x.run(nil)
	rep.Reference = Summary{Writes: len(x.ref.writes), Deliveries: len(x.ref.deliveries), Duration: x.ref.duration}
	if d := firstDifference(x.ref, again); d != "" {
		rep.Nondeterministic = d
		t.Logf("explore: the reference run is not deterministic (a replay may differ): %s", d)
	}
	sp := space{writes: len(x.ref.writes), standby: cfg.Target.Standby, kinds: cfg.Kinds}
	for _, d := range x.ref.deliveries {
		sp.deliveries = append(sp.deliveries, d.ev.Resource)
	}
	switch {
	case *flagReplay != "":
		p, err := ParsePerturbation(*flagReplay)
		if err != nil {
			t.Fatal(err)
		}
		x.try(rep, p, 0)
	case *flagSeed != 0:
		x.try(rep, sp.generate(*flagSeed), *flagSeed)
	default:
		for _, p := range cfg.Cases {
			if x.try(rep, p, 0); rep.Finding != nil {
				break
			}
		}
		if rep.Finding == nil {
			x.search(rep, sp, began)
		}
	}
	rep.Elapsed = time.Since(began)
	return rep
}

// search makes perturbed runs from seed to seed until the budget is spent or one fails.
func (x *explorer) search(rep *Report, sp space, began time.Time) {
	runs := x.cfg.Runs
	if *flagRuns > 0 {
		runs = *flagRuns
	}
	seed := x.cfg.Seed
	if *flagFirst != 0 {
		seed = *flagFirst
	}
	seen := map[string]bool{}
	for draws := 0; rep.Finding == nil && draws < 50*runs; draws, seed = draws+1, seed+1 {
		if *flagTime > 0 && time.Since(began) > *flagTime || *flagTime == 0 && rep.Runs >= runs {
			return
		}
		p := sp.generate(seed)
		if len(p) == 0 || seen[p.String()] {
			continue // the same run again: nothing to learn
		}
		seen[p.String()] = true
		x.try(rep, p, seed)
	}
}

// try makes one perturbed run and, if it fails, shrinks and replays it into rep.Finding.
func (x *explorer) try(rep *Report, p Perturbation, seed int64) {
	res := x.check(x.run(p))
	rep.Runs++
	rep.PerturbedTime += res.duration
	rep.Log = append(rep.Log, RunLog{Seed: seed, Perturbation: p, Outcome: outcome(res), Duration: res.duration})
	if *flagLog {
		x.t.Logf("explore: seed %d: %s: %s (%v)", seed, p, outcome(res), res.duration.Round(time.Millisecond))
		if *flagSeed != 0 || *flagReplay != "" {
			x.t.Logf("explore: the run's trace:\n%s", strings.Join(x.render(res), "\n"))
		}
	}
	if res.fail == nil {
		return
	}
	f := &Finding{Seed: seed, Perturbation: p, Shrunk: p, Failure: *res.fail, First: res}
	f.Shrunk, res = x.shrink(p, res)
	f.Failure = *res.fail
	again := x.check(x.run(f.Shrunk))
	f.Replayed = again.fail != nil && again.fail.Oracle == res.fail.Oracle && firstDifference(res, again) == ""
	f.Trace = x.render(res)
	f.Command = fmt.Sprintf("go test %s -run '^%s$' -explore.replay='%s'", x.pkg, x.name, f.Shrunk)
	if seed != 0 {
		f.SeedCommand = fmt.Sprintf("go test %s -run '^%s$' -explore.seed=%d", x.pkg, x.name, seed)
	}
	rep.Finding = f
}

// shrink tries smaller perturbations than p that still fail the same oracle.
func (x *explorer) shrink(p Perturbation, res *runResult) (Perturbation, *runResult) {
	for progress := true; progress; {
		progress = false
		for _, q := range shrinkCandidates(p) {
			r := x.check(x.run(q))
			if r.fail != nil && r.fail.Oracle == res.fail.Oracle {
				p, res, progress = q, r, true
				break
			}
		}
	}
	return p, res
}

// check applies the end-state and history oracles to a run that finished.
func (x *explorer) check(res *runResult) *runResult {
	if res.fail != nil || x.ref.end == nil {
		return res
	}
	res.end, res.deleted = res.jr.endState(x.ignore, x.cfg.Normalize), res.deletions(x.ignore)
	if d := diffSnapshots(x.ref.end, res.end, 12); len(d) > 0 {
		res.fail = &Failure{Oracle: "end state", Details: d}
		return res
	}
	if !x.cfg.NoHistory {
		if d := moreDeletions(x.ref.deleted, res.deleted); len(d) > 0 {
			res.fail = &Failure{Oracle: "history", Details: d}
		}
	}
	return res
}

// runResult is what one run leaves.
type runResult struct {
	pert       Perturbation
	jr         *journal
	writes     []writeRec
	deliveries []deliveryRec
	trace      []entry
	fail       *Failure
	end        snapshot
	deleted    map[string]int
	codes      map[int64]int // request Seq → the HTTP status answered
	duration   time.Duration
}

func (r *runResult) names(ref string) string { return r.jr.name(ref) }

// run makes one run of the workload under p, in a synctest bubble of its own.
func (x *explorer) run(p Perturbation) *runResult {
	r := &runner{x: x, pert: p, fired: map[int]bool{}}
	began := time.Now()
	func() {
		defer func() {
			if v := recover(); v != nil {
				r.failed(&Failure{Oracle: "goroutines", Details: []string{fmt.Sprint(v)}})
			}
		}()
		synctest.Test(x.t, func(t *testing.T) {
			r.t = t
			opts := x.cfg.Target.Env
			opts.Server.InMemory = true
			if opts.Timeout <= 0 {
				opts.Timeout = 10 * time.Minute
			}
			if opts.GarbageCollector == nil && !x.cfg.Target.NoGarbageCollector {
				opts.GarbageCollector = &apitest.GCOptions{Delay: 10 * time.Millisecond}
			}
			r.env = controllertest.New(t, opts)
			r.drive()
			r.stop()
			r.codes = map[int64]int{}
			for _, q := range r.env.Server.Requests() {
				r.codes[q.Seq] = q.Code
			}
			if err := r.jr.poll(nil); err != nil {
				r.failed(&Failure{Oracle: "journal", Details: []string{err.Error()}})
			}
		})
	}()
	return &runResult{pert: p, jr: r.jr, writes: r.writes, deliveries: r.deliveries, trace: r.trace, fail: r.fail,
		codes: r.codes, duration: time.Since(began)}
}

func outcome(r *runResult) string {
	if r.fail == nil {
		return "passed"
	}
	return "FAILED " + r.fail.Summary()
}

// firstDifference compares what the controller saw and did in two runs: "" if alike.
func firstDifference(a, b *runResult) string {
	for i := 0; i < max(len(a.writes), len(b.writes)); i++ {
		if i >= len(a.writes) || i >= len(b.writes) {
			return fmt.Sprintf("%d writes, then %d", len(a.writes), len(b.writes))
		}
		if wa, wb := a.writeKey(i), b.writeKey(i); wa != wb {
			return fmt.Sprintf("write %d: %s, then %s", i+1, wa, wb)
		}
	}
	for i := 0; i < max(len(a.deliveries), len(b.deliveries)); i++ {
		if i >= len(a.deliveries) || i >= len(b.deliveries) {
			return fmt.Sprintf("%d deliveries, then %d", len(a.deliveries), len(b.deliveries))
		}
		da, db := a.deliveries[i].ev, b.deliveries[i].ev
		na, nb := a.jr.stableName(da.Resource, da.Namespace, da.Name), b.jr.stableName(db.Resource, db.Namespace, db.Name)
		if da.Type != db.Type || da.Resource != db.Resource || na != nb {
			return fmt.Sprintf("delivery %d: %s %s %s, then %s %s %s", i+1, da.Type, da.Resource, na, db.Type, db.Resource, nb)
		}
	}
	return ""
}

// writeKey is write i of the run as runs compare it (generated names as their prefix).
func (r *runResult) writeKey(i int) string {
	w := r.writes[i].w
	w.Name = r.jr.stableName(w.Resource, w.Namespace, w.Name)
	return w.String() + r.writes[i].action.String()
}
