package layering_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The size limits of CONTRIBUTING.md: a library file of at most maxFileLines lines and a
// function of at most maxFuncLines, unless a comment says why it is kept whole, and a
// package doc of at most maxDocLines. A newcomer
// reads a file in one sitting and a function on one screen; the exceptions carry their
// reason where the reader meets them.
const (
	maxFileLines = 600
	maxFuncLines = 100
	// maxDocLines bounds a package's doc comment: `go doc` of a package fits on a screen,
	// and figures belong in bench/README.md, details in docs/.
	maxDocLines = 30
	// keptWhole starts the reason: in a function's doc comment, or in any comment of a file.
	keptWhole = "Kept whole"
)

// libraryFiles returns the root module's non-test Go files, skipping nested modules.
func libraryFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bin") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != "." {
				return filepath.SkipDir // a nested module: bench, e2e, compat, examples/otel
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// oversized reports the file's line count if over the limit without a reason, every
// function over its limit whose doc comment gives none, and a package doc over its limit
// (as a function named "package doc").
func oversized(fset *token.FileSet, path string, src []byte) (fileLines int, funcs []string, err error) {
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return 0, nil, err
	}
	if f.Doc != nil && fset.Position(f.Doc.End()).Line-fset.Position(f.Doc.Pos()).Line+1 > maxDocLines {
		funcs = append(funcs, "package doc")
	}
	if n := fset.File(f.Pos()).LineCount(); n > maxFileLines && !strings.Contains(string(src), "// "+keptWhole) {
		fileLines = n
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
		if n > maxFuncLines && (fd.Doc == nil || !strings.Contains(fd.Doc.Text(), keptWhole)) {
			funcs = append(funcs, fd.Name.Name)
		}
	}
	return fileLines, funcs, nil
}

func TestFilesAndFunctionsWithinTheirLimits(t *testing.T) {
	fset := token.NewFileSet()
	for _, path := range libraryFiles(t) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		n, funcs, err := oversized(fset, path, src)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			t.Errorf("%s: %d lines, over %d with no %q comment saying why", path, n, maxFileLines, keptWhole)
		}
		for _, fn := range funcs {
			if fn == "package doc" {
				t.Errorf("%s: the package doc is over %d lines", path, maxDocLines)
				continue
			}
			t.Errorf("%s: func %s is over %d lines and its doc comment does not say why (%q ...)", path, fn, maxFuncLines, keptWhole)
		}
	}
}

func TestLimitsCatchALongFunction(t *testing.T) {
	body := strings.Repeat("\t_ = 1\n", maxFuncLines)
	long := "package p\n\n// f does nothing.\nfunc f() {\n" + body + "}\n"
	if _, funcs, err := oversized(token.NewFileSet(), "p.go", []byte(long)); err != nil || len(funcs) != 1 {
		t.Errorf("a %d-line function: flagged %v, %v; want f", maxFuncLines+2, funcs, err)
	}
	kept := "package p\n\n// f does nothing.\n//\n// " + keptWhole + ": one loop.\nfunc f() {\n" + body + "}\n"
	if _, funcs, err := oversized(token.NewFileSet(), "p.go", []byte(kept)); err != nil || len(funcs) != 0 {
		t.Errorf("a long function with its reason: flagged %v, %v", funcs, err)
	}
	doc := strings.Repeat("// p.\n", maxDocLines+1) + "package p\n"
	if _, funcs, err := oversized(token.NewFileSet(), "p.go", []byte(doc)); err != nil || len(funcs) != 1 {
		t.Errorf("a %d-line package doc: flagged %v, %v", maxDocLines+1, funcs, err)
	}
	file := "package p\n" + strings.Repeat("\n", maxFileLines)
	if n, _, err := oversized(token.NewFileSet(), "p.go", []byte(file)); err != nil || n == 0 {
		t.Errorf("a %d-line file: not flagged (%v)", maxFileLines+1, err)
	}
}
