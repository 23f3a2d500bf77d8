package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestReadGinkgoReport names specs by their containers and text, counts pending as skipped,
// numbers duplicates and reports a failed BeforeSuite.
func TestReadGinkgoReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	os.WriteFile(path, []byte(`[{"SpecReports":[
{"ContainerHierarchyTexts":["Cache","Get"],"LeafNodeType":"It","LeafNodeText":"works","State":"passed","RunTime":1500000000},
{"ContainerHierarchyTexts":["Cache","Get"],"LeafNodeType":"It","LeafNodeText":"works","State":"failed","Failure":{"Message":"boom"}},
{"ContainerHierarchyTexts":["Cache"],"LeafNodeType":"It","LeafNodeText":"later","State":"pending"},
{"ContainerHierarchyTexts":[],"LeafNodeType":"BeforeSuite","State":"failed","Failure":{"Message":"no server"}},
{"ContainerHierarchyTexts":[],"LeafNodeType":"AfterSuite","State":"passed"}]}]`), 0o644)
	specs, suite, err := readGinkgoReport(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []entry{
		{Kind: kindSpec, Name: "Cache Get works", State: statePassed, Seconds: 1.5},
		{Kind: kindSpec, Name: "Cache Get works #2", State: stateFailed, Failure: "boom"},
		{Kind: kindSpec, Name: "Cache later", State: stateSkipped},
	}
	if len(specs) != len(want) {
		t.Fatalf("specs %+v", specs)
	}
	for i := range want {
		if specs[i] != want[i] {
			t.Errorf("spec %d: %+v, want %+v", i, specs[i], want[i])
		}
	}
	if len(suite) != 1 || suite[0].Name != "[BeforeSuite]" || suite[0].State != stateFailed {
		t.Errorf("suite %+v, want the failed BeforeSuite", suite)
	}
}

// TestGoTests counts leaf tests, not the ginkgo runner or a parent of subtests.
func TestGoTests(t *testing.T) {
	events := parseTestEvents(strings.NewReader(`{"Action":"run","Test":"TestSuite"}
{"Action":"output","Test":"TestSuite","Output":"Ran 3 of 3 Specs in 1.0 seconds\n"}
{"Action":"pass","Test":"TestSuite"}
{"Action":"run","Test":"TestA"}
{"Action":"run","Test":"TestA/x"}
{"Action":"output","Test":"TestA/x","Output":"bad\n"}
{"Action":"fail","Test":"TestA/x","Elapsed":0.5}
{"Action":"run","Test":"TestA/y"}
{"Action":"skip","Test":"TestA/y"}
{"Action":"fail","Test":"TestA"}
{"Action":"run","Test":"TestB"}
{"Action":"pass","Test":"TestB"}
not json
{"Action":"run","Test":"TestCrashed"}
`))
	if !ranGinkgo(events) {
		t.Error("ranGinkgo false")
	}
	got := goTests(events)
	want := map[string]string{"TestA/x": stateFailed, "TestA/y": stateSkipped, "TestB": statePassed, "TestCrashed": stateFailed}
	if len(got) != len(want) {
		t.Fatalf("tests %+v", got)
	}
	for _, e := range got {
		if want[e.Name] != e.State {
			t.Errorf("%s: %s, want %s", e.Name, e.State, want[e.Name])
		}
	}
	if got[0].Failure != "bad\n" {
		t.Errorf("failure of TestA/x: %q", got[0].Failure)
	}
}

// TestCheckAndTable: a failure on apitest passes the check only if excepted; the table
// sets apart the failures that pass on kube-apiserver.
func TestCheckAndTable(t *testing.T) {
	pkg := "pkg/cache"
	at := &serverResults{Packages: map[string]*packageResult{pkg: {Entries: []entry{
		{Name: "a", State: stateFailed, Failure: "x\ny"}, {Name: "b", State: stateFailed}, {Name: "c", State: statePassed}, {Name: "d", State: statePassed}}}}}
	real := &serverResults{Packages: map[string]*packageResult{pkg: {Entries: []entry{
		{Name: "a", State: statePassed}, {Name: "b", State: stateFailed}, {Name: "c", State: statePassed}, {Name: "d", State: statePassed}}}}}
	exc := exceptions{excKey(pkg, "b"): {Package: pkg, Name: "b", Reason: "fails on both"}, excKey(pkg, "d"): {Package: pkg, Name: "d", Reason: "stale"}}
	msgs := check(at, real, exc)
	if len(msgs) != 1 || !strings.HasPrefix(msgs[0], "pkg/cache: a (on kube-apiserver: passed)") || !strings.Contains(msgs[0], "\n      x") {
		t.Errorf("check: %q", msgs)
	}
	if stale := staleExceptions(at, exc, []string{pkg}); len(stale) != 1 || !strings.Contains(stale[0], `"d"`) {
		t.Errorf("stale: %q", stale)
	}
	md := buildTable("v0", []string{pkg}, map[string]*serverResults{serverAPITest: at, serverReal: real}, exc).markdown()
	for _, want := range []string{"| pkg/cache | 3 | **1** | 0 |", " | 2 | **2** | 0 |", "Passing on kube-apiserver, failing on apitest: 1.\n- pkg/cache: a: **not in the exceptions**",
		"Failing on both (or not run on kube-apiserver): 1.\n- pkg/cache: b: fails on both"} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
}

func TestReplaceBetweenMarkers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	os.WriteFile(path, []byte("# T\n\n"+markerBegin+"\nold\n"+markerEnd+"\ntail\n"), 0o644)
	if err := replaceBetweenMarkers(path, "new table\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if want := "# T\n\n" + markerBegin + "\nnew table\n" + markerEnd + "\ntail\n"; string(b) != want {
		t.Errorf("got %q, want %q", b, want)
	}
	os.WriteFile(path, []byte("no markers"), 0o644)
	if err := replaceBetweenMarkers(path, "x"); err == nil {
		t.Error("no error without markers")
	}
}

func TestLoadExceptionsRefusesIncompleteEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.json")
	os.WriteFile(path, []byte(`[{"package":"p","name":"n","reason":" "}]`), 0o644)
	if _, err := loadExceptions(path); err == nil {
		t.Error("an exception without a reason loaded")
	}
	os.WriteFile(path, []byte(`[{"package":"p","name":"n","reason":"r"},{"package":"p","name":"n","reason":"r"}]`), 0o644)
	if _, err := loadExceptions(path); err == nil {
		t.Error("a duplicate exception loaded")
	}
	if exc, err := loadExceptions("exceptions.json"); err != nil || len(exc) == 0 {
		t.Errorf("the checked-in exceptions: %d, %v", len(exc), err)
	}
}
