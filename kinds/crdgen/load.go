package crdgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// listedPackage is what `go list -json` says of a package.
type listedPackage struct {
	ImportPath string
	Name       string
	Dir        string
	Export     string
	GoFiles    []string
	Standard   bool
	DepOnly    bool
	Error      *struct{ Err string }
}

// program holds the type-checked packages of a Generate call and the syntax of those whose
// comments were read.
type program struct {
	fset    *token.FileSet
	listed  map[string]*listedPackage
	roots   []*listedPackage
	exports types.Importer            // every dependency, from export data
	checked map[string]*types.Package // root packages, from source
	syntax  map[string]*pkgSyntax     // by import path, parsed on first use
	goTool  string
	workDir string
}

// pkgSyntax indexes the type declarations of one package's files.
type pkgSyntax struct {
	files []*ast.File
	types map[string]typeDecl
}

// typeDecl is a type declaration with its doc comment (on the spec, or on a declaration
// that holds only this spec).
type typeDecl struct {
	spec *ast.TypeSpec
	doc  *ast.CommentGroup
}

// load lists patterns with `go list -deps -export` in dir (compiling what is needed, from
// the build cache when it can) and prepares an importer over the export data. Types come
// from the export data; comments and markers from the packages' source files, parsed only
// for the packages whose types are walked.
func load(dir, goTool string, patterns []string) (*program, error) {
	if goTool == "" {
		goTool = "go"
	}
	args := append([]string{"list", "-deps", "-export", "-e",
		"-json=ImportPath,Name,Dir,Export,GoFiles,Standard,DepOnly,Error"}, patterns...)
	cmd := exec.Command(goTool, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("crdgen: go list %s: %v: %s", strings.Join(patterns, " "), err, strings.TrimSpace(stderr.String()))
	}
	p := &program{fset: token.NewFileSet(), listed: map[string]*listedPackage{}, syntax: map[string]*pkgSyntax{},
		checked: map[string]*types.Package{}, goTool: goTool, workDir: dir}
	dec := json.NewDecoder(&stdout)
	var errs []error
	for {
		var lp listedPackage
		if err := dec.Decode(&lp); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("crdgen: reading go list's output: %w", err)
		}
		if lp.Error != nil && (lp.DepOnly || len(lp.GoFiles) == 0) {
			errs = append(errs, fmt.Errorf("crdgen: package %s: %s", lp.ImportPath, lp.Error.Err))
			continue
		}
		// A root package with files is type-checked from its source, so that it need not
		// build: before its first generation, its //go:embed of the manifest has nothing
		// to embed (go list's error); a real mistake is the type checker's error.
		pkg := lp
		p.listed[lp.ImportPath] = &pkg
		if !lp.DepOnly {
			p.roots = append(p.roots, &pkg)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(p.roots) == 0 {
		return nil, fmt.Errorf("crdgen: no package matches %s", strings.Join(patterns, " "))
	}
	p.exports = importer.ForCompiler(p.fset, "gc", func(path string) (io.ReadCloser, error) {
		lp := p.listed[path]
		if lp == nil || lp.Export == "" {
			return nil, fmt.Errorf("crdgen: no export data for %s", path)
		}
		return os.Open(lp.Export)
	})
	return p, nil
}

// Import implements types.Importer: a root package from its source (checked in go list's
// order, dependencies first), any other from its export data.
func (p *program) Import(path string) (*types.Package, error) {
	if pkg, ok := p.checked[path]; ok {
		return pkg, nil
	}
	return p.exports.Import(path)
}

// pkg returns the root package path, type-checked from its source files.
func (p *program) pkg(path string) (*types.Package, error) {
	if pkg, ok := p.checked[path]; ok {
		return pkg, nil
	}
	ps, err := p.parse(path)
	if err != nil {
		return nil, err
	}
	var errs []error
	conf := types.Config{Importer: p, Error: func(err error) {
		if len(errs) < 10 {
			errs = append(errs, err)
		}
	}}
	pkg, _ := conf.Check(path, p.fset, ps.files, nil)
	if len(errs) > 0 {
		return nil, fmt.Errorf("crdgen: type-checking %s: %w", path, errors.Join(errs...))
	}
	p.checked[path] = pkg
	return pkg, nil
}

// decl returns the declaration of the named type path.name, parsing the package's files
// on first use; ok is false for a package without source (none in module mode).
func (p *program) decl(path, name string) (typeDecl, bool, error) {
	ps, err := p.parse(path)
	if err != nil || ps == nil {
		return typeDecl{}, false, err
	}
	d, ok := ps.types[name]
	return d, ok, nil
}

func (p *program) parse(path string) (*pkgSyntax, error) {
	if ps, ok := p.syntax[path]; ok {
		return ps, nil
	}
	lp := p.listed[path]
	if lp == nil {
		p.syntax[path] = nil
		return nil, nil
	}
	ps := &pkgSyntax{types: map[string]typeDecl{}}
	for _, name := range lp.GoFiles {
		f, err := parser.ParseFile(p.fset, filepath.Join(lp.Dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("crdgen: %w", err)
		}
		ps.files = append(ps.files, f)
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				ps.types[ts.Name.Name] = typeDecl{spec: ts, doc: doc}
			}
		}
	}
	p.syntax[path] = ps
	return ps, nil
}
