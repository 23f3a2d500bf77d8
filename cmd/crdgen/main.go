// Command crdgen writes the CustomResourceDefinition manifests of the Go types marked +kind
// in the packages it is given, as controller-gen does for kubebuilder's markers (package
// kinds/crdgen has the markers; docs/workbench.md the walk-through):
//
//	go run github.com/informerkit/informerkit/cmd/crdgen -out crd.yaml .      # write
//	go run github.com/informerkit/informerkit/cmd/crdgen -out crd.yaml -check . # fail if stale
//
// With no -out it prints the manifest. Patterns are go list patterns ("./api/...").
// Warnings (markers it did not read) go to standard error.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/informerkit/informerkit/kinds/crdgen"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("crdgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "write the manifest to this file (default: standard output)")
	check := fs.Bool("check", false, "do not write: exit 1 if the -out file is not what crdgen would write")
	dir := fs.String("C", "", "work in this directory: patterns and -out are relative to it (default: the current one)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crdgen [-out file [-check]] [-C dir] [packages]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *check && *out == "" {
		fmt.Fprintln(stderr, "crdgen: -check needs -out")
		return 2
	}
	if *out != "" && *dir != "" && !filepath.IsAbs(*out) {
		*out = filepath.Join(*dir, *out)
	}
	res, err := crdgen.Generate(fs.Args(), crdgen.Options{Dir: *dir})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(stderr, "crdgen: warning:", w)
	}
	if len(res.CRDs) == 0 {
		fmt.Fprintln(stderr, "crdgen: no type is marked +kind")
		return 1
	}
	manifest, err := crdgen.Manifest(res.CRDs)
	if err != nil {
		fmt.Fprintln(stderr, "crdgen:", err)
		return 1
	}
	switch {
	case *out == "":
		_, err = stdout.Write(manifest)
	case *check:
		old, rerr := os.ReadFile(*out)
		if rerr != nil || !bytes.Equal(old, manifest) {
			fmt.Fprintf(stderr, "crdgen: %s is not up to date with the Go types: run crdgen -out %s\n", *out, *out)
			return 1
		}
	default:
		err = os.WriteFile(*out, manifest, 0o644)
	}
	if err != nil {
		fmt.Fprintln(stderr, "crdgen:", err)
		return 1
	}
	return 0
}
