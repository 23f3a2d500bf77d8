package explore

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/informerkit/informerkit/apitest"
)

// Failure is what an oracle found wrong in a run.
type Failure struct {
	// Oracle names the oracle: "invariant", "end state", "history", "liveness",
	// "goroutines" (goroutines left when the run ended), "workload" (a step failed).
	Oracle  string
	Details []string
	// At is when (fake time since the run began) it was found.
	At time.Duration
	// Change is the change after which an invariant failed.
	Change *apitest.Change
}

// Summary is the failure in one line.
func (f *Failure) Summary() string {
	if len(f.Details) == 0 {
		return f.Oracle
	}
	s := f.Oracle + ": " + f.Details[0]
	if len(f.Details) > 1 {
		s += fmt.Sprintf(" (and %d more)", len(f.Details)-1)
	}
	return s
}

func (f *Failure) String() string { return f.Oracle + ": " + strings.Join(f.Details, "; ") }

// Summary describes the reference run.
type Summary struct {
	// Writes and Deliveries count the controller's writes and the events delivered to it.
	Writes, Deliveries int
	// Duration is the wall-clock time the run took.
	Duration time.Duration
}

// Finding is a perturbation that makes an oracle fail.
type Finding struct {
	// Seed is the seed of the run that found it (0 for a -explore.replay).
	Seed int64
	// Perturbation is the run's; Shrunk the smallest one found that still fails.
	Perturbation, Shrunk Perturbation
	// Failure is what the shrunk perturbation's run failed.
	Failure Failure
	// Replayed: the shrunk perturbation, run once more, failed again with the same writes
	// and deliveries.
	Replayed bool
	// Trace is the shrunk run's trace: the steps, the events delivered to the controller,
	// its writes with what its view held beside what the server held, the perturbation's
	// actions.
	Trace []string
	// Command replays the shrunk perturbation; SeedCommand the seed's run.
	Command, SeedCommand string
	// First is the run of Perturbation.
	First *runResult
}

// Report is what Run found.
type Report struct {
	// Runs counts the perturbed runs; Elapsed is the wall-clock time of the whole
	// exploration, PerturbedTime that of the perturbed runs.
	Runs                   int
	Elapsed, PerturbedTime time.Duration
	Reference              Summary
	// Nondeterministic says how two reference runs differed ("" if they did not).
	Nondeterministic string
	// Finding is the failure found, nil if none.
	Finding *Finding
	// Log has one line per perturbed run, in order (the shrinking's runs not included).
	Log []RunLog
}

// RunLog is one perturbed run of an exploration.
type RunLog struct {
	Seed         int64
	Perturbation Perturbation
	// Outcome is "passed" or "FAILED " and the failure's summary.
	Outcome  string
	Duration time.Duration
}

func (r *Report) String() string {
	var b strings.Builder
	f := r.Finding
	if f == nil {
		fmt.Fprintf(&b, "explore: %d perturbed runs in %v, no failure (reference: %d writes, %d events delivered)",
			r.Runs, r.Elapsed.Round(time.Millisecond), r.Reference.Writes, r.Reference.Deliveries)
		return b.String()
	}
	fmt.Fprintf(&b, "explore: %s after %d perturbed runs (%v)\n", f.Failure.Oracle, r.Runs, r.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(&b, "  perturbation: %s", f.Shrunk)
	if f.Shrunk.String() != f.Perturbation.String() {
		fmt.Fprintf(&b, " (shrunk from %s)", f.Perturbation)
	}
	fmt.Fprintf(&b, "\n  kinds: %v\n", f.Shrunk.Kinds())
	for _, d := range f.Failure.Details {
		fmt.Fprintf(&b, "  - %s\n", d)
	}
	replay := "replayed: the same failure, the same writes and deliveries"
	if !f.Replayed {
		replay = "NOT replayed identically: run it again to see (the target may not be deterministic)"
	}
	fmt.Fprintf(&b, "  %s\n  replay: %s\n", replay, f.Command)
	if f.SeedCommand != "" {
		fmt.Fprintf(&b, "  seed %d: %s\n", f.Seed, f.SeedCommand)
	}
	if r.Nondeterministic != "" {
		fmt.Fprintf(&b, "  warning: two reference runs differed: %s\n", r.Nondeterministic)
	}
	b.WriteString("  trace (fake time):\n")
	for _, l := range f.Trace {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

// render is a run's trace: the notes, the deliveries and the writes in order, each write
// with the changes the controller's view had not seen yet.
func (x *explorer) render(res *runResult) []string {
	type line struct {
		at   time.Duration
		seq  int
		text []string
	}
	var lines []line
	add := func(at time.Duration, seq int, text ...string) {
		lines = append(lines, line{at, seq, text})
	}
	for _, e := range res.trace {
		add(e.at, e.seq, e.text)
	}
	for _, d := range res.deliveries {
		add(d.at, d.seq, fmt.Sprintf("%s sees #%d: %s %s %s (rv %s)", d.proc, d.n, d.ev.Type, d.ev.Resource, objectName(d.ev.Namespace, d.ev.Name), d.ev.RV))
	}
	for _, w := range res.writes {
		add(w.at, w.seq, x.renderWrite(res, w)...)
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i].seq < lines[j].seq })
	var out []string
	for _, l := range lines {
		out = append(out, fmt.Sprintf("%9.3fs %s", l.at.Seconds(), l.text[0]))
		for _, t := range l.text[1:] {
			out = append(out, "           "+t)
		}
	}
	if len(out) > 400 {
		out = append(out[:200], append([]string{fmt.Sprintf("... %d lines ...", len(out)-400)}, out[len(out)-200:]...)...)
	}
	return out
}

// renderWrite is a write, what the process's view held beside what the server held.
func (x *explorer) renderWrite(res *runResult, w writeRec) []string {
	var serverRV uint64
	fmt.Sscan(w.w.ServerRV, &serverRV)
	what := w.w.String()
	if c, ok := res.created(w); ok {
		what += c.Name + fmt.Sprintf(" (rv %d)", c.RV)
	}
	head := fmt.Sprintf("%s writes #%d: %s", w.proc, w.n, what)
	if w.action != apitest.WriteProceed {
		head += " [" + w.action.String() + "]"
	} else if code := res.codes[w.w.Seq]; code >= 300 {
		head += fmt.Sprintf(" → %d", code)
	}
	out := []string{head}
	var views []string
	var unseen []string
	for _, res0 := range sortedKeys(w.view) {
		rv := w.view[res0]
		views = append(views, fmt.Sprintf("%s@%d", res0, rv))
		for _, c := range res.jr.between(rv, serverRV, map[string]bool{res0: true}) {
			unseen = append(unseen, fmt.Sprintf("%s %s %s (rv %d)", c.Type, c.Resource, objectName(c.Namespace, c.Name), c.RV))
		}
	}
	out = append(out, fmt.Sprintf("view: %s; server at rv %d", strings.Join(views, ", "), serverRV))
	if len(unseen) > 0 {
		if len(unseen) > 6 {
			unseen = append(unseen[:6], fmt.Sprintf("and %d more", len(unseen)-6))
		}
		out = append(out, "not seen yet: "+strings.Join(unseen, ", "))
	}
	if w.w.Name != "" {
		k := objKey{w.w.Resource, w.w.Namespace, w.w.Name}
		viewRV, ok := w.view[w.w.Resource]
		if !ok {
			viewRV = serverRV
		}
		v, vok := res.jr.at(k, viewRV)
		s, sok := res.jr.at(k, serverRV)
		if vok != sok || string(v) != string(s) {
			out = append(out, "the object in the view: "+briefObject(v, vok), "the object on the server: "+briefObject(s, sok))
		}
	}
	return out
}

func briefObject(raw json.RawMessage, ok bool) string {
	if !ok {
		return "(none)"
	}
	var m map[string]any
	json.Unmarshal(raw, &m)
	normalizeObject(m)
	if md, _ := m["metadata"].(map[string]any); md != nil {
		delete(md, "namespace")
		delete(md, "name")
		if len(md) == 0 {
			delete(m, "metadata")
		}
	}
	delete(m, "apiVersion")
	delete(m, "kind")
	b, _ := json.Marshal(m)
	if s := string(b); len(s) > 300 {
		return s[:297] + "..."
	}
	return string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// created is the change a create made: a create names its object in its body, so the first
// object its resource gained in its namespace after the write arrived is taken for it (the
// driver lets one write at a time in).
func (r *runResult) created(w writeRec) (apitest.Change, bool) {
	if w.w.Name != "" || w.w.Verb != apitest.VerbCreate {
		return apitest.Change{}, false
	}
	var serverRV uint64
	fmt.Sscan(w.w.ServerRV, &serverRV)
	for _, c := range r.jr.between(serverRV, serverRV+8, map[string]bool{w.w.Resource: true}) {
		if c.Type == "ADDED" && c.Namespace == w.w.Namespace {
			return c, true
		}
	}
	return apitest.Change{}, false
}
