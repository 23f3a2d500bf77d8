package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// exception is a spec or test that cannot pass on apitest, with the reason.
type exception struct {
	Package string `json:"package"`
	Name    string `json:"name"`
	Reason  string `json:"reason"`
}

type exceptions map[string]exception // by package + "\x00" + name

func excKey(pkg, name string) string { return pkg + "\x00" + name }

func loadExceptions(path string) (exceptions, error) {
	exc := exceptions{}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return exc, nil
	} else if err != nil {
		return nil, err
	}
	var list []exception
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, e := range list {
		if e.Package == "" || e.Name == "" || strings.TrimSpace(e.Reason) == "" {
			return nil, fmt.Errorf("%s: entry %d needs package, name and reason", path, i)
		}
		if _, dup := exc[excKey(e.Package, e.Name)]; dup {
			return nil, fmt.Errorf("%s: %s %q is listed twice", path, e.Package, e.Name)
		}
		exc[excKey(e.Package, e.Name)] = e
	}
	return exc, nil
}

// check returns a line for every entry that failed on apitest and is not an exception.
func check(at, real *serverResults, exc exceptions) []string {
	var out []string
	for _, pkg := range sortedKeys(at.Packages) {
		for _, e := range at.Packages[pkg].Entries {
			if e.State != stateFailed {
				continue
			}
			if _, ok := exc[excKey(pkg, e.Name)]; ok {
				continue
			}
			line := fmt.Sprintf("%s: %s", pkg, e.Name)
			if real != nil && real.Packages[pkg] != nil {
				line += fmt.Sprintf(" (on %s: %s)", serverReal, orNone(real.Packages[pkg].state(e.Name)))
			}
			out = append(out, line+"\n      "+firstLine(e.Failure))
		}
	}
	return out
}

// staleExceptions names the exceptions of the packages that ran that passed on apitest.
func staleExceptions(at *serverResults, exc exceptions, pkgs []string) []string {
	var out []string
	for _, e := range exc {
		if !slices.Contains(pkgs, e.Package) || at.Packages[e.Package] == nil {
			continue
		}
		if st := at.Packages[e.Package].state(e.Name); st == statePassed {
			out = append(out, fmt.Sprintf("the exception %s: %q passed on apitest", e.Package, e.Name))
		}
	}
	slices.Sort(out)
	return out
}

// table is the comparison written into docs/apitest.md.
type table struct {
	version  string
	packages []string
	results  map[string]*serverResults
	exc      exceptions
}

func buildTable(version string, pkgs []string, results map[string]*serverResults, exc exceptions) table {
	return table{version: version, packages: pkgs, results: results, exc: exc}
}

// markdown renders the table: per package, passed/failed/skipped and times on each server,
// then the specs that pass on the real server and fail on apitest, and those that fail on
// both.
func (t table) markdown() string {
	var b strings.Builder
	servers := []string{serverReal, serverAPITest}
	fmt.Fprintf(&b, "controller-runtime %s, `make crsuites`", t.version)
	for _, s := range servers {
		if r := t.results[s]; r != nil {
			fmt.Fprintf(&b, "; %s run %s", s, r.Time.Format("2006-01-02"))
		}
	}
	b.WriteString(". Time is the test binary's wall time; CPU the server's process CPU (kube-apiserver + etcd, or apitest serve).\n\n")
	b.WriteString("| package | kube-apiserver passed | failed | skipped | time | CPU | apitest passed | failed | skipped | time | CPU |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	type sum struct {
		p, f, s int
		t, c    float64
	}
	totals := map[string]*sum{serverReal: {}, serverAPITest: {}}
	for _, pkg := range t.packages {
		fmt.Fprintf(&b, "| %s", pkg)
		for _, s := range servers {
			r := t.results[s]
			if r == nil || r.Packages[pkg] == nil {
				b.WriteString(" | – | – | – | – | –")
				continue
			}
			pr := r.Packages[pkg]
			p, f, sk := pr.counts()
			tt := totals[s]
			tt.p, tt.f, tt.s, tt.t, tt.c = tt.p+p, tt.f+f, tt.s+sk, tt.t+pr.Seconds, tt.c+pr.ServerCPUSeconds
			fmt.Fprintf(&b, " | %d | %s | %d | %.0f s | %.0f s", p, bold(f), sk, pr.Seconds, pr.ServerCPUSeconds)
		}
		b.WriteString(" |\n")
	}
	b.WriteString("| **total**")
	for _, s := range servers {
		tt := totals[s]
		if t.results[s] == nil {
			b.WriteString(" | – | – | – | – | –")
			continue
		}
		fmt.Fprintf(&b, " | %d | %s | %d | %.0f s | %.0f s", tt.p, bold(tt.f), tt.s, tt.t, tt.c)
	}
	b.WriteString(" |\n")
	onlyAPITest, both := t.diff()
	fmt.Fprintf(&b, "\nPassing on kube-apiserver, failing on apitest: %d.\n", len(onlyAPITest))
	for _, l := range onlyAPITest {
		b.WriteString(l)
	}
	fmt.Fprintf(&b, "\nFailing on both (or not run on kube-apiserver): %d.\n", len(both))
	for _, l := range both {
		b.WriteString(l)
	}
	return b.String()
}

// diff lists the entries failing on apitest: those that pass on the real server, and the
// others, each with its exception's reason.
func (t table) diff() (onlyAPITest, both []string) {
	at, real := t.results[serverAPITest], t.results[serverReal]
	if at == nil {
		return nil, nil
	}
	for _, pkg := range t.packages {
		pr := at.Packages[pkg]
		if pr == nil {
			continue
		}
		for _, e := range pr.Entries {
			if e.State != stateFailed {
				continue
			}
			reason := "**not in the exceptions**"
			if x, ok := t.exc[excKey(pkg, e.Name)]; ok {
				reason = x.Reason
			}
			line := fmt.Sprintf("- %s: %s: %s\n", pkg, mdEscape(e.Name), reason)
			if real != nil && real.Packages[pkg] != nil && real.Packages[pkg].state(e.Name) == statePassed {
				onlyAPITest = append(onlyAPITest, line)
			} else {
				both = append(both, line)
			}
		}
	}
	return onlyAPITest, both
}

const (
	markerBegin = "<!-- crsuites:begin (make crsuites writes this part) -->"
	markerEnd   = "<!-- crsuites:end -->"
)

// replaceBetweenMarkers writes text between the crsuites markers of a markdown file.
func replaceBetweenMarkers(path, text string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	i, j := bytes.Index(b, []byte(markerBegin)), bytes.Index(b, []byte(markerEnd))
	if i < 0 || j < i {
		return fmt.Errorf("%s: no %q ... %q markers", path, markerBegin, markerEnd)
	}
	var out bytes.Buffer
	out.Write(b[:i+len(markerBegin)])
	out.WriteString("\n")
	out.WriteString(text)
	out.Write(b[j:])
	return os.WriteFile(path, out.Bytes(), 0o644)
}

func bold(n int) string {
	if n == 0 {
		return "0"
	}
	return fmt.Sprintf("**%d**", n)
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;").Replace(s)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "absent"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
