package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// runServer runs every package's tests, each against a fresh server of kind srv.
func (h *harness) runServer(ctx context.Context, srv string) (*serverResults, error) {
	res := &serverResults{Server: srv, Version: h.cfg.version, Packages: map[string]*packageResult{}}
	for _, pkg := range h.cfg.packages {
		pr, err := h.runPackage(ctx, srv, pkg)
		if err != nil {
			return nil, fmt.Errorf("%s on %s: %w", pkg, srv, err)
		}
		res.Packages[pkg] = pr
		p, f, s := pr.counts()
		fmt.Fprintf(h.out, "crsuites: %-16s %-32s %4d passed %4d failed %3d skipped %6.1fs (test CPU %.1fs, server CPU %.1fs)\n",
			srv, pkg, p, f, s, pr.Seconds, pr.TestCPUSeconds, pr.ServerCPUSeconds)
	}
	return res, nil
}

// runPackage starts a fresh server, runs one package's test binary against it with
// USE_EXISTING_CLUSTER=true, stops the server, and reads the ginkgo report and the Go
// tests' results.
func (h *harness) runPackage(ctx context.Context, srv, pkg string) (*packageResult, error) {
	name := strings.ReplaceAll(strings.TrimPrefix(pkg, "pkg/"), "/", "_")
	dir := filepath.Join(h.cfg.work, "runs", srv, name)
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	before := childrenCPU()
	env := []string{"USE_EXISTING_CLUSTER=", "KUBEBUILDER_ASSETS=" + h.cfg.binDir}
	s := &server{stop: func() error { return nil }}
	if h.cfg.envtest {
		if srv == serverAPITest {
			env[1] = "KUBEBUILDER_ASSETS=" + h.dropIn
		}
	} else {
		var err error
		if s, err = h.startServer(ctx, srv, filepath.Join(dir, "server")); err != nil {
			return nil, err
		}
		env = []string{"USE_EXISTING_CLUSTER=true", "KUBECONFIG=" + s.kubeconfig}
	}
	report := filepath.Join(dir, "ginkgo.json")
	args := []string{"-test.v=test2json", "-test.count=1", "-test.timeout=" + h.cfg.timeout.String(),
		"-ginkgo.no-color", "-ginkgo.json-report=" + report}
	if h.cfg.run != "" {
		args = append(args, "-ginkgo.focus="+h.cfg.run)
	}
	logPath := filepath.Join(dir, "test.log")
	start := time.Now()
	events, testCPU, runErr := h.runTestBinary(ctx, pkg, args, env, logPath)
	elapsed := time.Since(start)
	stopErr := s.stop()
	serverCPU := childrenCPU() - before - testCPU
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	pr := &packageResult{Seconds: elapsed.Seconds(), TestCPUSeconds: testCPU.Seconds(), ServerCPUSeconds: serverCPU.Seconds()}
	if stopErr != nil {
		pr.Notes = append(pr.Notes, "stopping the server: "+stopErr.Error())
	}
	specs, suiteFailures, err := readGinkgoReport(report)
	switch {
	case err == nil:
		pr.Entries = append(pr.Entries, specs...)
		pr.Entries = append(pr.Entries, suiteFailures...)
	case errors.Is(err, os.ErrNotExist) && !ranGinkgo(events):
		// No ginkgo suite in this package (pkg/recorder has Examples only).
	default:
		pr.Entries = append(pr.Entries, entry{Kind: kindSuite, Name: "[ginkgo report]", State: stateFailed,
			Failure: fmt.Sprintf("no ginkgo report (%v); the test binary: %v; the end of its output:\n%s", err, runErr, tailFile(logPath, 30))})
	}
	pr.Entries = append(pr.Entries, goTests(events)...)
	if runErr != nil && pr.failed() == 0 {
		pr.Entries = append(pr.Entries, entry{Kind: kindSuite, Name: "[test binary]", State: stateFailed,
			Failure: fmt.Sprintf("%v; the end of its output:\n%s", runErr, tailFile(logPath, 30))})
	}
	if !h.cfg.keepLogs && pr.failed() == 0 {
		os.RemoveAll(filepath.Join(dir, "server"))
	}
	return pr, nil
}

// runTestBinary runs a package's test binary in its source directory (its tests read
// testdata/ there), its output through `go tool test2json` into events, and returns the
// binary's CPU time (and test2json's, so that the caller can tell the servers' apart; in
// envtest mode the servers are the binary's children, their CPU part of its own).
func (h *harness) runTestBinary(ctx context.Context, pkg string, args, env []string, logPath string) ([]testEvent, time.Duration, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, 0, err
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, h.testBinary(pkg), args...)
	cmd.Dir = filepath.Join(h.modDir, pkg)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	conv := exec.CommandContext(ctx, "go", "tool", "test2json", "-p", pkg)
	pr, pw := io.Pipe()
	cmd.Stdout = io.MultiWriter(logf, pw)
	cmd.Stderr = logf
	conv.Stdin = pr
	jr, err := conv.StdoutPipe()
	if err != nil {
		return nil, 0, err
	}
	if err := conv.Start(); err != nil {
		return nil, 0, err
	}
	parsed := make(chan []testEvent, 1)
	go func() { parsed <- parseTestEvents(jr) }()
	runErr := cmd.Run()
	pw.Close()
	events := <-parsed
	convErr := conv.Wait()
	var cpu time.Duration
	for _, st := range []*os.ProcessState{cmd.ProcessState, conv.ProcessState} {
		if st != nil {
			cpu += st.UserTime() + st.SystemTime()
		}
	}
	if runErr == nil && convErr != nil {
		runErr = fmt.Errorf("test2json: %w", convErr)
	}
	return events, cpu, runErr
}

// childrenCPU is the CPU time of every child process this one has waited for.
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// tailFile returns the last n lines of a file.
func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
