package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// Entry kinds: a ginkgo spec (an It), a plain Go test, or a failure of the suite itself
// (BeforeSuite, AfterSuite, a binary that crashed before writing its report).
const (
	kindSpec  = "spec"
	kindTest  = "test"
	kindSuite = "suite"
)

// Entry states, as ginkgo names them (pending specs, PIt, count as skipped; the aborted
// states as failed).
const (
	statePassed  = "passed"
	stateFailed  = "failed"
	stateSkipped = "skipped"
)

// entry is one spec or test of one package on one server.
type entry struct {
	Kind    string  `json:"kind"`
	Name    string  `json:"name"`
	State   string  `json:"state"`
	Seconds float64 `json:"seconds"`
	Failure string  `json:"failure,omitempty"`
}

// packageResult is one package's run on one server.
type packageResult struct {
	Seconds          float64  `json:"seconds"`
	TestCPUSeconds   float64  `json:"testCPUSeconds"`
	ServerCPUSeconds float64  `json:"serverCPUSeconds"`
	Notes            []string `json:"notes,omitempty"`
	Entries          []entry  `json:"entries"`
}

func (p *packageResult) counts() (passed, failed, skipped int) {
	for _, e := range p.Entries {
		switch e.State {
		case statePassed:
			passed++
		case stateSkipped:
			skipped++
		default:
			failed++
		}
	}
	return
}

func (p *packageResult) failed() int { _, f, _ := p.counts(); return f }

// state returns the state of the entry named name ("" if the package has none).
func (p *packageResult) state(name string) string {
	for _, e := range p.Entries {
		if e.Name == name {
			return e.State
		}
	}
	return ""
}

// serverResults are every package's results on one server.
type serverResults struct {
	Server   string                    `json:"server"`
	Version  string                    `json:"controllerRuntime"`
	Time     time.Time                 `json:"time"`
	Packages map[string]*packageResult `json:"packages"`
}

func loadResults(path string) (*serverResults, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r serverResults
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

func (r *serverResults) save(path string) error {
	r.Time = time.Now().UTC().Truncate(time.Second)
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// ginkgoReport is the part of ginkgo's JSON report (types.Report) read here.
type ginkgoReport struct {
	SpecReports []struct {
		ContainerHierarchyTexts []string
		LeafNodeType            string
		LeafNodeText            string
		State                   string
		RunTime                 time.Duration
		Failure                 struct{ Message string }
	}
}

// readGinkgoReport returns the specs of a ginkgo JSON report, named by their containers'
// texts and their own ("Cache Suite Informer should ..."; a second spec of the same name
// gets " #2"), and the suite nodes that failed (a failed BeforeSuite skips every spec).
func readGinkgoReport(path string) (specs, suite []entry, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var reports []ginkgoReport
	if err := json.Unmarshal(b, &reports); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	seen := map[string]int{}
	for _, r := range reports {
		for _, s := range r.SpecReports {
			e := entry{Kind: kindSpec, State: specState(s.State), Seconds: s.RunTime.Seconds(), Failure: trim(s.Failure.Message)}
			if s.LeafNodeType != "It" {
				if e.State != stateFailed {
					continue
				}
				e.Kind, e.Name = kindSuite, "["+s.LeafNodeType+"]"
				suite = append(suite, e)
				continue
			}
			e.Name = strings.Join(append(slices.Clone(s.ContainerHierarchyTexts), s.LeafNodeText), " ")
			seen[e.Name]++
			if n := seen[e.Name]; n > 1 {
				e.Name += fmt.Sprintf(" #%d", n)
			}
			specs = append(specs, e)
		}
	}
	return specs, suite, nil
}

func specState(s string) string {
	switch s {
	case "passed":
		return statePassed
	case "skipped", "pending":
		return stateSkipped
	}
	return stateFailed // failed, panicked, interrupted, aborted, timedout
}

// trim bounds a failure message kept in the results.
func trim(s string) string {
	const max = 2000
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}

// testEvent is one line of test2json's output.
type testEvent struct {
	Action  string
	Test    string
	Elapsed float64
	Output  string
}

func parseTestEvents(r io.Reader) []testEvent {
	var out []testEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e testEvent
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	_, _ = io.Copy(io.Discard, r) // a line over the limit: let test2json finish
	return out
}

// ranGinkgo reports whether a ginkgo suite ran (its summary line appeared).
func ranGinkgo(events []testEvent) bool {
	return slices.ContainsFunc(events, func(e testEvent) bool { return isGinkgoSummary(e.Output) })
}

func isGinkgoSummary(s string) bool {
	return strings.HasPrefix(s, "Ran ") && strings.Contains(s, " Specs in ")
}

// goTests returns the plain Go tests of the events: every leaf test (one without
// subtests), except the tests that run a ginkgo suite (their specs are counted from the
// report) and Examples' parents.
func goTests(events []testEvent) []entry {
	runners := map[string]bool{}
	output := map[string]*strings.Builder{}
	var order []string
	final := map[string]testEvent{}
	for _, e := range events {
		if e.Test == "" {
			continue
		}
		switch e.Action {
		case "run":
			order = append(order, e.Test)
		case "output":
			if isGinkgoSummary(e.Output) {
				runners[e.Test] = true
			}
			b := output[e.Test]
			if b == nil {
				b = &strings.Builder{}
				output[e.Test] = b
			}
			if b.Len() < 4000 {
				b.WriteString(e.Output)
			}
		case "pass", "fail", "skip":
			final[e.Test] = e
		}
	}
	out := []entry{}
	for _, name := range order {
		if runners[name] || slices.ContainsFunc(order, func(o string) bool { return strings.HasPrefix(o, name+"/") }) {
			continue
		}
		e := entry{Kind: kindTest, Name: name, State: stateFailed}
		if f, ok := final[name]; ok {
			e.Seconds = f.Elapsed
			switch f.Action {
			case "pass":
				e.State = statePassed
			case "skip":
				e.State = stateSkipped
			}
		}
		if e.State == stateFailed && output[name] != nil {
			e.Failure = trim(output[name].String())
		}
		out = append(out, e)
	}
	return out
}
