package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// harness holds what prepare made: the module's copy, its test binaries and apitest.
type harness struct {
	cfg     config
	out     io.Writer
	modDir  string // the writable copy of controller-runtime
	apitest string // the apitest binary
	dropIn  string // apitest installed as kube-apiserver and etcd (-mode envtest)
}

// prepare downloads controller-runtime, copies it into the work directory (the module
// cache is read-only, and the tests write into their directories), builds every package's
// test binary there, and builds cmd/apitest.
func (h *harness) prepare(ctx context.Context) error {
	start := time.Now()
	if contains(h.cfg.servers, serverReal) {
		for _, b := range []string{"kube-apiserver", "etcd"} {
			if _, err := os.Stat(filepath.Join(h.cfg.binDir, b)); err != nil {
				return fmt.Errorf("%s: %w (make e2e-build builds it; -bin or $E2E_BIN_DIR say where it is)", b, err)
			}
		}
	}
	if err := os.MkdirAll(h.cfg.work, 0o755); err != nil {
		return err
	}
	src, err := downloadModule(ctx, "sigs.k8s.io/controller-runtime@"+h.cfg.version, h.cfg.work)
	if err != nil {
		return err
	}
	h.modDir = filepath.Join(h.cfg.work, "controller-runtime-"+h.cfg.version)
	if _, err := os.Stat(filepath.Join(h.modDir, "go.mod")); os.IsNotExist(err) {
		if err := copyTree(src, h.modDir+".tmp"); err != nil {
			return err
		}
		if err := os.Rename(h.modDir+".tmp", h.modDir); err != nil {
			return err
		}
	}
	binDir := filepath.Join(h.cfg.work, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return err
	}
	for _, pkg := range h.cfg.packages {
		cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", h.testBinary(pkg), "./"+pkg)
		cmd.Dir = h.modDir
		// The copy is a module of its own: no workspace or vendor settings from outside.
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build the tests of %s: %w\n%s", pkg, err, out)
		}
	}
	h.apitest = filepath.Join(binDir, "apitest")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", h.apitest, "./cmd/apitest")
	cmd.Dir = h.cfg.repo
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build cmd/apitest: %w\n%s", err, out)
	}
	h.dropIn = filepath.Join(binDir, "dropin")
	if out, err := exec.CommandContext(ctx, h.apitest, "install", h.dropIn).CombinedOutput(); err != nil {
		return fmt.Errorf("apitest install: %w\n%s", err, out)
	}
	fmt.Fprintf(h.out, "crsuites: controller-runtime %s and %d test binaries ready in %s (%.0fs)\n",
		h.cfg.version, len(h.cfg.packages), h.cfg.work, time.Since(start).Seconds())
	return nil
}

// testBinary is the path of a package's test binary ("pkg/internal/controller" →
// bin/internal_controller.test: two packages share the name controller).
func (h *harness) testBinary(pkg string) string {
	name := strings.ReplaceAll(strings.TrimPrefix(pkg, "pkg/"), "/", "_")
	return filepath.Join(h.cfg.work, "bin", name+".test")
}

// downloadModule runs go mod download for mod (path@version) and returns its directory in
// the module cache. It runs in dir, outside any module.
func downloadModule(ctx context.Context, mod, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", mod)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GO111MODULE=on")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr == nil && info.Error != "" {
		return "", fmt.Errorf("go mod download %s: %s", mod, info.Error)
	}
	if err != nil {
		return "", fmt.Errorf("go mod download %s: %w\n%s", mod, err, stderr.Bytes())
	}
	if info.Dir == "" {
		return "", fmt.Errorf("go mod download %s: no directory in %s", mod, out)
	}
	return info.Dir, nil
}

// copyTree copies the regular files of src to dst, writable (the module cache's are not).
func copyTree(src, dst string) error {
	os.RemoveAll(dst)
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
