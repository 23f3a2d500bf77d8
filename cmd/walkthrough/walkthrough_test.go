package walkthrough

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// root is the repository's root, from this package's directory.
const root = "../.."

// run runs the scenario in a bubble of its own.
func run(t *testing.T, runs int) *Result {
	t.Helper()
	var res *Result
	synctest.Test(t, func(t *testing.T) {
		var err error
		if res, err = Run(t.Context(), runs); err != nil {
			t.Fatal(err)
		}
	})
	return res
}

// TestWalkthroughIsCurrent regenerates docs/walkthrough.md and docs/walkthrough.svg in
// memory and fails, with a diff, when the checked-in files differ from them (the figures
// aside: Normalize replaces them in both). With INFORMERKIT_WRITE_WALKTHROUGH=1 (make
// walkthrough) it writes the files instead, figures measured over
// INFORMERKIT_WALKTHROUGH_RUNS runs (default 200).
func TestWalkthroughIsCurrent(t *testing.T) {
	write := os.Getenv("INFORMERKIT_WRITE_WALKTHROUGH") == "1"
	runs := 3 // enough to run the figures' code; their values are not compared
	if write {
		runs = 200
		if v := os.Getenv("INFORMERKIT_WALKTHROUGH_RUNS"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				t.Fatalf("INFORMERKIT_WALKTHROUGH_RUNS=%q: want a positive number", v)
			}
			runs = n
		}
	}
	res := run(t, runs)
	md, svg := res.Markdown(filepath.Base(SVGFile)), res.SVG()
	if write {
		for name, content := range map[string]string{MarkdownFile: md, SVGFile: svg} {
			if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s", name)
		}
		return
	}
	for name, want := range map[string]string{MarkdownFile: Normalize(md), SVGFile: svg} {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatalf("%v: run make walkthrough", err)
		}
		if got := Normalize(string(b)); got != want {
			t.Errorf("%s is stale: run make walkthrough. What the code does now (+) against the file (-):\n%s", name, lineDiff(got, want))
		}
	}
}

// TestTheRunIsTheSameOnAnyMachine: with one, two and four Ps (a loaded machine, a laptop,
// a CI runner), the steps' reports come out the same.
func TestTheRunIsTheSameOnAnyMachine(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first string
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		got := run(t, 0).Markdown("x.svg")
		if first == "" {
			first = got
			continue
		}
		if got != first {
			t.Fatalf("GOMAXPROCS=%d: the walkthrough differs from GOMAXPROCS=1's:\n%s", procs, lineDiff(first, got))
		}
	}
}

// TestTheStagesTableNamesRealCode: every function the stages table names is declared in
// the file it names.
func TestTheStagesTableNamesRealCode(t *testing.T) {
	for _, s := range stages {
		decls := declaredFuncs(t, filepath.Join(root, s.file))
		for _, f := range s.funcs {
			if !decls[f] {
				t.Errorf("stage %q: %s declares no %s", s.stage, s.file, f)
			}
		}
	}
}

// declaredFuncs returns the functions ("name") and methods ("Type.name") file declares.
func declaredFuncs(t *testing.T, file string) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		name := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			typ := fd.Recv.List[0].Type
			if s, ok := typ.(*ast.StarExpr); ok {
				typ = s.X
			}
			switch x := typ.(type) {
			case *ast.IndexExpr:
				typ = x.X
			case *ast.IndexListExpr:
				typ = x.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				name = id.Name + "." + name
			}
		}
		out[name] = true
	}
	return out
}

// TestCanonicalOrderIgnoresTiming: two raw orders of the same reports (a listener that ran
// before or after the informer went on) give one canonical order, which keeps each lane's
// order and puts every report after its causes.
func TestCanonicalOrderIgnoresTiming(t *testing.T) {
	action := &report{lane: laneScenario, text: "update"}
	wire := &report{lane: laneWire, text: "MODIFIED", causes: []*report{action}}
	cached := &report{lane: laneInformer, text: "cached", causes: []*report{wire}}
	notifyA := &report{lane: laneInformer, text: "notify A"}
	notifyB := &report{lane: laneInformer, text: "notify B"}
	deliverA := &report{lane: laneController, text: "deliver A", causes: []*report{notifyA}}
	deliverB := &report{lane: laneSlow, text: "deliver B", causes: []*report{notifyB}}
	orders := [][]*report{
		{action, wire, cached, notifyA, deliverA, notifyB, deliverB},
		{action, wire, cached, notifyA, notifyB, deliverB, deliverA},
	}
	var want string
	for i, rs := range orders {
		ordered, err := canonical(rs)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range ordered {
			got = append(got, r.text)
		}
		if i == 0 {
			want = strings.Join(got, ", ")
			if want != "update, MODIFIED, cached, notify A, notify B, deliver A, deliver B" {
				t.Fatalf("canonical order %s", want)
			}
		} else if g := strings.Join(got, ", "); g != want {
			t.Fatalf("raw order %d gives %s, want %s", i, g, want)
		}
	}
	if _, err := canonical([]*report{{lane: laneWire, causes: []*report{}}}); err != nil {
		t.Fatal(err)
	}
	a := &report{lane: laneWire}
	b := &report{lane: laneInformer, causes: []*report{a}}
	a.causes = []*report{b}
	if _, err := canonical([]*report{a, b}); err == nil {
		t.Fatal("a cycle gives no error")
	}
}

// TestNormalizeDropsOnlyTheFigures: two walkthroughs that differ only in their figures
// compare equal, and a change elsewhere does not.
func TestNormalizeDropsOnlyTheFigures(t *testing.T) {
	doc := func(fig, rest string) string {
		return "head\n" + figuresBegin + "\n" + fig + "\n" + figuresEnd + "\n" + rest
	}
	if Normalize(doc("| a | 1µs |", "tail")) != Normalize(doc("| a | 7µs |", "tail")) {
		t.Fatal("figures are compared")
	}
	if Normalize(doc("x", "tail")) == Normalize(doc("x", "tail changed")) {
		t.Fatal("a change outside the figures is ignored")
	}
}

// lineDiff returns the lines that differ between a (-) and b (+), numbered,
// from their longest common subsequence; at most 80 lines.
func lineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for (i < len(x) || j < len(y)) && len(out) < 80 {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			i, j = i+1, j+1
		case j < len(y) && (i == len(x) || lcs[i][j+1] >= lcs[i+1][j]):
			out = append(out, fmt.Sprintf("+%d: %s", j+1, y[j]))
			j++
		default:
			out = append(out, fmt.Sprintf("-%d: %s", i+1, x[i]))
			i++
		}
	}
	return strings.Join(out, "\n")
}
