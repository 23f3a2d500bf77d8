package walkthrough

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// StudyFile holds the exercises: each a diff that breaks a stage, the test that then fails
// and a text of its failure.
const StudyFile = "docs/study.md"

// exercise is one exercise of docs/study.md.
type exercise struct {
	title, pkg, test, want string
	file, diff             string // the file the diff changes, and the diff
}

var exerciseRE = regexp.MustCompile("(?s)### ([^\n]+)\n\n<!-- exercise: pkg=(\\S+) test=(\\S+) want=\"([^\"]*)\" -->\n```diff\n(.*?)```\n")

// exercises parses docs/study.md.
func exercises(t *testing.T) []exercise {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, StudyFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []exercise
	for _, m := range exerciseRE.FindAllStringSubmatch(string(b), -1) {
		e := exercise{title: m[1], pkg: m[2], test: m[3], want: m[4], diff: m[5]}
		for _, line := range strings.Split(e.diff, "\n") {
			if f, ok := strings.CutPrefix(line, "--- a/"); ok {
				e.file = f
				break
			}
		}
		if e.file == "" {
			t.Fatalf("%s: exercise %q: its diff names no file (--- a/path)", StudyFile, e.title)
		}
		out = append(out, e)
	}
	if n := strings.Count(string(b), "<!-- exercise:"); len(out) != n || n != 5 {
		t.Fatalf("%s: %d exercises parsed of %d marked; the page promises five", StudyFile, len(out), n)
	}
	return out
}

// apply writes the exercise's file with its diff applied into a directory of its own and
// returns that copy's path.
func (e exercise) apply(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(root, e.file))
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, e.file)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, src, 0o644); err != nil {
		t.Fatal(err)
	}
	patch := filepath.Join(dir, "exercise.diff")
	if err := os.WriteFile(patch, []byte(e.diff), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "apply", patch)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: exercise %q no longer applies to %s (%v: %s): update its diff", StudyFile, e.title, e.file, err, out)
	}
	return dst
}

// TestStudyExercisesApply: every exercise's diff still applies to the code it changes.
// (That the test it names then fails is TestStudyExercisesFailAsDescribed's.)
func TestStudyExercisesApply(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git to apply the diffs with")
	}
	for _, e := range exercises(t) {
		e.apply(t)
	}
}

// TestStudyExercisesFailAsDescribed applies each exercise to a copy of its file, runs the
// test it names on the module with the copy in place (go test -overlay) and checks that
// the test fails with the text quoted. It runs go test once per exercise, so only make
// study-check runs it (INFORMERKIT_STUDY_CHECK=1).
func TestStudyExercisesFailAsDescribed(t *testing.T) {
	if os.Getenv("INFORMERKIT_STUDY_CHECK") != "1" {
		t.Skip("make study-check runs it (INFORMERKIT_STUDY_CHECK=1)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range exercises(t) {
		t.Run(e.test, func(t *testing.T) {
			overlay := filepath.Join(t.TempDir(), "overlay.json")
			b, _ := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(abs, e.file): e.apply(t)}})
			if err := os.WriteFile(overlay, b, 0o644); err != nil {
				t.Fatal(err)
			}
			// -failfast: a test that waits for what the change prevents fails at its first
			// subtest's deadline instead of at each one's.
			cmd := exec.Command(goBin, "test", "-count=1", "-failfast", "-timeout=5m", "-overlay="+overlay, "-run=^"+e.test+"$", e.pkg)
			cmd.Dir = abs
			out, err := cmd.CombinedOutput()
			switch {
			case err == nil:
				t.Fatalf("exercise %q: %s passes with the change; the page says it fails", e.title, e.test)
			case !strings.Contains(string(out), "--- FAIL: "+e.test):
				t.Fatalf("exercise %q: go test failed, but not in %s (does the change build?):\n%s", e.title, e.test, out)
			case !strings.Contains(string(out), e.want):
				t.Fatalf("exercise %q: %s fails without saying %q:\n%s", e.title, e.test, e.want, out)
			}
			t.Logf("exercise %q: %s fails as described", e.title, e.test)
		})
	}
}
