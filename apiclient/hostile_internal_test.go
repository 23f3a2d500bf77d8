package apiclient

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The exec plugin runs as a process, which a synctest bubble cannot wait for: these tests
// use real time, with short limits, and assert the typed errors, not durations.

// writerFunc is a func as an io.Writer.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestExecPluginDeadlineAndOutputLimit(t *testing.T) {
	dir := t.TempDir()
	hang := filepath.Join(dir, "hang.sh")
	writeFile(t, hang, "#!/bin/sh\nexec sleep 3600\n")
	flood := filepath.Join(dir, "flood.sh")
	writeFile(t, flood, "#!/bin/sh\nexec yes SECRET-looking-output\n")
	for _, p := range []string{hang, flood} {
		os.Chmod(p, 0o755)
	}
	var logs strings.Builder
	var logMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		logMu.Lock()
		defer logMu.Unlock()
		return logs.Write(p)
	}), nil))
	run := func(ec *ExecConfig) error {
		c, err := New(&Config{Host: "https://api.example", QPS: -1, MaxRetries: -1, Exec: ec, Logger: logger,
			WrapTransport: handlerTransport(func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]any{}) })})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, err = c.Do(context.Background(), Request{Path: "/api"})
		return err
	}

	err := run(&ExecConfig{Command: hang, Timeout: 300 * time.Millisecond})
	var te *TimeoutError
	if !errors.As(err, &te) || te.Op != "exec plugin" || te.Path != hang || !errors.Is(err, ErrTimeout) || te.Setting != "ExecConfig.Timeout" {
		t.Errorf("hanging plugin: err = %v, want a *TimeoutError for the exec plugin naming ExecConfig.Timeout", err)
	}
	logMu.Lock()
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 || !strings.Contains(logs.String(), "setting=ExecConfig.Timeout") {
		t.Errorf("hanging plugin: %d Warn lines, want 1 naming ExecConfig.Timeout:\n%s", n, logs.String())
	}
	logMu.Unlock()
	if IsUnreachable(err) {
		t.Errorf("a hanging plugin is not an unreachable server: %v", err)
	}

	err = run(&ExecConfig{Command: flood, MaxOutput: 64 << 10})
	if !errors.Is(err, ErrExecOutputTooLarge) || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("flooding plugin: err = %v, want ErrExecOutputTooLarge without the output", err)
	}

	// The defaults apply when nothing is set.
	p, err := newExecProvider(&Config{Exec: &ExecConfig{Command: hang}})
	if err != nil {
		t.Fatal(err)
	}
	if p.cfg.Timeout != DefaultExecTimeout || p.cfg.MaxOutput != DefaultExecMaxOutput {
		t.Errorf("defaults: timeout %v, max output %d", p.cfg.Timeout, p.cfg.MaxOutput)
	}
}

func TestExecCredentialsNeverLeaveTheAPIServer(t *testing.T) {
	script, dir := execScript(t, "2999-01-01T00:00:00Z")
	var mu sync.Mutex
	var other []string
	h := handlerTransport(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Host == "other.example" {
			mu.Lock()
			other = append(other, r.Header.Get("Authorization"))
			mu.Unlock()
			writeJSON(w, 200, map[string]any{})
			return
		}
		http.Redirect(w, r, "https://other.example"+r.URL.RequestURI(), http.StatusFound)
	})
	for _, follow := range []bool{false, true} {
		c, err := New(&Config{Host: "https://api.example", QPS: -1, MaxRetries: -1, Exec: execConfig(script, dir),
			FollowCrossHostRedirects: follow, WrapTransport: h})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Do(context.Background(), Request{Path: "/api"})
		var re *RedirectError
		if follow != (err == nil) || !follow && (!errors.As(err, &re) || re.Code != http.StatusFound) {
			t.Errorf("follow=%v: err = %v", follow, err)
		}
		c.Close()
	}
	if len(other) != 1 || other[0] != "" {
		t.Errorf("the other host saw credentials %q, want one request without", other)
	}
}
