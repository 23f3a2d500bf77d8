package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The examples' manifests are what crdgen writes from their types today (go generate
// ./examples/... rewrites them).
func TestExampleManifestsAreCurrent(t *testing.T) {
	for _, dir := range []string{"deployment", "configmapreplicator", "widgets", "nodepool"} {
		var stderr bytes.Buffer
		path := filepath.Join("..", "..", "examples", dir)
		if code := run([]string{"-C", path, "-out", "crd.yaml", "-check", "."}, &bytes.Buffer{}, &stderr); code != 0 {
			t.Errorf("examples/%s/crd.yaml: exit %d: %s", dir, code, stderr.String())
		}
	}
}

func TestWriteCheckAndPrint(t *testing.T) {
	out := filepath.Join(t.TempDir(), "crd.yaml")
	pkg := "../../kinds/crdgen/testdata/api/v2"
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-out", out, "-check", pkg}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "is not up to date") {
		t.Errorf("-check of a missing file: exit %d, %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"-out", out, pkg}, &stdout, &stderr); code != 0 {
		t.Fatalf("write: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "warning:") || !strings.Contains(stderr.String(), "+unknownmarker=1") {
		t.Errorf("warnings not printed: %q", stderr.String())
	}
	written, _ := os.ReadFile(out)
	if code := run([]string{"-out", out, "-check", pkg}, &stdout, &stderr); code != 0 {
		t.Errorf("-check right after writing: exit %d", code)
	}
	if code := run([]string{pkg}, &stdout, &stderr); code != 0 || !bytes.Equal(stdout.Bytes(), written) {
		t.Errorf("print: exit %d, %d bytes, want the %d written", code, stdout.Len(), len(written))
	}
	for _, args := range [][]string{{"-check", pkg}, {"-nosuchflag"}} {
		if code := run(args, &stdout, &stderr); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	stderr.Reset()
	if code := run([]string{"../../meta"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "no type is marked +kind") {
		t.Errorf("a package without kinds: exit %d, %s", code, stderr.String())
	}
}
