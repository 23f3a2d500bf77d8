// Package layering_test checks the module's import graph against ARCHITECTURE.md: every
// package must have a row in its table, and may import only what the row allows.
package layering_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const module = "github.com/informerkit/informerkit"

// pkg is what the layering rules need of one package of the module.
type pkg struct {
	Path        string   // relative to the module: "informer", "controller/client"
	Imports     []string // non-test imports inside the module, relative
	TestImports []string // imports of its _test.go files inside the module, relative
}

// rule is one row of ARCHITECTURE.md's table.
type rule struct {
	pattern string   // "informer" or "apitest/internal/..."
	allowed []string // patterns; nil with anything set means anything
	anyBut  []string // for "anything but x": everything except these patterns
	any     bool
}

// testOnly are the packages only tests may import.
var testOnly = []string{"apitest", "apitest/...", "controller/controllertest/...", "internal/testobj", "internal/promtest", "internal/kuberecord"}

func match(pattern, path string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return pattern == path
}

func matchAny(patterns []string, path string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return match(p, path) })
}

// parseRules reads the table of ARCHITECTURE.md: rows of the form
// | `pkg` | what it holds | `a`, `b` | (or "nothing", "anything", "anything but `x`").
func parseRules(r io.Reader) ([]rule, error) {
	var rules []rule
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 3 {
			return nil, fmt.Errorf("table row with %d cells, want 3: %s", len(cells), line)
		}
		ru := rule{pattern: strings.Trim(strings.TrimSpace(cells[0]), "`")}
		allowed := strings.TrimSpace(cells[2])
		switch {
		case allowed == "nothing":
		case allowed == "anything":
			ru.any = true
		case strings.HasPrefix(allowed, "anything but "):
			ru.any = true
			ru.anyBut = quoted(strings.TrimPrefix(allowed, "anything but "))
		default:
			ru.allowed = quoted(allowed)
			if len(ru.allowed) == 0 {
				return nil, fmt.Errorf("row %s: cannot read %q", ru.pattern, allowed)
			}
		}
		rules = append(rules, ru)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rules) == 0 {
		return nil, errors.New("no table rows found")
	}
	return rules, nil
}

// quoted returns the `backquoted` names of s.
func quoted(s string) []string {
	var out []string
	for i, part := range strings.Split(s, "`") {
		if i%2 == 1 {
			out = append(out, part)
		}
	}
	return out
}

// ruleFor returns the most specific rule for path: an exact row before a /... row.
func ruleFor(rules []rule, path string) (rule, bool) {
	for _, r := range rules {
		if r.pattern == path {
			return r, true
		}
	}
	for _, r := range rules {
		if match(r.pattern, path) {
			return r, true
		}
	}
	return rule{}, false
}

// check returns every violation of the rules by the packages, sorted.
func check(rules []rule, pkgs []pkg) []string {
	var bad []string
	for _, p := range pkgs {
		r, ok := ruleFor(rules, p.Path)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s: no row in ARCHITECTURE.md's table", p.Path))
			continue
		}
		for _, imp := range p.Imports {
			switch {
			case match("cmd/...", imp):
				bad = append(bad, fmt.Sprintf("%s imports %s: nothing imports cmd/", p.Path, imp))
			case match("examples/...", imp) && !match("cmd/...", p.Path) && !match("examples/...", p.Path):
				bad = append(bad, fmt.Sprintf("%s imports %s: only cmd/ and examples/ import examples/", p.Path, imp))
			case matchAny(testOnly, imp) && !r.any && !match("apitest/...", p.Path) && !match("controller/controllertest/...", p.Path):
				bad = append(bad, fmt.Sprintf("%s imports %s, which only tests may import", p.Path, imp))
			case r.any:
				if matchAny(r.anyBut, imp) {
					bad = append(bad, fmt.Sprintf("%s imports %s, which its row forbids", p.Path, imp))
				}
			case !matchAny(r.allowed, imp):
				bad = append(bad, fmt.Sprintf("%s imports %s, which its row does not allow (may import: %s)",
					p.Path, imp, strings.Join(r.allowed, ", ")))
			}
		}
		for _, imp := range p.TestImports {
			if match("cmd/...", imp) || (match("examples/...", imp) && !match("examples/...", p.Path) && !match("cmd/...", p.Path)) {
				bad = append(bad, fmt.Sprintf("%s's tests import %s", p.Path, imp))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// goList lists the module's packages with their imports inside the module, and every
// dependency of the module's non-test packages outside it.
func goList(t *testing.T) ([]pkg, []string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-test=false", "-json=ImportPath,Imports,TestImports,XTestImports,Module,Standard", "./...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	var external []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
			Standard                           bool
			Module                             *struct{ Path string }
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.Standard {
			continue
		}
		rel, ok := relative(p.ImportPath)
		if !ok {
			if p.Module != nil {
				external = append(external, p.Module.Path)
			}
			continue
		}
		q := pkg{Path: rel}
		for _, imp := range p.Imports {
			if r, ok := relative(imp); ok {
				q.Imports = append(q.Imports, r)
			}
		}
		for _, imp := range append(p.TestImports, p.XTestImports...) {
			if r, ok := relative(imp); ok && r != rel {
				q.TestImports = append(q.TestImports, r)
			}
		}
		pkgs = append(pkgs, q)
	}
	slices.Sort(external)
	return pkgs, slices.Compact(external)
}

func relative(importPath string) (string, bool) {
	if importPath == module {
		return ".", true
	}
	return strings.CutPrefix(importPath, module+"/")
}

func readRules(t *testing.T) []rule {
	t.Helper()
	f, err := os.Open("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rules, err := parseRules(f)
	if err != nil {
		t.Fatalf("ARCHITECTURE.md: %v", err)
	}
	return rules
}

// TestLayering is the check itself: the module's imports against ARCHITECTURE.md.
func TestLayering(t *testing.T) {
	rules := readRules(t)
	pkgs, _ := goList(t)
	var listed []pkg
	for _, p := range pkgs {
		if p.Path != "." { // this test's own directory has no package, only this file
			listed = append(listed, p)
		}
	}
	if len(listed) < 20 {
		t.Fatalf("go list found only %d packages of the module", len(listed))
	}
	for _, v := range check(rules, listed) {
		t.Error(v)
	}
	// Every row names a package that exists, so that the table does not rot.
	for _, r := range rules {
		if !slices.ContainsFunc(listed, func(p pkg) bool { return match(r.pattern, p.Path) }) {
			t.Errorf("ARCHITECTURE.md lists %s, which is not a package of the module", r.pattern)
		}
	}
}

// TestLayeringCatchesForbiddenImports shows that the check fails on each kind of forbidden
// import, by adding them to the real graph.
func TestLayeringCatchesForbiddenImports(t *testing.T) {
	rules := readRules(t)
	pkgs, _ := goList(t)
	add := map[string]string{
		"indexer":   "informer",                     // a lower stage importing a higher one
		"informer":  "apitest",                      // the toolkit importing the test server
		"apiclient": "apitest/internal/smp",         // ... or its machinery
		"meta":      "apiclient",                    // the object model importing the client
		"workqueue": "cmd/demo",                     // anything importing cmd/
		"reflector": "examples/configmapreplicator", // the toolkit importing an example
	}
	found := map[string]bool{}
	for i, p := range pkgs {
		if imp, ok := add[p.Path]; ok {
			pkgs[i].Imports = append(slices.Clone(p.Imports), imp)
			found[p.Path] = true
		}
	}
	pkgs = append(pkgs, pkg{Path: "newstage", Imports: []string{"meta"}}) // a package without a row
	if len(found) != len(add) {
		t.Fatalf("packages missing from the module's graph: have %v", found)
	}
	bad := strings.Join(check(rules, pkgs), "\n")
	for from, imp := range add {
		if !strings.Contains(bad, from+" imports "+imp) {
			t.Errorf("%s importing %s was not reported; violations:\n%s", from, imp, bad)
		}
	}
	if !strings.Contains(bad, "newstage: no row") {
		t.Errorf("a package without a row was not reported; violations:\n%s", bad)
	}
}

// TestRootModuleHasNoKubernetesDependency: k8s.io modules belong to the nested modules only.
func TestRootModuleHasNoKubernetesDependency(t *testing.T) {
	_, external := goList(t)
	allowed := append([]string{"github.com/gorilla/websocket", "golang.org/x/time", "go.yaml.in/yaml/v3"}, celModules...)
	for _, m := range external {
		if strings.HasPrefix(m, "k8s.io/") || !slices.Contains(allowed, m) {
			t.Errorf("the root module's packages depend on %s, which CONTRIBUTING.md (Dependencies) does not allow", m)
		}
	}
}

// celModules are the CEL implementation apitest evaluates x-kubernetes-validations rules
// with (README.md, "Dependencies") and the modules it needs. Only the test server may
// depend on them: TestOnlyTheTestServerDependsOnCEL.
var celModules = []string{"github.com/google/cel-go", "cel.dev/expr", "github.com/antlr4-go/antlr/v4",
	"github.com/stoewer/go-strcase", "golang.org/x/exp", "golang.org/x/text", "google.golang.org/protobuf",
	"google.golang.org/genproto/googleapis/api", "google.golang.org/genproto/googleapis/rpc"}

// serverSide are the packages that may pull the CEL implementation in: the test server,
// the workbench built on it, and the commands that run it.
var serverSide = []string{"apitest", "apitest/...", "controller/controllertest/...", "cmd/..."}

// TestOnlyTheTestServerDependsOnCEL: no package of the toolkit (nor the examples) links
// the CEL implementation, not even through another package of the module.
func TestOnlyTheTestServerDependsOnCEL(t *testing.T) {
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var toolkit []string
	for _, p := range strings.Fields(string(out)) {
		if rel, ok := relative(p); ok && !matchAny(serverSide, rel) {
			toolkit = append(toolkit, p)
		}
	}
	if len(toolkit) < 20 {
		t.Fatalf("only %d toolkit packages", len(toolkit))
	}
	args := append([]string{"list", "-deps", "-test=false", "-f", "{{.ImportPath}} {{with .Module}}{{.Path}}{{end}}"}, toolkit...)
	out, err = exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, mod, _ := strings.Cut(line, " ")
		if slices.Contains(celModules, mod) {
			t.Errorf("the toolkit depends on %s (module %s), which only the test server may", pkg, mod)
		}
	}
	// The check sees the dependency where it is: apitest does pull it in.
	out, err = exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", module+"/apitest").Output()
	if err != nil {
		t.Fatalf("go list -deps apitest: %v", err)
	}
	if !slices.Contains(strings.Fields(string(out)), "github.com/google/cel-go") {
		t.Error("apitest does not depend on cel-go: the check above checks nothing")
	}
}
