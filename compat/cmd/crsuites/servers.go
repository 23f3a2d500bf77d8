package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/informerkit/informerkit/e2e/cluster"
)

// server is one fresh API server for one package's tests.
type server struct {
	kubeconfig string
	stop       func() error
}

// startServer starts a fresh server of the given kind, its files in dir.
func (h *harness) startServer(ctx context.Context, kind, dir string) (*server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	switch kind {
	case serverAPITest:
		return h.startAPITest(ctx, dir)
	case serverReal:
		c, err := cluster.Start(ctx, cluster.Options{BinDir: h.cfg.binDir, WorkDir: dir})
		if err != nil {
			return nil, err
		}
		return &server{kubeconfig: c.KubeconfigPath, stop: c.Stop}, nil
	}
	return nil, fmt.Errorf("unknown server %q", kind)
}

// startAPITest starts `apitest serve` and waits for the line that says its kubeconfig is
// written.
func (h *harness) startAPITest(ctx context.Context, dir string) (*server, error) {
	kc := filepath.Join(dir, "kubeconfig")
	cmd := exec.Command(h.apitest, "serve", "-kubeconfig", kc)
	logf, err := os.Create(filepath.Join(dir, "apitest.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	// The kernel kills the server if the harness dies without stopping it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	exited := make(chan struct{})
	stop := func() error {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logf.Close()
		return nil
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if !signalled && strings.HasPrefix(sc.Text(), "export KUBECONFIG=") {
				ready <- nil
				signalled = true
			}
		}
		if !signalled {
			ready <- errors.New("apitest serve exited before it was ready")
		}
		_ = cmd.Wait()
		close(exited)
	}()
	select {
	case err := <-ready:
		if err != nil {
			<-exited
			logf.Close()
			b, _ := os.ReadFile(filepath.Join(dir, "apitest.log"))
			return nil, fmt.Errorf("%w:\n%s", err, b)
		}
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	}
	return &server{kubeconfig: kc, stop: stop}, nil
}
